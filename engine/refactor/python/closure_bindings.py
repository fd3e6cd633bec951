"""Names extracted code shares with a function defined beside it, which a call in the code may run.

Extracted code reads its inputs as parameters, copies taken at the call, and binds its names as
the new function's locals. A function nested in the same owner (a closure) that declares ``nonlocal
count`` and rebinds it changes the owner's ``count``: when the extracted code calls something that
may run that closure and reads ``count`` afterwards, the copy is stale (``bump(); print(count)``
printed 1 and now prints 0), refused ``rebound_by_closure``. A closure that reads ``count`` sees the
owner's, not the new function's: code that binds ``count`` and then calls something that may run
it, or that binds a name the closure reads and does not hand it back, changed what the closure saw
(refused ``read_by_closure``). At module level the same holds for a function's ``global``
declarations and the module's names its functions read. A name the owner itself declares
``nonlocal`` or ``global`` and the code binds would become the new function's local
(``cannot_extract_here``).

Which closures may run during the code: one whose name the code reads, one that escapes (its name
used other than by calling it, a decorator, a lambda), and one such a closure's body names; a
closure only ever called by name elsewhere cannot. A call in the code runs before a read when it
starts earlier, or shares a loop of the code with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import ExpressionContext, Scope

from engine.errors import Refused
from engine.refactor.python.span_nodes import CannotExtractHere, PythonTree, binding_scope, nodes_within

_DEFINITIONS = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_RUNS_CODE = (cst.Call, cst.Await, cst.Yield)
_LOOPS = (cst.For, cst.While, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


class ReboundByClosure(Refused):
    code = "rebound_by_closure"


class ReadByClosure(Refused):
    code = "read_by_closure"


@dataclass
class _Closure:
    node: cst.CSTNode
    name: str | None
    reads: set[str] = field(default_factory=set)
    rebinds: set[str] = field(default_factory=set)
    escapes: bool = False


def check_closure_bindings(tree: PythonTree, roots: Sequence[cst.CSTNode], owner: cst.FunctionDef | None,
                           results: Sequence[str], where: str) -> None:
    """Refuses when a closure beside the extracted code (``roots``, in ``owner``'s body or the
    module's) may rebind a name the code reads after a call, or read a name the code binds;
    ``results``: the names the new function hands back."""
    region: cst.CSTNode = owner if owner is not None else tree.module
    scope = tree.scopes.get(owner.body) if owner is not None else tree.scopes.get(tree.module)
    if scope is None:
        return
    inside = {id(node) for root in roots for node in nodes_within(root)}
    _check_declared(tree, region, roots, owner, where)
    # Inside a function, nonlocal rebinds its names; at module level, global does.
    closures = _closures(tree, region, scope, inside, cst.Nonlocal if owner is not None else cst.Global)
    if not closures:
        return
    running = _may_run(tree, roots, scope, closures)
    calls = [node for root in roots for node in nodes_within(root) if isinstance(node, _RUNS_CODE)]
    # At module level the new function reads a module name it does not bind as a global: up to date.
    bound = {n.value for root in roots for n in nodes_within(root)
             if isinstance(n, cst.Name) and tree.contexts.get(n) is ExpressionContext.STORE}
    for node in (n for root in roots for n in nodes_within(root)):
        if not isinstance(node, cst.Name) or not _shares(closures, node.value) or binding_scope(tree, node) is not scope:
            continue
        context = tree.contexts.get(node)
        rebinding = [c for c in running if node.value in c.rebinds]
        if context is ExpressionContext.LOAD and rebinding and (owner is not None or node.value in bound) and any(_runs_before(tree, call, node, roots) for call in calls):
            raise ReboundByClosure(
                f"{where} reads {node.value} (line {tree.span(node).start.line + 1}) after a call that may run "
                f"{_label(rebinding[0])}, which rebinds it (nonlocal or global); passed to the new function, {node.value} would "
                "keep the value it had at the call. Nothing was changed; select less, or extract the closure with it")
        if context is ExpressionContext.STORE:
            # Run during the code after the binding, or at any time later when the value is not handed back.
            readers = [c for c in running if _shares([c], node.value) and any(_runs_before(tree, node, call, roots) for call in calls)]
            readers = readers or ([c for c in closures if _shares([c], node.value)] if node.value not in results else [])
            if readers:
                raise ReadByClosure(
                    f"{where} binds {node.value} (line {tree.span(node).start.line + 1}), which {_label(readers[0])} reads from "
                    f"the code around; in the new function {node.value} would be its own local, and {_label(readers[0])} would "
                    "see the old value. Nothing was changed; select less, or extract the closure with it")


def _check_declared(tree: PythonTree, region: cst.CSTNode, roots: Sequence[cst.CSTNode], owner: cst.FunctionDef | None,
                    where: str) -> None:
    """A name the owner declares ``global``/``nonlocal`` that the code binds."""
    if owner is None:
        return
    declared = {name.name.value for node in _own(region) if isinstance(node, (cst.Global, cst.Nonlocal)) for name in node.names}
    for root in roots:
        for node in nodes_within(root):
            if isinstance(node, cst.Name) and node.value in declared and tree.contexts.get(node) is ExpressionContext.STORE:
                raise CannotExtractHere(f"{where} binds {node.value}, which {owner.name.value} declares global or nonlocal; in "
                                        "the new function it would be a local of its own. Nothing was changed")


def _own(region: cst.CSTNode) -> list[cst.CSTNode]:
    """The nodes of ``region``'s body outside the definitions nested in it."""
    found: list[cst.CSTNode] = []
    pending = list(region.children)
    while pending:
        node = pending.pop()
        found.append(node)
        if not isinstance(node, _DEFINITIONS):
            pending.extend(node.children)
    return found


def _closures(tree: PythonTree, region: cst.CSTNode, scope: Scope, inside: set[int],
              rebinding: type[cst.Nonlocal] | type[cst.Global]) -> list[_Closure]:
    """The definitions directly in ``region`` (not inside another one), outside the code."""
    found = []
    for node in _own(region):
        if not isinstance(node, _DEFINITIONS) or id(node) in inside:
            continue
        name = node.name.value if isinstance(node, (cst.FunctionDef, cst.ClassDef)) else None
        closure = _Closure(node, name, escapes=name is None or bool(getattr(node, "decorators", ())))
        for part in nodes_within(node):
            if isinstance(part, cst.Name) and tree.contexts.get(part) is ExpressionContext.LOAD \
                    and binding_scope(tree, part) is scope:
                closure.reads.add(part.value)
            if isinstance(part, rebinding):
                closure.rebinds.update(each.name.value for each in part.names)
        found.append(closure)
    named = {c.name: c for c in found if c.name is not None}
    for node in nodes_within(region):
        if isinstance(node, cst.Name) and node.value in named and tree.contexts.get(node) is ExpressionContext.LOAD \
                and binding_scope(tree, node) is scope:
            call = tree.parents.get(node)
            if not (isinstance(call, cst.Call) and call.func is node):
                named[node.value].escapes = True
    return found


def _may_run(tree: PythonTree, roots: Sequence[cst.CSTNode], scope: Scope, closures: list[_Closure]) -> list[_Closure]:
    """The closures that may run during the code: defined by then (before it, or in a loop around
    it, by an earlier pass), and named by it, escaping, or named by one that may run."""
    read = {node.value for root in roots for node in nodes_within(root)
            if isinstance(node, cst.Name) and binding_scope(tree, node) is scope}
    start = tree.span(roots[0]).start
    loops = [a for a in tree.ancestors(roots[0]) if isinstance(a, (cst.For, cst.While))]
    defined = [c for c in closures
               if tree.span(c.node).start < start or any(loop in tree.ancestors(c.node) for loop in loops)]
    running = [c for c in defined if c.escapes or c.name in read]
    grown = True
    while grown:
        reached = set().union(*(c.reads for c in running)) if running else set()
        more = [c for c in defined if c not in running and c.name in reached]
        running.extend(more)
        grown = bool(more)
    return running


def _shares(closures: list[_Closure], name: str) -> bool:
    return any(name in c.reads | c.rebinds for c in closures)


def _runs_before(tree: PythonTree, first: cst.CSTNode, then: cst.CSTNode, roots: Sequence[cst.CSTNode]) -> bool:
    """Whether ``first`` may run before ``then`` in the code: it happens earlier (a call around a
    read runs after its arguments; a name is bound once its statement's value is computed), or a
    loop of the code holds both."""
    if first in tree.ancestors(then):
        return False
    if then in tree.ancestors(first) or _moment(tree, first) < _moment(tree, then):
        return True
    tops = {id(root) for root in roots}
    loops = set()
    for ancestor in tree.ancestors(first):
        if isinstance(ancestor, _LOOPS):
            loops.add(id(ancestor))
        if id(ancestor) in tops:
            break
    return any(id(ancestor) in loops for ancestor in tree.ancestors(then))


def _moment(tree: PythonTree, node: cst.CSTNode) -> tuple[int, int]:
    """Where ``node`` takes effect: a binding by an assignment at the end of its statement, a call
    or a read where it starts."""
    if tree.contexts.get(node) is ExpressionContext.STORE:
        statement = next((a for a in tree.ancestors(node) if isinstance(a, (cst.Assign, cst.AugAssign, cst.AnnAssign))), None)
        if statement is not None:
            end = tree.span(statement).end
            return end.line, end.column
    start = tree.span(node).start
    return start.line, start.column


def _label(closure: _Closure) -> str:
    return closure.name if closure.name is not None else "a lambda"
