"""``introduce-parameter``: Python's own implementation on LibCST
(engine.refactor.python.introduce_parameter); other languages are refused (``unsupported_language``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.refactor.plan import RefactorPlan
from engine.refactor.selection import python_files_naming, python_only, select

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext
    from engine.refactor.operations.introduce_parameter import IntroduceParameter


def plan(operation: IntroduceParameter, context: PlanContext) -> RefactorPlan:
    from engine.refactor.python.introduce_parameter import enclosing_function_name, plan_introduce_parameter

    selection = select(context, operation.address, match=operation.match)
    python_only(selection, operation.name)
    # Only a value passed at the calls reaches other files: a default changes this one alone.
    others = python_files_naming(context, enclosing_function_name(selection), selection.source.path) if operation.pass_at_calls else []
    return plan_introduce_parameter(selection, operation.new_name, pass_at_calls=operation.pass_at_calls,
                                    allow_reordering=operation.allow_reordering, other_files=others)
