"""``replace``: a symbol's whole declaration, decorators included (its doc comment too when
asked); the new text is re-indented to fit."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from engine.names import parse_address
from engine.refactor import symbol_edits
from engine.refactor.plan import RefactorPlan
from engine.refactor.syntactic_target import span_target

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext
    from engine.refactor.operations.replace_symbol import Replace


def plan(operation: Replace, context: PlanContext) -> RefactorPlan:
    symbol, notes = span_target(context, parse_address(operation.address))
    source = context.workspace.read(symbol.file)
    planned = symbol_edits.plan_replace(symbol, source, operation.text, include_doc_comment=operation.include_doc_comment)
    return replace(planned, warnings=[*notes, *planned.warnings])
