"""A list of refactorings run as one unit (``graft batch PLAN``).

Each step is planned on the files as the steps before it left them. By default the
steps run in a scratch copy of the workspace (which is only read); the net change is
then one WorkspaceEdit: shown as a diff (dry run), or with ``apply`` written as one
journaled transaction: all files or none, one undo. A refused step stops the batch
with nothing changed. With ``each`` (and ``apply``), every step is its own transaction
on the workspace, and the steps before a refusal stay applied.

PLAN is a JSON, YAML or TOML file: a list of steps (``{"op": "rename", "address": …,
"new_name": …}``), or ``{"steps": [...]}`` / TOML ``[[step]]`` tables.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from engine.api import Engine
from engine.edits.diff import FileSummary, summarize, unified_diff
from engine.edits.plan import FileState
from engine.edits.model import CreateFile, DeleteFile, FileChange, Operation, WorkspaceEdit
from engine.edits.session import EditOptions
from engine.errors import GraftError, Refused, UsageError
from engine.refactor.plan import RefactorPlan
from engine.refactor.pysource import line_edits
from engine.workspace import Workspace, decode_source

_STEP_FIELDS: dict[str, tuple[str, ...]] = {
    "rename": ("address", "new_name"),
    "move": ("address", "dest"),
    "rename-file": ("old", "new"),
    "replace": ("address", "text"),
    "insert-before": ("address", "text"),
    "insert-after": ("address", "text"),
    "delete": ("address",),
}


class BatchStepRefused(Refused):
    code = "batch_refused"


@dataclass(frozen=True)
class StepOutcome:
    index: int
    op: str
    target: str
    source: str
    confidence: str
    files: list[str]
    warnings: list[str]
    transaction: str | None = None


@dataclass
class BatchOutcome:
    applied: bool
    steps: list[StepOutcome] = field(default_factory=list)
    diff: str = ""
    files: list[FileSummary] = field(default_factory=list)
    verify_output: str = ""
    """The tail of what ``--verify`` printed, when it ran."""


def load_plan(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise UsageError(f"cannot read the batch plan {path}: {error}") from None
    try:
        if path.suffix == ".toml":
            data: Any = tomllib.loads(text)
        elif path.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except Exception as error:  # noqa: BLE001 - three parsers, three error types: one usage error
        raise UsageError(f"{path} is not valid {path.suffix.lstrip('.') or 'JSON'}: {error}") from None
    steps = data.get("steps", data.get("step")) if isinstance(data, dict) else data
    if not isinstance(steps, list) or not steps:
        raise UsageError(f"{path} holds no steps: give a list of {{op: ..., ...}} (or steps = [...], or [[step]] in TOML)")
    for index, step in enumerate(steps, 1):
        if not isinstance(step, dict) or step.get("op") not in _STEP_FIELDS:
            raise UsageError(f"step {index} of {path}: op must be one of {', '.join(_STEP_FIELDS)}")
        missing = [name for name in _STEP_FIELDS[step["op"]] if not isinstance(step.get(name), str)]
        if missing:
            raise UsageError(f"step {index} ({step['op']}) of {path} lacks {', '.join(missing)}")
    return steps


def plan_step(engine: Engine, step: dict[str, Any]) -> RefactorPlan:
    op = step["op"]
    if op == "rename":
        return engine.plan_rename(step["address"], step["new_name"], text=bool(step.get("text")), mirrors=bool(step.get("mirrors", True)))
    if op == "move":
        return engine.plan_move(step["address"], step["dest"], create=bool(step.get("create")), shim=bool(step.get("shim")),
                                import_check=bool(step.get("import_check", True)))
    if op == "rename-file":
        return engine.plan_rename_file(step["old"], step["new"], import_check=bool(step.get("import_check", True)))
    if op == "replace":
        return engine.plan_replace(step["address"], step["text"])
    if op in ("insert-before", "insert-after"):
        return engine.plan_insert(step["address"], step["text"], before=op == "insert-before")
    return engine.plan_delete(step["address"])


def run_batch(
    engine: Engine, steps: list[dict[str, Any]], *, apply: bool, each: bool = False,
    options: EditOptions | None = None, scratch_engine: Callable[[Path], Engine] | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> BatchOutcome:
    chosen = options or EditOptions(allow_dirty=engine.settings.allow_dirty)
    if apply and each:
        return _step_by_step(engine, steps, chosen, progress)
    trial, states = _in_scratch(engine, steps, scratch_engine, progress)
    if not apply:
        return BatchOutcome(False, trial.steps, unified_diff(states), summarize(states))
    # The whole batch as one transaction: one journal entry, one undo, all files or none.
    written = engine.edits().apply(_edit_from(engine, states), chosen)
    steps_out = [replace(s, transaction=written.applied.transaction) for s in trial.steps]
    return BatchOutcome(True, steps_out, unified_diff(states), list(written.applied.files), written.verify_output)


def _step_by_step(
    engine: Engine, steps: list[dict[str, Any]], options: EditOptions, progress: Callable[[int, int, str], None] | None,
) -> BatchOutcome:
    """Every step its own transaction; a refusal stops the batch and leaves earlier steps applied."""
    outcome = BatchOutcome(applied=True)
    for index, step in enumerate(steps, 1):
        if progress is not None:
            progress(index, len(steps), _target(step))
        try:
            plan = plan_step(engine, step)
            own = frozenset(f.path for f in outcome.files)
            applied = engine.edits().apply(plan.edit, replace(options, own_changes=own)).applied
        except GraftError as error:
            kept = f"; steps 1-{index - 1} stay applied (--each)" if outcome.steps else ""
            raise BatchStepRefused(f"step {index} ({step['op']} {_target(step)}) was refused: {error.message}{kept}") from None
        outcome.steps.append(_outcome(index, step, plan, [f.path for f in applied.files], applied.transaction))
        outcome.files += applied.files
    return outcome


def _in_scratch(
    engine: Engine, steps: list[dict[str, Any]], scratch_engine: Callable[[Path], Engine] | None,
    progress: Callable[[int, int, str], None] | None,
) -> tuple[BatchOutcome, list[FileState]]:
    """Every step applied in a scratch copy of the workspace (which is only read), and the
    before/after of every file the batch changes."""
    root = engine.workspace.root
    with tempfile.TemporaryDirectory(prefix="graft-batch-") as scratch:
        copy = Path(scratch) / root.name
        shutil.copytree(root, copy, symlinks=True, ignore=shutil.ignore_patterns(".git", ".graft"))
        trial = scratch_engine(copy) if scratch_engine is not None else Engine(Workspace(copy), source=engine.source, tools=engine.tools)
        try:
            outcome = _step_by_step(trial, steps, EditOptions(allow_dirty=True), progress)
        except BatchStepRefused as refused:
            message = refused.message.replace(" stay applied (--each)", " were planned")
            raise BatchStepRefused(f"{message}; nothing was changed") from None
        finally:
            trial.close()
        states = []
        for path in sorted({f.path for f in outcome.files}):
            original, after = root / path, copy / path
            before_bytes = original.read_bytes() if original.is_file() else None
            after_bytes = after.read_bytes() if after.is_file() else None
            mode = (after if after.exists() else original).stat().st_mode & 0o777
            states.append(FileState(path, before_bytes, after_bytes, mode))
    steps_out = [replace(s, transaction=None) for s in outcome.steps]
    return BatchOutcome(False, steps_out), [s for s in states if s.changed]


def _edit_from(engine: Engine, states: list[FileState]) -> WorkspaceEdit:
    """The batch's net effect on the workspace, checked against the hashes it was computed from."""
    operations: list[Operation] = []
    for state in states:
        if state.after is None:
            operations.append(DeleteFile(state.path))
        elif state.before is None:
            operations.append(CreateFile(state.path, state.after.decode("utf-8")))
        else:
            source = engine.workspace.read(state.path)
            if hashlib.sha256(state.before).hexdigest() != source.sha256:
                raise BatchStepRefused(f"{state.path} changed while the batch was planned; run it again")
            new_text = decode_source(state.path, state.after, 0.0).text
            operations.append(FileChange(state.path, line_edits(source.text, new_text), source.sha256))
    return WorkspaceEdit(tuple(operations))


def _outcome(index: int, step: dict[str, Any], plan: RefactorPlan, files: list[str], transaction: str | None) -> StepOutcome:
    return StepOutcome(index, step["op"], _target(step), plan.source.value, plan.confidence.value, files, plan.warnings, transaction)


def _target(step: dict[str, Any]) -> str:
    return str(step.get("address") or f"{step.get('old')} -> {step.get('new')}")
