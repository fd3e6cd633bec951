"""Questions asked of the project graph, answered with engine values (networkx stays in here).

Every edge in an answer carries its source and confidence.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Iterable, Iterator

from engine.graph.build import ProjectGraph, symbol_node
from engine.graph.facts import SymbolFact
from engine.symbols import SymbolKind
from engine.graph.findings import TEST_NAME, USE_KINDS, Cycle as Cycle, Finding as Finding, ProjectFindings
from engine.graph.nodes import EdgeRef as EdgeRef, NodeRef as NodeRef, OverviewEntry as OverviewEntry, sees_uses


@dataclass(frozen=True)
class Reached:
    node: NodeRef
    distance: int
    via: str

    def to_json(self) -> dict[str, object]:
        return {**self.node.to_json(), "distance": self.distance, "via": self.via}


@dataclass(frozen=True)
class UnresolvedCalls:
    """Calls of a method's name on receivers whose type nothing says: the graph cannot tell
    whether they reach the method, so an answer without them may be missing callers."""

    method: str
    places: tuple[tuple[str, int], ...]
    """(file, 1-based line) of each such call."""

    @property
    def note(self) -> str:
        shown = ", ".join(f"{path}:{line}" for path, line in self.places[:10]) + (" …" if len(self.places) > 10 else "")
        return f"{len(self.places)} call(s) of .{self.method}() on receivers of unknown type, which may reach it: {shown}"

    def to_json(self) -> dict[str, object]:
        return {"method": self.method, "count": len(self.places),
                "places": [{"file": path, "line": line} for path, line in self.places]}


class GraphQueries(ProjectFindings):
    """Questions asked of the project graph: addressing (engine.graph.nodes), the class hierarchy
    (engine.graph.hierarchy), whole-project findings (engine.graph.findings), the file-level
    relations (engine.graph.file_reach), and here what uses what."""

    def __init__(self, project: ProjectGraph) -> None:
        self.project = project
        self.graph = project.graph
        self._names: dict[str, list[tuple[str, SymbolFact]]] | None = None

    def dependencies(self, address: str) -> list[EdgeRef]:
        """What the target uses: its (and its contents') outgoing imports, calls and bases."""
        node = self.node_for(address)
        owned = set(self._owned(node))
        edges: dict[tuple[str, str], EdgeRef] = {}
        for n in owned:
            for u, v, k, d in self.graph.out_edges(n, keys=True, data=True):
                if k in USE_KINDS and v not in owned:
                    edge = self._edge(u, v, k, d)
                    key = (k, edge.target.address)
                    if key not in edges or (edge.line or 0) < (edges[key].line or 0):
                        edges[key] = edge  # one row per used thing, at its first use
        return sorted(edges.values(), key=lambda e: (e.kind, e.target.address))

    def impact(self, address: str, depth: int = 3) -> list[Reached]:
        """What depends on the target, transitively up to ``depth`` steps (its blast radius)."""
        start = self.node_for(address)
        return list(self._dependants(self._owned(start), depth))

    def _dependants(self, starts: list[str], depth: int) -> Iterator[Reached]:
        seen = set(starts)
        queue = deque((n, 0) for n in starts)
        while queue:
            node, distance = queue.popleft()
            if distance >= depth:
                continue
            for source, _target, kind in self.graph.in_edges(node, keys=True):
                if kind not in USE_KINDS or source in seen:
                    continue
                seen.add(source)
                yield Reached(self.ref(source), distance + 1, kind)
                queue.append((source, distance + 1))

    def callers(self, address: str) -> list[EdgeRef]:
        return self._edges_at(address, "calls", incoming=True)

    def callees(self, address: str) -> list[EdgeRef]:
        return self._edges_at(address, "calls", incoming=False)

    def unresolved_calls(self, address: str) -> list[UnresolvedCalls]:
        """For a method (or each method of a class or file), the calls of its name on receivers
        of unknown type: what ``callers`` and ``impact`` cannot count, said rather than left out."""
        return self.unresolved_calls_of(self._owned(self.node_for(address)))

    def unresolved_calls_of(self, nodes: Iterable[str]) -> list[UnresolvedCalls]:
        names = sorted({fact.name for node in nodes if (fact := self._method_fact(node)) is not None})
        found = self.project.unresolved_calls(names) if names else {}
        return [UnresolvedCalls(name, tuple(found[name])) for name in names if found.get(name)]

    def call_notes(self, address: str) -> list[str]:
        """Notes for a callers or impact answer about ``address``: the unresolved calls that may
        reach it, and when the graph follows no uses in its language at all, that."""
        unseen = self.language_unseen(address)
        if unseen:
            return [f"the graph follows no calls or uses in {unseen} files, so callers and impact of {address} "
                    f"list none from them: with a language server (--source auto or lsp) its call hierarchy answers them, and "
                    f"`graft graph refs {address}` lists every use"]
        return [calls.note for calls in self.unresolved_calls(address)]

    def implementation_notes(self, address: str) -> list[str]:
        """Notes for an implementations answer: in a language whose uses the graph does not follow,
        it knows only the bases a declaration names (never a Go type that satisfies an interface)."""
        unseen = self.language_unseen(address)
        if not unseen:
            return []
        return [f"in {unseen} files the graph knows only the bases a declaration names (extends, implements, an "
                "embedded type), never a type that satisfies an interface without naming it"]

    def language_unseen(self, address: str) -> str:
        """The language of ``address``'s file when the graph follows no uses in it, else ''."""
        node = self.node_for(address)
        facts = self.project.facts.get(self.graph.nodes[node]["path"])
        language = facts.language if facts is not None else None
        return language if language is not None and not sees_uses(language) else ""

    def _method_fact(self, node: str) -> SymbolFact | None:
        """A node's fact when it is a method (a function directly in a class)."""
        data = self.graph.nodes[node]
        fact: SymbolFact | None = data.get("fact")
        if fact is None or fact.parent is None or fact.kind not in (SymbolKind.METHOD, SymbolKind.FUNCTION, SymbolKind.CONSTRUCTOR):
            return None
        owner = symbol_node(data["path"], fact.parent)
        owner_fact: SymbolFact | None = self.graph.nodes[owner].get("fact") if self.graph.has_node(owner) else None
        return fact if owner_fact is not None and owner_fact.kind in (SymbolKind.CLASS, SymbolKind.INTERFACE, SymbolKind.STRUCT) else None

    def import_path(self, start: str, goal: str) -> list[str] | None:
        """The shortest chain of module-level imports from one Python file to another
        (``[start, …, goal]``), or None when importing ``start`` never imports ``goal``."""
        previous: dict[str, str | None] = {start: None}
        frontier = [start]
        while frontier:
            following = []
            for path in frontier:
                for imported in sorted(self.project.module_level_imports(path)):
                    if imported in previous:
                        continue
                    previous[imported] = path
                    if imported == goal:
                        chain = [goal]
                        while (before := previous[chain[-1]]) is not None:
                            chain.append(before)
                        return chain[::-1]
                    following.append(imported)
            frontier = following
        return None

    def affected_tests(self, addresses: Iterable[str], depth: int = 6) -> list[NodeRef]:
        """Tests that exercise the given files or symbols, directly or through what depends on them."""
        starts: list[str] = []
        for address in addresses:
            for node in self.nodes_for(address):
                starts += self._owned(node)
        tests: dict[str, NodeRef] = {}
        reached = [self.ref(n) for n in starts] + [r.node for r in self._dependants(starts, depth)]
        for ref in reached:
            if not self.project.facts[ref.path].is_test:
                continue
            if ref.name_path is not None and not TEST_NAME.match(ref.name_path.split("/")[0]):
                continue  # a helper in a test file: the tests that call it are reached next
            tests[ref.address] = ref
        return sorted(tests.values(), key=lambda r: r.address)
