"""What a repository's own journal says a fleet run did there, and the notes a task leaves.

A task that applies records its run's request id in the transaction (``ApplyOptions.request``),
so a task run a second time (Dask recomputing a lost result, a resumed run) asks the journal
first and reports the committed change, its patch rebuilt from the journal's before-images and
the files as they are, instead of planning again on a repository that already has it. The row's
other details (edits, provenance, verify tail) are kept beside it under ``.graft/fleet/`` just
before the commit; they are read only for a request the journal says committed, whose id is the
run's own random id, so nothing a repository ships there is ever taken for them.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from pathlib import Path

from engine.edits.journal import JournalRecord
from engine.edits.materialize import FileState
from engine.edits.patch import git_patch
from engine.fleet.rows import FleetRow, FleetRun
from engine.state_folder import open_state_file, read_state_file, state_folder, write_new_file

FOLDER = "fleet"
_NOTES = "notes.jsonl"
_KEPT_FIELDS = ("edits", "source", "confidence", "warnings", "verify_status", "verify_tail")


def report_committed(root: Path, records: list[JournalRecord], run: FleetRun, row: FleetRow) -> None:
    """Fill ``row`` from this run's committed transaction(s) in the repository: applied, with the
    files, the transaction and the patch rebuilt from the journal; nothing is applied again."""
    kept = _kept_row(root, run)
    for name in _KEPT_FIELDS:
        if name in kept:
            setattr(row, name, kept[name])
    states: list[FileState] = []
    left_out: list[str] = []
    for record in records:
        for number, entry in enumerate(record.entries):
            target = root / entry.path
            current = target.read_bytes() if target.is_file() and not target.is_symlink() else None
            before = record.before_image(number) if entry.before_sha256 is not None else None
            if _sha(current) != entry.after_sha256 or _sha(before) != entry.before_sha256:
                left_out.append(entry.path)  # changed since, or its before-image is gone: no honest patch for it
                continue
            mode = stat.S_IMODE(target.stat().st_mode) if current is not None else entry.mode
            states.append(FileState(entry.path, before, current, mode))
    row.status = "applied"
    row.transaction = records[-1].id
    row.files = sorted({entry.path for record in records for entry in record.entries})
    row.patch_text, not_text = git_patch(states)
    row.warnings = [*row.warnings,
                    f"applied by an earlier task of this run (transaction {row.transaction}); reported from the "
                    "repository's journal, not applied again",
                    *(f"{path} changed after the transaction (or its before-image is gone): left out of the patch"
                      for path in left_out),
                    *(f"{path} is not UTF-8 text: left out of the patch" for path in not_text)]


def keep_row(root: Path, run: FleetRun, row: FleetRow) -> None:
    """Just before the commit: the row's details, for a later task to report if it finds the
    transaction committed and the driver never got this row."""
    data = {name: getattr(row, name) for name in _KEPT_FIELDS}
    write_new_file(state_folder(root, FOLDER) / _row_file(run), json.dumps(data).encode("utf-8"), durable=True)


def leave_note(root: Path, run: FleetRun, note: str) -> None:
    """A line in ``.graft/fleet/notes.jsonl`` that a later task of the same run reports."""
    line = json.dumps({"request": run.request, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "note": note})
    descriptor = open_state_file(state_folder(root, FOLDER) / _NOTES, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        os.write(descriptor, (line + "\n").encode("utf-8"))
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def notes(root: Path, run: FleetRun) -> list[str]:
    """The notes earlier tasks of this run left in the repository, oldest first."""
    try:
        text = read_state_file(root / ".graft" / FOLDER / _NOTES).decode("utf-8", errors="replace")
    except OSError:
        return []
    found = []
    for line in text.splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and data.get("request") == run.request and isinstance(data.get("note"), str):
            found.append(f"{data.get('time', '')}: {data['note']}".strip(": "))
    return found


def _kept_row(root: Path, run: FleetRun) -> dict[str, object]:
    try:
        data = json.loads(read_state_file(root / ".graft" / FOLDER / _row_file(run)))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    types: dict[str, tuple[type, ...]] = {"edits": (int,), "source": (str, type(None)), "confidence": (str, type(None)),
                                         "warnings": (list,), "verify_status": (int, type(None)), "verify_tail": (str,)}
    return {name: value for name, value in data.items() if name in types and isinstance(value, types[name])}


def _row_file(run: FleetRun) -> str:
    return f"row-{hashlib.sha256(run.request.encode()).hexdigest()[:32]}.json"


def _sha(data: bytes | None) -> str | None:
    return hashlib.sha256(data).hexdigest() if data is not None else None
