"""``insert-before`` / ``insert-after``: code beside a symbol, with the language's blank lines
(before goes above the symbol's doc comment); the text is re-indented to fit."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from engine.names import parse_address
from engine.refactor import symbol_edits
from engine.refactor.plan import RefactorPlan
from engine.refactor.syntactic_target import span_target

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext
    from engine.refactor.operations.insert_text import _Insert


def plan(operation: _Insert, context: PlanContext) -> RefactorPlan:
    symbol, notes = span_target(context, parse_address(operation.address))
    planned = symbol_edits.plan_insert(symbol, context.workspace.read(symbol.file), operation.text, before=operation.before)
    return replace(planned, warnings=[*notes, *planned.warnings])
