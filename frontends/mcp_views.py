"""MCP answers sized for a context window.

Each view renders rows of text within ``max_chars`` and says what it left out and how to get it
(narrow with ``depth`` or ``kinds``, or raise ``max_chars``), never cutting silently. The
structured content is no larger than the text: by default it holds only what a script branches
on (counts, and what was left out); the text's head line says the provenance. With
``structured=true`` it also holds the provenance and the rows as data, for clients that parse
rather than read.
"""

from __future__ import annotations

from typing import Any

from engine.extract import FileSymbols
from engine.graph import NodeRef
from engine.graph.queries import OverviewEntry
from engine.located import LocatedLine
from engine.references import NavigationResult
from engine.symbol_search import SymbolMatches

View = tuple[dict[str, Any], str]
"""(structured content, text)."""

DEFAULT_MAX_CHARS = 12_000


def fit(rows: list[str], max_chars: int) -> tuple[list[str], int]:
    """As many leading rows as fit in ``max_chars`` (newlines counted), and how many were left out."""
    kept: list[str] = []
    used = 0
    for row in rows:
        if used + len(row) + 1 > max_chars and kept:
            break
        kept.append(row)
        used += len(row) + 1
    return kept, len(rows) - len(kept)


def _left_out(count: int, what: str, narrow: str) -> str:
    return f"… {count} more {what} left out to fit max_chars: {narrow}, or raise max_chars" if count else ""


def outline_view(listing: FileSymbols, depth: int | None, kinds: frozenset[str], max_chars: int, structured: bool) -> View:
    chosen = [s for top in listing.symbols for s in top.walk()
              if (depth is None or len(s.path) <= depth) and (not kinds or s.kind.label in kinds)]
    rows = [f"{'  ' * (len(s.path) - 1)}{s.kind.label} {s.name_path}  {s.range.first_line}-{s.range.last_line}" for s in chosen]
    kept, left = fit(rows, max_chars)
    head = f"# {listing.file} ({listing.language or 'unknown'}): {len(chosen)} symbol(s) from {listing.source.value} ({listing.confidence.value})"
    text = "\n".join(filter(None, [head, *(f"# note: {n}" for n in listing.notes), *kept,
                                   _left_out(left, "symbols", "narrow with depth=1 or kinds=[...]")]))
    payload: dict[str, Any] = {"total": len(chosen), "shown": len(kept)}
    if left:
        payload["omitted"] = {"symbols": left}
    if structured:
        payload |= {"file": listing.file, "language": listing.language, "source": listing.source.value,
                    "confidence": listing.confidence.value, "notes": listing.notes}
        payload["symbols"] = [{"name_path": s.name_path, "kind": s.kind.label, "line": s.range.first_line,
                               "end_line": s.range.last_line} for s in chosen[: len(kept)]]
    return payload, text


def overview_view(entries: list[OverviewEntry], kinds: frozenset[str], max_chars: int, structured: bool) -> View:
    rows: list[str] = []
    shown: list[dict[str, Any]] = []
    for entry in entries:
        symbols = [s for s in entry.symbols if not kinds or s.kind in kinds]
        rows.append(f"{entry.path}  [{entry.language or 'unknown'} · {entry.source}]")
        rows += [f"  {'  ' * (s.name_path or '').count('/')}{s.kind} {s.name_path}  {s.line}" for s in symbols]
        shown.append({"file": entry.path, "symbols": [[s.name_path, s.kind, s.line] for s in symbols]})
    kept, left = fit(rows, max_chars)
    files_kept = sum(1 for row in kept if not row.startswith(" "))
    text = "\n".join(filter(None, [*kept, _left_out(left, "rows", "narrow with under=FOLDER, depth=1 or kinds=[...]")]))
    payload: dict[str, Any] = {"files": len(entries), "files_shown": files_kept}
    if left:
        payload["omitted"] = {"rows": left}
    if structured:
        payload["entries"] = shown[:files_kept]
    return payload, text


def symbols_view(found: SymbolMatches, structured: bool) -> View:
    rows = [f"{n.address}  {n.kind}  line {n.line}  [{n.source} · {n.confidence}]" for n in found.matches]
    more = found.total - len(found.matches)
    tail = f"… {more} more matches left out: raise max_matches or narrow the query or kinds" if more else ""
    text = "\n".join(filter(None, [f"{found.total} match(es) by {found.how}", *rows, tail])) if rows else f"no symbol matches ({found.how})"
    payload: dict[str, Any] = {"total": found.total, "how": found.how}  # a script branches on how it matched
    if more:
        payload["omitted"] = {"matches": more}
    if structured:
        payload["matches"] = [_node(n) for n in found.matches]
    return payload, text


def located_view(result: NavigationResult, lines: list[LocatedLine], max_chars: int, structured: bool) -> View:
    """References or definitions, one standalone line each: where, inside which symbol, and the code."""
    kept, left = fit([line.render() for line in lines], max_chars)
    head = f"{len(lines)} location(s) from {result.source.value} ({result.confidence.value})"
    text = "\n".join(filter(None, [head, *(f"note: {n}" for n in result.notes), *kept,
                                   _left_out(left, "locations", "ask about a narrower symbol")]))
    payload: dict[str, Any] = {"total": len(lines)}
    if left:
        payload["omitted"] = {"locations": left}
    if structured:
        payload |= {"source": result.source.value, "confidence": result.confidence.value, "notes": result.notes}
        payload["locations"] = [line.to_json() for line in lines[: len(kept)]]
    return payload, text


def _node(node: NodeRef) -> dict[str, Any]:
    return {"address": node.address, "kind": node.kind, "line": node.line}
