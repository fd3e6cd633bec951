"""``inline``: Python's own implementation on LibCST, of a local variable
(engine.refactor.python.inline_variable) or of a function (engine.refactor.python.inline_calls): at
one call when the address is that call's span, at every call in the workspace when it names the
function; TypeScript, JavaScript and Go through their
servers' refactorings at a position (engine.refactor.code_actions: a variable, or a Go call); other
languages are refused (``unsupported_language``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.errors import UsageError
from engine.refactor.code_actions import inline, is_served
from engine.refactor.plan import RefactorPlan
from engine.refactor.selection import Selection, python_files_naming, python_only, select
from engine.symbols import SymbolKind

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext
    from engine.refactor.operations.inline_symbol import Inline


def plan(operation: Inline, context: PlanContext) -> RefactorPlan:
    selection = select(context, operation.address, match=operation.match)
    if is_served(selection):
        if selection.symbol is not None and not operation.match:
            raise UsageError(f"inline in {selection.source.path} is its server's, at one place: give FILE:LINE:COL on the "
                             "variable or call, or a name path with --match")
        return inline(context, operation, selection)
    python_only(selection, operation.name)
    symbol = selection.symbol
    if symbol is not None and not operation.match and symbol.kind in (SymbolKind.FUNCTION, SymbolKind.METHOD):
        return _inline_function(selection, context, operation.allow_reordering)
    import libcst as cst

    from engine.refactor.python.inline_calls import plan_inline_call
    from engine.refactor.python.inline_variable import plan_inline_variable
    from engine.refactor.python.span_nodes import expression_at, read_tree, trimmed

    tree = read_tree(selection.source)
    selected = expression_at(tree, trimmed(tree, selection.range)) if selection.range.start != selection.range.end else None
    if isinstance(selected, cst.Call):  # a call: its function inlined there only
        return plan_inline_call(tree, selected, allow_reordering=operation.allow_reordering)
    return plan_inline_variable(selection, allow_reordering=operation.allow_reordering)


def _inline_function(selection: Selection, context: PlanContext, allow_reordering: bool) -> RefactorPlan:
    from engine.refactor.python.inline_calls import plan_inline_function
    from engine.refactor.python.inline_function import NotInlinable, function_at
    from engine.refactor.python.span_nodes import read_tree
    from engine.refactor.python.unused_imports import pruned

    symbol = selection.symbol
    if symbol is None:
        raise TypeError("a function's inline needs its symbol")
    tree = read_tree(selection.source)
    start = symbol.selection_range.start
    function = function_at(tree, start.line, start.column)
    if function is None:
        raise NotInlinable(f"{symbol.name_path} is not a def in {selection.source.path}; only a function is inlined")
    others = python_files_naming(context, function.name.value, selection.source.path)
    planned = plan_inline_function(tree, function, others, allow_reordering=allow_reordering)
    # The definition goes: the imports only it read go too (the inlined code in this module reads them still, if it does).
    return pruned(context.workspace, planned, selection.source)
