"""References and definitions: the language server first, the project graph as a labelled fallback."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from engine.errors import ServiceUnavailable, SymbolNotFound
from engine.graph import GraphQueries
from engine.graph.facts import SymbolFact
from engine.names import PositionAddress, parse_address
from engine.answers import Location
from engine.ports import LanguageServices
from engine.positions import Position, Range, split_lines
from engine.symbols import Confidence, Source
from engine.workspace import Workspace

_EXPRESSION = re.compile(r"[A-Za-z_][\w.]*")


@dataclass(frozen=True)
class NavigationResult:
    locations: list[Location]
    source: Source
    confidence: Confidence
    notes: list[str] = field(default_factory=list)


class Navigator:
    def __init__(self, workspace: Workspace, queries: GraphQueries, services: LanguageServices | None, use_server: bool, require_server: bool) -> None:
        self.workspace = workspace
        self.queries = queries
        self.services = services
        self.use_server = use_server
        self.require_server = require_server

    def references(self, address: str) -> NavigationResult:
        node = self.queries.node_for(address)
        fact = self._symbol_fact(node)
        notes: list[str] = []
        if self.use_server:
            try:
                return self._served_references(node, fact)
            except ServiceUnavailable as error:
                if self.require_server:
                    raise
                notes.append(f"language server unavailable: {error.message}; references from the graph")
        return NavigationResult(self._graph_references(node, fact), Source.AST, Confidence.MEDIUM, notes)

    def definition(self, address: str) -> NavigationResult:
        parsed = parse_address(address)
        if not isinstance(parsed, PositionAddress) or parsed.column is None:
            node = self.queries.node_for(address)
            fact = self._symbol_fact(node)
            path = self.queries.graph.nodes[node]["path"]
            return NavigationResult([self._declaration(path, fact)], Source.AST, Confidence.HIGH, ["the address names the definition itself"])
        notes: list[str] = []
        position = Position(parsed.line - 1, parsed.column - 1)
        if self.use_server:
            try:
                answer = self._services().definition(self.workspace.read(parsed.file), position)
                confidence = Confidence.HIGH if answer.complete else Confidence.MEDIUM
                return NavigationResult(answer.value, Source.LSP, confidence, [f"from {answer.server}"])
            except ServiceUnavailable as error:
                if self.require_server:
                    raise
                notes.append(f"language server unavailable: {error.message}; definition from the graph")
        return NavigationResult(self._graph_definition(parsed.file, position), Source.AST, Confidence.MEDIUM, notes)

    # -- server ----------------------------------------------------------------

    def _services(self) -> LanguageServices:
        if self.services is None:
            raise ServiceUnavailable("no language-server support is installed")
        return self.services

    def _served_references(self, node: str, fact: SymbolFact) -> NavigationResult:
        path = self.queries.graph.nodes[node]["path"]
        answer = self._services().references(self.workspace.read(path), Position(fact.name_line - 1, fact.name_column))
        confidence = Confidence.HIGH if answer.complete else Confidence.MEDIUM
        self.queries.project.add_references(node, [(loc.file, loc.range.start.line + 1) for loc in answer.value if loc.inside_workspace], confidence.value)
        notes = [f"from {answer.server}"]
        # A server that does not see part of the project (a src layout it does not know, files
        # outside its program) answers with what it sees, as if complete: checked against the graph.
        served = {(loc.file, loc.range.start.line) for loc in answer.value}
        missed = [loc for loc in self._graph_references(node, fact) if (loc.file, loc.range.start.line) not in served]
        if missed:
            confidence = Confidence.MEDIUM
            notes.append(
                f"partial: {answer.server} left out {len(missed)} reference(s) the project graph resolves, added from it: "
                + ", ".join(f"{loc.file}:{loc.range.start.line + 1}" for loc in missed[:10]) + (" …" if len(missed) > 10 else "")
            )
        return NavigationResult([*answer.value, *missed], Source.LSP, confidence, notes)

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

    def _graph_definition(self, path: str, position: Position) -> list[Location]:
        lines = split_lines(self.workspace.read(path).text)
        if position.line >= len(lines):
            raise SymbolNotFound(f"{path} has no line {position.line + 1}")
        text = lines[position.line]
        expression = next((m for m in _EXPRESSION.finditer(text) if m.start() <= position.column < m.end()), None)
        if expression is None:
            raise SymbolNotFound(f"no name at {path}:{position.line + 1}:{position.column + 1}")
        # Up to the name under the cursor: `util.round_cents` when the cursor is on round_cents.
        end = text.find(".", position.column)
        written = text[expression.start():end if expression.start() < end < expression.end() else expression.end()]
        target = self.queries.project.resolve_expression(path, written, position.line + 1)
        if target is None:
            raise SymbolNotFound(f"the graph cannot resolve {written!r} at {path}:{position.line + 1} (try --source lsp)")
        target_path = self.queries.graph.nodes[target]["path"]
        return [self._declaration(target_path, self._symbol_fact(target))]

    def _symbol_fact(self, node: str) -> SymbolFact:
        data = self.queries.graph.nodes[node]
        if data["type"] != "symbol":
            raise SymbolNotFound(f"{node[2:]} is a file; references and definitions are about symbols")
        fact: SymbolFact = data["fact"]  # networkx node data is untyped; a symbol node holds its fact
        return fact

