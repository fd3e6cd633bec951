"""Names extracted code reads only under a condition, which a call would read every time.

``val if m else None`` reads ``val`` only when ``m`` holds; passed to a new function as an argument,
``val`` is read at the call whatever ``m`` is, and raises ``UnboundLocalError`` where the code
before did not when ``val`` is bound only on that path (``if m: val = parse(m)``). The same holds
for ``ok and val``'s right operand, a lambda's body (read when it is called, if ever), a
comprehension's element and conditions (read only when there is an item), and, where whole
statements are extracted, an ``if``'s branches, a loop's body, an ``except``, ``else`` or
``finally`` clause, a ``case`` and a nested function's body. A name read that way
passes when it is surely bound where the code runs: a parameter of a function or lambda around
it, a comprehension's own variable, a ``for`` target, ``with`` name or ``except`` name whose body
holds the code, or a name that a statement before the code, in a block that holds it, binds on
every path (an assignment, an import, a ``def``, a ``class``, a ``with ... as``; an ``if`` whose
every branch binds it or leaves; a ``try`` whose body and every handler do, or its ``finally``).
Anything else is refused (``may_be_unbound``): a binding in a loop, in some branches only, or after
the code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst
from libcst.metadata import ClassScope, ComprehensionScope, ExpressionContext, FunctionScope

from engine.errors import Refused
from engine.refactor.python.span_nodes import PythonTree, binding_scope, nodes_within

if TYPE_CHECKING:
    from collections.abc import Sequence

_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


class MayBeUnbound(Refused):
    code = "may_be_unbound"


def check_guarded_reads(tree: PythonTree, roots: Sequence[cst.CSTNode], parameters: list[str], where: str) -> None:
    """Refuses when a parameter the extracted code (``roots``: one expression, or whole statements)
    reads only under a condition may be unbound there."""
    within = set(map(id, roots))
    reads: dict[str, list[cst.Name]] = {}
    for root in roots:
        for node in nodes_within(root):
            if isinstance(node, cst.Name) and node.value in parameters and tree.contexts.get(node) is ExpressionContext.LOAD \
                    and binding_scope(tree, node) is not None:  # a keyword argument's name is no read
                reads.setdefault(node.value, []).append(node)
    for name, nodes in reads.items():
        guards = [_guard(tree, node, within) for node in nodes]
        if all(guards) and not _surely_bound(tree, nodes[0], roots[0]):
            raise MayBeUnbound(f"{where} reads {name} only {guards[0]}, and {name} may not be bound where it runs (it is "
                               f"bound under a condition, in a loop or later); passed to the new function it would be read "
                               f"every time. Bind {name} unconditionally first, or select less. Nothing was changed")


def _guard(tree: PythonTree, node: cst.CSTNode, roots: set[int]) -> str:
    """Under which condition ``node`` is evaluated within the extracted code ('' when always)."""
    child = node
    for parent in tree.ancestors(node):
        why = _condition(parent, child)
        if why:
            return why
        if id(parent) in roots:
            return ""
        child = parent
    return ""


def _condition(parent: cst.CSTNode, child: cst.CSTNode) -> str:
    """Whether ``parent`` evaluates its part ``child`` only under a condition, and which."""
    if isinstance(parent, cst.IfExp) and child is not parent.test:
        return "in a branch of a conditional expression"
    if isinstance(parent, cst.BooleanOperation) and child is parent.right:
        return f"when the left operand of {'and' if isinstance(parent.operator, cst.And) else 'or'} lets it"
    if isinstance(parent, cst.Lambda) and child is parent.body:
        return "when the lambda is called"
    if isinstance(parent, cst.CompFor) and child is not parent.iter or isinstance(parent, _COMPREHENSIONS) and child is not parent.for_in:
        return "for each item of a comprehension"
    if isinstance(parent, (cst.If, cst.While)) and child is not parent.test:
        return "in a branch of an if" if isinstance(parent, cst.If) else "in a loop's body"
    if isinstance(parent, cst.For) and child is not parent.iter:
        return "in a loop's body"
    if isinstance(parent, (cst.ExceptHandler, cst.MatchCase)) or isinstance(parent, cst.Try) and child is not parent.body:
        return "in an except, else or finally clause, or a case"
    if isinstance(parent, cst.FunctionDef) and child is parent.body:
        return "when the nested function is called"
    return ""


def _surely_bound(tree: PythonTree, read: cst.Name, first: cst.CSTNode) -> bool:
    """Whether ``read``'s name is bound on every path to ``first`` (the extracted code's start)."""
    scope = binding_scope(tree, read)
    if isinstance(scope, ComprehensionScope):
        return True  # the comprehension's own variable: bound for every item it reads it in
    if not isinstance(scope, (FunctionScope, ClassScope)) or scope.node is None:
        return False
    around = set(map(id, tree.ancestors(first)))
    for assignment in scope.assignments[read.value]:
        bound = getattr(assignment, "node", None)
        if bound is None:
            continue
        if isinstance(scope.node, (cst.FunctionDef, cst.Lambda)) and _is_parameter(tree, bound, scope.node):
            return True
        header = next((a for a in tree.ancestors(bound) if isinstance(a, (cst.For, cst.With, cst.Try))), None)
        if header is not None and id(header) in around and _bound_by_the_header_of(tree, header, bound, around):
            return True
    start = tree.span(first).start
    for block in tree.ancestors(first):
        if isinstance(block, (cst.IndentedBlock, cst.Module)) and any(
                tree.span(statement).end <= start and _binds_surely(tree, statement, read.value) for statement in block.body):
            return True
        if block is scope.node:
            break
    return False


def _binds_surely(tree: PythonTree, statement: cst.CSTNode, name: str) -> bool:
    """Whether running ``statement`` to its end always binds ``name`` (or never falls through)."""
    if isinstance(statement, cst.SimpleStatementLine):
        return any(isinstance(node, cst.Name) and node.value == name and tree.contexts.get(node) is ExpressionContext.STORE
                   and _not_in_a_branch(tree, node, statement) for node in nodes_within(statement)) or _exits(statement)
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return statement.name.value == name
    if isinstance(statement, cst.With):
        return any(isinstance(item.asname, cst.AsName) and isinstance(item.asname.name, cst.Name) and item.asname.name.value == name
                   for item in statement.items) or _block_binds(tree, statement.body, name)
    if isinstance(statement, cst.If):
        otherwise = statement.orelse
        return otherwise is not None and _block_binds(tree, statement.body, name) and (
            _binds_surely(tree, otherwise, name) if isinstance(otherwise, cst.If) else _block_binds(tree, otherwise.body, name))
    if isinstance(statement, cst.Try):
        handled = _block_binds(tree, statement.body, name) and all(_block_binds(tree, h.body, name) for h in statement.handlers)
        return handled or statement.finalbody is not None and _block_binds(tree, statement.finalbody.body, name)
    return False


def _block_binds(tree: PythonTree, block: cst.BaseSuite, name: str) -> bool:
    body = block.body if isinstance(block, cst.IndentedBlock) else [block]
    return any(_binds_surely(tree, statement, name) for statement in body)


def _exits(statement: cst.SimpleStatementLine) -> bool:
    """A line that ends in ``return``, ``raise``, ``continue`` or ``break``: nothing after it in its block runs."""
    return bool(statement.body) and isinstance(statement.body[-1], (cst.Return, cst.Raise, cst.Continue, cst.Break))


def _bound_by_the_header_of(tree: PythonTree, statement: cst.For | cst.With | cst.Try, bound: cst.CSTNode, around: set[int]) -> bool:
    """``for x in ...:``, ``with ... as x:``, ``except E as x:`` binding ``bound``, with the expression in that body."""
    inside = set(map(id, [bound, *tree.ancestors(bound)]))
    if isinstance(statement, cst.For):
        return id(statement.target) in inside and id(statement.body) in around
    if isinstance(statement, cst.With):
        return any(item.asname is not None and id(item.asname) in inside for item in statement.items) and id(statement.body) in around
    return any(handler.name is not None and id(handler.name) in inside and id(handler.body) in around for handler in statement.handlers)


def _is_parameter(tree: PythonTree, bound: cst.CSTNode, function: cst.CSTNode) -> bool:
    params = getattr(function, "params", None)
    return params is not None and any(a is params for a in [bound, *tree.ancestors(bound)])


def _not_in_a_branch(tree: PythonTree, bound: cst.CSTNode, statement: cst.CSTNode) -> bool:
    """The binding is not itself conditional within its statement (``x = a and (y := b)``, a ``with``'s body)."""
    for ancestor in [bound, *tree.ancestors(bound)]:
        if ancestor is statement:
            return True
        if isinstance(ancestor, (cst.IfExp, cst.BooleanOperation, cst.IndentedBlock, *_COMPREHENSIONS, cst.Lambda)):
            return False
    return True
