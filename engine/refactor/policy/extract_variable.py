"""``extract-variable``: Python's own implementation on LibCST (engine.refactor.python.extract_variable);
TypeScript, JavaScript and Go through their servers' refactorings (engine.refactor.code_actions);
other languages are refused (``unsupported_language``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.refactor.code_actions import extract_variable, is_served
from engine.refactor.plan import RefactorPlan
from engine.refactor.selection import python_only, select

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext
    from engine.refactor.operations.extract_variable import ExtractVariable


def plan(operation: ExtractVariable, context: PlanContext) -> RefactorPlan:
    from engine.refactor.python.extract_variable import plan_extract_variable

    selection = select(context, operation.address, operation.lines, operation.match)
    if is_served(selection):
        return extract_variable(context, operation, selection, operation.new_name, constant=operation.constant)
    python_only(selection, operation.name)
    return plan_extract_variable(selection, operation.new_name, constant=operation.constant,
                                 allow_reordering=operation.allow_reordering)
