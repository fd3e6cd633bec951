"""Extract one Python expression (a span that is exactly an expression, not whole statements) into a
function that returns it; the call replaces the expression.

The parameters are the names the expression reads that a function, lambda, comprehension or class
around it binds (a module name it reads as a global, as the new function will). As for statements
(engine.refactor.python.extract_function), it is a method, after the method, when it reads the
method's ``self`` or ``cls``; otherwise a module function after the definition that holds it, or
above the module statement when the expression runs as the module is imported (module code, a class
body, a default argument, a decorator: a function defined below would not exist yet).

What refuses: a ``yield`` (``contains_yield``: the function would be a generator); an ``await`` or
``async for`` where the call could not be awaited (``contains_await``); a ``:=`` binding a name
that code outside the expression reads (``binds_a_name``: the binding would stay in the new
function); ``locals()``, ``eval`` and the like, or, for a module function, ``super()`` and
``__private`` names (``cannot_extract_here``); an assignment target or a starred item
(``not_an_expression``); a name in use (``name_clash``); a local the expression reads only under a
condition (``a if ok else b``, ``ok and b``, a lambda's body, a comprehension's element) that may not
be bound when it runs (``may_be_unbound``, see :mod:`engine.refactor.python.guarded_reads`).
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ClassScope, ComprehensionScope, ExpressionContext, FunctionScope

from engine.edits.model import FileChange, WorkspaceEdit
from engine.edits.text import line_edits
from engine.errors import Refused
from engine.refactor.plan import RefactorPlan
from engine.refactor.python.extract_function import (
    ContainsYield, awaits, check_class_bound, check_name_free, enclosing_scopes, indent_of, indent_unit, lines_of, method_kind,
    own_nodes, placed, plan_extract_statements, receiver_for_super,
)
from engine.refactor.python.extract_variable import NotAnExpression, check_identifier
from engine.refactor.python.closure_bindings import check_closure_bindings
from engine.refactor.python.guarded_reads import check_guarded_reads
from engine.refactor.python.span_nodes import (
    CannotExtractHere, PythonTree, binding_scope, expression_at, nodes_within, read_tree, reads_locals_dynamically, statement_of,
    trimmed,
)
from engine.refactor.selection import Selection
from engine.symbols import Confidence, Source


_LOCAL_SCOPES = (FunctionScope, ComprehensionScope, ClassScope)
"""Scopes whose names a new function cannot read itself (the module's and the builtins it can)."""


class ContainsAwait(Refused):
    code = "contains_await"


class BindsAName(Refused):
    code = "binds_a_name"


_AWAITED_IN_PLACE = (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return, cst.Arg, cst.Expr)
"""Parents where ``await f(...)`` needs no parentheses of its own (elsewhere, ``await f().x`` would
await the attribute)."""


def plan_extract_function(selection: Selection, name: str) -> RefactorPlan:
    """Extract the selection into a function: one expression (not a whole expression statement)
    here, whole statements by engine.refactor.python.extract_function."""
    check_identifier(name)
    tree = read_tree(selection.source)
    span = trimmed(tree, selection.range)
    expression = expression_at(tree, span)
    if expression is not None and not isinstance(tree.parents.get(expression), cst.Expr):
        return plan_extract_expression(tree, expression, name, selection.describe())
    return plan_extract_statements(tree, span, name, selection.describe())


def plan_extract_expression(tree: PythonTree, expression: cst.BaseExpression, name: str, where: str) -> RefactorPlan:
    _check_value(tree, expression, where)
    owner, deferred = _runs_in(tree, expression)
    is_async = _check_moveable(tree, expression, owner, where)
    parameters = _parameters(tree, expression)
    check_guarded_reads(tree, [expression], parameters, where)
    check_closure_bindings(tree, [expression], owner, [], where)
    method = method_kind(tree, owner, receiver_for_super(owner, [expression], parameters))
    if method is not None:
        parameters = [p for p in parameters if p != method[1]]
    else:
        check_class_bound(tree, [expression])
    check_name_free(tree, name, owner, method is not None)
    return _edit(tree, expression, name, owner, deferred, parameters, is_async, method)


def _check_value(tree: PythonTree, expression: cst.BaseExpression, where: str) -> None:
    parent = tree.parents.get(expression)
    if tree.contexts.get(expression) in (ExpressionContext.STORE, ExpressionContext.DEL) or isinstance(
            parent, (cst.AssignTarget, cst.AsName)) or isinstance(parent, cst.Param) and parent.name is expression:
        raise NotAnExpression(f"{where} is assigned to there, not read; select a value")
    if isinstance(expression, cst.StarredElement):
        raise NotAnExpression(f"{where} is a starred item, which is no value of its own; select what follows the *")
    if any(isinstance(ancestor, (cst.Import, cst.ImportFrom, cst.Global, cst.Nonlocal)) for ancestor in tree.ancestors(expression)):
        raise NotAnExpression(f"{where} is a name of an import or global statement, not a value")


def _runs_in(tree: PythonTree, expression: cst.CSTNode) -> tuple[cst.FunctionDef | None, bool]:
    """The function whose body holds the expression (None at module level, in a class body, or when
    a class body lies between), and whether it runs later than the import (in some function's body)."""
    child: cst.CSTNode = expression
    crossed_class = False
    for ancestor in tree.ancestors(expression):
        if isinstance(ancestor, cst.FunctionDef) and child is ancestor.body:
            return (None if crossed_class else ancestor), True
        if isinstance(ancestor, cst.ClassDef) and child is ancestor.body:
            crossed_class = True
        child = ancestor
    return None, False


def _check_moveable(tree: PythonTree, expression: cst.BaseExpression, owner: cst.FunctionDef | None, where: str) -> bool:
    """Refuses what a call cannot carry out; whether the new function must be ``async``."""
    own = own_nodes(expression)
    if any(isinstance(node, cst.Yield) for node in own):
        raise ContainsYield(f"{where} yields; the extracted function would be a generator the caller never runs")
    dynamic = reads_locals_dynamically(expression)
    if dynamic is not None:
        raise CannotExtractHere(f"{where} calls {dynamic}, which reads local variables by name; in a new function it "
                                "would see that function's")
    is_async = any(awaits(node) for node in own)
    if is_async and (owner is None or owner.asynchronous is None):
        raise ContainsAwait(f"{where} awaits or iterates asynchronously outside the body of an async def, where the call "
                            "could not be awaited")
    _check_walrus(tree, expression, owner, where)
    return is_async


def _check_walrus(tree: PythonTree, expression: cst.BaseExpression, owner: cst.FunctionDef | None, where: str) -> None:
    """A ``:=`` in the expression binds in the code around it; moved, it would bind in the new function."""
    inside = set(map(id, nodes_within(expression)))
    region: cst.CSTNode = owner if owner is not None else tree.module
    for node in nodes_within(expression):
        if isinstance(node, cst.NamedExpr) and isinstance(node.target, cst.Name):
            bound = node.target.value
            for other in nodes_within(region):
                if isinstance(other, cst.Name) and other.value == bound and id(other) not in inside \
                        and tree.contexts.get(other) is ExpressionContext.LOAD:
                    line = tree.span(other).start.line + 1
                    raise BindsAName(f"{where} binds {bound} with :=, and line {line} reads it; moved into a function, the "
                                     "binding would be that function's. Bind it in a statement first")


def _parameters(tree: PythonTree, expression: cst.BaseExpression) -> list[str]:
    """The names the expression reads that a scope around it binds (not the module: the function
    reads those as globals too, nor a lambda or comprehension inside the expression)."""
    scope = tree.scopes.get(expression)
    if scope is None:
        raise CannotExtractHere("the selection is in no scope LibCST resolves")
    around = [scope, *enclosing_scopes(scope)]
    found: list[str] = []
    for node in nodes_within(expression):
        if isinstance(node, cst.Name) and tree.contexts.get(node) is ExpressionContext.LOAD and node.value not in found:
            bound_by = binding_scope(tree, node)
            if isinstance(bound_by, _LOCAL_SCOPES) and any(bound_by is s for s in around):
                found.append(node.value)
    return found


def _edit(tree: PythonTree, expression: cst.BaseExpression, name: str, owner: cst.FunctionDef | None,
          deferred: bool, parameters: list[str], is_async: bool, method: tuple[str, str] | None) -> RefactorPlan:
    text, newline = tree.source.text, tree.source.newline
    lines = text.split("\n")
    block_indent = indent_of(lines[lines_of(tree, statement_of(tree, expression))[0]])
    if method is not None and owner is not None:
        anchor: cst.CSTNode = owner
        outer_indent = indent_of(lines[lines_of(tree, owner)[0]])
    else:
        anchor = next(a for a in [expression, *tree.ancestors(expression)] if isinstance(tree.parents.get(a), cst.Module))
        outer_indent = ""
    found = tree.span(expression)
    code = text[tree.offset(found.start):tree.offset(found.end)].replace("\r\n", "\n")
    if not _parses(code):
        # Brackets around it that stay behind joined its lines, or made a generator of it
        # (``f(x for x in xs)``): the returned value needs its own.
        code = f"({code})"
    receiver = method[1] if method is not None else None
    signature = ", ".join([receiver, *parameters] if receiver else parameters)
    header = ([f"{outer_indent}@classmethod"] if method is not None and method[0] == "classmethod" else []) + [
        f"{outer_indent}{'async ' if is_async else ''}def {name}({signature}):"]
    body = f"{outer_indent}{indent_unit(tree, owner, lines, block_indent)}return {code}"
    function = newline.join([*header, body.replace("\n", newline)])
    call = f"{receiver + '.' if receiver else ''}{name}({', '.join(parameters)})"
    if is_async:
        bare = expression.lpar or isinstance(tree.parents.get(expression), _AWAITED_IN_PLACE)
        call = f"await {call}" if bare else f"(await {call})"
    # The expression's own span: parentheses around it (which a selection may take) stay.
    replaced = (tree.offset(found.start), tree.offset(found.end), call)
    after = placed(tree, anchor, function, replaced, method is not None, before=not deferred)
    change = FileChange(tree.source.path, line_edits(text, after), tree.source.sha256)
    return RefactorPlan("extract-function", WorkspaceEdit((change,)), Source.AST, Confidence.HIGH, [])


def _parses(code: str) -> bool:
    try:
        cst.parse_expression(code)
    except cst.ParserSyntaxError:
        return False
    return True
