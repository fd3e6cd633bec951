"""References and definitions: the language server first, the project graph as a labelled fallback.

A ``FILE:LINE:COL`` address names what the identifier at that column names: the callee of a call,
the class of a base, the declaration itself when the column is on a declaration's own name. It
never silently stands for the function around the line; a ``FILE:LINE`` without a column is
refused here, since a line can hold several names."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Callable

from engine.errors import ColumnRequired, ServiceUnavailable, SymbolNotFound
from engine.graph import GraphQueries
from engine.graph.build import symbol_node
from engine.graph.facts import SymbolFact
from engine.names import PositionAddress, parse_address
from engine.answers import Location
from engine.ports import LanguageServices
from engine.positions import Position, Range, split_lines
from engine.resolve import checked_position, name_at
from engine.symbols import Confidence, Source
from engine.workspace import Workspace

_DOTTED_BEFORE = re.compile(r"[\w.]*$")


@dataclass(frozen=True)
class NavigationResult:
    locations: list[Location]
    source: Source
    confidence: Confidence
    notes: list[str] = field(default_factory=list)


class Navigator:
    def __init__(
        self, workspace: Workspace, queries: Callable[[], GraphQueries], services: LanguageServices | None,
        use_server: bool, require_server: bool,
    ) -> None:
        self.workspace = workspace
        self._load_queries = queries
        """The project graph, loaded when first needed: a server's definition does not need it."""
        self._queries: GraphQueries | None = None
        self.services = services
        self.use_server = use_server
        self.require_server = require_server

    @property
    def queries(self) -> GraphQueries:
        if self._queries is None:
            self._queries = self._load_queries()
        return self._queries

    def references(self, address: str) -> NavigationResult:
        """References to what an address names: a symbol by name path, or the symbol the name at
        ``FILE:LINE:COL`` refers to."""
        parsed = None if address in self.queries.project.facts else parse_address(address)
        if isinstance(parsed, PositionAddress):
            return self._references_at(parsed)
        return self._references_of(self.queries.node_for(address), [])

    def definition(self, address: str) -> NavigationResult:
        """Where the name at ``FILE:LINE:COL`` is defined; a name path names its own definition."""
        parsed = parse_address(address)
        if not isinstance(parsed, PositionAddress):
            node = self.queries.node_for(address)
            return self._declaration_answer(node, ["the address names the definition itself"])
        position = self._position(parsed, "definition")
        name = self._require_name(parsed, position)
        notes: list[str] = []
        if self.use_server:
            try:
                answer = self._services().definition(self.workspace.read(parsed.file), position)
                confidence = Confidence.HIGH if answer.complete else Confidence.MEDIUM
                return NavigationResult(answer.value, Source.LSP, confidence, [f"from {answer.server}"])
            except ServiceUnavailable as error:
                if self.require_server:
                    raise
                notes.append(f"language server unavailable: {error.message}; definition from the graph")
        declared = self._declared_node(parsed.file, position)
        if declared is not None:
            return self._declaration_answer(declared, [*notes, f"{parsed} is on the declaration's own name"])
        target = self._graph_target(parsed, position, name)
        path = self.queries.graph.nodes[target]["path"]
        return NavigationResult([self._declaration(path, self._symbol_fact(target))], Source.AST, Confidence.MEDIUM, notes)

    # -- positions -------------------------------------------------------------

    def _position(self, parsed: PositionAddress, asked: str) -> Position:
        """The position of an address that points at a name, checked against the file."""
        if parsed.column is None:
            raise ColumnRequired(
                f"{parsed} gives no column, and a line can hold several names: give the column of the name whose "
                f"{asked} you want ({parsed}:COL, 1-based), or a name path ({parsed.file}:Name)"
            )
        return checked_position(self.workspace.read(parsed.file).text, parsed)

    def _require_name(self, parsed: PositionAddress, position: Position) -> tuple[int, int]:
        """The span of the identifier at a position, refused when the column is on none."""
        source = self.workspace.read(parsed.file)
        span = name_at(source, position)
        if span is None:
            text = split_lines(source.text)[position.line]
            shown = repr(text[position.column]) if position.column < len(text) else "the end of the line"
            raise SymbolNotFound(f"no name at {parsed} (the column is on {shown}): put the column on the name to ask about")
        return span

    def _declared_node(self, path: str, position: Position) -> str | None:
        """The symbol whose own name is at a position, by the graph's facts of the file."""
        facts = self.queries.project.facts.get(path)
        if facts is None:
            return None
        for fact in facts.symbols:
            if fact.name_line == position.line + 1 and fact.name_column <= position.column < fact.name_column + len(fact.name):
                return symbol_node(path, fact.name_path)
        return None

    # -- references ------------------------------------------------------------

    def _references_at(self, parsed: PositionAddress) -> NavigationResult:
        position = self._position(parsed, "references")
        declared = self._declared_node(parsed.file, position)
        if declared is not None:
            return self._references_of(declared, [f"{parsed} is on the declaration of {self.queries.ref(declared).address}"])
        name = self._require_name(parsed, position)
        notes: list[str] = []
        if self.use_server:
            try:
                return self._served_references_at(parsed, position)
            except ServiceUnavailable as error:
                if self.require_server:
                    raise
                notes.append(f"language server unavailable: {error.message}; the name and its references from the graph")
        target = self._graph_target(parsed, position, name)
        named = f"{parsed} names {self.queries.ref(target).address}, resolved by the project graph (by name, and receivers' annotations)"
        return self._graph_answer(target, self._symbol_fact(target), [*notes, named])

    def _references_of(self, node: str, notes: list[str]) -> NavigationResult:
        fact = self._symbol_fact(node)
        if self.use_server:
            try:
                served = self._served_references(node, fact)
                return replace(served, notes=[*notes, *served.notes])
            except ServiceUnavailable as error:
                if self.require_server:
                    raise
                notes = [*notes, f"language server unavailable: {error.message}; references from the graph"]
        return self._graph_answer(node, fact, notes)

    def _graph_answer(self, node: str, fact: SymbolFact, notes: list[str]) -> NavigationResult:
        locations = self._graph_references(node, fact)
        confidence = Confidence.MEDIUM
        notes = [*notes, *(calls.note for calls in self.queries.unresolved_calls_of([node]))]
        if len(locations) == 1:
            # Only the declaration: the graph sees imports, calls and bases, not every read of a
            # name nor calls through values of unknown type, so "nothing else" is weak evidence.
            confidence = Confidence.LOW
            notes.append("the graph found no import, call or subclass of it, only its declaration; reads of the name "
                         "and calls it cannot resolve are not in the graph (a language server sees more)")
        return NavigationResult(locations, Source.AST, confidence, notes)

    # -- server ----------------------------------------------------------------

    def _services(self) -> LanguageServices:
        if self.services is None:
            raise ServiceUnavailable("no language-server support is installed")
        return self.services

    def _served_references_at(self, parsed: PositionAddress, position: Position) -> NavigationResult:
        """The server's definition of the name at a position says which symbol it is; references
        are then that symbol's, checked against the graph. A definition outside the graph (a
        library's, a parameter's) leaves the server's references at the position itself."""
        source = self.workspace.read(parsed.file)
        definition = self._services().definition(source, position)
        for location in definition.value:
            node = self._declared_node(location.file, location.range.start) if location.inside_workspace else None
            if node is not None:
                served = self._served_references(node, self._symbol_fact(node))
                named = f"{parsed} names {self.queries.ref(node).address}, by {definition.server}'s definition"
                return replace(served, notes=[named, *served.notes])
        answer = self._services().references(source, position)
        confidence = Confidence.HIGH if answer.complete else Confidence.MEDIUM
        outside = f"{parsed} names no symbol of the project graph (a library's, a parameter or a local): the references at the position"
        inside, left_out = _within_workspace(answer.value)
        return NavigationResult(inside, Source.LSP, confidence, [f"from {answer.server}", outside, *left_out])

    def _served_references(self, node: str, fact: SymbolFact) -> NavigationResult:
        path = self.queries.graph.nodes[node]["path"]
        answer = self._services().references(self.workspace.read(path), Position(fact.name_line - 1, fact.name_column))
        confidence = Confidence.HIGH if answer.complete else Confidence.MEDIUM
        inside, left_out = _within_workspace(answer.value)
        self.queries.project.add_references(node, [(loc.file, loc.range.start.line + 1) for loc in inside], confidence.value)
        notes = [f"from {answer.server}", *left_out]
        # A server that does not see part of the project (a src layout it does not know, files
        # outside its program) answers with what it sees, as if complete: checked against the graph.
        served = {(loc.file, loc.range.start.line) for loc in inside}
        missed = [loc for loc in self._graph_references(node, fact) if (loc.file, loc.range.start.line) not in served]
        if missed:
            confidence = Confidence.MEDIUM
            notes.append(
                f"partial: {answer.server} left out {len(missed)} reference(s) the project graph resolves, added from it: "
                + ", ".join(f"{loc.file}:{loc.range.start.line + 1}" for loc in missed[:10]) + (" …" if len(missed) > 10 else "")
            )
        return NavigationResult([*inside, *missed], Source.LSP, confidence, notes)

    # -- graph fallback --------------------------------------------------------

    def _graph_references(self, node: str, fact: SymbolFact) -> list[Location]:
        """The declaration and every import, call or subclassing the graph resolved to the symbol."""
        path = self.queries.graph.nodes[node]["path"]
        declaration = self._declaration(path, fact)
        found: list[Location] = []
        for source, _target, kind, data in self.queries.graph.in_edges(node, keys=True, data=True):
            if kind not in ("imports", "calls", "inherits"):
                continue
            source_path = self.queries.graph.nodes[source]["path"]
            location = self._name_on_line(source_path, int(data.get("line", 1)), fact.name)
            if location is not None and location not in found and location != declaration:
                found.append(location)
        return [declaration, *sorted(found, key=lambda loc: (loc.file, loc.range.start))]

    def _declaration_answer(self, node: str, notes: list[str]) -> NavigationResult:
        """A declaration as the answer, labelled as its symbol is (a regex symbol stays low)."""
        fact = self._symbol_fact(node)
        path = self.queries.graph.nodes[node]["path"]
        return NavigationResult([self._declaration(path, fact)], Source(fact.source), Confidence(fact.confidence), notes)

    def _declaration(self, path: str, fact: SymbolFact) -> Location:
        start = Position(fact.name_line - 1, fact.name_column)
        return Location(path, Range(start, Position(start.line, start.column + len(fact.name))))

    def _name_on_line(self, path: str, line: int, name: str) -> Location | None:
        lines = split_lines(self.workspace.read(path).text)
        if not 0 < line <= len(lines):
            return None
        match = re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", lines[line - 1])
        column = match.start() if match else 0
        width = len(name) if match else len(lines[line - 1])
        return Location(path, Range(Position(line - 1, column), Position(line - 1, column + width)))

    def _graph_target(self, parsed: PositionAddress, position: Position, name: tuple[int, int]) -> str:
        """The symbol node the name at a position stands for, by the graph's resolution of the
        dotted expression written up to it (``util.round_cents`` on ``round_cents``, ``util`` on
        ``util``); a method through its receiver's inferred class (``order.total``, ``make().total``)."""
        text = split_lines(self.workspace.read(parsed.file).text)[position.line]
        start, end = name
        prefix = _DOTTED_BEFORE.search(text[:start])
        written = (prefix.group() if prefix is not None else "") + text[start:end]
        if written.startswith("."):
            written = f"?.{text[start:end]}"  # after a call or a subscript: only the line's call facts can say
        target = self.queries.project.resolve_expression(parsed.file, written, position.line + 1)
        if target is None:
            raise SymbolNotFound(
                f"the graph cannot resolve {written!r} at {parsed} (a parameter, a local, a library's name, or a value of "
                "unknown type); a language server can (--source lsp)"
            )
        return target

    def _symbol_fact(self, node: str) -> SymbolFact:
        data = self.queries.graph.nodes[node]
        if data["type"] != "symbol":
            raise SymbolNotFound(f"{node[2:]} is a file; references and definitions are about symbols")
        fact: SymbolFact = data["fact"]  # networkx node data is untyped; a symbol node holds its fact
        return fact


def _within_workspace(locations: list[Location]) -> tuple[list[Location], list[str]]:
    """The references inside the workspace, and a note naming those left out: a reference in a
    copy of the package installed elsewhere (the server resolved an import there) or in a library
    is nothing the project can change, and no command may edit it."""
    outside = [location for location in locations if not location.inside_workspace]
    if not outside:
        return locations, []
    shown = ", ".join(f"{location.file}:{location.range.start.line + 1}" for location in outside[:10])
    return [location for location in locations if location.inside_workspace], [
        f"{len(outside)} reference(s) outside the workspace left out (an installed copy of the code, or a library's): "
        + shown + (" …" if len(outside) > 10 else "")
    ]
