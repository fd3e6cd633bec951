"""The project graph: per-file facts (cached on disk), resolved into files, symbols and relations."""

from engine.graph.index import IndexStats, ProjectIndex
from engine.graph.queries import Cycle, EdgeRef, Finding, GraphQueries, NodeRef, OverviewEntry, Reached, UnresolvedCalls

__all__ = [
    "Cycle", "EdgeRef", "Finding", "GraphQueries", "IndexStats", "NodeRef", "OverviewEntry", "ProjectIndex", "Reached",
    "UnresolvedCalls",
]
