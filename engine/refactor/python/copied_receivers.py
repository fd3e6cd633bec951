"""Attribute uses on a receiver the rename reached elsewhere, on a copy of it, or inside an isinstance check.

Neither jedi nor the server types these receivers in every case (cachetools' ``Cache.currsize``
left its tests red, with and without a server):
- ``source.old`` where the function binds ``source`` once and the rename changed another
  ``source.old`` of it: one object, one member (jedi loses ``source`` after ``del source[2]``).
- ``cache = copy.copy(source)``, ``copy.deepcopy(source)``, ``pickle.loads(pickle.dumps(source))``:
  the copy is of ``source``'s type (typeshed types copy as ``T -> T``; ``pickle.loads`` returns
  ``Any``). When the rename changed ``source.old`` in the same function, ``cache.old`` follows.
- ``if isinstance(cache, Cache): cache.old``: inside the check the receiver is a ``Cache``. When
  ``Cache`` is the class, in the same module, that declares the renamed member, the use follows.
Nothing else is guessed: a copy of a receiver the rename did not reach stays, as does a check
of another class.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from engine.answers import TextEdit
from engine.edits.model import FileChange, WorkspaceEdit
from engine.positions import Position, Range
from engine.refactor.corpus import Corpus
from engine.refactor.pass_protocol import RenameRequest
from engine.refactor.python.inferred_receivers import (
    Declaration, DeclaringClasses, attribute_uses, receiver_name, uncovered_attribute_uses,
)
from engine.refactor.python.pytrees import parse_python, with_spans
from engine.symbols import Source

_Function = ast.FunctionDef | ast.AsyncFunctionDef


class CopiedReceivers:
    """``x.old`` uses the edit leaves where ``x`` is a copy of a receiver it renamed, or is checked
    with ``isinstance`` against the class declaring the member."""

    name = "copied_receivers"
    hazards = ("copies of a renamed receiver (copy, pickle round trip)", "isinstance checks of the declaring class")

    def prepare(self, corpus: Corpus, request: RenameRequest) -> None:
        self.corpus, self.request = corpus, request
        self.uses = attribute_uses(corpus, request.old_name)

    def add(self, edit: WorkspaceEdit, source: Source) -> tuple[WorkspaceEdit, list[str]]:
        declarations = [Declaration(t.file, t.position) for t in self.request.targets]
        return copied_receiver_uses(self.corpus, edit, self.request.old_name, self.request.new_name, declarations, self.uses)


def copied_receiver_uses(
    corpus: Corpus, edit: WorkspaceEdit, old: str, new: str, declarations: list[Declaration], uses: list[tuple[str, Position]],
) -> tuple[WorkspaceEdit, list[str]]:
    edited = {op.path: op for op in edit.operations if isinstance(op, FileChange)}
    left = uncovered_attribute_uses(edited, uses)
    if not left:
        return edit, []
    classes = DeclaringClasses(corpus)
    declaring = {owner for d in declarations if (owner := classes.of(d.path, d.position.line)) is not None}
    renamed = [use for use in uses if use not in set(left)]
    added: dict[str, list[TextEdit]] = {}
    for path in dict.fromkeys(path for path, _ in left):
        text = corpus.source(path).text
        tree = parse_python(text)
        if tree is None:
            continue
        starts = corpus.source(path).line_starts

        def receiver_at(position: Position) -> str | None:
            return receiver_name(text, starts[position.line] + position.column)

        reached = [(receiver_at(p), p.line + 1) for f, p in renamed if f == path]
        for file, position in left:
            receiver = receiver_at(position) if file == path else None
            if receiver is None or receiver in ("self", "cls"):
                continue
            line = position.line + 1
            function = _innermost_function(tree, line)
            scope: ast.AST = function if function is not None else tree
            in_function = {name for name, at in reached if function is not None and function.lineno <= at <= (function.end_lineno or at)}
            same = receiver in in_function and function is not None and _bound_once(function, receiver)
            if same or _copied_from(scope, receiver, line) in in_function or _checked_as(scope, receiver, line, tree, path, declaring):
                added.setdefault(path, []).append(TextEdit(Range(position, Position(position.line, position.column + len(old))), new))
    if not added:
        return edit, []
    places = [f"{path}:{span.range.start.line + 1}" for path, spans in added.items() for span in spans]
    note = (f"uses of .{old} on receivers the rename reached in the same function, on copies of them (copy, pickle round trip) or inside an isinstance check "
            f"of the declaring class, renamed: {', '.join(places[:10])}" + (f" and {len(places) - 10} more" if len(places) > 10 else ""))
    return with_spans(edit, lambda path: corpus.source(path).sha256, added), [note]


def _innermost_function(tree: ast.Module, line: int) -> _Function | None:
    around = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
              and node.lineno <= line <= (node.end_lineno or node.lineno)]
    return max(around, key=lambda node: node.lineno, default=None)


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function (or module) outside its nested functions and classes."""
    for child in ast.iter_child_nodes(scope):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        yield child
        yield from _own_nodes(child)


def _bound_once(function: _Function, name: str) -> bool:
    """Whether the function binds ``name`` once (a parameter, or one assignment): then all of its
    ``name.old`` uses are of one object, and one of them renamed means they all are."""
    stores = sum(1 for node in _own_nodes(function) if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store))
    arguments = function.args
    parameters = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg] if a}
    return stores + (name in parameters) == 1


def _copied_from(scope: ast.AST, receiver: str, line: int) -> str | None:
    """The name ``receiver`` holds a copy of, when the scope binds it once, before ``line``, to
    ``copy.copy(name)``, ``copy.deepcopy(name)`` or ``pickle.loads(pickle.dumps(name))``."""
    bindings = [node for node in _own_nodes(scope) if isinstance(node, ast.Name) and node.id == receiver
                and isinstance(node.ctx, ast.Store)]
    if len(bindings) != 1:
        return None
    for node in _own_nodes(scope):
        if not isinstance(node, ast.Assign):
            continue
        if len(node.targets) == 1 and node.targets[0] is bindings[0] and node.lineno < line:
            return _copy_argument(node.value)
    return None


def _copy_argument(value: ast.expr) -> str | None:
    if not (isinstance(value, ast.Call) and value.args and isinstance(value.func, ast.Attribute)
            and isinstance(value.func.value, ast.Name)):
        return None
    module, function, argument = value.func.value.id, value.func.attr, value.args[0]
    if module == "copy" and function in ("copy", "deepcopy") and isinstance(argument, ast.Name):
        return argument.id
    if module == "pickle" and function == "loads" and isinstance(argument, ast.Call) and argument.args \
            and isinstance(argument.func, ast.Attribute) and isinstance(argument.func.value, ast.Name) \
            and argument.func.value.id == "pickle" and argument.func.attr == "dumps" and isinstance(argument.args[0], ast.Name):
        return argument.args[0].id
    return None


def _checked_as(
    scope: ast.AST, receiver: str, line: int, tree: ast.Module, path: str, declaring: set[tuple[str, int]],
) -> bool:
    """Whether ``line`` is in the body of an ``if isinstance(receiver, C):`` of the scope, where
    ``C`` is a top-level class of this module that declares the renamed member."""
    own_classes = {node.name: node.lineno - 1 for node in tree.body if isinstance(node, ast.ClassDef)}
    for node in _own_nodes(scope):
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Call) and isinstance(node.test.func, ast.Name)
                and node.test.func.id == "isinstance" and len(node.test.args) == 2):
            continue
        checked, kind = node.test.args
        if not (isinstance(checked, ast.Name) and checked.id == receiver and isinstance(kind, ast.Name)):
            continue
        body_lines = node.body[0].lineno, (node.body[-1].end_lineno or node.body[-1].lineno)
        if body_lines[0] <= line <= body_lines[1] and kind.id in own_classes and (path, own_classes[kind.id]) in declaring:
            return True
    return False
