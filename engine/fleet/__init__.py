"""One batch plan across many repositories (``graft batch PLAN --repos LIST``).

Each repository is one task, run where the executor puts it: serially in this process
(``local``), or on Dask (an embedded ``LocalCluster`` of processes, or an existing cluster at
``--scheduler``), through the ``FleetExecutor`` port. A task plans the whole plan on its
repository (in a scratch copy, as ``graft batch`` does), then either applies it in place as one
journaled transaction, ``--verify`` settled before the commit so a failure rolls it back, or
(a plan-only run) writes the change into a scratch copy and runs ``--verify`` there. It returns
one row; the patch travels in the row, so workers need not share a file system with the driver.

The driver writes ``OUT/<repo>.patch`` and one line of ``OUT/results.jsonl`` per repository as
rows arrive, never two for one repository; ``resume`` skips the repositories already there.
A repository's failure is its row's status and never stops the others. A task opens its own
engine and language servers and closes them; a worker killed mid-task has its task retried
elsewhere, and the retry's engine rolls back, from the journal, whatever the killed one left
half-written.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from engine.batch import edit_from, plan_in_scratch, plan_steps
from engine.choices import SourcePreference
from engine.edits.apply import VerifyFailed
from engine.edits.materialize import FileState
from engine.edits.patch import git_patch
from engine.edits.session import EditOptions
from engine.errors import GraftError, Refused, UsageError
from engine.opening import open_engine
from engine.ports import FleetExecutor, FleetTask, load_fleet_executor, load_tools
from engine.workspace import Workspace

STATUSES = ("applied", "planned", "refused", "verify_failed", "error")
RESULTS = "results.jsonl"
_TAIL = 2000


@dataclass(frozen=True)
class FleetOptions:
    apply: bool = False
    verify: str | None = None
    source: SourcePreference = SourcePreference.AUTO
    allow_dirty: bool = False


@dataclass
class FleetRow:
    repo: str
    status: str = "error"
    worker: str = "local"
    patch: str | None = None
    files: list[str] = field(default_factory=list)
    edits: int = 0
    source: str | None = None
    confidence: str | None = None
    warnings: list[str] = field(default_factory=list)
    reason: str = ""
    seconds: float = 0.0
    verify_status: int | None = None
    verify_tail: str = ""
    patch_text: str = ""
    """The patch itself, carried from the worker to the driver (which writes it); not in results.jsonl."""

    def to_json(self) -> dict[str, object]:
        return {"repo": self.repo, "status": self.status, "worker": self.worker, "patch": self.patch, "files": self.files,
                "edits": self.edits, "source": self.source, "confidence": self.confidence, "warnings": self.warnings,
                "reason": self.reason, "seconds": round(self.seconds, 3), "verify_status": self.verify_status,
                "verify_tail": self.verify_tail}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FleetRow:
        known = {key: data[key] for key in cls.__dataclass_fields__ if key in data and key != "patch_text"}
        return cls(**known)


@dataclass(frozen=True)
class FleetProgress:
    done: int
    failed: int
    in_flight: int
    total: int
    last: FleetRow | None


def load_repos(path: Path) -> list[str]:
    """A file with one repository path per line (relative to the file's folder; blank lines and
    ``#`` comments skipped), or a folder whose sub-folders are the repositories."""
    if path.is_dir():
        return sorted(str(child.resolve()) for child in path.iterdir() if child.is_dir() and not child.name.startswith("."))
    if not path.is_file():
        raise UsageError(f"--repos {path}: no such file or folder")
    repos = []
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = line.strip()
        if entry and not entry.startswith("#"):
            repos.append(str((path.parent / entry).resolve()))
    if not repos:
        raise UsageError(f"--repos {path} names no repository")
    return list(dict.fromkeys(repos))


def run(
    plan: list[dict[str, Any]], repos: Sequence[str | os.PathLike[str]], *, out: str | os.PathLike[str],
    options: FleetOptions = FleetOptions(), executor: str | FleetExecutor = "dask", scheduler: str | None = None,
    workers: int | None = None, resume: bool = False, progress: Callable[[FleetProgress], None] | None = None,
) -> list[FleetRow]:
    """Run the plan on every repository; the rows of this run (with ``resume``, the rows already
    in OUT first). The plan is checked whole before any task starts. Paths may be strings or
    path objects; a row names its repository as the string given."""
    plan_steps(plan, "plan")  # an unknown op or field is refused here, not in every task
    paths = [os.fspath(repo) for repo in repos]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    results = out / RESULTS
    kept = _kept_rows(results) if resume else {}
    if not resume:
        results.write_text("")
    todo = list(dict.fromkeys(repo for repo in paths if repo not in kept))  # one task, and one row, per repository
    names = _patch_names(paths)
    rows = list(kept.values())
    if not todo:
        return rows
    chosen = _executor(executor, scheduler, workers)
    task: FleetTask = functools.partial(run_repo, plan, options)
    failed = 0
    try:
        with results.open("a", encoding="utf-8") as ledger:
            for repo, data in chosen.map(task, todo):
                row = FleetRow.from_json({**data, "repo": repo})
                row.patch_text = str(data.get("patch_text") or "")
                if row.patch_text:
                    target = out / names[repo]
                    target.write_text(row.patch_text, encoding="utf-8", newline="")
                    row.patch = str(target.resolve())
                ledger.write(json.dumps(row.to_json()) + "\n")
                ledger.flush()
                os.fsync(ledger.fileno())  # a driver killed later keeps every row written so far (resume)
                rows.append(row)
                failed += row.status in ("refused", "verify_failed", "error")
                if progress is not None:
                    done = len(rows) - len(kept)
                    progress(FleetProgress(done, failed, min(chosen.workers, len(todo) - done), len(todo), row))
    finally:
        if isinstance(executor, str):  # made here, closed here; a caller's own executor is the caller's to close
            chosen.close()
    return rows


def run_repo(plan: list[dict[str, Any]], options: FleetOptions, repo: str) -> dict[str, object]:
    """One repository's task (runs on a worker): plan, apply or verify in a copy, and the row as data."""
    started = time.monotonic()
    row = FleetRow(repo)
    try:
        _run(plan, options, Path(repo), row)
    except VerifyFailed as failed:
        row.status = "verify_failed"
        first, _, rest = failed.message.partition("\n")
        row.reason = first
        found = re.search(r"status (\d+)", first)
        row.verify_status = int(found.group(1)) if found else None
        row.verify_tail = rest[-_TAIL:]
        row.patch_text = ""
    except Refused as refused:
        row.status, row.reason, row.patch_text = "refused", f"{refused.code}: {refused.message}", ""
    except GraftError as error:
        row.status, row.reason, row.patch_text = "error", f"{error.code}: {error.message}", ""
    except Exception as error:  # noqa: BLE001 - one repository's bug is its row, never the fleet's end
        row.status, row.reason, row.patch_text = "error", f"{type(error).__name__}: {error}", ""
    row.seconds = time.monotonic() - started
    return {**row.to_json(), "patch_text": row.patch_text}


def _run(plan: list[dict[str, Any]], options: FleetOptions, root: Path, row: FleetRow) -> None:
    if not root.is_dir():
        raise UsageError(f"{root} is not a folder")
    steps = plan_steps(plan, "plan")
    engine = open_engine(root, options.source, tools=True)
    try:
        trial, states = plan_in_scratch(engine, steps, None, None)
        row.files = [s.path for s in states]
        row.edits = trial.edits
        row.source, row.confidence = trial.source.value, trial.confidence.value
        row.warnings = [warning for step in trial.steps for warning in step.warnings]
        row.patch_text, left_out = git_patch(states)
        row.warnings += [f"{path} is not UTF-8 text: left out of the patch" for path in left_out]
        if options.apply:
            outcome = engine.edits().apply(edit_from(engine, states), EditOptions(verify=options.verify,
                                                                                 allow_dirty=options.allow_dirty))
            row.status = "applied"
            if options.verify:
                row.verify_status, row.verify_tail = 0, outcome.verify_output[-_TAIL:]
            return
        row.status = "planned"
        if options.verify:
            status, output = _verify_in_copy(root, states, options.verify)
            row.verify_status, row.verify_tail = status, output[-_TAIL:]
            if status != 0:
                raise VerifyFailed(f"`{options.verify}` failed with status {status} in a copy with the change; "
                                   f"nothing was changed\n{output}")
    finally:
        engine.close()


def _verify_in_copy(root: Path, states: list[FileState], command: str) -> tuple[int, str]:
    """Run the verify command in a scratch copy of the repository with the change written in."""
    with tempfile.TemporaryDirectory(prefix="graft-fleet-") as scratch:
        copy = Path(scratch) / root.name
        shutil.copytree(root, copy, symlinks=True, ignore=shutil.ignore_patterns(".graft"))
        for state in states:
            target = copy / state.path
            if state.after is None:
                target.unlink(missing_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(state.after)
            if state.mode is not None:
                target.chmod(state.mode)
        tools = load_tools(Workspace(copy))
        if tools is None:
            raise UsageError("cannot run the verify command: no process support is installed")
        return tools.run(command)


def _kept_rows(results: Path) -> dict[str, FleetRow]:
    kept: dict[str, FleetRow] = {}
    if results.is_file():
        for line in results.read_text(encoding="utf-8").splitlines():
            try:
                row = FleetRow.from_json(json.loads(line))
            except (ValueError, TypeError):
                continue  # a line cut short by a killed driver: that repository runs again
            kept[row.repo] = row
    return kept


def _patch_names(repos: list[str]) -> dict[str, str]:
    """``<repo-name>.patch``; repositories sharing a name get their path's hash too."""
    counts: dict[str, int] = {}
    for repo in repos:
        counts[Path(repo).name] = counts.get(Path(repo).name, 0) + 1
    return {repo: f"{Path(repo).name}.patch" if counts[Path(repo).name] == 1
            else f"{Path(repo).name}-{hashlib.sha256(repo.encode()).hexdigest()[:8]}.patch" for repo in repos}


def _executor(executor: str | FleetExecutor, scheduler: str | None, workers: int | None) -> FleetExecutor:
    if not isinstance(executor, str):
        return executor
    if executor == "local":
        return LocalExecutor()
    found = load_fleet_executor(executor, scheduler=scheduler, workers=workers)
    if found is None:
        raise UsageError(f"no fleet executor called {executor} is installed (reinstall codegraft: dask[distributed] is a "
                         "dependency); --executor local runs serially in this process")
    return found


class LocalExecutor:
    """Every task in this process, one after another: for debugging, and the serial baseline."""

    workers = 1

    def map(self, task: FleetTask, repos: list[str]) -> Iterator[tuple[str, dict[str, object]]]:
        for repo in repos:
            yield repo, task(repo)

    def close(self) -> None:
        pass
