"""Go's passes over a refactoring's plan (the module engine.refactor.language_passes calls)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from engine.edits.model import FileChange
from engine.errors import Refused, ServiceUnavailable
from engine.refactor.go import foreign_uses, gofmt, rename_checks
from engine.refactor.operations.rename_symbol import Rename
from engine.refactor.plan import RefactorPlan
from engine.symbols import Source

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext, RefactorOperation


def finish(plan: RefactorPlan, context: PlanContext, operation: RefactorOperation) -> RefactorPlan:
    if isinstance(operation, Rename) and plan.source is Source.LSP and context.services is not None:
        old_name = _replaced_name(plan, context)
        unchecked = foreign_uses.check(plan.edit, context.workspace, context.services, old_name, operation.new_name)
        plan = replace(plan, warnings=[*plan.warnings, *unchecked]) if unchecked else plan
    return gofmt.keep_gofmt(plan, context.workspace, context.tools)


def server_refusal(error: ServiceUnavailable, old_name: str, new_name: str) -> Refused | None:
    return rename_checks.server_refusal(error, old_name, new_name)


def _replaced_name(plan: RefactorPlan, context: PlanContext) -> str:
    """The name a rename's first edit replaces (the old name, for messages)."""
    for change in plan.edit.operations:
        if isinstance(change, FileChange) and change.edits:
            source = context.workspace.read(change.path)
            span = change.edits[0].range
            if span.start.line == span.end.line and span.start.line < len(source.line_starts):
                start = source.line_starts[span.start.line]
                return source.text[start + span.start.column:start + span.end.column]
    return "the name"
