"""``insert-before`` / ``insert-after``: code beside a symbol, with the language's blank lines
(before goes above the symbol's doc comment); the text is re-indented to fit."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.names import parse_address
from engine.refactor import symbol_edits
from engine.refactor.plan import RefactorPlan

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext
    from engine.refactor.operations.insert_text import _Insert


def plan(operation: _Insert, context: PlanContext) -> RefactorPlan:
    symbol = context.resolve(parse_address(operation.address))
    return symbol_edits.plan_insert(symbol, context.workspace.read(symbol.file), operation.text, before=operation.before)
