"""One batch plan across many repositories (``graft batch PLAN --repos LIST``).

Each repository is one task, run where the executor puts it: serially in this process
(``local``), or on Dask (an embedded ``LocalCluster`` of processes, or an existing cluster at
``--scheduler``), through the ``FleetExecutor`` port. What a task does is engine.fleet.task; it
returns one row, and the patch travels in the row, so workers need not share a file system with
the driver.

Every run has an id (``OUT/run.json``, with the plan's hash and the options). Each repository's
transaction records ``fleet:<run id>:<plan hash>`` in the repository's own journal, so a task run
again (a lost result that Dask computes again, a ``--resume``) finds what the run committed there
and reports it instead of applying it twice. The driver holds the run's lease (the executor's
``run_alive``), which a task asks just before it commits: a task whose driver has gone rolls
back. The driver writes ``OUT/<repo>.patch`` and one line of ``OUT/results.jsonl`` per
repository as rows arrive, never two for one repository; ``resume`` keeps the rows already there
(except ``error`` rows, which run again) and runs the rest under the same run id.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from engine.batch import plan_steps
from engine.errors import UsageError
from engine.fleet.rows import (
    BUSY, FAILED, STATUSES, FleetOptions, FleetProgress, FleetRow, FleetRun, always_alive, plan_hash,
)
from engine.fleet import kept_scratch
from engine.fleet.run_record import RUN_FILE, open_run
from engine.fleet.task import run_repo
from engine.ports import FleetExecutor, FleetTask, RunAlive, load_fleet_executor

__all__ = ["BUSY", "FAILED", "RESULTS", "RUN_FILE", "STATUSES", "FleetOptions", "FleetProgress", "FleetRow", "FleetRun",
           "LocalExecutor", "load_repos", "plan_hash", "run", "run_repo"]

RESULTS = "results.jsonl"


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
    path objects; a row names its repository as the string given. ``progress`` is called once
    before any task finishes (``last`` None, ``total`` the repositories to run), then once per
    repository as its row arrives."""
    plan_steps(plan, "plan")  # an unknown op or field is refused here, not in every task
    paths = [os.fspath(repo) for repo in repos]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    results = out / RESULTS
    earlier = _kept_rows(results) if resume else {}
    record = open_run(out, plan, options, resume=resume, has_rows=bool(earlier))
    # An error row (a lost worker, an unexpected failure) runs again: its task reads the journal
    # first, so a change that did commit is reported, never made twice.
    kept = {repo: row for repo, row in earlier.items() if row.status != "error"}
    _rewrite(results, kept.values())
    todo = list(dict.fromkeys(repo for repo in paths if repo not in kept))  # one task, and one row, per repository
    names = _patch_names(paths)
    rows = list(kept.values())
    if not todo:
        if progress is not None:
            progress(FleetProgress(0, 0, 0, 0, None))  # the start, with nothing to run
        return rows
    chosen = _executor(executor, scheduler, workers)
    if progress is not None:  # the start: a listener learns the total before the first repository finishes
        progress(FleetProgress(0, 0, min(chosen.workers, len(todo)), len(todo), None))
    this_run = FleetRun(record.run_id, record.plan_hash, chosen.run_alive())
    task: FleetTask = functools.partial(run_repo, plan, options, this_run)
    failed = 0
    try:
        with results.open("a", encoding="utf-8") as ledger:
            for repo, data in chosen.map(task, todo):
                row = FleetRow.from_json({**data, "repo": repo})
                row.run = row.run or record.run_id
                if row.status == BUSY:  # the executor did not wait it out: not known, so not a success
                    row.status = "error"
                row.patch_text = str(data.get("patch_text") or "")
                if row.patch_text:
                    target = out / names[repo]
                    target.write_text(row.patch_text, encoding="utf-8", newline="")
                    row.patch = str(target.resolve())
                ledger.write(json.dumps(row.to_json()) + "\n")
                ledger.flush()
                os.fsync(ledger.fileno())  # a driver killed later keeps every row written so far (resume)
                rows.append(row)
                failed += row.status in FAILED
                if progress is not None:
                    done = len(rows) - len(kept)
                    progress(FleetProgress(done, failed, min(chosen.workers, len(todo) - done), len(todo), row))
    finally:
        if isinstance(executor, str):  # made here, closed here; a caller's own executor is the caller's to close
            chosen.close()
    return rows


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


def _rewrite(results: Path, rows: Any) -> None:
    """results.jsonl with exactly these rows (none for a new run), replaced whole."""
    temporary = results.with_name(f".{results.name}.{os.getpid()}")
    with temporary.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row.to_json()) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, results)


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

    def run_alive(self) -> RunAlive:
        return always_alive  # the tasks run in the driver itself: while one runs, so does the driver

    def close(self) -> None:
        kept_scratch.release_all()  # the servers kept between this run's repositories, in this process
