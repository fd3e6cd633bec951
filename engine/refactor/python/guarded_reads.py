"""Names an extracted expression reads only under a condition, which a call would read every time.

``val if m else None`` reads ``val`` only when ``m`` holds; passed to a new function as an argument,
``val`` is read at the call whatever ``m`` is, and raises ``UnboundLocalError`` where the code
before did not when ``val`` is bound only on that path (``if m: val = parse(m)``). The same holds
for ``ok and val``'s right operand, a lambda's body (read when it is called, if ever) and a
comprehension's element and conditions (read only when there is an item). A name read that way
passes when it is surely bound where the expression runs: a parameter of a function or lambda
around it, a comprehension's own variable, a ``for`` target, ``with`` name or ``except`` name whose
body holds the expression, or a name an unconditional statement binds before the expression in a
block that holds it (an assignment, an import, a ``def``, a ``class``, a ``with ... as``). Anything
else is refused (``may_be_unbound``): a binding in a branch or loop the expression is not in, or
one after it.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ClassScope, ComprehensionScope, ExpressionContext, FunctionScope

from engine.errors import Refused
from engine.positions import Position
from engine.refactor.python.span_nodes import PythonTree, binding_scope, nodes_within

_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)
_UNCONDITIONAL = (cst.SimpleStatementLine, cst.FunctionDef, cst.ClassDef, cst.With)


class MayBeUnbound(Refused):
    code = "may_be_unbound"


def check_guarded_reads(tree: PythonTree, expression: cst.BaseExpression, parameters: list[str], where: str) -> None:
    """Refuses when a parameter the expression reads only under a condition may be unbound there."""
    reads: dict[str, list[cst.Name]] = {}
    for node in nodes_within(expression):
        if isinstance(node, cst.Name) and node.value in parameters and tree.contexts.get(node) is ExpressionContext.LOAD \
                and binding_scope(tree, node) is not None:  # a keyword argument's name is no read
            reads.setdefault(node.value, []).append(node)
    for name, nodes in reads.items():
        guards = [_guard(tree, node, expression) for node in nodes]
        if all(guards) and not _surely_bound(tree, nodes[0], expression):
            raise MayBeUnbound(f"{where} reads {name} only {guards[0]}, and {name} may not be bound where it runs (it is "
                               f"bound under a condition, in a loop or later); passed to the new function it would be read "
                               f"every time. Bind {name} unconditionally first, or select less. Nothing was changed")


def _guard(tree: PythonTree, node: cst.CSTNode, expression: cst.CSTNode) -> str:
    """Under which condition ``node`` is evaluated within ``expression`` ('' when always)."""
    child = node
    for parent in tree.ancestors(node):
        if isinstance(parent, cst.IfExp) and child is not parent.test:
            return "in a branch of a conditional expression"
        if isinstance(parent, cst.BooleanOperation) and child is parent.right:
            return f"when the left operand of {'and' if isinstance(parent.operator, cst.And) else 'or'} lets it"
        if isinstance(parent, cst.Lambda) and child is parent.body:
            return "when the lambda is called"
        if isinstance(parent, cst.CompFor) and child is not parent.iter:
            return "for each item of a comprehension"
        if isinstance(parent, _COMPREHENSIONS) and child is not parent.for_in:
            return "for each item of a comprehension"
        if parent is expression:
            return ""
        child = parent
    return ""


def _surely_bound(tree: PythonTree, read: cst.Name, expression: cst.CSTNode) -> bool:
    scope = binding_scope(tree, read)
    if isinstance(scope, ComprehensionScope):
        return True  # the comprehension's own variable: bound for every item it reads it in
    if not isinstance(scope, (FunctionScope, ClassScope)) or scope.node is None:
        return False
    around = set(map(id, tree.ancestors(expression)))
    start = tree.span(expression).start
    for assignment in scope.assignments[read.value]:
        bound = getattr(assignment, "node", None)
        if bound is None:
            continue
        if isinstance(scope.node, (cst.FunctionDef, cst.Lambda)) and _is_parameter(tree, bound, scope.node):
            return True
        if _binds_before(tree, bound, expression, around, start):
            return True
    return False


def _binds_before(tree: PythonTree, bound: cst.CSTNode, expression: cst.CSTNode, around: set[int], start: Position) -> bool:
    """Whether the binding at ``bound`` has surely run when ``expression`` does: a statement of a
    block around the expression, before it, binding unconditionally; or a ``for`` target, ``with``
    name or ``except`` name whose body holds the expression."""
    statement = next((a for a in [bound, *tree.ancestors(bound)] if isinstance(tree.parents.get(a), (cst.IndentedBlock, cst.Module))), None)
    if statement is None or id(tree.parents.get(statement)) not in around:
        return False
    if isinstance(statement, (cst.For, cst.With, cst.Try)) and id(statement) in around:
        return _bound_by_the_header_of(tree, statement, bound, around)
    return isinstance(statement, _UNCONDITIONAL) and tree.span(statement).end <= start and _not_in_a_branch(tree, bound, statement)


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
