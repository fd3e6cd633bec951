"""The project graph's edges, written into networkx's own adjacency with shared dicts.

A MultiDiGraph keeps, per node pair, a dict of kinds (``{"calls": attributes}``) and, per edge,
a dict of attributes: on Django's sdist 165,000 of each, about 60 MB, most of them equal (every
``contains`` edge has the same attributes; a call's differ only by their line). Here each
distinct attribute dict and each distinct kind dict exists once, and pickling keeps the sharing.

So they are never changed in place: every change to a node pair's kinds replaces its kind dict
(in both ``_adj`` and ``_pred``, which networkx shares), and nothing else may add or remove an
edge of this graph (``nx.MultiDiGraph.add_edge`` would update a shared dict). Reading through
networkx is unchanged.
"""

from __future__ import annotations

from typing import Iterable

import networkx as nx

Attributes = dict[str, object]


class SharedEdges:
    def __init__(self, graph: nx.MultiDiGraph) -> None:
        self.graph = graph
        self._attributes: dict[tuple[str, str, int | None], Attributes] = {}
        self._kinds: dict[tuple[tuple[str, int], ...], dict[str, Attributes]] = {}
        """Keyed by (kind, id of its attribute dict) in order: the ids stay valid because the
        kind dicts kept here hold their attribute dicts."""
        self._single: dict[tuple[str, str, str, int | None], dict[str, Attributes]] = {}
        """The one-kind dicts of ``_kinds`` again, by kind and attribute values: nearly every pair
        of nodes has one edge, and this finds its dict without building its signature."""

    def __getstate__(self) -> dict[str, object]:
        return {"graph": self.graph}  # the tables are rebuilt as edges are linked

    def __setstate__(self, state: dict[str, nx.MultiDiGraph]) -> None:
        self.__init__(state["graph"])  # type: ignore[misc]

    def forget(self) -> None:
        """Drop the tables (the dicts in the graph stay shared as they are)."""
        self._attributes.clear()
        self._kinds.clear()
        self._single.clear()

    def link(self, source: str, target: str, kind: str, origin: str, confidence: str, line: int | None = None) -> None:
        """Add the edge ``source → target`` of ``kind`` (replacing one of that kind, if any)."""
        graph = self.graph
        for node in (source, target):
            if node not in graph._node:
                graph.add_node(node)
        existing = graph._adj[source].get(target)
        if existing is None:
            single_key = (kind, origin, confidence, line)
            shared = self._single.get(single_key)
            if shared is None:
                attributes = self._attributes_of(origin, confidence, line)
                shared = self._kinds.setdefault(((kind, id(attributes)),), {kind: attributes})
                self._single[single_key] = shared
            graph._adj[source][target] = shared
            graph._pred[target][source] = shared
            return
        kinds = dict(existing)
        kinds[kind] = self._attributes_of(origin, confidence, line)
        self._set(source, target, kinds)

    def _attributes_of(self, origin: str, confidence: str, line: int | None) -> Attributes:
        signature = (origin, confidence, line)
        attributes = self._attributes.get(signature)
        if attributes is None:
            attributes = {"source": origin, "confidence": confidence}
            if line is not None:
                attributes["line"] = line
            self._attributes[signature] = attributes
        return attributes

    def unlink(self, edges: Iterable[tuple[str, str, str]]) -> None:
        """Remove these (source, target, kind) edges; absent ones are ignored, as networkx does."""
        adjacency = self.graph._adj
        for source, target, kind in edges:
            kinds = adjacency.get(source, {}).get(target)
            if kinds is None or kind not in kinds:
                continue
            self._set(source, target, {k: a for k, a in kinds.items() if k != kind})

    def _set(self, source: str, target: str, kinds: dict[str, Attributes]) -> None:
        graph = self.graph
        if not kinds:
            del graph._adj[source][target]
            del graph._pred[target][source]
            return
        signature = tuple((kind, id(attributes)) for kind, attributes in kinds.items())
        shared = self._kinds.setdefault(signature, kinds)
        graph._adj[source][target] = shared
        graph._pred[target][source] = shared
