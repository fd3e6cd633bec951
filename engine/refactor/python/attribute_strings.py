"""What a Python rename must also see beyond what a server or jedi resolves.

- Code references the server or jedi left behind (a server that does not know a ``src/``
  layout misses ``pkg.Name`` in the tests), found by name and kept only where the project
  graph resolves the expression to the symbol.
- String annotations that name the symbol (``-> "Order"``), resolved like code.
- Attribute names passed as strings next to the object that owns them:
  ``monkeypatch.setattr(module, "NAME", …)``, ``mock.patch.object(Class, "method")``,
  ``getattr(module, "NAME")``. When the object resolves (through the graph's import
  bindings) to the renamed symbol's module or class, the string is the symbol's name and
  is renamed with it.
- Mirror namespaces (a ``curried/`` package that re-binds the public functions of the main
  one): another module that binds the old name and shares most public names with the
  renamed symbol's module is reported, since conventions keep them in step.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_right
from dataclasses import dataclass

from engine.edits.model import FileChange, WorkspaceEdit
from engine.edits.text import Coverage, word_offsets
from engine.graph.build import symbol_node
from engine.graph.queries import GraphQueries
from engine.answers import TextEdit
from engine.positions import Position, Range
from engine.refactor.corpus import Corpus
from engine.refactor.python.local_scopes import LocalScopes
from engine.refactor.python.receivers import Receivers
from engine.symbols import Symbol
from engine.workspace import SourceFile

_CALLS = r"(?:setattr|getattr|hasattr|delattr|patch\.object)\(\s*([\w.]+|(?:importlib\.)?import_module\(\s*[\"'][\w.]+[\"']\s*\))\s*,\s*([\"']){name}\2"
_IMPORT_MODULE = re.compile(r"(?:importlib\.)?import_module\(\s*[\"']([\w.]+)[\"']\s*\)")
#: A string annotation naming the symbol: ``-> "Order"``, ``order: "Order"`` (parameters, variables).
_ANNOTATION = r"(?:->|^\s*\w+\s*:|[(,]\s*\w+\s*:)\s*([\"'])((?:[\w]+\.)*{name})\1"


@dataclass(frozen=True)
class NameUse:
    """A place that names the symbol which a server's rename may not cover."""

    path: str
    span: Range
    kind: str
    """annotation | attribute-string | code"""
    offset: int
    """Where the name starts in the file's text."""


def _attribute_strings(
    queries: GraphQueries, path: str, source: SourceFile, name: str, calls: re.Pattern[str], target: str,
) -> list[NameUse]:
    """The name quoted in ``getattr``-like calls whose owner resolves it to ``target``."""
    text, starts = source.text, source.line_starts
    # Calls may span lines (`monkeypatch.setattr(\n    module, "NAME", …)`): searched in the whole
    # text, where the name is quoted at all (the pattern's alternation is tried at every offset).
    if f'"{name}"' not in text and f"'{name}'" not in text:
        return []
    uses = []
    for match in calls.finditer(text):
        number = bisect_right(starts, match.start()) - 1
        owner = match.group(1)
        imported = _IMPORT_MODULE.fullmatch(owner)
        if imported is not None:  # importlib.import_module("pkg.mod"): that module
            module_file = queries.project.module_file(imported.group(1))
            found = queries.project.resolve_in_module(module_file, name) if module_file else None
        else:
            # `owner.name` resolves to the symbol exactly when the owner is its module or class.
            found = queries.project.resolve_expression(path, f"{owner}.{name}", number + 1)
        if found == target:
            end = match.end() - 1  # before the closing quote
            at = bisect_right(starts, end) - 1
            uses.append(NameUse(path, _span(at, end - starts[at], name), "attribute-string", end - len(name)))
    return uses


def find_name_uses(queries: GraphQueries, symbol: Symbol, corpus: Corpus) -> list[NameUse]:
    """Every string annotation, attribute string and code use of the symbol's name that the
    project graph resolves to the symbol. Independent of any edit, so a rename runs it while
    the server computes its own; :func:`add_name_uses` then keeps what the server left."""
    target = queries.project.node_named(symbol.file, symbol.name_path) or symbol_node(symbol.file, symbol.name_path)
    name = symbol.name
    calls = re.compile(_CALLS.format(name=re.escape(name)))
    annotation = re.compile(_ANNOTATION.format(name=re.escape(name)))
    code_use = re.compile(rf"(?<![\w.])((?:[A-Za-z_]\w*\.)*){re.escape(name)}\b(?!\s*=[^=])(?![\"'])")
    constructed = re.compile(rf"(?<![\w.])([A-Za-z_][\w.]*)\([^()]*\)\.({re.escape(name)})\b")
    resolve = queries.project.resolve_expression
    uses: list[NameUse] = []
    for path in corpus.mentioning(name, "python"):
        if not path.endswith(".py"):
            continue
        source = corpus.source(path)
        text, starts = source.text, source.line_starts
        receivers: Receivers | None = None
        locals_: LocalScopes | None = None
        uses += _attribute_strings(queries, path, source, name, calls, target)
        for number in sorted({bisect_right(starts, offset) - 1 for offset in word_offsets(text, name, "_")}):
            line_start = starts[number]
            line = text[line_start:starts[number + 1] if number + 1 < len(starts) else len(text)].rstrip("\r\n")
            for match in annotation.finditer(line):
                # The annotation's text is an expression; it names the symbol when it resolves to it.
                if resolve(path, match.group(2), number + 1) == target:
                    end = match.end(2)
                    uses.append(NameUse(path, _span(number, end, name), "annotation", line_start + end - len(name)))
            for match in code_use.finditer(line):
                # Definitions, rebindings and keyword arguments (a name followed by ``=``) are not
                # references; neither are strings and comments (checked when one is left uncovered).
                column = match.start() + len(match.group(1))
                if _DEFINES.search(line[: match.start()]):
                    continue
                if not match.group(1):
                    # A bare name a function binds itself is its local, whatever the module has.
                    locals_ = locals_ or LocalScopes.of(text)
                    if locals_.binds(name, number + 1):
                        continue
                if resolve(path, match.group(1) + name, number + 1) == target:
                    uses.append(NameUse(path, _span(number, column + len(name), name), "code", line_start + column))
                elif match.group(1) and match.group(1) not in ("self.", "cls."):
                    # ``x.name`` where x holds an instance: its class, from annotations and constructors.
                    # (``self`` is the graph's to resolve: by its class's name, a module that also
                    # imports a same-named class would send it to that one.)
                    receivers = receivers or Receivers(text)
                    held = receivers.class_of(match.group(1)[:-1], number + 1)
                    if held is not None and resolve(path, f"{held}.{name}", number + 1) == target:
                        uses.append(NameUse(path, _span(number, column + len(name), name), "code", line_start + column))
            for match in constructed.finditer(line):
                # ``C(…).name``: an instance made on the spot.
                if resolve(path, f"{match.group(1)}.{name}", number + 1) == target:
                    column = match.start(2)
                    uses.append(NameUse(path, _span(number, column + len(name), name), "code", line_start + column))
    return uses


def _span(line: int, end: int, name: str) -> Range:
    return Range(Position(line, end - len(name)), Position(line, end))


_DEFINES = re.compile(r"\b(def|class|global|nonlocal)\s+$")


def scan_code_uses(uses: list[NameUse], corpus: Corpus) -> None:
    """Scan the strings and comments of each file with code uses as far as its last one, into the
    call's maps (:meth:`Corpus.code_map`): what :func:`add_name_uses` asks of the uses an edit
    leaves, found beside the server's request."""
    last: dict[str, int] = {}
    for use in uses:
        if use.kind == "code":
            last[use.path] = max(last.get(use.path, 0), use.offset)
    for path, offset in last.items():
        corpus.code_map(path).is_code(offset)


def add_name_uses(
    edit: WorkspaceEdit, uses: list[NameUse], new: str, corpus: Corpus, symbol: Symbol,
) -> tuple[WorkspaceEdit, list[str]]:
    """The edit plus the uses it does not cover already, with a note of each kind added (the
    files' strings and comments scanned beside the server: :func:`scan_code_uses`)."""
    edited = {op.path: op for op in edit.operations if isinstance(op, FileChange)}
    coverage = {path: Coverage(change.edits) for path, change in edited.items()}
    added: dict[str, list[TextEdit]] = {}
    renamed: list[str] = []
    found_in_code: list[str] = []
    for use in uses:
        known = edited.get(use.path)
        if use.kind == "attribute-string":
            # A server that touched the line may have renamed the string itself.
            line = use.span.start.line
            if known is not None and any(e.range.start.line <= line < max(e.range.end.line, e.range.start.line + 1) for e in known.edits):
                continue
        elif known is not None and coverage[use.path].covers(use.span.start):
            continue
        if use.kind == "code":
            # Only the few uses left uncovered ask whether they are in a string or comment.
            if not corpus.code_map(use.path).is_code(use.offset):
                continue
        spans = added.setdefault(use.path, [])
        if any(e.range == use.span for e in spans):
            continue
        spans.append(TextEdit(use.span, new))
        (found_in_code if use.kind == "code" else renamed).append(f"{use.path}:{use.span.start.line + 1}")
    operations = list(edit.operations)
    for path, spans in added.items():
        if not spans:
            continue
        known = edited.get(path)
        if known is None:
            operations.append(FileChange(path, tuple(spans), corpus.source(path).sha256))
        else:
            operations[operations.index(known)] = FileChange(path, known.edits + tuple(spans), known.expected_sha256)
    notes = [f"names in strings renamed with it (annotations; setattr/getattr/patch.object on its owner): {', '.join(renamed)}"] if renamed else []
    if found_in_code:
        notes.append(f"code references the rename had left, resolved to {symbol.address} by the project graph and renamed: {', '.join(found_in_code)}")
    return WorkspaceEdit(tuple(operations), edit.annotations), notes


def mirror_modules(queries: GraphQueries, symbol: Symbol, corpus: Corpus) -> list[tuple[str, int]]:
    """(path, public names shared) of the modules that bind the old name themselves and mirror
    the defining module's public names (a curried, compat or deprecated twin kept in step by
    convention; a module that binds the name mentions it: only those are looked at)."""
    if len(symbol.path) != 1:
        return []
    facts = queries.project.facts
    home = _public_names(queries, symbol.file)
    if len(home) < 3:
        return []
    found = []
    for path in sorted(corpus.mentioning(symbol.name, "python")):
        if path == symbol.file or not path.endswith(".py") or path not in facts:
            continue
        names = _public_names(queries, path)
        if symbol.name not in names:
            continue
        if queries.project.resolve_expression(path, symbol.name, 1) == symbol_node(symbol.file, symbol.name_path):
            continue  # it imports the symbol itself, which the rename updates
        shared = len(home & names)
        if shared >= max(3, len(home) // 2) and _rebinds(corpus.source(path).text, symbol.name):
            found.append((path, shared))
    return found


def _rebinds(text: str, name: str) -> bool:
    """Whether the module's top-level binding of ``name`` is built from a same-named thing
    (``pluck = core.pluck``, ``groupby = curry(toolz.groupby)``, ``x = wrap(_x)`` after ``from
    home import x as _x``): a mirror re-binds, it does not define its own (packaging's ranges.py
    has its own ``UnparsedVersion = Version | str``, which is no twin of specifiers')."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    imported_as = {alias.asname for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                   for alias in node.names if alias.name == name and alias.asname}
    for statement in tree.body:
        if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            if not any(isinstance(t, ast.Name) and t.id == name for t in targets):
                continue
            for node in ast.walk(statement.value):
                if (isinstance(node, ast.Attribute) and node.attr == name) or (
                        isinstance(node, ast.Name) and node.id in imported_as):
                    return True
    return False


def mirror_warnings(queries: GraphQueries, symbol: Symbol, corpus: Corpus) -> list[str]:
    """The mirrors, reported (when their bindings are left as they are)."""
    return [f"{path} binds its own {symbol.name} and mirrors {shared} public names of {symbol.file}: rename it there too "
            "if they are kept in step" for path, shared in mirror_modules(queries, symbol, corpus)]


def definition_use(symbol: Symbol, corpus: Corpus) -> NameUse:
    """The symbol's own name where it is defined, as a use to rename (a mirror's binding)."""
    start = symbol.selection_range.start
    source = corpus.source(symbol.file)
    offset = source.line_starts[start.line] + start.column
    return NameUse(symbol.file, Range(start, Position(start.line, start.column + len(symbol.name))), "code", offset)


def _public_names(queries: GraphQueries, path: str) -> set[str]:
    facts = queries.project.facts[path]
    names = {s.name for s in facts.symbols if s.parent is None and not s.name.startswith("_")}
    for fact in facts.imports:
        if fact.scope is None:
            names |= {alias or name for name, alias in fact.names if not (alias or name).startswith("_")}
    return names
