"""One repository's task in a fleet run (it runs on a worker): the row as plain data.

In order:
1. With ``--apply``, the repository's journal first: a transaction of this run that committed
   is reported (``applied``, its patch rebuilt from the journal) and nothing runs again; one
   still being written by a live task makes this one ``busy`` (the executor waits it out).
2. The result cache (engine.fleet.result_cache): a working tree that is exactly a commit
   this plan, these options and this engine already ran on gets that row again (``cached`` says
   from when) without planning; a row computed now is kept there. Otherwise
   the plan, in this worker thread's scratch copy (engine.fleet.kept_scratch: a path that stays,
   whose language servers are kept between the repositories it plans); files it touches that have
   uncommitted or untracked changes make the row ``dirty_files`` (a patch over them would not
   apply to a clean checkout), unless ``--allow-dirty``.
3. Without ``--apply``: ``--verify`` runs in a scratch copy with the change. With it: one
   journaled transaction carrying the run's request id, whose settle step, after the files are
   in place and before the commit marker, runs ``--verify``, asks the run's lease whether the
   driver is still there (a task whose driver has gone rolls back and leaves a note), and asks
   the journal whether another task of this run committed meanwhile. What it raises rolls the
   transaction back.
4. A verify that fails after the change is run on the repository without it (the baseline,
   engine.fleet.baseline): red there too makes the row ``baseline_failed``, else
   ``verify_failed``; either way nothing is changed.
The row's ``costs`` say where the seconds went (server start, plan, verify, baseline).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from engine.api import Engine
from engine.batch import edit_from, plan_in_copy, plan_steps
from engine.edits.apply import ApplyOptions, DirtyFiles, VerifyFailed
from engine.edits.diff import FileSummary
from engine.edits.materialize import FileState
from engine.edits.patch import git_patch
from engine.errors import GraftError, Refused, UsageError
from engine.fleet import journal_outcome, kept_scratch, result_cache
from engine.fleet.baseline import Baseline, baseline
from engine.fleet.rows import BUSY, TAIL, FleetOptions, FleetRow, FleetRun
from engine.opening import open_engine
from engine.ports import Tools, load_tools
from engine.workspace import Workspace


class RunGone(GraftError):
    """The driver of the run had gone when the task was about to commit: rolled back."""

    code = "run_gone"


class _CommittedMeanwhile(Exception):
    """Another task of this run committed the change while this one planned it."""


def run_repo(plan: list[dict[str, Any]], options: FleetOptions, run: FleetRun, repo: str) -> dict[str, object]:
    """One repository's task: the row as data (with the patch's text, for the driver to write)."""
    started = time.monotonic()
    row = FleetRow(repo, run=run.run_id)
    try:
        _run(plan, options, run, Path(repo), row)
    except Exception as error:  # noqa: BLE001 - one repository's bug is its row, never the fleet's end
        _failed(row, error)
    row.seconds = time.monotonic() - started
    return {**row.to_json(), "patch_text": row.patch_text}


def _failed(row: FleetRow, error: Exception) -> None:
    """The row of a task that raised: nothing was changed (a transaction rolls back what it raises)."""
    if isinstance(error, VerifyFailed):  # no process support to run the verify
        row.status, row.reason = "verify_failed", error.message
    elif isinstance(error, DirtyFiles):
        row.status, row.reason = "dirty_files", error.message
    elif isinstance(error, Refused):
        row.status, row.reason = "refused", f"{error.code}: {error.message}"
    elif isinstance(error, GraftError):
        row.status, row.reason = "error", f"{error.code}: {error.message}"
    else:
        row.status, row.reason = "error", f"{type(error).__name__}: {error}"
    row.patch_text = ""


def _run(plan: list[dict[str, Any]], options: FleetOptions, run: FleetRun, root: Path, row: FleetRow) -> None:
    if not root.is_dir():
        raise UsageError(f"{root} is not a folder")
    steps = plan_steps(plan, "plan")
    engine = open_engine(root, options.source, tools=True)
    try:
        notes = [f"an earlier task of this run: {note}" for note in journal_outcome.notes(root, run)]
        if options.apply and _known_to_the_journal(engine, run, row):
            row.warnings = notes + row.warnings
            return
        revision = engine.tools.revision(untracked=True) if engine.tools is not None else None
        entry = result_cache.key(revision, run.plan_hash, options) if revision is not None else None
        if entry is None or not _from_cache(root, entry, row):
            try:
                _planned(engine, steps, options, run, row)
            except Exception as error:  # noqa: BLE001 - the row says it; a refusal is cached like any row
                _failed(row, error)
            if entry is not None:
                result_cache.keep(root, entry, row)
        row.warnings = notes + row.warnings
    finally:
        row.costs["server_start"] += engine.services.start_seconds() if engine.services is not None else 0.0
        engine.close()


def _planned(engine: Engine, steps: Any, options: FleetOptions, run: FleetRun, row: FleetRow) -> None:
    began = time.monotonic()
    kept = kept_scratch.for_this_thread()
    started = kept.start_seconds()
    copy = kept.engine_for(engine)  # this thread's copy, made equal to the repository, its servers kept
    try:
        trial, states = plan_in_copy(copy, engine.workspace.root, steps, None)
    finally:
        kept.done_with(copy)
        row.costs["plan"] = time.monotonic() - began
        # Only the starts this plan waited for: a server kept from an earlier repository costs nothing here.
        row.costs["server_start"] += kept.start_seconds() - started
    row.files = [s.path for s in states]
    row.edits = trial.edits
    row.source, row.confidence = trial.source.value, trial.confidence.value
    row.warnings += [warning for step in trial.steps for warning in step.warnings]
    row.patch_text, left_out = git_patch(states)
    row.warnings += [f"{path} is not UTF-8 text: left out of the patch" for path in left_out]
    if options.apply:
        _apply(engine, states, options, run, row)  # the transaction's own guard refuses dirty files
    else:
        _check_clean(engine.tools, states, options, row)
        _plan_only(engine, engine.workspace.root, states, options, row)


def _from_cache(root: Path, entry: str, row: FleetRow) -> bool:
    """The row an earlier run computed on this same commit, plan, options and engine."""
    data = result_cache.cached_row(root, entry)
    if data is None:
        return False
    earlier = FleetRow.from_json(data["row"])
    for name in ("status", "files", "edits", "source", "confidence", "warnings", "reason", "verify_status",
                 "verify_tail", "baseline_status", "baseline_tail"):
        setattr(row, name, getattr(earlier, name))
    row.patch_text = str(data.get("patch_text") or "")
    row.cached = f"{data.get('at', 'an earlier run')} (run {earlier.run or 'unknown'}; same commit, plan, options and engine)"
    return True


def _known_to_the_journal(engine: Engine, run: FleetRun, row: FleetRow) -> bool:
    state = engine.transactions.request_state(run.request)
    if state.committed:
        journal_outcome.report_committed(engine.workspace.root, state.committed, run, row)
        return True
    if state.in_progress:
        row.status = BUSY
        row.reason = ("another task of this run is writing this repository now (its outcome is not known yet); "
                      "run again with --resume once it has finished")
        return True
    return False


def _check_clean(tools: Tools | None, states: list[FileState], options: FleetOptions, row: FleetRow) -> None:
    """A dry run's patch over files with uncommitted or untracked changes would not apply to a
    clean checkout of HEAD: refused, as --apply refuses them (stricter than --apply's guard,
    which lets codegraft's own earlier transactions pass: the patch is still against them), or
    with --allow-dirty a warning that the patch is against the working tree."""
    if tools is None:
        return
    dirty = sorted(tools.dirty_files([s.path for s in states]))
    if not dirty:
        return
    if options.allow_dirty:
        row.warnings.append(f"uncommitted or untracked changes in {', '.join(dirty)}: the patch is against the working "
                            "tree, not a clean checkout of HEAD")
        return
    raise DirtyFiles(f"the plan touches files with uncommitted or untracked changes: {', '.join(dirty)}; commit or stash "
                     "them (a patch over them would not apply to a clean checkout), or pass --allow-dirty; nothing was changed")


def _apply(engine: Engine, states: list[FileState], options: FleetOptions, run: FleetRun, row: FleetRow) -> None:
    root = engine.workspace.root
    tools = engine.tools
    after: list[tuple[int, str]] = []

    def settle(files: list[FileSummary]) -> None:
        if options.verify:
            if tools is None:
                raise VerifyFailed("cannot run the verify command: no process support is installed; nothing was changed")
            began = time.monotonic()
            status, output = tools.run(options.verify)
            row.costs["verify"] = time.monotonic() - began
            after.append((status, output))
            row.verify_status, row.verify_tail = status, output[-TAIL:]
            if status != 0:
                raise VerifyFailed(f"`{options.verify}` failed with status {status} after the change")
        if not run.alive():
            journal_outcome.leave_note(root, run, "its driver had gone when it was about to commit: the change was "
                                                  "rolled back, and nothing of it stays")
            raise RunGone(f"the driver of run {run.run_id} has gone: the change was rolled back before its commit")
        if engine.transactions.request_state(run.request).committed:
            raise _CommittedMeanwhile()
        journal_outcome.keep_row(root, run, row)

    try:
        outcome = engine.transactions.apply(edit_from(engine, states),
                                            ApplyOptions(allow_dirty=options.allow_dirty, request=run.request), settle)
    except VerifyFailed:
        if not after or tools is None or options.verify is None:
            raise
        # The journal has put the old files back: the baseline runs on the repository as it was.
        _judge(row, options.verify, after[0], _timed_baseline(row, root, tools, options.verify,
                                                              lambda: tools.run(options.verify or "")), "was rolled back")
        return
    except _CommittedMeanwhile:
        _known_to_the_journal(engine, run, row)
        return
    row.status, row.transaction = "applied", outcome.transaction


def _plan_only(engine: Engine, root: Path, states: list[FileState], options: FleetOptions, row: FleetRow) -> None:
    """The verify in a scratch copy with the change; when it fails, the same copy without it."""
    row.status = "planned"
    if not options.verify:
        return
    command = options.verify
    with tempfile.TemporaryDirectory(prefix="graft-fleet-") as scratch:
        copy = Path(scratch) / root.name
        shutil.copytree(root, copy, symlinks=True, ignore=shutil.ignore_patterns(".graft"))
        _write(copy, states, after=True)
        tools = load_tools(Workspace(copy))
        if tools is None or engine.tools is None:
            raise VerifyFailed("cannot run the verify command: no process support is installed; nothing was changed")
        began = time.monotonic()
        status, output = tools.run(command)
        row.costs["verify"] = time.monotonic() - began
        row.verify_status, row.verify_tail = status, output[-TAIL:]
        if status == 0:
            return

        def without_the_change() -> tuple[int, str]:
            _write(copy, states, after=False)
            return tools.run(command)

        _judge(row, command, (status, output), _timed_baseline(row, root, engine.tools, command, without_the_change),
               "nothing was changed")


def _timed_baseline(row: FleetRow, root: Path, tools: Tools, command: str, run: Callable[[], tuple[int, str]]) -> Baseline:
    began = time.monotonic()
    try:
        return baseline(root, tools, command, run)
    finally:
        row.costs["baseline"] = time.monotonic() - began


def _judge(row: FleetRow, command: str, after: tuple[int, str], before: Baseline, undone: str) -> None:
    row.verify_status, row.verify_tail = after[0], after[1][-TAIL:]
    row.baseline_status, row.baseline_tail = before.status, before.output[-TAIL:]
    row.patch_text = ""
    if before.status != 0:
        row.status = "baseline_failed"
        row.reason = (f"{before.describe(command)}, and with status {after[0]} after it: the repository is red "
                      f"without the change; {undone}")
    else:
        row.status = "verify_failed"
        row.reason = f"`{command}` failed with status {after[0]} after the change and passed before it; {undone}"


def _write(copy: Path, states: list[FileState], *, after: bool) -> None:
    for state in states:
        target = copy / state.path
        content = state.after if after else state.before
        if content is None:
            target.unlink(missing_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        if state.mode is not None:
            target.chmod(state.mode)
