"""``introduce-parameter``: Python's own implementation on LibCST
(engine.refactor.python.introduce_parameter); other languages are refused (``unsupported_language``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.refactor.plan import RefactorPlan
from engine.refactor.selection import python_files_naming, python_only, select

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext
    from engine.refactor.operations.introduce_parameter import IntroduceParameter
    from engine.refactor.python.method_calls import MethodReferences
    from engine.workspace import SourceFile


def plan(operation: IntroduceParameter, context: PlanContext) -> RefactorPlan:
    from engine.refactor.python.introduce_parameter import (
        class_and_base_names, enclosing_function_name, enclosing_method_path, plan_introduce_parameter,
    )

    selection = select(context, operation.address, match=operation.match)
    python_only(selection, operation.name)
    # Only a value passed at the calls reaches other files: a default changes this one alone.
    others = python_files_naming(context, enclosing_function_name(selection), selection.source.path) if operation.pass_at_calls else []
    method = enclosing_method_path(selection) if operation.pass_at_calls else None
    references = None
    if method is not None:
        seen = {selection.source.path, *(source.path for source in others)}
        hierarchy = {source.path: source for name in class_and_base_names(selection)
                     for source in python_files_naming(context, name, selection.source.path) if source.path not in seen}
        references = _method_references(context, selection.source.path, method, list(hierarchy.values()))
    return plan_introduce_parameter(selection, operation.new_name, pass_at_calls=operation.pass_at_calls,
                                    allow_reordering=operation.allow_reordering, other_files=others,
                                    method_references=references)


def _method_references(context: PlanContext, path: str, method: str, hierarchy: list[SourceFile]) -> MethodReferences:
    """Where the references port (the language server, else the project graph) finds the method's
    name: its calls are ``obj.method(...)``, which take the receiver's type to tell apart."""
    from engine.refactor.python.method_calls import MethodReferences

    found = context.references(f"{path}:{method}")
    places = frozenset((location.file, location.range.start) for location in found.locations if location.inside_workspace)
    return MethodReferences(places, found.source.value, hierarchy)
