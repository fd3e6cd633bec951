"""MCP answers sized for a context window.

Each view renders rows of text within ``max_chars`` and says what it left out and how to get it
(narrow with ``depth`` or ``kinds``, or raise ``max_chars``), never cutting silently. The
structured content is no larger than the text: by default it holds only what a script branches
on (counts, and what was left out); the text's head line says the provenance. With
``structured=true`` it also holds the provenance and the rows as data, for clients that parse
rather than read.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any, Callable

from engine.api_surface import (
    LocatedLine, NavigationResult, NodeRef, OverviewEntry, SymbolMatches, UsageError,
)

View = tuple[dict[str, Any], str]
"""(structured content, text)."""

DEFAULT_MAX_CHARS = 12_000
MIN_MAX_CHARS = 300
"""The smallest budget taken: room for a head line and the line saying what was left out."""


def checked_budget(max_chars: int) -> int:
    if max_chars < MIN_MAX_CHARS:
        raise UsageError(f"max_chars is at least {MIN_MAX_CHARS} (room for the head and the note of what was left out), "
                         f"not {max_chars}")
    return max_chars


def fit(rows: list[str], max_chars: int) -> tuple[list[str], int]:
    """As many leading rows as fit in ``max_chars`` (newlines counted), and how many were left out."""
    kept: list[str] = []
    used = 0
    for row in rows:
        if used + len(row) + 1 > max_chars:
            break
        kept.append(row)
        used += len(row) + 1
    return kept, len(rows) - len(kept)


def bounded(head: list[str], rows: list[str], tail: Callable[[int], str], max_chars: int) -> tuple[str, int]:
    """The text of an answer, never over ``max_chars``: the head lines, as many rows as fit, and
    ``tail(left)`` saying what was left out and how to get it. Returns (text, rows kept). A head
    line that does not fit is cut, and says so."""
    checked_budget(max_chars)
    whole = "\n".join([*head, *rows])
    if len(whole) <= max_chars:
        return whole, len(rows)
    closing = tail(len(rows))  # the longest the closing line can be: it is always there now
    room = max_chars - len(closing) - 1
    lines: list[str] = []
    used = 0
    for line in head:
        if used + len(line) + 1 > room:
            cut = " …(cut)"
            line = line[: max(0, room - used - 1 - len(cut))] + cut
        lines.append(line)
        used += len(line) + 1
        if used >= room:
            break
    kept, left = fit(rows, room - used)
    return "\n".join([*lines, *kept, tail(left)]), len(kept)


def left_out(count: int, what: str, narrow: str) -> str:
    """The closing line of an answer that left ``count`` of ``what`` out, and how to get them."""
    return f"… {count} more {what} left out to fit max_chars: {narrow}, or raise max_chars" if count else ""


_KIND_RANK = {"code": 0, "tests": 1, "docs": 2}
_DOC_FOLDERS = frozenset({"docs", "doc", "documentation", "examples", "example", "benchmarks", "benchmark"})
_TEST_FOLDERS = frozenset({"tests", "test", "testing", "__tests__", "spec", "specs", "testdata"})


def file_rank(path: str) -> int:
    """Package code 0, tests 1, docs and examples 2: what an overview shows first."""
    parts = PurePosixPath(path).parts
    folders = {part.lower() for part in parts[:-1]}
    name = parts[-1].lower() if parts else ""
    # Docs and examples only at the top: a Java package's com/example/ is code.
    if len(parts) > 1 and parts[0].lower() in _DOC_FOLDERS:
        return _KIND_RANK["docs"]
    if (folders & _TEST_FOLDERS or name.startswith("test_") or name == "conftest.py"
            or re.search(r"(_test\.go|_test\.py|\.(test|spec)\.[cm]?[jt]sx?)$", name)):
        return _KIND_RANK["tests"]
    return _KIND_RANK["code"]


def overview_view(entries: list[OverviewEntry], kinds: frozenset[str], max_chars: int, structured: bool) -> View:
    """Package code first, then tests, then docs and examples (each in path order): the budget
    goes to what an agent works on. When not everything fits, every package file is still named,
    and symbols fill what the budget has left, file by file: an agent that cannot see a module
    in the overview does not know to ask about it (werkzeug's 52 modules, 13 of them missing from
    a listing cut at its budget)."""
    ordered = sorted(entries, key=lambda e: file_rank(e.path))
    listed = [(entry, _overview_rows(entry, kinds)) for entry in ordered]
    rows = [row for _entry, (header, symbols) in listed for row in [header, *symbols]]

    def tail(left: int) -> str:
        return left_out(left, "rows", "narrow with under=FOLDER, depth=1 or kinds=[...]")

    package = [header for entry, (header, _symbols) in listed if file_rank(entry.path) == 0]
    room = max_chars - len(tail(len(rows))) - 1
    kept: list[str]
    chosen: list[OverviewEntry]
    shown_symbols: dict[str, int]
    whole = "\n".join(rows)
    if len(whole) <= max_chars or sum(len(h) + 1 for h in package) > room:
        text, count = bounded([], rows, tail, max_chars)
        kept = rows[:count]
        shown_symbols = {entry.path: len(symbols) for entry, (_header, symbols) in listed}
        files_kept = sum(1 for row in kept if not row.startswith(" "))
        left = len(rows) - count
        chosen = [entry for entry, _rows in listed][:files_kept]
    else:
        # Every package file's row is reserved; symbols and later files take what is left, in order.
        spare = room - sum(len(h) + 1 for h in package)
        kept, chosen, shown_symbols = [], [], {}
        for entry, (header, symbols) in listed:
            is_package = file_rank(entry.path) == 0
            if not is_package:
                if len(header) + 1 > spare:
                    continue
                spare -= len(header) + 1
            taken, _left = fit(symbols, spare)
            spare -= sum(len(row) + 1 for row in taken)
            kept += [header, *taken]
            chosen.append(entry)
            shown_symbols[entry.path] = len(taken)
        left = len(rows) - len(kept)
        files_kept = len(chosen)
        text = "\n".join([*kept, tail(left)])
    payload: dict[str, Any] = {"files": len(entries), "files_shown": files_kept}
    if left:
        payload["omitted"] = {"rows": left}
    if structured:
        payload["entries"] = [{"file": entry.path, "symbols": [[s.name_path, s.kind, s.line] for s in _chosen(entry, kinds)]
                               [:shown_symbols.get(entry.path, 0)]} for entry in chosen]
    return payload, text


def _chosen(entry: OverviewEntry, kinds: frozenset[str]) -> list[Any]:
    return [s for s in entry.symbols if not kinds or s.kind in kinds]


def _overview_rows(entry: OverviewEntry, kinds: frozenset[str]) -> tuple[str, list[str]]:
    """A file's row and its symbols' rows."""
    header = f"{entry.path}  [{entry.language or 'unknown'} · {entry.source}]"
    return header, [f"  {'  ' * (s.name_path or '').count('/')}{s.kind} {s.name_path}  {s.line}" for s in _chosen(entry, kinds)]


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
    rows = [_located_row(line) for line in lines]
    head = f"{len(lines)} location(s) from {result.source.value} ({result.confidence.value})"
    text, count = bounded([head, *(f"note: {n}" for n in result.notes)], rows,
                          lambda left: left_out(left, "locations", "ask about a narrower symbol"), max_chars)
    kept, left = rows[:count], len(rows) - count
    payload: dict[str, Any] = {"total": len(lines)}
    if left:
        payload["omitted"] = {"locations": left}
    if structured:
        payload |= {"source": result.source.value, "confidence": result.confidence.value, "notes": result.notes}
        payload["locations"] = [line.to_json() for line in lines[: len(kept)]]
    return payload, text


def _located_row(line: LocatedLine) -> str:
    """``file:line:col  [Class/method]  code``: the enclosing symbol by its name path in the row's own
    file, nothing at module level (its kind and file are the structured rows', with structured=true)."""
    inside = line.enclosing.removeprefix(f"{line.file}:") if line.enclosing else ""
    return f"{line.file}:{line.line}:{line.column}  " + (f"[{inside}]  " if inside else "") + line.text


def _node(node: NodeRef) -> dict[str, Any]:
    return {"address": node.address, "kind": node.kind, "line": node.line}
