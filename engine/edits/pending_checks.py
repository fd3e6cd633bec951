"""The differential diagnostics an apply left unfinished, kept so they can be finished later.

An apply compares errors before and after within a time budget (``diagnostics_budget``,
``engine.edits.session.DIAGNOSTICS_BUDGET`` by default), then returns with the check marked incomplete. What it had by then is
kept in ``.graft/diagnostics/last-apply.json``: the errors found before the write, those
already compared after it, and the files still to compare. The daemon finishes the check
right after it answered the apply; ``graft diagnostics --since-last-apply`` shows the result
(finishing it first where no daemon did). A file whose errors before the write were not had
in time cannot be compared afterwards (the old text is gone from the server's view); it is
named as such, never counted as clean.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from engine.answers import Diagnostic
from engine.edits.verification import Verification
from engine.positions import Position, Range
from engine.state_folder import open_state_file, read_state_file, state_folder

_FILE = "last-apply.json"
_LAST = "last-check.json"


@dataclass
class PendingCheck:
    transaction: str
    before: dict[str, list[Diagnostic]]
    """Errors per file before the write: the baseline of every file that can still be compared."""
    after: dict[str, list[Diagnostic]]
    """Errors per file after the write, for the files compared so far."""
    to_compare: list[str]
    """Files with a baseline whose errors after the write are still to be had."""
    without_baseline: list[str]
    """Files the budget left out before the write: they cannot be compared."""
    renamed: dict[str, str] = field(default_factory=dict)

    @property
    def finished(self) -> bool:
        return not self.to_compare

    def to_json(self) -> dict[str, object]:
        return {"transaction": self.transaction, "before": _encode(self.before), "after": _encode(self.after),
                "to_compare": self.to_compare, "without_baseline": self.without_baseline, "renamed": self.renamed}


def save(root: Path, check: PendingCheck | None) -> None:
    """Keep the check (replacing the last one), or forget it (None: the last apply finished its own)."""
    path = state_folder(root, "diagnostics") / _FILE
    if check is None:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        return
    staged = path.with_name(f".{_FILE}.{os.getpid()}")
    descriptor = open_state_file(staged, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(check.to_json(), handle)
    os.replace(staged, path)


def save_last(root: Path, transaction: str, verification: Verification) -> None:
    """Keep what the last apply's check covered (``graft check --last`` shows it, finished)."""
    path = state_folder(root, "diagnostics") / _LAST
    staged = path.with_name(f".{_LAST}.{os.getpid()}")
    descriptor = open_state_file(staged, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump({"transaction": transaction, "verification": verification.to_json()}, handle)
    os.replace(staged, path)


def load_last(root: Path) -> tuple[str, Verification] | None:
    """The last apply's transaction and its check, as kept; None when none was kept (or not one of ours)."""
    try:
        data = json.loads(read_state_file(state_folder(root, "diagnostics") / _LAST))
        return str(data["transaction"]), Verification.from_json(data["verification"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def load(root: Path) -> PendingCheck | None:
    try:
        data = json.loads(read_state_file(state_folder(root, "diagnostics") / _FILE))
        return PendingCheck(str(data["transaction"]), _decode(data["before"]), _decode(data["after"]),
                            [str(p) for p in data["to_compare"]], [str(p) for p in data["without_baseline"]],
                            {str(k): str(v) for k, v in dict(data.get("renamed", {})).items()})
    except (OSError, ValueError, KeyError, TypeError):
        return None  # none kept, or not one of ours: nothing to finish


def _encode(found: dict[str, list[Diagnostic]]) -> dict[str, list[dict[str, object]]]:
    return {path: [{"line": d.range.start.line, "character": d.range.start.column, "end_line": d.range.end.line,
                    "end_character": d.range.end.column, "severity": d.severity, "message": d.message,
                    "source": d.source, "code": d.code} for d in diagnostics] for path, diagnostics in found.items()}


def _decode(data: object) -> dict[str, list[Diagnostic]]:
    if not isinstance(data, dict):
        raise TypeError("not a table of files")  # load() takes that as "nothing kept"
    found: dict[str, list[Diagnostic]] = {}
    for path, items in data.items():
        found[str(path)] = [Diagnostic(str(path), Range(Position(int(d["line"]), int(d["character"])),
                                                         Position(int(d["end_line"]), int(d["end_character"]))),
                                       str(d["severity"]), str(d["message"]), str(d["source"]), str(d["code"])) for d in items]
    return found
