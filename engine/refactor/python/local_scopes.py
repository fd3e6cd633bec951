"""Which bare names a Python function binds itself, so a same-named module symbol is not what they mean.

humanize's ``intword`` has a local variable ``ordinal``; the module has a function ``ordinal``.
A pass that renames the uses a server left, found by name, took the local for the function and
renamed half of its uses ("local variable referenced before assignment", 37 red tests). A name a
function binds (parameter, assignment, loop or ``with`` target, import, nested def) is local in
the whole function unless it is declared ``global`` or ``nonlocal`` there: Python's own rule.
"""

from __future__ import annotations

import ast
import hashlib
from bisect import bisect_right
from collections import OrderedDict
from dataclasses import dataclass

from engine.refactor.python.pytrees import parse_python

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


@dataclass(frozen=True)
class _Scope:
    first: int
    last: int
    names: frozenset[str]


_CACHED = 4096
"""LocalScopes kept per text (by digest): a warm engine (the CLI's daemon) plans rename after
rename over the same files, and parsing them again was half of a warm rename's work."""
_cache: OrderedDict[bytes, LocalScopes] = OrderedDict()


class LocalScopes:
    """The functions of one file and the names each binds, asked by line. Immutable once made."""

    @classmethod
    def of(cls, text: str) -> LocalScopes:
        """The scopes of ``text``, made once per distinct text (least recently used ones dropped)."""
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        found = _cache.get(key)
        if found is None:
            found = _cache[key] = cls(text)
            if len(_cache) > _CACHED:
                _cache.popitem(last=False)
        else:
            _cache.move_to_end(key)
        return found

    def __init__(self, text: str) -> None:
        tree = parse_python(text)
        scopes = [_scope(node) for node in ast.walk(tree) if isinstance(node, _FUNCTIONS)] if tree is not None else []
        self._scopes = sorted(scopes, key=lambda s: (s.first, -s.last))
        self._firsts = [s.first for s in self._scopes]

    def binds(self, name: str, line: int) -> bool:
        """Whether ``name`` on 1-based ``line`` is a local of a function around it (the innermost
        that binds it; an outer function's local is a closure variable, just as local to it)."""
        index = bisect_right(self._firsts, line)
        return any(s.first <= line <= s.last and name in s.names for s in self._scopes[:index])


def _scope(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> _Scope:
    arguments = function.args
    names = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
    names |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
    declared: set[str] = set()
    body = function.body if isinstance(function.body, list) else [function.body]
    for node in _own_nodes(body):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {alias.asname or alias.name.split(".")[0] for alias in node.names if alias.name != "*"}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            declared |= set(node.names)
    last = getattr(function, "end_lineno", None) or function.lineno
    return _Scope(function.lineno, last, frozenset(names - declared))


def _own_nodes(body: list[ast.stmt] | list[ast.expr]) -> list[ast.AST]:
    """Every node of a function's body, not descending into nested functions, classes or
    comprehensions (their names are their own), but including the nested definitions' names."""
    found: list[ast.AST] = []
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        found.append(node)
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
            # Decorators and defaults run in this scope; the body does not.
            stack.extend(getattr(node, "decorator_list", []))
            continue
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return found
