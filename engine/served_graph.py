"""Callers, callees, impact and implementations asked of the language server where the project
graph cannot answer them: a symbol in a language whose uses the graph does not follow (TypeScript,
Go...). There the graph knows imports and the bases a declaration names, never which call reaches
which function, nor a Go type that satisfies an interface without naming it.

The server's call hierarchy (``prepareCallHierarchy`` + ``incomingCalls``/``outgoingCalls``)
answers callers and callees, and impact as the transitive incoming calls, bounded; its
``textDocument/implementation`` answers implementations. Every answer is labelled ``lsp`` with how
far to trust it; a server without the request refuses as ``unsupported_by_server``, and a symbol the
server finds nothing callable at as ``not_callable``: neither is answered with an empty list.
Elsewhere (Python, or ``--source ast``) the graph's own answers come back unchanged.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Callable, Generic, TypeVar

from engine.answers import CallEdge, HierarchyItem, Location
from engine.errors import NotCallable, ServerAnsweredError, ServiceUnavailable
from engine.graph import EdgeRef, GraphQueries, NodeRef, Reached
from engine.graph.build import symbol_node
from engine.graph.facts import SymbolFact
from engine.ports import Answered, LanguageServices
from engine.positions import Position
from engine.symbols import Confidence, SymbolKind
from engine.workspace import SourceFile, Workspace

T = TypeVar("T")
R = TypeVar("R")

IMPACT_ASKED_AT_MOST = 200
"""Functions whose callers an impact answer asks the server for, at most: each is a request, and a
widely called function's blast radius can be most of a project. Past it the answer says it was cut."""

_CALLABLE = frozenset({SymbolKind.FUNCTION, SymbolKind.METHOD, SymbolKind.CONSTRUCTOR})
"""Kinds a call hierarchy is asked of; a server's error about another kind means it is not callable."""


@dataclass(frozen=True)
class GraphAnswer(Generic[T]):
    """A graph query's rows and what the reader must know about them (where they came from, what
    they leave out)."""

    rows: list[T]
    notes: list[str]

    def rendered(self, render: Callable[[list[T]], R]) -> tuple[R, list[str]]:
        """The rows as ``render`` shows them, and the notes (a front end's answer and what it says beside it)."""
        return render(self.rows), self.notes


class ServedGraph:
    """The graph queries about calls and implementations, asked of the server where the graph is blind."""

    def __init__(self, workspace: Workspace, queries: GraphQueries, services: LanguageServices | None, *,
                 use_server: bool, require_server: bool) -> None:
        self.workspace = workspace
        self.queries = queries
        self.services = services
        self.use_server = use_server
        self.require_server = require_server

    # -- the queries -----------------------------------------------------------

    def callers(self, address: str) -> GraphAnswer[EdgeRef]:
        return self._calls(address, incoming=True)

    def callees(self, address: str) -> GraphAnswer[EdgeRef]:
        return self._calls(address, incoming=False)

    def impact(self, address: str, depth: int = 3, asked_at_most: int = IMPACT_ASKED_AT_MOST) -> GraphAnswer[Reached]:
        """What calls the target, transitively up to ``depth`` calls away; at most ``asked_at_most``
        functions are asked for their callers, and an answer cut there says so."""
        node = self._served_symbol(address)
        if node is None:
            return GraphAnswer(self.queries.impact(address, depth), self.queries.call_notes(address))
        source, items, server = self._prepared(node, address)
        reached: list[Reached] = []
        seen = {_item_key(item) for item in items}
        pending = deque((item, 0) for item in items)
        asked, complete, left = 0, True, 0
        while pending:
            item, distance = pending.popleft()
            if distance >= depth:
                continue
            if asked >= asked_at_most:
                left = len(pending) + 1
                break
            answer = self._asked_calls(source, item, incoming=True)
            asked, complete = asked + 1, complete and answer.complete
            for edge in answer.value:
                key = _item_key(edge.item)
                if key in seen:
                    continue
                seen.add(key)
                reached.append(Reached(self._item_ref(edge.item, _confidence(answer.complete)), distance + 1, "calls"))
                pending.append((edge.item, distance + 1))
        notes = [f"from {server}'s call hierarchy (callHierarchy/incomingCalls, {asked} function(s) asked): the functions "
                 f"that call {address}, transitively up to {depth} call(s) away; a use that is not a call (the function "
                 f"passed as a value, a type named) is not followed: `graft graph refs {address}` lists every use"]
        if left:
            notes.append(f"cut: {left} caller(s) at the edge were not asked for their own callers (at most "
                         f"{asked_at_most} functions are asked); lower --depth, or ask `graft graph callers` of them")
        if not complete:
            notes.append(f"{server} had not finished loading the project: callers may be missing")
        return GraphAnswer(reached, notes)

    def implementations(self, address: str) -> GraphAnswer[NodeRef]:
        node = self._served_symbol(address)
        if node is None:
            return GraphAnswer(self.queries.implementations(address), self.queries.implementation_notes(address))
        fact, path = self._fact(node)
        source = self.workspace.read(path)
        try:
            answer = self._services().implementations(source, _name_position(fact))
        except ServiceUnavailable as error:
            if self.require_server:
                raise
            # The graph still knows the bases a declaration names (implements, extends, embedding).
            return GraphAnswer(self.queries.implementations(address), [
                *self.queries.implementation_notes(address),
                f"language server unavailable: {error.message}; implementations from the graph"])
        confidence = _confidence(answer.complete)
        inside = [location for location in answer.value if location.inside_workspace]
        refs = list(dict.fromkeys(self._location_ref(location, confidence) for location in inside))
        own = self.queries.ref(node)
        refs = [ref for ref in refs if ref.address != own.address]
        notes = [f"from {answer.server} (textDocument/implementation)"]
        if len(inside) < len(answer.value):
            notes.append(f"{len(answer.value) - len(inside)} implementation(s) outside the workspace left out (a library's)")
        if not answer.complete:
            notes.append(f"{answer.server} had not finished loading the project: implementations may be missing")
        return GraphAnswer(refs, notes)

    # -- calls -------------------------------------------------------------------

    def _calls(self, address: str, *, incoming: bool) -> GraphAnswer[EdgeRef]:
        node = self._served_symbol(address)
        if node is None:
            graph_edges = self.queries.callers(address) if incoming else self.queries.callees(address)
            return GraphAnswer(graph_edges, self.queries.call_notes(address))
        source, items, server = self._prepared(node, address)
        target = self.queries.ref(node)
        edges: list[EdgeRef] = []
        complete = True
        for item in items:
            answer = self._asked_calls(source, item, incoming=incoming)
            complete = complete and answer.complete
            confidence = _confidence(answer.complete)
            for call in answer.value:
                other = self._item_ref(call.item, confidence)
                line = call.call_sites[0].start.line + 1 if call.call_sites else None
                ends = (other, target) if incoming else (target, other)
                edges.append(EdgeRef("calls", ends[0], ends[1], line, "lsp", confidence.value))
        method = "incomingCalls" if incoming else "outgoingCalls"
        notes = [f"from {server}'s call hierarchy (callHierarchy/{method})"]
        if incoming:
            notes.append(f"calls only: a use that is not a call (the function passed as a value) is not a caller: "
                         f"`graft graph refs {address}` lists every use")
        if not complete:
            notes.append(f"{server} had not finished loading the project: calls may be missing")
        return GraphAnswer(edges, notes)

    def _prepared(self, node: str, address: str) -> tuple[SourceFile, list[HierarchyItem], str]:
        """The server's call-hierarchy items for the symbol, the file they were asked in, and the server."""
        fact, path = self._fact(node)
        source = self.workspace.read(path)
        try:
            answer = self._services().call_hierarchy(source, _name_position(fact))
        except ServerAnsweredError as error:
            if fact.kind in _CALLABLE:
                raise self._blind(error, source.language or "this language") from error
            # gopls answers a type or a constant with an error ("X is not a function").
            raise NotCallable(f"{error.server} finds nothing callable at {address} (its kind: {fact.kind.label}; {error.detail}): "
                              f"callers, callees and impact are of functions and methods; `graft graph refs {address}` "
                              "lists its uses") from error
        except ServiceUnavailable as error:
            raise self._blind(error, source.language or "this language") from error
        if not answer.value:
            raise NotCallable(f"{answer.server} finds nothing callable at {address} (its kind: {fact.kind.label}): callers, callees "
                              f"and impact are of functions and methods; `graft graph refs {address}` lists its uses")
        return source, answer.value, answer.server

    def _asked_calls(self, source: SourceFile, item: HierarchyItem, *, incoming: bool) -> Answered[list[CallEdge]]:
        try:
            return self._services().calls(source, item, incoming=incoming)
        except ServiceUnavailable as error:
            raise self._blind(error, source.language or "this language") from error

    def _blind(self, error: ServiceUnavailable, language: str) -> ServiceUnavailable:
        """The server's failure, saying that nothing else can answer: the graph follows no calls there."""
        return ServiceUnavailable(f"{error.message}; calls in {language} files come only from the language server (the "
                                  "project graph follows no calls there), so there is no other answer")

    # -- addressing ----------------------------------------------------------------

    def _served_symbol(self, address: str) -> str | None:
        """The graph node of ``address`` when the server answers for it: a symbol in a language
        whose uses the graph does not follow, and a server allowed. None when the graph answers."""
        if not self.use_server or not self.queries.language_unseen(address):
            return None
        node = self.queries.node_for(address)
        return node if self.queries.graph.nodes[node]["type"] == "symbol" else None

    def _fact(self, node: str) -> tuple[SymbolFact, str]:
        data = self.queries.graph.nodes[node]
        fact: SymbolFact = data["fact"]  # a symbol node holds its fact
        return fact, data["path"]

    def _services(self) -> LanguageServices:
        if self.services is None:
            raise ServiceUnavailable("no language-server support is installed")
        return self.services

    def _item_ref(self, item: HierarchyItem, confidence: Confidence) -> NodeRef:
        return self._location_ref(Location(item.file, item.selection_range), confidence, fallback_name=item.name,
                                  fallback_kind=item.kind.label)

    def _location_ref(self, location: Location, confidence: Confidence, fallback_name: str = "",
                      fallback_kind: str = "file") -> NodeRef:
        """The graph's symbol whose name is at ``location``, else the innermost one around it, else its
        file; labelled as the server's answer."""
        line = location.range.start.line + 1
        facts = self.queries.project.facts.get(location.file)
        if facts is None:
            return NodeRef(location.file, fallback_name or None, fallback_kind, line, "lsp", confidence.value)
        column = location.range.start.column
        named = [s for s in facts.symbols if s.name_line == line and s.name_column <= column < s.name_column + len(s.name)]
        around = named or [s for s in facts.symbols if s.line <= line <= s.end_line]
        if not around:
            return NodeRef(location.file, None, "file", line, "lsp", confidence.value)
        fact = max(around, key=lambda s: (s.line, -s.end_line))
        ref = self.queries.ref(symbol_node(location.file, fact.name_path))
        return NodeRef(ref.path, ref.name_path, ref.kind, ref.line, "lsp", confidence.value)


def _name_position(fact: SymbolFact) -> Position:
    return Position(fact.name_line - 1, fact.name_column)


def _item_key(item: HierarchyItem) -> tuple[str, int, int]:
    return item.file, item.selection_range.start.line, item.selection_range.start.column


def _confidence(complete: bool) -> Confidence:
    return Confidence.HIGH if complete else Confidence.MEDIUM
