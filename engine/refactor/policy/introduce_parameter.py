"""``introduce-parameter``: Python's own implementation on LibCST
(engine.refactor.python.introduce_parameter); other languages are refused (``unsupported_language``).

A method's value passed at the calls goes to its whole family: every same-named method of the
classes above and below its class that the graph links (what a call through any of them may
reach). Each member's bases are followed by jedi too: a member that overrides a method outside
the workspace (a library or standard library base calls it, without the new argument) refuses
``overrides_base``, a base nothing can follow refuses ``base_unresolved``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.errors import BaseUnresolved, OverridesBase, SymbolNotFound
from engine.names import parse_address
from engine.refactor.plan import RefactorPlan
from engine.refactor.python.overrides import overridden_methods
from engine.refactor.selection import python_files_naming, python_only, select

if TYPE_CHECKING:
    from engine.positions import Position
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
        family = _family(context, selection.source.path, method)
        seen = {selection.source.path, *(source.path for source in others)}
        classes = {*class_and_base_names(selection), *(name_path.split("/")[-2] for _path, name_path in family)}
        hierarchy = {source.path: source for name in sorted(classes)
                     for source in python_files_naming(context, name, selection.source.path) if source.path not in seen}
        references = _method_references(context, family, list(hierarchy.values()))
    return plan_introduce_parameter(selection, operation.new_name, pass_at_calls=operation.pass_at_calls,
                                    allow_reordering=operation.allow_reordering, other_files=others,
                                    method_references=references)


def _family(context: PlanContext, path: str, method: str) -> list[tuple[str, str]]:
    """``(file, Class/method)`` of the method and of every member of its family, the method first;
    each checked to override nothing outside the workspace."""
    try:
        linked = context.graph().hierarchy_methods(f"{path}:{method}")
    except SymbolNotFound:
        linked = []
    members = [(path, method), *((ref.path, ref.name_path) for ref in linked
                                 if ref.name_path is not None and (ref.path, ref.name_path) != (path, method))]
    inside = set(context.workspace_files())
    for member_path, name_path in members:
        symbol = context.resolve_binding(parse_address(f"{member_path}:{name_path}"))[-1]
        bases = overridden_methods(context.workspace, context.graph(), symbol)
        outside = [str(base) for base in bases.overridden if base.where not in inside]
        if outside:
            raise OverridesBase(
                f"{member_path}:{symbol.selection_range.start.line + 1}: {name_path.replace('/', '.')} overrides "
                + ", ".join(outside) + ", outside the workspace: its code calls the method without the new argument. "
                "Nothing was changed; introduce the parameter with a default instead")
        if bases.unresolved:
            raise BaseUnresolved(
                f"{member_path}:{symbol.selection_range.start.line + 1}: cannot tell whether {name_path.replace('/', '.')} "
                "overrides a method of " + ", ".join(bases.unresolved) + " (the base could not be followed, by the graph "
                "or by jedi), whose calls would miss the new argument. Nothing was changed; check that the base's package "
                "is importable, or introduce the parameter with a default instead")
    return members


def _method_references(context: PlanContext, family: list[tuple[str, str]], hierarchy: list[SourceFile]) -> MethodReferences:
    """Where the references port (the language server, else the project graph) finds each member's
    name: its calls are ``obj.method(...)``, which take the receiver's type to tell apart."""
    from engine.refactor.python.method_calls import MethodReferences

    places: set[tuple[str, Position]] = set()
    source = "ast"
    for path, name_path in family:
        found = context.references(f"{path}:{name_path}")
        places.update((location.file, location.range.start) for location in found.locations if location.inside_workspace)
        source = found.source.value if (path, name_path) == family[0] else source
    return MethodReferences(frozenset(places), source, hierarchy, tuple(family[1:]))
