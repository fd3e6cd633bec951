"""Symbols across the workspace by name path: exact, then by prefix, and on request by substring,
with kind filters and a limit that says how many more there were."""

from __future__ import annotations

from dataclasses import dataclass

from engine.errors import MalformedAddress, SymbolNotFound
from engine.graph import GraphQueries, NodeRef


@dataclass(frozen=True)
class SymbolMatches:
    matches: list[NodeRef]
    total: int
    """How many matched before ``max_matches`` cut the list."""
    how: str
    """``exact``, ``prefix`` or ``substring``: the narrowest way that found anything."""


def search_symbols(queries: GraphQueries, query: str, *, substring: bool = False, kinds: frozenset[str] = frozenset(),
                   max_matches: int = 50) -> SymbolMatches:
    """Exact name-path matches (``Order/total``, ``models.py:Order``) when there are any, else name
    paths starting with the query, else (with ``substring``) name paths containing it, case-insensitively."""
    wanted = [n for n in _exact(queries, query) if n.name_path is not None and (not kinds or n.kind in kinds)]
    how = "exact"
    if not wanted:
        folded = query.casefold()
        candidates = [(path, fact) for path, facts in sorted(queries.project.facts.items()) for fact in facts.symbols
                      if not kinds or fact.kind.label in kinds]
        how = "prefix"
        chosen = [(p, f) for p, f in candidates if f.name_path.casefold().startswith(folded) or f.name.casefold().startswith(folded)]
        if not chosen and substring:
            how = "substring"
            chosen = [(p, f) for p, f in candidates if folded in f.name_path.casefold()]
        wanted = [NodeRef(p, f.name_path, f.kind.label, f.line, f.source, f.confidence) for p, f in chosen]
    return SymbolMatches(wanted[:max_matches], len(wanted), how)


def _exact(queries: GraphQueries, query: str) -> list[NodeRef]:
    """What the query names as an address; a query that is no address (``pkg.Order``) or names
    nothing is searched by prefix instead."""
    try:
        return queries.lookup(query) if query.strip() else []
    except (MalformedAddress, SymbolNotFound):
        return []
