"""Per-file facts: what one file defines, imports, calls and inherits, as plain picklable values.

Facts depend on the file's content alone, so they are cached by content hash
and recomputed only when that changes. Resolving them against other files
(which module an import names, which symbol a call reaches) is the graph's
job, in :mod:`engine.graph.build`.
"""

from __future__ import annotations

import re
from operator import attrgetter
from dataclasses import dataclass
from functools import cache
from pathlib import PurePosixPath
from typing import NamedTuple, TypedDict

from tree_sitter import Node, Query, QueryCursor, Tree

from engine.extract import FileSymbols, SymbolExtractor
from engine.extract.treesitter import load_grammar
from engine.languages import ImportStyle, profile
from engine.graph.receivers import CallFact, Held, Receivers, annotation_held, node_text
from engine.symbols import Segment, Symbol, SymbolKind, walk_all
from engine.workspace import SourceFile

#: Bump to invalidate every cached fact and snapshot.
SCHEMA_VERSION = 10
EXTRACTOR_ID = f"tree-sitter+regex/facts-{SCHEMA_VERSION}"


_CODE_KINDS = frozenset({SymbolKind.FUNCTION, SymbolKind.METHOD, SymbolKind.CONSTRUCTOR, SymbolKind.CLASS})
_TEST_FILE = re.compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*\.py$|_test\.(py|go)$|\.(test|spec)\.[jt]sx?$|(^|/)conftest\.py$")


# Symbols, imports, calls and bases are NamedTuples, not dataclasses: a project has tens of
# thousands of them, and every warm start unpickles them all (a tuple comes back twice as fast).


class SymbolFact(NamedTuple):
    name: str
    name_path: str
    segments: tuple[Segment, ...]
    kind: SymbolKind
    line: int
    """1-based first line (decorators included)."""
    end_line: int
    parent: str | None
    """Name path of the enclosing symbol, None at top level."""
    source: str
    confidence: str
    name_line: int = 0
    """1-based line of the identifier."""
    name_column: int = 0
    """0-based code-point column of the identifier."""
    decorators: tuple[str, ...] = ()
    """Python decorators as written, without ``@`` (``app.route("/")``, ``click.command()``)."""
    returns: str | None = None
    """The class a Python function's return annotation names, as written in its file (``Order``,
    ``models.Order``; through ``Optional``, ``| None`` and quotes), for receivers the graph infers."""
    returns_element: str | None = None
    """The class of the elements of what it returns: ``Segment`` for ``-> list[Segment]``."""


class ImportFact(NamedTuple):
    module: str
    """``a.b`` for ``import a.b`` / ``from a.b import x``; a relative path for TS/JS; an import path for Go."""
    level: int = 0
    """Leading dots of a Python relative import."""
    names: tuple[tuple[str, str | None], ...] = ()
    """(name, alias) for ``from m import name as alias``; empty for ``import m``."""
    alias: str | None = None
    """``c`` in ``import a.b as c``."""
    star: bool = False
    line: int = 0
    scope: str | None = None
    """Name path of the enclosing symbol; None at module level."""


class BaseFact(NamedTuple):
    cls: str
    base: str
    line: int


@dataclass(frozen=True)
class FileFacts:
    path: str
    language: str | None
    sha256: str
    source: str
    confidence: str
    symbols: tuple[SymbolFact, ...]
    imports: tuple[ImportFact, ...] = ()
    calls: tuple[CallFact, ...] = ()
    bases: tuple[BaseFact, ...] = ()
    exports: tuple[str, ...] | None = None
    """Python ``__all__`` when it is a literal list or tuple of strings."""
    has_main: bool = False
    """Python ``if __name__ == "__main__":``."""
    attributes: frozenset[str] = frozenset()
    """Every name used after a dot (``x.total``, ``self.items``): methods and properties reached
    through values of unknown type, which calls alone do not show."""
    is_test: bool = False


class _CommonFacts(TypedDict):
    """The fields of :class:`FileFacts` every file has, whatever its language (symbols aside)."""

    path: str
    language: str | None
    sha256: str
    source: str
    confidence: str
    is_test: bool


class _PythonFacts(TypedDict):
    """The fields of :class:`FileFacts` read from a Python syntax tree."""

    symbols: tuple[SymbolFact, ...]
    imports: tuple[ImportFact, ...]
    calls: tuple[CallFact, ...]
    bases: tuple[BaseFact, ...]
    exports: tuple[str, ...] | None
    has_main: bool
    attributes: frozenset[str]


def is_test_path(path: str) -> bool:
    return bool(_TEST_FILE.search(path))


def file_facts(
    source: SourceFile, extractor: SymbolExtractor, served: FileSymbols | None = None,
    extracted: tuple[FileSymbols, Tree | None] | None = None,
) -> FileFacts:
    """Facts of one file. With ``served`` (a language server's symbols for it), those are the
    symbols; imports, calls and bases still come from the syntax tree (``extracted``, when the
    caller has parsed the file already)."""
    listing, tree = extracted if extracted is not None else extractor.extract_with_tree(source)
    if served is not None:
        listing = served
    symbols = tuple(_symbol_facts(listing))  # Python adds decorators to these below
    base = _CommonFacts(
        path=source.path, language=source.language, sha256=source.sha256, source=listing.source.value,
        confidence=listing.confidence.value, is_test=is_test_path(source.path),
    )
    if tree is None:
        return FileFacts(**base, symbols=symbols)
    kind = profile(source.language)
    imports = kind.imports if kind is not None else ImportStyle.NONE
    if imports is ImportStyle.PYTHON:
        return FileFacts(**base, **_python_facts(tree, listing, symbols))
    if imports is ImportStyle.ES_MODULES and source.language is not None:
        return FileFacts(**base, symbols=symbols, imports=_js_imports(tree, source.language))
    if imports is ImportStyle.GO_PACKAGES:
        return FileFacts(**base, symbols=symbols, imports=_go_imports(tree))
    return FileFacts(**base, symbols=symbols)


def _symbol_facts(listing: FileSymbols) -> list[SymbolFact]:
    found: list[SymbolFact] = []

    def visit(symbol: Symbol, parent: str | None) -> None:
        found.append(
            SymbolFact(
                name=symbol.name, name_path=symbol.name_path, segments=symbol.path, kind=symbol.kind,
                line=symbol.range.first_line, end_line=symbol.range.last_line, parent=parent,
                source=symbol.source.value, confidence=symbol.confidence.value,
                name_line=symbol.selection_range.first_line, name_column=symbol.selection_range.start.column,
            )
        )
        for child in symbol.children:
            visit(child, symbol.name_path)

    for top in listing.symbols:
        visit(top, None)
    return found


# -- Python ----------------------------------------------------------------------

_PYTHON_QUERY = """
(import_statement) @import
(import_from_statement) @from
(future_import_statement) @future
(call function: [(identifier) (attribute)] @callee)
(class_definition superclasses: (argument_list) @bases)
(decorated_definition (decorator) @decorator)
(function_definition return_type: (_) @returns)
(if_statement condition: (comparison_operator) @main_test)
(function_definition) @function_scope
(class_definition) @class_scope
(parameters) @parameters
(assignment) @assignment
(for_statement) @for
(named_expression name: (identifier) @walrus)
(as_pattern_target) @alias
(for_in_clause) @comprehension_for
(lambda parameters: (lambda_parameters) @lambda_parameters)
"""
# Names after a dot, read from the text: one C-level scan instead of a capture per attribute
# node (tens of thousands in a large project). It also counts dots in strings and comments,
# which only ever makes a dead-code candidate less likely, never more.
_AFTER_A_DOT = re.compile(rb"\.[ \t]*([A-Za-z_][A-Za-z0-9_]*)")


@cache
def _query(language_id: str, text: str) -> Query:
    kind = profile(language_id)
    if kind is None or kind.grammar is None:
        raise ValueError(f"no tree-sitter grammar for {language_id}")  # facts are read only from parsed files
    return Query(load_grammar(kind.grammar), text)


def _python_facts(tree: Tree, listing: FileSymbols, symbols: tuple[SymbolFact, ...]) -> _PythonFacts:
    # py-tree-sitter gives each capture's nodes in no stable order (two runs on one tree differ),
    # and receivers are read through memos that depend on the order calls are visited in, as do
    # ties in the sorts below: in source order, a file's facts are the same in every process.
    captures = {name: sorted(nodes, key=_span) for name, nodes in
                QueryCursor(_query("python", _PYTHON_QUERY)).captures(tree.root_node).items()}
    locate = _Enclosing(listing)
    imports = sorted(
        [fact for node in captures.get("import", []) + captures.get("from", []) for fact in _python_import(node, locate)],
        key=lambda fact: fact.line,
    )
    receivers = Receivers(captures)
    calls = []
    for node in captures.get("callee", []):
        written = node_text(node)  # read once, for the callee and its receiver
        line = node.start_point.row + 1
        calls.append(CallFact(locate.code_at(line), _callee(node, written), line, receivers.receiver(node, written)))
    calls.sort(key=lambda fact: (fact.line, fact.callee))
    bases = []
    # Each argument list is read with its own class: capture lists of different names are
    # not aligned with each other, so they must never be zipped.
    for arguments in sorted(captures.get("bases", []), key=lambda node: node.start_byte):
        name_node = arguments.parent.child_by_field_name("name") if arguments.parent is not None else None
        owner = locate.class_at(name_node.start_point.row + 1, node_text(name_node)) if name_node is not None else None
        for argument in arguments.named_children:
            if argument.type == "subscript":
                # A generic base, `Serializer[str]`: the class is what it subscripts.
                argument = argument.child_by_field_name("value") or argument
            if argument.type in ("identifier", "attribute") and owner is not None:
                bases.append(BaseFact(owner, node_text(argument), argument.start_point.row + 1))
    has_main = any('__name__' in node_text(n) and '"__main__"' in node_text(n).replace("'", '"') for n in captures.get("main_test", []))
    return _PythonFacts(
        symbols=_with_returns(_with_decorators(symbols, captures.get("decorator", [])), captures.get("returns", [])),
        imports=tuple(imports),
        calls=tuple(calls),
        bases=tuple(bases),
        exports=_python_all(tree.root_node),
        has_main=has_main,
        attributes=frozenset(name.decode() for name in _AFTER_A_DOT.findall(tree.root_node.text or b"")),
    )


_span = attrgetter("start_byte", "end_byte")
"""A node's (start, end) bytes: its place in source order."""


def _with_decorators(facts: tuple[SymbolFact, ...], decorators: list[Node]) -> tuple[SymbolFact, ...]:
    """The file's symbol facts, each with the decorators written above it."""
    by_name_line: dict[int, list[str]] = {}
    for decorator in sorted(decorators, key=lambda node: node.start_byte):  # in the order written
        decorated = decorator.parent
        definition = decorated.child_by_field_name("definition") if decorated is not None else None
        name = definition.child_by_field_name("name") if definition is not None else None
        if name is not None:
            by_name_line.setdefault(name.start_point.row + 1, []).append(node_text(decorator).lstrip("@").strip())
    return tuple(
        fact._replace(decorators=tuple(by_name_line[fact.name_line])) if fact.name_line in by_name_line else fact
        for fact in facts
    )


def _with_returns(facts: tuple[SymbolFact, ...], annotations: list[Node]) -> tuple[SymbolFact, ...]:
    """The file's symbol facts, each function with the class its return annotation names."""
    by_name: dict[tuple[int, str], Held] = {}
    for annotation in annotations:
        definition = annotation.parent
        name = definition.child_by_field_name("name") if definition is not None else None
        if name is not None:
            by_name[(name.start_point.row + 1, node_text(name))] = annotation_held(node_text(annotation))
    if not by_name:
        return facts
    return tuple(
        fact._replace(returns=held.value, returns_element=held.element) if (held := by_name.get((fact.name_line, fact.name))) else fact
        for fact in facts
    )


def _python_import(node: Node, locate: "_Enclosing") -> list[ImportFact]:
    line = node.start_point.row + 1
    scope = locate.code_at(line)
    if node.type == "import_statement":
        facts = []  # `import a.b, c as d`: one fact per module
        for name in node.children_by_field_name("name"):
            if name.type == "aliased_import":
                module = node_text(name.child_by_field_name("name"))
                facts.append(ImportFact(module, alias=node_text(name.child_by_field_name("alias")), line=line, scope=scope))
            elif name.is_named:
                facts.append(ImportFact(node_text(name), line=line, scope=scope))
        return facts
    module_node = node.child_by_field_name("module_name")
    level, module = 0, ""
    if module_node is not None:
        text = node_text(module_node)
        level = len(text) - len(text.lstrip("."))
        module = text.lstrip(".")
    names: list[tuple[str, str | None]] = []
    star = False
    for child in node.children:
        if child.type == "wildcard_import":
            star = True
    for name in node.children_by_field_name("name"):
        if name.type == "aliased_import":
            names.append((node_text(name.child_by_field_name("name")), node_text(name.child_by_field_name("alias"))))
        elif name.is_named:
            names.append((node_text(name), None))
    return [ImportFact(module, level=level, names=tuple(names), star=star, line=line, scope=scope)]


_DOTTED = re.compile(r"[\w.]+")


def _callee(node: Node, text: str) -> str:
    """A call's target (``text`` is its source) as a dotted name (``os.path.join``), ``super().m``,
    or ``?.m`` for an unknown receiver."""
    if _DOTTED.fullmatch(text):
        return text
    if node.type == "attribute":
        receiver, attribute = node.child_by_field_name("object"), node_text(node.child_by_field_name("attribute"))
        if receiver is not None and node_text(receiver) == "super()":
            return f"super().{attribute}"
        return f"?.{attribute}"
    return "?"


def _python_all(root: Node) -> tuple[str, ...] | None:
    for statement in root.named_children:
        if statement.type != "expression_statement" or statement.named_child_count != 1:
            continue
        assignment = statement.named_children[0]
        if assignment.type not in ("assignment", "augmented_assignment"):
            continue
        left, right = assignment.child_by_field_name("left"), assignment.child_by_field_name("right")
        if left is None or right is None or node_text(left) != "__all__" or right.type not in ("list", "tuple"):
            continue
        names = []
        for item in right.named_children:
            if item.type != "string":
                return None  # computed: not a literal list
            names.append(node_text(item)[1:-1])
        return tuple(names)
    return None


class _Enclosing:
    """Which symbol encloses a line: the innermost function or method (or a class, for bases).

    A table from line to innermost function is painted once, outer functions first, so
    each of the file's (often thousands of) calls is a list lookup.
    """

    def __init__(self, listing: FileSymbols) -> None:
        code = [s for s in walk_all(listing.symbols) if s.kind in _CODE_KINDS]
        self._classes = [s for s in code if s.kind is SymbolKind.CLASS]
        last = max((s.range.last_line for s in code), default=0)
        self._innermost: list[str | None] = [None] * (last + 2)
        for symbol in sorted(code, key=lambda s: (s.range.first_line, -s.range.last_line)):
            if symbol.kind is not SymbolKind.CLASS:
                self._innermost[symbol.range.first_line:symbol.range.last_line + 1] = (
                    [symbol.name_path] * (symbol.range.last_line - symbol.range.first_line + 1)
                )

    def code_at(self, line: int) -> str | None:
        return self._innermost[line] if line < len(self._innermost) else None

    def class_at(self, line: int, name: str) -> str | None:
        for symbol in self._classes:
            if symbol.name == name and symbol.range.first_line <= line <= symbol.range.last_line:
                return symbol.name_path
        return None


# -- TypeScript / JavaScript and Go ---------------------------------------------------

_JS_QUERY = """
(import_statement source: (string) @source)
(export_statement source: (string) @source)
(call_expression function: (identifier) @require arguments: (arguments (string) @source))
"""


def _js_imports(tree: Tree, language_id: str) -> tuple[ImportFact, ...]:
    captures = QueryCursor(_query(language_id, _JS_QUERY)).captures(tree.root_node)
    found = []
    for node in sorted(captures.get("source", []), key=_span):  # in source order: see _python_facts
        parent = node.parent
        if parent is not None and parent.type == "arguments":
            call = parent.parent
            function = call.child_by_field_name("function") if call is not None else None
            if function is None or node_text(function) != "require":
                continue
        found.append(ImportFact(node_text(node)[1:-1], line=node.start_point.row + 1))
    return tuple(sorted(found, key=lambda fact: fact.line))


def _go_imports(tree: Tree) -> tuple[ImportFact, ...]:
    captures = QueryCursor(_query("go", "(import_spec path: (interpreted_string_literal) @path)")).captures(tree.root_node)
    paths = sorted(captures.get("path", []), key=_span)  # in source order: see _python_facts
    return tuple(ImportFact(node_text(n)[1:-1], line=n.start_point.row + 1) for n in paths)




def module_name(path: str) -> str | None:
    """Dotted module name of a Python file relative to its source root (``a/b/__init__.py`` → ``a.b``)."""
    pure = PurePosixPath(path)
    if pure.suffix not in (".py", ".pyi"):
        return None
    parts = list(pure.with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts) if parts else None
