"""What a pytest fixture parameter holds, so ``signer.unsign`` in a test is known to be a Signer's.

A test's parameters are fixtures: pytest passes ``signer`` the value of the fixture function
named ``signer``, looked up on the test's class (its bases included, overrides first), then its
module, then the ``conftest.py`` files above it. No type checker follows that, and jedi does not
follow ``partial(Signer, ...)()``: itsdangerous' tests left 58 uses of ``unsign`` behind a server
rename. The fixture functions are read here, for the few shapes a fixture's value takes:

- ``return Signer(...)`` / ``yield Signer(...)``: an instance of that class;
- ``return partial(Signer, ...)`` (``functools.partial``) or ``return Signer``: something that
  makes instances of it, so that another fixture's ``return signer_factory()`` is one;
- ``return other_fixture`` / ``return other_fixture()``: that fixture's value, looked up again
  from the requesting test's class (a subclass's override wins, as in pytest);
- in the test itself, a local assigned from those (``signer = signer_factory(...)``), or from
  ``importlib.import_module("pkg.mod")`` (humanize's tests: ``i18n.activate`` on the module).

Anything else is unknown, and the use stays unknown: a wrong answer would rename a homonym.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Callable

from engine.refactor.corpus import Corpus
from engine.refactor.python.pytrees import parse_python

ResolveClass = Callable[[str, str, int], str | None]
"""(file, dotted expression, 1-based line) → the graph node of the class it names, or None."""

_DEPTH = 8


@dataclass(frozen=True)
class Value:
    kind: str
    """instance | maker (a class, or a partial of one: calling it makes an instance) | module"""
    cls: str
    """The class's graph node; for a module, its file."""


@dataclass(frozen=True)
class _Fixture:
    path: str
    function: ast.FunctionDef | ast.AsyncFunctionDef


class FixtureValues:
    def __init__(self, corpus: Corpus, resolve_class: ResolveClass, class_location: Callable[[str], tuple[str, str] | None],
                 module_file: Callable[[str], str | None]) -> None:
        """``class_location`` maps a class node to (file, top-level class name); ``module_file`` a
        dotted module name to its file."""
        self.corpus, self.resolve_class, self.class_location = corpus, resolve_class, class_location
        self.module_file = module_file
        self._trees: dict[str, ast.Module | None] = {}

    def held(self, path: str, line: int, name: str) -> Value | None:
        """What the untyped parameter or local ``name`` of the function around ``line`` holds: an
        instance of a class (a fixture's value, or made from fixtures), or a module
        (``importlib.import_module("pkg.mod")``); None when that is not known."""
        tree = self._tree(path)
        if tree is None:
            return None
        function, owner = _function_at(tree, line)
        if function is None:
            return None
        if any(a.arg == name for a in _arguments(function)):
            parameter = next(a for a in _arguments(function) if a.arg == name)
            value = self._fixture_value(name, path, owner, 0) if parameter.annotation is None else None
        else:
            # A local made from fixtures: `signer = signer_factory(key_derivation=...)`. Every
            # assignment must make the same thing, or it is unknown.
            made = {self._evaluate(node.value, _Fixture(path, function), path, owner, 0) for node in ast.walk(function)
                    if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)}
            value = made.pop() if len(made) == 1 else None
        return value if value is not None and value.kind in ("instance", "module") else None

    # -- lookup, as pytest does it --------------------------------------------------------

    def _fixture_value(self, name: str, path: str, owner: ast.ClassDef | None, depth: int) -> Value | None:
        if depth > _DEPTH:
            return None
        fixture = self._find(name, path, owner)
        if fixture is None:
            return None
        for expression in _returned(fixture.function):
            value = self._evaluate(expression, fixture, path, owner, depth + 1)
            if value is not None:
                return value
        return None

    def _find(self, name: str, path: str, owner: ast.ClassDef | None) -> _Fixture | None:
        for class_path, cls in self._class_chain(path, owner):
            found = _fixture_in(cls.body, name)
            if found is not None:
                return _Fixture(class_path, found)
        tree = self._tree(path)
        found = _fixture_in(tree.body, name) if tree is not None else None
        if found is not None:
            return _Fixture(path, found)
        folder = PurePosixPath(path).parent
        while True:
            conftest = (folder / "conftest.py").as_posix().removeprefix("./")
            tree = self._tree(conftest) if conftest != path else None
            found = _fixture_in(tree.body, name) if tree is not None else None
            if found is not None:
                return _Fixture(conftest, found)
            if folder == folder.parent:
                return None
            folder = folder.parent

    def _class_chain(self, path: str, cls: ast.ClassDef | None) -> list[tuple[str, ast.ClassDef]]:
        """The class and its bases, depth first (close enough to the MRO for fixture lookup)."""
        chain: list[tuple[str, ast.ClassDef]] = []
        pending: list[tuple[str, ast.ClassDef]] = [(path, cls)] if cls is not None else []
        while pending and len(chain) < 32:
            where, current = pending.pop(0)
            if any(c is current for _p, c in chain):
                continue
            chain.append((where, current))
            for base in current.bases:
                node = self.resolve_class(where, ast.unparse(base), current.lineno)
                located = self.class_location(node) if node is not None else None
                base_class = self._class_named(*located) if located is not None else None
                if located is not None and base_class is not None:
                    pending.append((located[0], base_class))
        return chain

    def _class_named(self, path: str, name: str) -> ast.ClassDef | None:
        tree = self._tree(path)
        return next((s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == name), None) if tree else None

    # -- what a fixture returns -------------------------------------------------------------

    def _evaluate(self, expression: ast.expr, fixture: _Fixture, path: str, owner: ast.ClassDef | None, depth: int) -> Value | None:
        parameters = {a.arg for a in _arguments(fixture.function)} - {"self", "cls", "request"}
        if isinstance(expression, ast.Call):
            function = expression.func
            if ast.unparse(function) in ("importlib.import_module", "import_module") and expression.args:
                named = expression.args[0]
                module = self.module_file(named.value) if isinstance(named, ast.Constant) and isinstance(named.value, str) else None
                return Value("module", module) if module is not None else None
            if _is_partial(function) and expression.args:
                made = self._evaluate(expression.args[0], fixture, path, owner, depth)
                return Value("maker", made.cls) if made is not None and made.kind == "maker" else None
            called = self._evaluate(function, fixture, path, owner, depth)
            return Value("instance", called.cls) if called is not None and called.kind == "maker" else None
        if isinstance(expression, ast.Name) and expression.id in parameters:
            return self._fixture_value(expression.id, path, owner, depth)
        if isinstance(expression, (ast.Name, ast.Attribute)):
            node = self.resolve_class(fixture.path, ast.unparse(expression), expression.lineno)
            return Value("maker", node) if node is not None else None
        return None

    def _tree(self, path: str) -> ast.Module | None:
        if path not in self._trees:
            text = self.corpus.source(path).text if self.corpus.bytes_of(path) is not None else None
            self._trees[path] = parse_python(text) if text is not None else None
        return self._trees[path]


def _arguments(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    arguments = function.args
    return [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]


def _function_at(tree: ast.Module, line: int) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef | None, ast.ClassDef | None]:
    """The innermost function around ``line`` and the class it is a method of (None at module level)."""
    found: tuple[ast.FunctionDef | ast.AsyncFunctionDef | None, ast.ClassDef | None] = (None, None)
    body: list[ast.stmt] = tree.body
    owner: ast.ClassDef | None = None
    while True:
        inner = next((s for s in body if s.lineno <= line <= (s.end_lineno or s.lineno)
                      and isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))), None)
        if inner is None:
            return found
        if isinstance(inner, ast.ClassDef):
            owner = inner
        else:
            found = (inner, owner)
            owner = None
        body = inner.body


def _fixture_in(body: list[ast.stmt], name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    for statement in body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in statement.decorator_list:
                called = decorator.func if isinstance(decorator, ast.Call) else decorator
                if not ast.unparse(called).endswith("fixture"):
                    continue
                renamed = next((k.value.value for k in getattr(decorator, "keywords", [])
                                if k.arg == "name" and isinstance(k.value, ast.Constant)), None)
                if (renamed or statement.name) == name:
                    return statement
    return None


def _returned(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr]:
    """The values a fixture hands out: its ``return`` and ``yield`` values (not nested functions')."""
    found: list[ast.expr] = []
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop(0)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, (ast.Return, ast.Yield)) and node.value is not None:
            found.append(node.value)
        stack.extend(ast.iter_child_nodes(node))
    return found


def _is_partial(function: ast.expr) -> bool:
    return ast.unparse(function) in ("partial", "functools.partial")
