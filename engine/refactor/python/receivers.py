"""What class a receiver holds, where syntax and light inference tell: ``x.m()`` without a server.

The project graph resolves names (``pkg.mod.f``, ``Class.method``) but not values: ``x.m()``
is a use of ``C.m`` only once ``x`` is known to hold a ``C``. Inside the function around a
use, a receiver's class is read from, in order:

- ``self`` / ``cls`` in a method: the enclosing class;
- a parameter's annotation (``def f(order: Order)``; ``Optional[Order]`` and ``Order | None`` too);
- an annotated local (``order: Order = …``) or a local assigned from a constructor call
  (``order = Order(…)``) before the use;
- a loop variable over an annotated iterable (``for s in segments`` with ``segments: list[Segment]``);
- ``self.attr`` where the class annotates ``attr`` or its ``__init__`` assigns it from a constructor.

The answer is the class as an expression written in that file (``Order``, ``models.Order``),
for the graph to resolve; None where nothing says.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

_WRAPPERS = {"Optional", "Iterable", "Iterator", "Sequence", "list", "List", "set", "Set", "frozenset", "tuple",
             "Tuple", "Collection", "Generator", "Type", "type", "Final", "ClassVar", "Annotated"}


@dataclass
class _Scope:
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Module
    owner: ast.ClassDef | None
    names: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    """name -> (line, class expression) for every binding that says what it holds."""


class Receivers:
    def __init__(self, text: str) -> None:
        try:
            self._tree: ast.Module | None = ast.parse(text)
        except (SyntaxError, ValueError):
            self._tree = None
        self._scopes: list[_Scope] = []
        self._class_attributes: dict[str, dict[str, str]] = {}
        if self._tree is not None:
            self._collect(self._tree, None)

    def class_of(self, expression: str, line: int) -> str | None:
        """The class expression that ``expression`` (``x`` or ``self.attr``) holds on ``line`` (1-based)."""
        scope = self._innermost(line)
        if scope is None:
            return None
        parts = expression.split(".")
        if len(parts) == 2 and parts[0] in ("self", "cls") and scope.owner is not None:
            return self._class_attributes.get(scope.owner.name, {}).get(parts[1])
        if len(parts) != 1:
            return None
        name = parts[0]
        if name in ("self", "cls") and scope.owner is not None:
            return scope.owner.name
        bindings = [(at, kind) for at, kind in scope.names.get(name, []) if at <= line]
        return bindings[-1][1] if bindings else None

    # -- collection ------------------------------------------------------------

    def _collect(self, node: ast.AST, owner: ast.ClassDef | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                self._class_attributes[child.name] = _attributes(child)
                self._collect(child, child)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._scopes.append(self._scope_of(child, owner))
                self._collect(child, None)
            else:
                self._collect(child, owner)
        if isinstance(node, ast.Module):
            self._scopes.append(self._scope_of(node, None))

    def _scope_of(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Module, owner: ast.ClassDef | None) -> _Scope:
        scope = _Scope(node, owner)
        if not isinstance(node, ast.Module):
            arguments = node.args
            for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
                held = _class_in(argument.annotation)
                if held:
                    scope.names.setdefault(argument.arg, []).append((node.lineno, held))
        for statement in _own_statements(node):
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                held = _class_in(statement.annotation)
                if held:
                    scope.names.setdefault(statement.target.id, []).append((statement.lineno, held))
            elif isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call):
                made = _constructor(statement.value)
                for target in statement.targets:
                    if made and isinstance(target, ast.Name):
                        scope.names.setdefault(target.id, []).append((statement.lineno, made))
            elif isinstance(statement, (ast.For, ast.AsyncFor)) and isinstance(statement.target, ast.Name):
                over = statement.iter
                held = None
                if isinstance(over, ast.Name):
                    earlier = [kind for at, kind in scope.names.get(over.id, []) if at <= statement.lineno]
                    held = earlier[-1] if earlier else None
                if held:
                    scope.names.setdefault(statement.target.id, []).append((statement.lineno, held))
        return scope

    def _innermost(self, line: int) -> _Scope | None:
        best: _Scope | None = None
        for scope in self._scopes:
            node = scope.node
            start, end = (1, 10**9) if isinstance(node, ast.Module) else (node.lineno, node.end_lineno or node.lineno)
            if start <= line <= end and (best is None or isinstance(best.node, ast.Module) or start >= best.node.lineno):
                best = scope
        return best


def _own_statements(node: ast.AST) -> list[ast.stmt]:
    """Statements of a function or module, nested blocks included, nested functions and classes not."""
    found: list[ast.stmt] = []
    stack = list(getattr(node, "body", []))
    while stack:
        statement = stack.pop(0)
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        found.append(statement)
        for block in ("body", "orelse", "finalbody", "handlers"):
            stack.extend(getattr(statement, block, []) or [])
    return found


def _attributes(cls: ast.ClassDef) -> dict[str, str]:
    """The class's annotated attributes and those its methods assign from a constructor on self."""
    held: dict[str, str] = {}
    for statement in cls.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            kind = _class_in(statement.annotation)
            if kind:
                held[statement.target.id] = kind
    for node in ast.walk(cls):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            kind = _class_in(node.annotation) if isinstance(node, ast.AnnAssign) else (
                _constructor(node.value) if isinstance(node.value, ast.Call) else None)
            for target in targets:
                if (kind and isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                        and target.value.id == "self"):
                    held.setdefault(target.attr, kind)
    return held


def _class_in(annotation: ast.expr | None) -> str | None:
    """The one class an annotation names, through Optional/Iterable-like wrappers and ``| None``."""
    if annotation is None:
        return None
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            return _class_in(ast.parse(annotation.value, mode="eval").body)
        except SyntaxError:
            return None
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        sides = [s for s in (annotation.left, annotation.right) if not (isinstance(s, ast.Constant) and s.value is None)]
        return _class_in(sides[0]) if len(sides) == 1 else None
    if isinstance(annotation, ast.Subscript):
        wrapper = _dotted(annotation.value)
        if wrapper is None or wrapper.rsplit(".", 1)[-1] not in _WRAPPERS:
            return None
        inner = annotation.slice
        if isinstance(inner, ast.Tuple):
            inner = inner.elts[0] if inner.elts else inner
        return _class_in(inner)
    return _dotted(annotation)


def _constructor(call: ast.Call) -> str | None:
    """``C(…)``'s ``C`` when it is written like a class (a capitalised last part)."""
    name = _dotted(call.func)
    return name if name and name.rsplit(".", 1)[-1][:1].isupper() else None


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None
