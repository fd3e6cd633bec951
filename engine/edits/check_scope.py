"""The check's scope: the files an edit writes, and the importers it can break.

Every importer of a written file, transitively, is what the check compared at first. But a type
checker re-checks each of them after any change to a file they reach, and on a project whose
utility module reaches most of the code (werkzeug's ``utils.py``: 121 files) that is the whole
cost of the check, for an edit that could break none of them: an added function, a fixed body.

So for a Python file the edit rewrites, the names it changes are worked out from the module's
top-level statements (:func:`changed_names`), each read as its interface (``_interface``: a
function whose return type is declared and whose body binds no attribute or global is its
signature, a class is its members so read): the names bound by a statement whose interface
differs, and then those bound by any statement that mentions one of them (a type inferred from a
changed name is itself changed). Of the file's direct importers, only those that mention a
changed name (or import everything with ``*``) can see the change, and they are in scope; what
they change in turn follows by the same rule, from the names they received. Anything this cannot
read is taken as changed through and through, and all its importers, transitively, are in scope:
a file that is not Python, created or deleted, unparsable, or whose ``__all__``, module
``__getattr__`` or star imports changed.

Go files are read the same way, from their top-level declarations (engine.edits.go_statements);
there a file's dependents are its package's other files as well as its importers. So are
TypeScript and JavaScript files, from their top-level statements (engine.edits.ts_statements):
there an importer that takes a whole module (``import * as m``, ``export *``, ``require()``) sees
any name, and the binding that takes it changes with any name of the module.

The importers left out are counted (:attr:`Scope.not_affected`) and said with the check.
"""

from __future__ import annotations

import ast
import copy
import functools
import re
from collections import deque
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

from engine.edits.go_statements import go_declarations
from engine.edits.python_parse import declares_encoding, python_module
from engine.edits.ts_statements import TS_SUFFIXES, WHOLE_MODULE, ts_declarations, ts_words

_PYTHON_SUFFIXES = (".py", ".pyi")
_READ_SUFFIXES = (*_PYTHON_SUFFIXES, ".go", *TS_SUFFIXES)
"""Files whose changed names are read (Go's and TypeScript's through engine.edits.go_statements and
ts_statements); any other written file changes everything."""
_WORD = re.compile(r"[A-Za-z_]\w*")
_STAR_IMPORT = re.compile(r"\bimport\s*\(?\s*\*")
_MODULE_HOOKS = frozenset({"__all__", "__getattr__", "__dir__", "*"})
"""Bindings that change which names a module has, or what an unknown name means in it: a change
to one of them may change anything the module exports."""


@dataclass(frozen=True)
class Scope:
    importers: list[str]
    """The importers to compare, nearest first, at most the limit."""
    beyond: int
    """Importers in scope past the limit, never compared."""
    not_affected: int = 0
    """Importers of the written files, transitively, that use none of the names the edit changed."""


def scope_of(written: Iterable[tuple[str, bytes | None, bytes | None]], dependents: Callable[[list[str]], list[str]],
             read: Callable[[str], str | None], limit: int) -> Scope:
    """The importers in scope of an edit that writes ``written`` (each path with its bytes before
    and after), and how many of the importers of the written files use none of what it changed."""
    changes = {path: changed_names(path, before, after) for path, before, after in written}
    dependents = _asked_once(dependents)  # both walks below ask for the same files' dependents
    importers, beyond = narrowed(changes, dependents, read, limit)
    if all(names is None for names in changes.values()):
        return Scope(importers, beyond)
    every, every_beyond = every_importer(changes, dependents, limit)
    return Scope(importers, beyond, max(len(every) + every_beyond - len(importers) - beyond, 0))


def _asked_once(dependents: Callable[[list[str]], list[str]]) -> Callable[[list[str]], list[str]]:
    """``dependents``, each answer kept for the rest of one scope's reckoning (the graph does not change in it)."""
    answers: dict[tuple[str, ...], list[str]] = {}

    def kept(paths: list[str]) -> list[str]:
        key = tuple(paths)
        if key not in answers:
            answers[key] = dependents(paths)
        return answers[key]
    return kept


def changed_names(path: str, before: bytes | None, after: bytes | None) -> frozenset[str] | None:
    """The module-level names of a Python, Go or TypeScript file whose meaning the edit may change; None when
    it may change any of them (see the module's docstring)."""
    if not path.endswith(_READ_SUFFIXES) or before is None or after is None:
        return None
    old, new = _statements(path, before), _statements(path, after)
    if old is None or new is None:
        return None
    differing: set[str] = set()
    for statement in [*_unmatched(old, new), *_unmatched(new, old)]:
        differing |= statement.bound
    return _grown([*old, *new], differing)


def narrowed(written: Mapping[str, frozenset[str] | None], dependents: Callable[[list[str]], list[str]],
             read: Callable[[str], str | None], limit: int) -> tuple[list[str], int]:
    """The importers in scope of an edit that writes ``written`` (each path with the names it
    changes, None for any of them), nearest first, at most ``limit``, and how many more.

    A dependent is in scope when it may see a changed name of a file in scope; what it then
    changes in turn is its statements that mention those names, and what they bind."""
    changed: dict[str, frozenset[str] | None] = dict(written)
    parsed: dict[str, list[_Statement] | None] = {}
    # A Go package's files all see each other, and a name that grows in one is looked for again
    # in all the others: each file's words are read once.
    words: dict[str, frozenset[str] | None] = {}
    reached: list[str] = []
    queue = deque(sorted(written))
    queued = set(queue)  # a path waiting already goes with its names as they stand when it is taken
    while queue:
        path = queue.popleft()
        queued.discard(path)
        names = changed[path]
        if names is not None and not names:
            continue
        for dependent in dependents([path]):
            if dependent not in words:
                words[dependent] = _words(dependent, read(dependent))
            seen = words[dependent]
            if names is not None and seen is not None and seen.isdisjoint(names):
                continue
            if dependent not in changed:
                reached.append(dependent)
            known = changed.get(dependent, frozenset())
            if known is None:
                continue
            if names is not None and dependent not in parsed:
                parsed[dependent] = _module_statements(dependent, read)
            grown = None if names is None else _received(parsed[dependent], known | names)
            if grown != known:
                changed[dependent] = grown
                if dependent not in queued:
                    queue.append(dependent)
                    queued.add(dependent)
    return reached[:limit], max(len(reached) - limit, 0)


def every_importer(paths: Iterable[str], dependents: Callable[[list[str]], list[str]], limit: int) -> tuple[list[str], int]:
    """Every importer of ``paths``, transitively, nearest first, at most ``limit``, and how many more."""
    return narrowed(dict.fromkeys(paths, None), dependents, lambda _path: None, limit)


def _module_statements(path: str, read: Callable[[str], str | None]) -> list["_Statement"] | None:
    text = read(path)
    return _statements(path, text.encode("utf-8")) if text is not None and path.endswith(_READ_SUFFIXES) else None


def _received(statements: list["_Statement"] | None, names: frozenset[str]) -> frozenset[str] | None:
    """``names`` (those a dependent receives) and the module-level names of its ``statements``
    that follow from them, a binding that takes a whole module among them; None for any (a module
    that could not be read)."""
    if statements is None:
        return None
    grown = _grown(statements, {*names, WHOLE_MODULE})
    return None if grown is None else grown - {WHOLE_MODULE}


def _grown(statements: list["_Statement"], names: set[str]) -> frozenset[str] | None:
    """``names`` with every name bound by a statement that mentions one of them, until none is
    added (a type inferred from a changed name is itself changed); None when that reaches a
    binding that changes what the module exports (see ``_MODULE_HOOKS``)."""
    grew = True
    while grew:
        grew = False
        for statement in statements:
            if statement.bound - names and statement.words & names:
                names |= statement.bound
                grew = True
    return None if names & _MODULE_HOOKS else frozenset(names)


def _words(path: str, text: str | None) -> frozenset[str] | None:
    """What an importer may see: the words it mentions (in code, a string or an annotation alike);
    None, anything, when it imports everything from somewhere or cannot be read."""
    if text is not None and path.endswith(TS_SUFFIXES):
        return ts_words(text)
    return None if text is None else _python_words(text)


@functools.lru_cache(maxsize=256)
def _python_words(text: str) -> frozenset[str] | None:
    """_words of a Python (or other) file's text, kept by content: every apply in the same files
    reads the same importers again."""
    return None if _STAR_IMPORT.search(text) else frozenset(_WORD.findall(text))


@dataclass(frozen=True)
class _Statement:
    text: str
    """Its interface (``_interface``), as ast.dump writes it: positions, comments and layout aside."""
    bound: frozenset[str]
    """The module-level names it binds or unbinds."""
    words: frozenset[str]
    """Every identifier-like word in its interface: the names it may read (and a few of ast's own
    node names, which can only add to what is taken as changed)."""


def _statements(path: str, data: bytes) -> list[_Statement] | None:
    if path.endswith(".go"):
        declarations = go_declarations(data)
        read = None if declarations is None else tuple(
            _Statement(text, bound, frozenset(_WORD.findall(words))) for text, bound, words in declarations)
    elif path.endswith(TS_SUFFIXES):
        statements = ts_declarations(path, data)
        read = None if statements is None else tuple(_Statement(text, bound, words) for text, bound, words in statements)
    else:
        read = _read_statements(data)
    return None if read is None else list(read)


@functools.lru_cache(maxsize=64)
def _read_statements(data: bytes) -> tuple[_Statement, ...] | None:
    """A module's statements, by its content: an apply and the preview before it read the same
    files, an edit's after is the next edit's before, and a rename back or an undo reads both
    again; parsing and writing out every statement of a large module is most of the scope's cost."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    if declares_encoding(data) or text.startswith("\ufeff"):
        try:  # Python would read the bytes otherwise than as this text: the text is parsed here
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return None
    else:  # the parse the syntax check reads too (the text is the bytes as UTF-8, as Python reads them)
        parsed = python_module(data, "<unknown>")
        if not isinstance(parsed, ast.Module):
            return None
        tree = parsed
    dumps = _Dumps(text)
    statements = []
    for node in tree.body:
        segment = dumps.segment(node)
        found = _KNOWN_STATEMENTS.get(segment) if segment is not None else None
        if found is None:
            interface = dumps.interface(node)
            found = _Statement(interface, frozenset(_bound_names(node)), frozenset(_WORD.findall(interface)))
            if segment is not None:
                _keep_statement(segment, found)
        statements.append(found)
    return tuple(statements)


_KNOWN_STATEMENTS: dict[tuple[bool, str], _Statement] = {}
"""Top-level statements read before, by their source text: what _read_statements makes of a
statement depends on its text alone (its interface as ast.dump writes it, positions aside, and
the names it binds), and an edit changes few of a module's statements; the least recently kept
go first past _KNOWN_LIMIT."""
_KNOWN_LIMIT = 4096


def _keep_statement(segment: tuple[bool, str], statement: _Statement) -> None:
    _KNOWN_STATEMENTS[segment] = statement
    if len(_KNOWN_STATEMENTS) > _KNOWN_LIMIT:
        del _KNOWN_STATEMENTS[next(iter(_KNOWN_STATEMENTS))]


_LINE_BREAK = re.compile(r"\r\n|\r|\n")
"""Where ast's line numbers count a new line."""


_DUMPED: dict[tuple[str, bool, str], str] = {}
"""ast.dump of class members (read as their interface) and of the statements of a function's or a
member's body, by their source text: an edit of one method leaves its class's other members, and
the other statements of its body, as they were, and writing out the whole class again for each
edit was most of the scope's time. The least recently kept go first past _DUMPED_LIMIT."""
_DUMPED_LIMIT = 8192
_FIELDS: dict[type[ast.AST], tuple[tuple[str, bool], ...]] = {}
"""Each node type's fields, with whether ast.dump leaves the field out when it is None."""
_STUB_BODY = "[Expr(value=Constant(value=Ellipsis))]"
"""ast.dump of the body ``_interface`` gives a function whose type does not depend on its body."""


class _Dumps:
    """ast.dump of a module's statements as ``_interface`` reads them, the parts kept in _DUMPED
    taken from there (only where the text is ASCII, so that ast's byte columns are characters)."""

    def __init__(self, text: str) -> None:
        self._text = text if text.isascii() else None
        self._starts = [0, *(found.end() for found in _LINE_BREAK.finditer(text))] if self._text is not None else []

    def segment(self, node: ast.stmt) -> tuple[bool, str] | None:
        """The statement's source text (two statements may share a line: ``a = 1; b = 2``), for a
        decorated one from its first decorator's expression on, with True; None without one."""
        if self._text is None or node.end_lineno is None or node.end_col_offset is None:
            return None
        parts: list[ast.stmt | ast.expr] = [node, *getattr(node, "decorator_list", ())]
        first = min(parts, key=lambda part: (part.lineno, part.col_offset))
        start = self._starts[first.lineno - 1] + first.col_offset
        return first is not node, self._text[start:self._starts[node.end_lineno - 1] + node.end_col_offset]

    def interface(self, node: ast.stmt, *, in_class: bool = False) -> str:
        """``ast.dump(_interface(node, in_class=in_class))``."""
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.returns is not None and not _declares_outside(node, _receiver(node) if in_class else None):
                return self._node(node, _STUB_BODY)
            return self._node(node, self._list([self._kept("body", part) for part in _without_docstring(node.body)]))
        if isinstance(node, ast.ClassDef):
            return self._node(node, self._list([self._kept("member", member) for member in _without_docstring(node.body)]))
        return self._node(node)

    def _kept(self, role: str, node: ast.stmt) -> str:
        """A member's interface, or a statement of a body as it is, from _DUMPED when its text was read before."""
        segment = self.segment(node) if node.end_lineno is not None else None
        key = (role, *segment) if segment is not None else None
        found = _DUMPED.get(key) if key is not None else None
        if found is None:
            found = self.interface(node, in_class=True) if role == "member" else self._node(node)
            if key is not None:
                _DUMPED[key] = found
                if len(_DUMPED) > _DUMPED_LIMIT:
                    del _DUMPED[next(iter(_DUMPED))]
        return found

    def _node(self, node: ast.AST, body: str | None = None) -> str:
        """ast.dump(node) (fields annotated, no attributes, one line), with ``body`` written in
        place of the node's own body when given."""
        kind = type(node)
        fields = _FIELDS.get(kind)
        if fields is None:
            fields = _FIELDS[kind] = tuple((name, getattr(kind, name, ...) is None) for name in kind._fields)
        parts = []
        for name, left_out_when_none in fields:
            if body is not None and name == "body":
                parts.append(f"body={body}")
                continue
            try:
                value = getattr(node, name)
            except AttributeError:
                continue
            if value is None and left_out_when_none:
                continue
            parts.append(f"{name}={self._value(value)}")
        return f"{kind.__name__}({', '.join(parts)})"

    def _value(self, value: object) -> str:
        if isinstance(value, ast.AST):
            return self._node(value)
        if isinstance(value, list):
            return self._list([self._value(item) for item in value])
        return repr(value)

    @staticmethod
    def _list(dumped: list[str]) -> str:
        return f"[{', '.join(dumped)}]"


def _interface(node: ast.stmt, *, in_class: bool = False) -> ast.stmt:
    """What a statement tells other statements and modules: the statement itself, but for a
    function whose type does not depend on its body (its return type is declared, and its body
    declares nothing a checker would infer types from: an attribute of its ``self`` or ``cls``, a
    global), its signature; and for a class, its members so read. A body-only change to such a
    function changes no name. :class:`_Dumps` writes this out without making it (the check's own
    reading); this is what it writes, as tests/test_check_scope.py compares."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        read = copy.copy(node)
        if node.returns is not None and not _declares_outside(node, _receiver(node) if in_class else None):
            read.body = [ast.Expr(ast.Constant(...))]
        else:
            read.body = _without_docstring(node.body)
        return read
    if isinstance(node, ast.ClassDef):
        members = copy.copy(node)
        members.body = [_interface(member, in_class=True) for member in _without_docstring(node.body)]
        return members
    return node


def _without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    """A body without its docstring, which no type depends on (and which names other symbols in prose)."""
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        return body[1:] or [ast.Pass()]
    return body


def _receiver(method: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """A method's first parameter (``self``, ``cls``): what its attribute assignments declare on."""
    parameters = [*method.args.posonlyargs, *method.args.args]
    return parameters[0].arg if parameters else None


def _declares_outside(function: ast.FunctionDef | ast.AsyncFunctionDef, receiver: str | None) -> bool:
    """Whether a function's body declares something outside itself: an attribute of its
    ``receiver`` (``self.x = ...`` declares an instance attribute, its type inferred from the
    value), or a global or nonlocal name. An attribute of anything else (``response.status = ...``)
    declares nothing."""
    for statement in function.body:
        for node in ast.walk(statement):
            if isinstance(node, (ast.Global, ast.Nonlocal)):
                return True
            if receiver is not None and isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)) \
                    and isinstance(node.value, ast.Name) and node.value.id == receiver:
                return True
    return False


def _unmatched(side: list[_Statement], other: list[_Statement]) -> list[_Statement]:
    """The statements of ``side`` with no equal statement left in ``other`` (as multisets)."""
    available: dict[str, int] = {}
    for statement in other:
        available[statement.text] = available.get(statement.text, 0) + 1
    unmatched = []
    for statement in side:
        if available.get(statement.text, 0):
            available[statement.text] -= 1
        else:
            unmatched.append(statement)
    return unmatched


def _bound_names(statement: ast.stmt) -> set[str]:
    """Names a top-level statement binds in the module: definitions, imports, assignment and
    ``del`` targets, also inside ``if``/``try``/``with``/``for`` blocks, never inside a function or
    class body (``*`` for a star import: it binds names nobody can list here)."""
    bound: set[str] = set()
    pending: list[ast.AST] = [statement]
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
            continue
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(node, ast.Import):
            bound.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            bound.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
        pending.extend(ast.iter_child_nodes(node))
    return bound
