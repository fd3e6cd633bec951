"""``introduce-parameter``: Python's own implementation on LibCST
(engine.refactor.python.introduce_parameter); other languages are refused (``unsupported_language``)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from engine.languages import profile_of
from engine.refactor.plan import RefactorPlan
from engine.refactor.selection import Selection, python_only, select
from engine.workspace import SourceFile

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext
    from engine.refactor.operations.introduce_parameter import IntroduceParameter


def plan(operation: IntroduceParameter, context: PlanContext) -> RefactorPlan:
    from engine.refactor.python.introduce_parameter import plan_introduce_parameter

    selection = select(context, operation.address, match=operation.match)
    python_only(selection, operation.name)
    others = _files_naming(context, selection, operation) if operation.pass_at_calls else []
    return plan_introduce_parameter(selection, operation.new_name, pass_at_calls=operation.pass_at_calls,
                                    allow_reordering=operation.allow_reordering, other_files=others)


def _files_naming(context: PlanContext, selection: Selection, operation: IntroduceParameter) -> list[SourceFile]:
    """The workspace's other Python files whose text names the function around the selection."""
    from engine.refactor.python.introduce_parameter import enclosing_function_name

    name = enclosing_function_name(selection)
    word = re.compile(rf"\b{re.escape(name)}\b")
    found = []
    for path in context.workspace_files():
        language = profile_of(path)
        if path == selection.source.path or language is None or language.family != "python":
            continue
        source = context.workspace.read(path)
        if word.search(source.text):
            found.append(source)
    return found
