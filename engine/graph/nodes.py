"""The project graph's nodes as an answer names them: a file path, a name path or ``FILE:LINE``
looked up, and nodes and edges as engine values. Part of :class:`engine.graph.queries.GraphQueries`."""

from __future__ import annotations

from dataclasses import dataclass

from engine.errors import Candidate, SymbolNotFound
from engine.graph.build import file_node, symbol_node
from engine.graph.facts import SymbolFact
from engine.graph.file_reach import FileReach
from engine.languages import profile
from engine.names import NamePath, PositionAddress, SymbolAddress, parse_address
from engine.resolve import ambiguous_among


@dataclass(frozen=True)
class NodeRef:
    path: str
    name_path: str | None = None
    kind: str = "file"
    line: int | None = None
    source: str = "ast"
    confidence: str = "high"

    @property
    def address(self) -> str:
        return self.path if self.name_path is None else f"{self.path}:{self.name_path}"

    def to_json(self) -> dict[str, object]:
        return {"address": self.address, "file": self.path, "name_path": self.name_path, "kind": self.kind,
                "line": self.line, "source": self.source, "confidence": self.confidence}


@dataclass(frozen=True)
class EdgeRef:
    kind: str
    source: NodeRef
    target: NodeRef
    line: int | None
    origin: str
    confidence: str

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "from": self.source.address, "to": self.target.address, "line": self.line,
                "source": self.origin, "confidence": self.confidence}


@dataclass(frozen=True)
class OverviewEntry:
    path: str
    symbols: tuple[NodeRef, ...]
    language: str | None
    source: str


class GraphNodes(FileReach):
    """Addressing the graph's nodes, and its edges as values (GraphQueries's base)."""

    _names: dict[str, list[tuple[str, SymbolFact]]] | None

    # -- addressing ------------------------------------------------------------

    def nodes_for(self, address: str) -> list[str]:
        """Graph nodes an address names: a file path, a name path (workspace-wide or in a file), or FILE:LINE."""
        if address.rstrip("/") in self.project.facts or address in (".", ""):
            return [file_node(address.rstrip("/"))] if address not in (".", "") else []
        parsed = parse_address(address)
        if isinstance(parsed, PositionAddress):
            return [self._node_at(parsed)]
        return self._symbols_named(parsed)

    def node_for(self, address: str) -> str:
        found = self.nodes_for(address)
        if not found:
            raise SymbolNotFound(f"nothing in the index is named {address}")
        if len(found) > 1:
            refs = [self.ref(n) for n in found]
            raise ambiguous_among(address, [Candidate(r.address, r.kind, r.line or 1) for r in refs])
        return found[0]

    def _symbols_named(self, address: SymbolAddress) -> list[str]:
        name_path: NamePath = address.name_path
        if address.file is not None and address.file not in self.project.facts:
            raise SymbolNotFound(f"{address.file} is not in the index (run graft index, or check the path)")
        candidates = self._by_name().get(name_path.segments[-1].name, [])
        return [
            symbol_node(path, fact.name_path) for path, fact in candidates
            if (address.file is None or path == address.file) and name_path.matches(fact.segments)
        ]

    def _by_name(self) -> dict[str, list[tuple[str, SymbolFact]]]:
        """Symbols by their own name, in path then source order: a lookup touches only its namesakes."""
        if self._names is None:
            self._names = {}
            for path in sorted(self.project.facts):
                for fact in self.project.facts[path].symbols:
                    self._names.setdefault(fact.name, []).append((path, fact))
        return self._names

    def _node_at(self, address: PositionAddress) -> str:
        facts = self.project.facts.get(address.file)
        if facts is None:
            raise SymbolNotFound(f"{address.file} is not in the index")
        inside = [s for s in facts.symbols if s.line <= address.line <= s.end_line]
        if not inside:
            return file_node(address.file)
        return symbol_node(address.file, max(inside, key=lambda s: (s.line, -s.end_line)).name_path)

    def ref(self, node: str) -> NodeRef:
        data = self.graph.nodes[node]
        if data["type"] == "file":
            return NodeRef(data["path"], None, "file", None, data["source"], data["confidence"])
        fact: SymbolFact = data["fact"]
        return NodeRef(data["path"], fact.name_path, fact.kind.label, fact.line, fact.source, fact.confidence)

    def lookup(self, address: str) -> list[NodeRef]:
        return [self.ref(n) for n in self.nodes_for(address)]

    def overview(self, under: str = ".", depth: int = 1) -> list[OverviewEntry]:
        """Files under a folder with their symbols, nested at most ``depth`` levels."""
        prefix = "" if under in (".", "") else under.rstrip("/") + "/"
        entries = []
        for path in sorted(self.project.facts):
            if prefix and not path.startswith(prefix) and path != under:
                continue
            facts = self.project.facts[path]
            symbols = tuple(
                self.ref(symbol_node(path, s.name_path)) for s in facts.symbols if len(s.segments) <= depth
            )
            entries.append(OverviewEntry(path, symbols, facts.language, facts.source))
        return entries

    def _edges_at(self, address: str, kind: str, *, incoming: bool) -> list[EdgeRef]:
        node = self.node_for(address)
        edges = self.graph.in_edges(node, keys=True, data=True) if incoming else self.graph.out_edges(node, keys=True, data=True)
        return [self._edge(u, v, k, d) for u, v, k, d in edges if k == kind]

    def _edge(self, u: str, v: str, kind: str, data: dict[str, object]) -> EdgeRef:
        line = data.get("line")  # an int, or absent (a ``contains`` edge has none)
        return EdgeRef(kind, self.ref(u), self.ref(v), line if isinstance(line, int) else None,
                       str(data.get("source")), str(data.get("confidence")))


def sees_uses(language: str | None) -> bool:
    """Whether the graph resolves this language's names, so that its dead-code pass can judge uses."""
    kind = profile(language)
    return kind is not None and kind.graph_sees_uses
