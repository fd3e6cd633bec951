"""``inline``: Python's own implementation on LibCST (engine.refactor.python.inline_variable);
other languages are refused (``unsupported_language``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.refactor.plan import RefactorPlan
from engine.refactor.selection import python_only, select

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext
    from engine.refactor.operations.inline_symbol import Inline


def plan(operation: Inline, context: PlanContext) -> RefactorPlan:
    from engine.refactor.python.inline_variable import plan_inline_variable

    selection = select(context, operation.address, match=operation.match)
    python_only(selection, operation.name)
    return plan_inline_variable(selection, allow_reordering=operation.allow_reordering)
