"""The class hierarchy in the project graph: bases and subclasses, transitively, and a method's
overrides. Part of :class:`engine.graph.queries.GraphQueries`."""

from __future__ import annotations

from engine.errors import SymbolNotFound
from engine.graph.build import symbol_node
from engine.graph.facts import SymbolFact
from engine.graph.nodes import EdgeRef, GraphNodes, NodeRef
from engine.symbols import SymbolKind


class ClassHierarchy(GraphNodes):
    """What inherits from what (GraphQueries's base)."""

    def supertypes(self, address: str) -> list[EdgeRef]:
        return self._edges_at(address, "inherits", incoming=False)

    def subtypes(self, address: str) -> list[EdgeRef]:
        return self._edges_at(address, "inherits", incoming=True)

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
