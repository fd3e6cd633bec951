"""Questions asked of the project graph, answered with engine values (networkx stays in here).

Every edge in an answer carries its source and confidence. Dead code is only
ever a list of candidates: a dynamic program can reach what no syntax shows.
"""

from __future__ import annotations

import re
import tomllib
from collections import deque
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Callable, Iterable, Iterator

import networkx as nx

from engine.errors import Candidate, SymbolNotFound
from engine.graph.build import ProjectGraph, file_node, symbol_node
from engine.graph.facts import SymbolFact
from engine.graph.file_reach import FileReach
from engine.names import NamePath, PositionAddress, SymbolAddress, parse_address
from engine.resolve import ambiguous_among
from engine.symbols import SymbolKind
from engine.languages import profile

_USE_KINDS = ("imports", "calls", "inherits")
_TEST_NAME = re.compile(r"^(test|Test)")
_ENTRY_DECORATORS = re.compile(
    r"(^|\.)(command|group|callback)\(|(^|\.)(route|get|post|put|patch|delete|websocket|api_route)\("
)


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
class Reached:
    node: NodeRef
    distance: int
    via: str

    def to_json(self) -> dict[str, object]:
        return {**self.node.to_json(), "distance": self.distance, "via": self.via}


@dataclass(frozen=True)
class Cycle:
    files: tuple[str, ...]
    edges: tuple[tuple[str, str, int | None], ...]


@dataclass(frozen=True)
class Finding:
    """An entry point or a dead-code candidate, with the reason."""

    node: NodeRef
    reason: str


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


@dataclass(frozen=True)
class OverviewEntry:
    path: str
    symbols: tuple[NodeRef, ...]
    language: str | None
    source: str


class GraphQueries(FileReach):
    def __init__(self, project: ProjectGraph) -> None:
        self.project = project
        self.graph = project.graph
        self._names: dict[str, list[tuple[str, SymbolFact]]] | None = None

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

    # -- lookups ---------------------------------------------------------------

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

    # -- relations -------------------------------------------------------------

    def dependencies(self, address: str) -> list[EdgeRef]:
        """What the target uses: its (and its contents') outgoing imports, calls and bases."""
        node = self.node_for(address)
        owned = set(self._owned(node))
        edges: dict[tuple[str, str], EdgeRef] = {}
        for n in owned:
            for u, v, k, d in self.graph.out_edges(n, keys=True, data=True):
                if k in _USE_KINDS and v not in owned:
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
                if kind not in _USE_KINDS or source in seen:
                    continue
                seen.add(source)
                yield Reached(self.ref(source), distance + 1, kind)
                queue.append((source, distance + 1))

    def callers(self, address: str) -> list[EdgeRef]:
        return self._edges_at(address, "calls", incoming=True)

    def callees(self, address: str) -> list[EdgeRef]:
        return self._edges_at(address, "calls", incoming=False)

    def supertypes(self, address: str) -> list[EdgeRef]:
        return self._edges_at(address, "inherits", incoming=False)

    def subtypes(self, address: str) -> list[EdgeRef]:
        return self._edges_at(address, "inherits", incoming=True)

    def _edges_at(self, address: str, kind: str, *, incoming: bool) -> list[EdgeRef]:
        node = self.node_for(address)
        edges = self.graph.in_edges(node, keys=True, data=True) if incoming else self.graph.out_edges(node, keys=True, data=True)
        return [self._edge(u, v, k, d) for u, v, k, d in edges if k == kind]

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

    def dead_code_notes(self) -> list[str]:
        """What a dead-code answer did not examine: files of languages whose uses the graph does not follow."""
        unseen = sorted({facts.language for facts in self.project.facts.values()
                         if facts.language is not None and not _sees_uses(facts.language)})
        if not unseen:
            return []
        counted = [f"{sum(1 for f in self.project.facts.values() if f.language == language)} {language}" for language in unseen]
        return [f"not examined: {', '.join(counted)} file(s): the graph follows no uses in those languages, so nothing "
                "there can be judged unused"]

    def language_unseen(self, address: str) -> str:
        """The language of ``address``'s file when the graph follows no uses in it, else ''."""
        node = self.node_for(address)
        facts = self.project.facts.get(self.graph.nodes[node]["path"])
        language = facts.language if facts is not None else None
        return language if language is not None and not _sees_uses(language) else ""

    def _method_fact(self, node: str) -> SymbolFact | None:
        """A node's fact when it is a method (a function directly in a class)."""
        data = self.graph.nodes[node]
        fact: SymbolFact | None = data.get("fact")
        if fact is None or fact.parent is None or fact.kind not in (SymbolKind.METHOD, SymbolKind.FUNCTION, SymbolKind.CONSTRUCTOR):
            return None
        owner = symbol_node(data["path"], fact.parent)
        owner_fact: SymbolFact | None = self.graph.nodes[owner].get("fact") if self.graph.has_node(owner) else None
        return fact if owner_fact is not None and owner_fact.kind in (SymbolKind.CLASS, SymbolKind.INTERFACE, SymbolKind.STRUCT) else None

    def implementations(self, address: str) -> list[NodeRef]:
        """Subclasses of a class, transitively; for a method, its overrides in those subclasses."""
        node = self.node_for(address)
        fact: SymbolFact | None = self.graph.nodes[node].get("fact")
        if fact is None:
            raise SymbolNotFound(f"{address} is a file; implementations are of classes and methods")
        owner, method = (node, None) if fact.kind in (SymbolKind.CLASS, SymbolKind.INTERFACE, SymbolKind.STRUCT) else (None, fact.name)
        if owner is None:
            path = self.graph.nodes[node]["path"]
            owner = symbol_node(path, fact.parent) if fact.parent is not None else None
        if owner is None:
            return []
        subclasses = self._inheriting(owner, upward=False)
        found = []
        for subclass in sorted(subclasses):
            if method is None:
                found.append(self.ref(subclass))
                continue
            data = self.graph.nodes[subclass]
            override = symbol_node(data["path"], f"{data['fact'].name_path}/{method}")
            if self.graph.has_node(override):
                found.append(self.ref(override))
        return found

    def hierarchy_methods(self, address: str) -> list[NodeRef]:
        """A method and every same-named method in the classes its class inherits from or passes
        on to, transitively: what a rename must cover so that no override is left behind."""
        node = self.node_for(address)
        fact: SymbolFact = self.graph.nodes[node]["fact"]
        path = self.graph.nodes[node]["path"]
        if fact.parent is None:
            return [self.ref(node)]
        owner = symbol_node(path, fact.parent)

        def method_of(cls: str) -> str | None:
            data = self.graph.nodes[cls]
            method = symbol_node(data["path"], f"{data['fact'].name_path}/{fact.name}")
            return method if self.graph.has_node(method) else None

        def definers_above(cls: str) -> set[str]:
            """The class and its ancestors that define the method (the ones its MRO can reach)."""
            above = {cls, *self._inheriting(cls, upward=True)}
            return {c for c in above if method_of(c) is not None}

        # One slot: the definers above the owner, then, for every class below any of them, the
        # definers above that class (a mixin's override meets the base's in a class that has
        # both). Siblings that merely share a base which lacks the method stay apart.
        family = definers_above(owner) | {owner}
        grown = True
        while grown:
            below = {d for c in family for d in self._inheriting(c, upward=False)}
            larger = family | {c for d in below for c in definers_above(d)}
            grown, family = larger != family, larger
        return [self.ref(method) for cls in sorted(family) if (method := method_of(cls)) is not None]

    def subclasses(self, class_address: str) -> list[NodeRef]:
        """Every class below this one, transitively (itself not included): where its members are
        inherited, and may be declared again by assignment on ``self``."""
        below = self._inheriting(self.node_for(class_address), upward=False)
        return [self.ref(cls) for cls in sorted(below)]

    def superclasses(self, class_address: str) -> list[NodeRef]:
        """Every class above this one that the project holds, transitively (itself not included):
        where an attribute it redeclares (a property over ``self.x``) may first be set."""
        above = self._inheriting(self.node_for(class_address), upward=True)
        return [self.ref(cls) for cls in sorted(above)]

    def _inheriting(self, cls: str, *, upward: bool) -> set[str]:
        """The classes above ``cls`` (its bases, transitively) or below it (its subclasses), not
        itself. ``inherits`` edges point from a class to its bases; walked by hand, since
        networkx's traversals of a filtered view pay for the whole graph on every call."""
        neighbours = self.graph.succ if upward else self.graph.pred
        found: set[str] = set()
        pending = [cls] if cls in neighbours else []
        while pending:
            for other, kinds in neighbours[pending.pop()].items():
                if "inherits" in kinds and other not in found and other != cls:
                    found.add(other)
                    pending.append(other)
        return found

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

    def cycles(self) -> list[Cycle]:
        """Import cycles between files: strongly connected components, with the edges inside them."""
        files = nx.DiGraph()
        for u, v, k, d in self.graph.edges(keys=True, data=True):
            if k == "imports" and u.startswith("f:") and v.startswith("f:"):
                files.add_edge(u[2:], v[2:], line=d.get("line"))
        found = []
        for component in nx.strongly_connected_components(files):
            if len(component) < 2:
                continue
            members = tuple(sorted(component))
            edges = tuple(sorted((u, v, files.edges[u, v]["line"]) for u, v in files.subgraph(component).edges))
            found.append(Cycle(members, edges))
        return sorted(found, key=lambda c: c.files)

    def entry_points(self, pyproject_text: str | None = None) -> list[Finding]:
        found: list[Finding] = []
        for path, facts in sorted(self.project.facts.items()):
            if facts.has_main:
                found.append(Finding(self.ref(file_node(path)), 'runs as a script (if __name__ == "__main__")'))
            if PurePosixPath(path).name == "__main__.py":
                found.append(Finding(self.ref(file_node(path)), "package entry (__main__.py, python -m)"))
            for symbol in facts.symbols:
                for decorator in symbol.decorators:
                    if _ENTRY_DECORATORS.search(decorator):
                        found.append(Finding(self.ref(symbol_node(path, symbol.name_path)), f"decorated @{decorator}"))
                        break
            argparse_users = {c.caller for c in facts.calls if c.callee.endswith("ArgumentParser") and c.caller}
            for caller in sorted(argparse_users):
                found.append(Finding(self.ref(symbol_node(path, caller)), "builds an argparse command line"))
        found += self._console_scripts(pyproject_text)
        return found

    def _console_scripts(self, pyproject_text: str | None) -> list[Finding]:
        if not pyproject_text:
            return []
        try:
            scripts = tomllib.loads(pyproject_text).get("project", {}).get("scripts", {})
        except tomllib.TOMLDecodeError:
            return []
        found = []
        for command, target in sorted(scripts.items()):
            module, _, function = str(target).partition(":")
            path = self.project._modules.python_file(module)
            if path is not None and function and self.graph.has_node(symbol_node(path, function)):
                found.append(Finding(self.ref(symbol_node(path, function)), f"console script `{command}`"))
        return found

    def dead_code(self, pyproject_text: str | None = None, read: Callable[[str], str] | None = None) -> list[Finding]:
        """Symbols nothing uses by syntax: candidates only, for a person to check. Never a stub's
        declaration (``.pyi``: it describes, it is not called); an ``@overload`` stack lives or dies
        as one (uses resolve to its implementation); and with ``read`` (a file's text), a
        top-level name that any other line of the project reads (``Unit.X``) is not a candidate."""
        entry = {f.node.address for f in self.entry_points(pyproject_text)}
        exported = {
            (path, name) for path, facts in self.project.facts.items() for name in (facts.exports or ())
        }
        used_after_a_dot = set().union(*(facts.attributes for facts in self.project.facts.values()))
        if read is not None:
            texts: dict[str, str] = {}
            read_once = read
            read = lambda path: texts[path] if path in texts else texts.setdefault(path, read_once(path))  # noqa: E731
        found = []
        for path, facts in sorted(self.project.facts.items()):
            if facts.is_test or not _sees_uses(facts.language) or path.endswith(".pyi"):
                continue
            families: dict[str, list[SymbolFact]] = {}
            for symbol in facts.symbols:
                families.setdefault(re.sub(r"\[\d+\]", "", symbol.name_path), []).append(symbol)
            for members in families.values():
                symbol = members[-1]  # of an overload stack, the implementation
                if not _judged(symbol) or (path, symbol.name) in exported or any(f"{path}:{m.name_path}" in entry for m in members):
                    continue
                if symbol.parent is not None and symbol.name in used_after_a_dot:
                    continue  # a method or property some `x.name` of unknown type may reach
                if any(self._used(symbol_node(path, member.name_path)) for member in members):
                    continue
                if read is not None and symbol.parent is None and self._read_elsewhere(symbol.name, path, {m.name_line for m in members}, read):
                    continue
                found.append(Finding(self.ref(symbol_node(path, symbol.name_path)), "no import, call or subclass reaches it"))
        return found

    def _used(self, node: str) -> bool:
        if any(k in _USE_KINDS or k == "tested_by" for _u, _v, k in self.graph.in_edges(node, keys=True)):
            return True
        return any(k in _USE_KINDS for n in self._owned(node)[1:] for _u, _v, k in self.graph.in_edges(n, keys=True))

    def _read_elsewhere(self, name: str, path: str, own_lines: set[int], read: Callable[[str], str]) -> bool:
        """Whether any line but the definitions' names the symbol (an attribute access such as
        ``units.Unit.X``, a name passed along): the graph records calls, imports and bases only."""
        word = re.compile(rf"(?<!\w){re.escape(name)}\b")
        for other, facts in self.project.facts.items():
            if not _sees_uses(facts.language) or other.endswith(".pyi"):
                continue
            text = read(other)
            if name not in text:
                continue
            for match in word.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                if other != path or line not in own_lines:
                    return True
        return False

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
            if ref.name_path is not None and not _TEST_NAME.match(ref.name_path.split("/")[0]):
                continue  # a helper in a test file: the tests that call it are reached next
            tests[ref.address] = ref
        return sorted(tests.values(), key=lambda r: r.address)

    def _edge(self, u: str, v: str, kind: str, data: dict[str, object]) -> EdgeRef:
        line = data.get("line")  # an int, or absent (a ``contains`` edge has none)
        return EdgeRef(kind, self.ref(u), self.ref(v), line if isinstance(line, int) else None,
                       str(data.get("source")), str(data.get("confidence")))


def _judged(symbol: SymbolFact) -> bool:
    """Whether a symbol can be a dead-code candidate at all."""
    if symbol.kind not in (SymbolKind.FUNCTION, SymbolKind.CLASS, SymbolKind.METHOD):
        return False
    name = symbol.name
    return not (name.startswith("__") and name.endswith("__")) and not _TEST_NAME.match(name)


def _sees_uses(language: str | None) -> bool:
    """Whether the graph resolves this language's names, so that its dead-code pass can judge uses."""
    kind = profile(language)
    return kind is not None and kind.graph_sees_uses
