"""Symbols from a tree-sitter syntax tree, driven by each language profile's rules (engine/languages/)."""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass

from tree_sitter import Language, Node, Parser, Tree

from engine.languages import Grammar, profile
from engine.languages.spec import Definition, LanguageRules, Where
from engine.positions import LineIndex, Position, Range
from engine.symbols import TYPE_KINDS, Confidence, Source, Symbol, SymbolKind

_WHITESPACE = re.compile(r"\s+")
_SIGNATURE_LIMIT = 160
#: A tree whose top-level ERROR nodes cover more than this share of the file is not useful.
_USEFUL_ERROR_SHARE = 0.5


@dataclass(frozen=True)
class TreeExtraction:
    symbols: list[Symbol]
    has_errors: bool
    useful: bool
    """False when the tree is mostly ERROR nodes: the caller should prefer regex."""
    tree: Tree


class TreeSitterExtractor:
    """Owns one parser per language, reused across files."""

    id = "tree-sitter"
    version = "1"

    def __init__(self) -> None:
        self._parsers: dict[str, Parser] = {}

    @staticmethod
    def supports(language_id: str | None) -> bool:
        found = profile(language_id)
        return found is not None and found.grammar is not None and found.rules is not None

    def parse(self, language_id: str, data: bytes) -> Tree:
        parser = self._parsers.get(language_id)
        if parser is None:
            parser = Parser(load_grammar(_grammar(language_id)))
            self._parsers[language_id] = parser
        return parser.parse(data)

    def extract(self, file: str, language_id: str, data: bytes, index: LineIndex, *, details: bool = True) -> TreeExtraction:
        """``details``: each symbol's signature and documentation range, which outlines show and
        the project graph's facts do not keep (a sixth of the walk's time)."""
        tree = self.parse(language_id, data)
        root = tree.root_node
        has_errors = root.has_error
        confidence = Confidence.MEDIUM if has_errors else Confidence.HIGH
        walker = _Walker(_rules(language_id), file, data, index, confidence, details)
        symbols: list[Symbol] = []
        walker.walk(root, _Context(None, False, ()), symbols)
        useful = True
        if has_errors and data:
            error_bytes = sum(c.end_byte - c.start_byte for c in root.children if c.type == "ERROR")
            useful = error_bytes / len(data) <= _USEFUL_ERROR_SHARE
        return TreeExtraction(symbols, has_errors, useful, tree)


def load_grammar(grammar: Grammar) -> Language:
    """The tree-sitter language a grammar wheel provides (imported when first needed)."""
    return Language(getattr(importlib.import_module(grammar.module), grammar.function)())


def _grammar(language_id: str) -> Grammar:
    found = profile(language_id)
    if found is None or found.grammar is None:
        raise ValueError(f"no tree-sitter grammar for {language_id}")  # callers ask supports() first
    return found.grammar


def _rules(language_id: str) -> LanguageRules:
    found = profile(language_id)
    if found is None or found.rules is None:
        raise ValueError(f"no tree-sitter rules for {language_id}")
    return found.rules


@dataclass(frozen=True)
class _Context:
    parent_kind: SymbolKind | None
    """None at module level."""
    in_code: bool
    """Inside a function body, where variables are locals."""
    scope: tuple[str, ...]


class _Walker:
    def __init__(
        self, rules: LanguageRules, file: str, data: bytes, index: LineIndex, confidence: Confidence, details: bool = True,
    ) -> None:
        self.rules = rules
        self.details = details
        self.file = file
        self.data = data
        self.index = index
        self.confidence = confidence
        # In an all-ASCII file without a carriage return, tree-sitter's points are the engine's
        # positions: its rows break at "\n" only, as the line index's lines do when there is no
        # "\r", and a byte column is a code-point column. Reading them off the nodes saves a
        # bisect and a Python call per position (hundreds of thousands in a large project).
        self.points_are_positions = data.isascii() and b"\r" not in data

    def walk(self, node: Node, context: _Context, out: list[Symbol]) -> None:
        rules = self.rules
        for child in node.named_children:
            kind = child.type
            definition = rules.definitions.get(kind)
            if definition is not None:
                self._define(child, child, definition, context, out)
            elif kind in rules.wrappers:
                self._unwrap(child, context, out)
            elif kind in rules.scope_blocks:
                block = rules.scope_blocks[kind]
                body = block.body(child)
                name = block.scope(child)
                if body is not None and name:
                    self.walk(body, _Context(block.treat_as, False, context.scope + (name,)), out)
            elif kind in rules.groups:
                before = len(out)
                self.walk(child, context, out)
                if len(out) == before + 1:
                    self._widen(out[-1], child)
            elif kind in rules.descend:
                self.walk(child, context, out)

    def _widen(self, symbol: Symbol, group: Node) -> None:
        first = self._leading_start(group)
        symbol.range = Range(self._start(first), symbol.range.end)
        if not self.details:
            return
        symbol.doc_range = self._doc_range(group, first) or symbol.doc_range
        keyword = group.children[0] if group.children else None
        if keyword is not None and not keyword.is_named and not symbol.signature.startswith(node_text(keyword)):
            symbol.signature = f"{node_text(keyword)} {symbol.signature}"

    def _unwrap(self, outer: Node, context: _Context, out: list[Symbol]) -> None:
        """Find the definition inside wrappers (decorators, ``export``, ``template<>``) and define it."""
        inner: Node | None = outer
        while inner is not None and inner.type in self.rules.wrappers:
            field_name = self.rules.wrappers[inner.type]
            if field_name is not None:
                inner = inner.child_by_field_name(field_name)
            else:
                inner = next(
                    (c for c in inner.named_children if c.type in self.rules.definitions or c.type in self.rules.wrappers),
                    None,
                )
        if inner is None:
            return
        definition = self.rules.definitions.get(inner.type)
        if definition is not None:
            self._define(inner, outer, definition, context, out)
        elif inner.type in self.rules.descend:
            self.walk(inner, context, out)

    def _define(self, node: Node, outer: Node, definition: Definition, context: _Context, out: list[Symbol]) -> None:
        if definition.where == Where.DECLARATIONS and context.in_code:
            return
        names = definition.name(node)
        if not names:
            if node.type in self.rules.descend:
                self.walk(node, context, out)
            return
        full_start_node = self._leading_start(outer)
        full = self._range(full_start_node, outer)
        body = definition.body(node) if definition.body is not None else None
        doc = self._doc_range(node, full_start_node) if self.details else None
        signature = self._signature(node, body) if self.details else ""
        for number, (scope, name_node) in enumerate(names):
            name = node_text(name_node)
            if not name:
                continue
            kind = definition.kind
            if definition.in_type is not None and (context.parent_kind in TYPE_KINDS or scope):
                kind = definition.in_type
            if kind is SymbolKind.METHOD and name in self.rules.constructor_names:
                kind = SymbolKind.CONSTRUCTOR
            if definition.refine is not None:
                kind = definition.refine(node, name_node, kind, context.parent_kind)
            symbol = Symbol(
                name=name,
                kind=kind,
                file=self.file,
                range=full,
                selection_range=self._range(name_node, name_node),
                source=Source.AST,
                confidence=self.confidence,
                signature=signature,
                doc_range=doc,
                scope=context.scope + scope,
            )
            if body is not None and definition.walk_body and number == 0:
                self.walk(body, _Context(kind, definition.body_is_code, ()), symbol.children)
            out.append(symbol)

    def _leading_start(self, outer: Node) -> Node:
        first = outer
        sibling = outer.prev_named_sibling
        while sibling is not None and sibling.type in self.rules.leading:
            first = sibling
            sibling = sibling.prev_named_sibling
        return first

    def _doc_range(self, node: Node, first: Node) -> Range | None:
        if self.rules.docstring is not None:
            found = self.rules.docstring(node)
            if found is not None:
                return self._range(found, found)
        comments: list[Node] = []
        row = first.start_point.row
        sibling = first.prev_named_sibling
        while (
            sibling is not None
            and sibling.type in self.rules.doc_comment_types
            and row - 1 <= sibling.end_point.row <= row
            and self._starts_line(sibling)
            and node_text(sibling).startswith(self.rules.doc_comment_prefixes)
        ):
            comments.append(sibling)
            row = sibling.start_point.row
            sibling = sibling.prev_named_sibling
        if not comments:
            return None
        return self._range(comments[-1], comments[0])

    def _starts_line(self, node: Node) -> bool:
        line_start = node.start_byte - node.start_point.column
        return not self.data[line_start:node.start_byte].strip()

    def _signature(self, node: Node, body: Node | None) -> str:
        end = body.start_byte if body is not None and body.start_byte > node.start_byte else node.end_byte
        text = self.data[node.start_byte:end].decode("utf-8", errors="replace")
        text = _WHITESPACE.sub(" ", text).strip().rstrip("{:;=").rstrip()
        return text if len(text) <= _SIGNATURE_LIMIT else text[: _SIGNATURE_LIMIT - 1] + "…"

    def _range(self, first: Node, last: Node) -> Range:
        """From the start of ``first`` to the end of ``last``."""
        if self.points_are_positions:
            start_row, start_column = first.start_point
            end_row, end_column = last.end_point
            return Range(Position(start_row, start_column), Position(end_row, end_column))
        return Range(self.index.position_of_byte(first.start_byte), self.index.position_of_byte(last.end_byte))

    def _start(self, node: Node) -> Position:
        if self.points_are_positions:
            row, column = node.start_point
            return Position(row, column)
        return self.index.position_of_byte(node.start_byte)


def node_text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", errors="replace")
