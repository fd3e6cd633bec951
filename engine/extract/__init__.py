"""Symbols of one file from the best syntactic source available: tree-sitter, else regex.

The language-server source sits in front of this one and lives behind a port
(issue 3); this module only ever answers ``ast`` or ``regex``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from tree_sitter import Tree

from engine.extract.regex import RegexExtractor
from engine.extract.treesitter import TreeSitterExtractor
from engine.positions import LineIndex
from engine.symbols import TYPE_KINDS, Confidence, Segment, Source, Symbol, SymbolKind, walk_all
from engine.workspace import SourceFile

_CONTAINER_KINDS = TYPE_KINDS | {SymbolKind.NAMESPACE, SymbolKind.MODULE}


@dataclass(frozen=True)
class FileSymbols:
    file: str
    language: str | None
    symbols: list[Symbol]
    source: Source
    confidence: Confidence
    notes: list[str] = field(default_factory=list)
    """Why the source is what it is, for people: 'no grammar for ruby', 'syntax errors'."""


class SymbolExtractor:
    """Extracts symbols from source files; owns the parsers so that they are reused."""

    def __init__(self) -> None:
        self._tree = TreeSitterExtractor()
        self._regex = RegexExtractor()

    def extract(self, source: SourceFile) -> FileSymbols:
        return self.extract_with_tree(source)[0]

    def extract_with_tree(self, source: SourceFile, *, details: bool = True) -> tuple[FileSymbols, Tree | None]:
        """The file's symbols and, when they came from tree-sitter, the tree (for further facts).
        Without ``details``, symbols have no signature or documentation range (see
        :meth:`TreeSitterExtractor.extract`)."""
        index = LineIndex(source.data)
        language = source.language
        notes: list[str] = []
        if language is not None and self._tree.supports(language):
            result = self._tree.extract(source.path, language, source.data, index, details=details)
            if result.useful:
                confidence = Confidence.MEDIUM if result.has_errors else Confidence.HIGH
                if result.has_errors:
                    notes.append("the file has syntax errors; symbols near them may be missing or cut short")
                symbols = FileSymbols(source.path, language, finalize(result.symbols), Source.AST, confidence, notes)
                return symbols, result.tree
            notes.append("the syntax tree is mostly errors, so symbols come from regular expressions")
        elif language is None:
            notes.append("unknown language; symbols come from generic regular expressions")
        else:
            notes.append(f"no tree-sitter grammar for {language}; symbols come from regular expressions")
        return self.extract_with_regex(source, notes), None

    def extract_with_regex(self, source: SourceFile, notes: list[str] | None = None) -> FileSymbols:
        """Regex symbols only: the last resort, or what ``--source regex`` asks for."""
        symbols = self._regex.extract(source.path, source.language, source.data, LineIndex(source.data))
        return FileSymbols(source.path, source.language, finalize(symbols), Source.REGEX, Confidence.LOW, notes or [])


def finalize(symbols: list[Symbol]) -> list[Symbol]:
    """Attach out-of-line members to their types and give every symbol its name path."""
    attached = _attach(symbols)
    _assign_paths(attached, ())
    _mark_anchors(attached)
    return attached


def _attach(symbols: list[Symbol]) -> list[Symbol]:
    """Move a symbol whose logical scope is a type or namespace of this list into that container."""
    for symbol in symbols:
        if symbol.children:
            symbol.children = _attach(symbol.children)
    containers: dict[str, Symbol] = {}
    for symbol in symbols:
        if symbol.kind in _CONTAINER_KINDS and not symbol.scope:
            containers.setdefault(symbol.name, symbol)
    kept: list[Symbol] = []
    touched: set[int] = set()
    for symbol in symbols:
        target = _find_container(containers, symbol.scope) if symbol.scope else None
        if target is None:
            kept.append(symbol)
            continue
        symbol.scope = ()
        target.children.append(symbol)
        touched.add(id(target))
    for symbol in symbols:
        if id(symbol) in touched:
            symbol.children.sort(key=lambda child: child.range.start)
    return kept


def _find_container(containers: dict[str, Symbol], scope: tuple[str, ...]) -> Symbol | None:
    current = containers.get(scope[0])
    for name in scope[1:]:
        if current is None:
            return None
        current = next((c for c in current.children if c.name == name and c.kind in _CONTAINER_KINDS), None)
    return current


def _assign_paths(symbols: list[Symbol], parent: tuple[Segment, ...]) -> None:
    counts = Counter((symbol.scope, symbol.name) for symbol in symbols)
    seen: defaultdict[tuple[tuple[str, ...], str], int] = defaultdict(int)
    for symbol in symbols:
        key = (symbol.scope, symbol.name)
        index: int | None = None
        if counts[key] > 1:
            index = seen[key]
            seen[key] += 1
        symbol.path = parent + tuple(Segment(name) for name in symbol.scope) + (Segment(symbol.name, index),)
        _assign_paths(symbol.children, symbol.path)


def _mark_anchors(symbols: list[Symbol]) -> None:
    """Flag the symbols whose unanchored name path would also match a deeper symbol."""
    everything = list(walk_all(symbols))
    names = [tuple(segment.name for segment in symbol.path) for symbol in everything]
    # An unindexed query segment matches every index, so a deeper path matches when its last
    # names are this path's names, whatever the indices: names alone are compared.
    proper_suffixes = {path[i:] for path in names for i in range(1, len(path))}
    for symbol, path in zip(everything, names):
        symbol.needs_anchor = path in proper_suffixes
