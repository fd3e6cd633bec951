"""``extract-function``: Python's own implementation on LibCST (engine.refactor.python.extract_expression
for one expression, engine.refactor.python.extract_function for whole statements);
TypeScript, JavaScript and Go through their servers' refactorings (engine.refactor.code_actions);
other languages are refused (``unsupported_language``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.refactor.code_actions import extract_function, is_served
from engine.refactor.plan import RefactorPlan
from engine.refactor.selection import python_only, select

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext
    from engine.refactor.operations.extract_function import ExtractFunction


def plan(operation: ExtractFunction, context: PlanContext) -> RefactorPlan:
    from engine.refactor.python.extract_expression import plan_extract_function

    selection = select(context, operation.address, operation.lines, operation.match)
    if is_served(selection):
        return extract_function(context, operation, selection, operation.new_name)
    python_only(selection, operation.name)
    return plan_extract_function(selection, operation.new_name)
