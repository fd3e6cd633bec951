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
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from engine.answers import Diagnostic
from engine.api import Engine
from engine.edits.diff import FileSummary, summarize, unified_diff
from engine.edits.outcome import EditOutcome, StepOutcome
from engine.edits.materialize import FileState
from engine.edits.model import CreateFile, DeleteFile, FileChange, Operation, WorkspaceEdit
from engine.edits.session import EditOptions
from engine.edits.verification import CheckMode, capped
from engine.errors import GraftError, Refused, UsageError
from engine.ports import load_language_services
from engine.refactor.operations import RefactorOperation, build
from engine.edits.text import line_edits
from engine.symbols import Confidence, Source
from engine.workspace import Workspace, decode_source

class BatchStepRefused(Refused):
    code = "batch_refused"


def load_plan(path: Path) -> list[RefactorOperation]:
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
    return plan_steps(data, str(path))


def plan_steps(data: Any, origin: str) -> list[RefactorOperation]:
    """A batch plan's steps as operations: a list of ``{"op": ..., fields}``, or ``{"steps": [...]}``
    (``[[step]]`` tables in TOML). Every step is checked before any runs."""
    steps = data.get("steps", data.get("step")) if isinstance(data, dict) else data
    if not isinstance(steps, list) or not steps:
        raise UsageError(f"{origin} holds no steps: give a list of {{op: ..., ...}} (or steps = [...], or [[step]] in TOML)")
    operations = []
    for index, step in enumerate(steps, 1):
        where = f"step {index} of {origin}"
        if not isinstance(step, dict):
            raise UsageError(f"{where} is not a table of op and fields")
        fields = {key: value for key, value in step.items() if key != "op"}
        operations.append(build(step.get("op"), fields, where=where))
    return operations


def run_batch(
    engine: Engine, steps: list[RefactorOperation], *, apply: bool, each: bool = False,
    options: EditOptions | None = None, scratch_engine: Callable[[Path], Engine] | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> EditOutcome:
    chosen = options or EditOptions(allow_dirty=engine.settings.allow_dirty)
    if apply and each:
        return _step_by_step(engine, steps, chosen, progress)
    trial, states = plan_in_scratch(engine, steps, scratch_engine, progress)
    diff = unified_diff(states)
    if not apply:
        return replace(trial, files=summarize(states), diff=diff)
    # The whole batch as one transaction: one journal entry, one undo, all files or none.
    written = engine.edits().apply(edit_from(engine, states), chosen)
    steps_out = [replace(s, transaction=written.transaction) for s in trial.steps]
    provenance = _provenance(steps_out)
    if written.verification is not None and "confidence" in provenance:
        # As any apply's: what the check of the net change covered bounds what the batch may claim.
        provenance["confidence"] = capped(provenance["confidence"], written.verification.label()[0])
    return replace(written, operation="batch", steps=steps_out, diff=diff, edits=trial.edits, **provenance)


def _step_by_step(
    engine: Engine, steps: list[RefactorOperation], options: EditOptions, progress: Callable[[int, int, str], None] | None,
    *, scratch: bool = False,
) -> EditOutcome:
    """Every step its own transaction; a refusal stops the batch and leaves earlier steps applied.
    Each step's check is its own (``scratch``: none is had, the copy's errors are nobody's answer)."""
    done: list[StepOutcome] = []
    files: list[FileSummary] = []
    new_errors: list[Diagnostic] = []
    edits = 0
    for index, step in enumerate(steps, 1):
        if progress is not None:
            progress(index, len(steps), step.target())
        try:
            plan = engine.plan(step)
            own = frozenset(f.path for f in files)
            applied = engine.edits().apply(plan.edit, replace(options, own_changes=own))
        except GraftError as error:
            kept = f"; steps 1-{index - 1} stay applied (--each)" if done else ""
            raise BatchStepRefused(f"step {index} ({step.name} {step.target()}) was refused: {error.message}{kept}") from None
        checked = None if scratch else applied.verification
        confidence = capped(plan.confidence, checked.label()[0]) if checked is not None else plan.confidence
        done.append(StepOutcome(index, step.name, step.target(), plan.source, confidence, [f.path for f in applied.files],
                                plan.warnings, applied.transaction, checked))
        files += applied.files
        edits += plan.edit.edit_count
        new_errors += applied.new_diagnostics
    last = done[-1].transaction if done else None
    # Each step was checked on its own: the batch says each step's line, and is complete when no step left files for later.
    checks = [s.verification for s in done if s.verification is not None]
    note = "; ".join(f"step {s.index}: {s.verification.summary()}" for s in done if s.verification is not None)
    return EditOutcome("batch", True, files, last, edits, steps=done, new_diagnostics=new_errors, diagnostics_note=note,
                       diagnostics_complete=not any(v.pending for v in checks), diagnostics_checked=bool(checks),
                       **_provenance(done))


def plan_in_scratch(
    engine: Engine, steps: list[RefactorOperation], scratch_engine: Callable[[Path], Engine] | None,
    progress: Callable[[int, int, str], None] | None,
) -> tuple[EditOutcome, list[FileState]]:
    """Every step applied in a scratch copy of the workspace (which is only read), and the
    before/after of every file the batch changes."""
    root = engine.workspace.root
    with tempfile.TemporaryDirectory(prefix="graft-batch-") as scratch:
        copy = Path(scratch) / root.name
        shutil.copytree(root, copy, symlinks=True, ignore=shutil.ignore_patterns(".git", ".graft"))
        trial = scratch_engine(copy) if scratch_engine is not None else scratch_engine_like(engine, copy)
        try:
            return plan_in_copy(trial, root, steps, progress)
        finally:
            trial.close()


def plan_in_copy(
    trial: Engine, root: Path, steps: list[RefactorOperation], progress: Callable[[int, int, str], None] | None,
) -> tuple[EditOutcome, list[FileState]]:
    """Every step applied in ``trial``'s workspace, a copy of ``root`` (which is only read), and
    the before/after of every file the batch changes."""
    copy = trial.workspace.root
    try:
        # Each step written in the copy for the next to plan on; the copy's errors are not the
        # batch's answer (its net effect is checked where it is applied), so none are compared.
        outcome = _step_by_step(trial, steps, EditOptions(allow_dirty=True, check=CheckMode.NONE), progress, scratch=True)
    except BatchStepRefused as refused:
        message = refused.message.replace(" stay applied (--each)", " were planned")
        raise BatchStepRefused(f"{message}; nothing was changed") from None
    states = []
    for path in sorted({f.path for f in outcome.files}):
        original, after = root / path, copy / path
        before_bytes = original.read_bytes() if original.is_file() else None
        after_bytes = after.read_bytes() if after.is_file() else None
        mode = (after if after.exists() else original).stat().st_mode & 0o777
        states.append(FileState(path, before_bytes, after_bytes, mode))
    steps_out = [replace(s, transaction=None) for s in outcome.steps]
    return replace(outcome, applied=False, transaction=None, steps=steps_out), [s for s in states if s.changed]


def scratch_engine_like(engine: Engine, copy: Path) -> Engine:
    """An engine on the scratch copy like the original: its own language servers when the original
    has servers, and the original's process tools (import checks use the project's interpreter)."""
    workspace = Workspace(copy, engine.workspace.config)  # the same size limit: what it skips, the steps name
    services = load_language_services(workspace) if engine.services is not None else None
    return Engine(workspace, services=services, tools=engine.tools, source=engine.source)


def edit_from(engine: Engine, states: list[FileState]) -> WorkspaceEdit:
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


def _provenance(steps: list[StepOutcome]) -> dict[str, Any]:
    """A batch is as trustworthy as its weakest step: the lowest confidence, and the source of that step."""
    if not steps:
        return {}
    weakest = max(steps, key=lambda s: (_CONFIDENCE_ORDER.index(s.confidence), _SOURCE_ORDER.index(s.source)))
    return {"source": weakest.source, "confidence": weakest.confidence,
            "warnings": [f"step {s.index}: {w}" for s in steps for w in s.warnings]}


_CONFIDENCE_ORDER = list(Confidence)
_SOURCE_ORDER = list(Source)
