"""Text and JSON renderings of engine values. Presentation only: no decisions are made here."""

from __future__ import annotations

from datetime import datetime, timezone

from engine.api_surface import (
    Diagnostic, EdgeRef, Explanation, FileSymbols, FindResult, PendingCheck, ServerStatus, signature_text, Skipped,
    Symbol, SymbolsListing, SymbolText,
)


def file_symbols_json(listing: FileSymbols) -> dict[str, object]:
    return {
        "file": listing.file,
        "language": listing.language,
        "source": listing.source.value,
        "confidence": listing.confidence.value,
        "notes": listing.notes,
        "symbols": [symbol.to_json() for symbol in listing.symbols],
    }


def skipped_json(skipped: list[Skipped]) -> list[dict[str, str]]:
    return [{"path": s.path, "reason": s.reason} for s in skipped]


def find_json(result: FindResult) -> dict[str, object]:
    return {
        "matches": [symbol.to_json(with_children=False) for symbol in result.matches],
        "files_searched": result.files_searched,
        "skipped": skipped_json(result.skipped),
    }


def read_json(result: SymbolText) -> dict[str, object]:
    return {
        "symbol": result.symbol.to_json(with_children=False),
        "file": result.file.path,
        "sha256": result.file.sha256,
        "mtime": _iso(result.file.mtime),
        "start_line": result.first_line,
        "end_line": result.first_line + len(result.lines) - 1,
        "text": "\n".join(result.lines),
        **({"overloads": overloads_json(result)} if result.overloads is not None else {}),
    }


def overloads_json(result: SymbolText) -> list[dict[str, object]]:
    """The signatures of the overload set a read answered for its implementation, each addressable alone."""
    chosen = result.overloads
    return [] if chosen is None else [
        {"address": stub.address, "signature": signature_text(stub), "line": stub.range.first_line} for stub in chosen.signatures
    ]


def symbols_json(listing: SymbolsListing) -> dict[str, object]:
    return {"files": [file_symbols_json(f) for f in listing.files], "skipped": skipped_json(listing.skipped)}


# -- text ----------------------------------------------------------------------


def outline_text(listing: FileSymbols) -> str:
    header = (
        f"# {listing.file} ({listing.language or 'unknown language'}): "
        f"symbols from {listing.source.value}, confidence {listing.confidence.value}"
    )
    lines = [header] + [f"#   note: {note}" for note in listing.notes]
    if not listing.symbols:
        lines.append("(no symbols)")
    width = _line_width(listing.symbols)
    for symbol in listing.symbols:
        _outline_lines(symbol, 0, width, lines)
    return "\n".join(lines)


def _outline_lines(symbol: Symbol, depth: int, width: int, out: list[str]) -> None:
    span = f"{symbol.range.first_line}-{symbol.range.last_line}"
    collapsed = " …" if symbol.range.last_line > symbol.range.first_line else ""
    segment = str(symbol.path[-1]) if symbol.path else symbol.name
    signature = (symbol.signature or symbol.name) + collapsed
    out.append(
        f"{span:>{width}}  {'  ' * depth}{segment}  {signature}   [{symbol.kind.label} · {symbol.source.value}]"
    )
    for child in symbol.children:
        _outline_lines(child, depth + 1, width, out)


def _line_width(symbols: list[Symbol]) -> int:
    widest = max((s.range.last_line for top in symbols for s in top.walk()), default=1)
    return len(str(widest)) * 2 + 1


def find_text(result: FindResult) -> str:
    rows = [
        f"{s.address}   {s.kind.label}   lines {s.range.first_line}-{s.range.last_line}   "
        f"[{s.source.value} · {s.confidence.value}]"
        for s in result.matches
    ]
    return "\n".join(rows)


def read_text(result: SymbolText, *, stamped: bool = True) -> str:
    """The symbol's lines behind a gutter, under a header; ``stamped``: the header also gives the
    file's sha256 and mtime (MCP leaves them to its structured answer: its read ledger, not the
    agent, keeps what was read)."""
    symbol = result.symbol
    last = result.first_line + len(result.lines) - 1
    stamp = f"sha256={result.file.sha256}  mtime={_iso(result.file.mtime)}  " if stamped else ""
    header = (
        f"# {symbol.address}  {symbol.kind.label}  lines {result.first_line}-{last}  "
        f"{stamp}[{symbol.source.value} · {symbol.confidence.value}]"
    )
    width = len(str(last))
    body = [f"{number:>{width}} | {line}" for number, line in enumerate(result.lines, start=result.first_line)]
    overloads = [] if result.overloads is None else [
        f"# the implementation of an overload set; {len(result.overloads.signatures)} overload signature(s):",
        *(f"#   {o['address']}  line {o['line']}  {o['signature']}" for o in overloads_json(result)),
    ]
    return "\n".join([header, *overloads, *body])


def symbols_text(listing: SymbolsListing) -> str:
    return "\n\n".join(outline_text(f) for f in listing.files) if listing.files else "(no source files)"


def skipped_text(skipped: list[Skipped]) -> str:
    return "\n".join(f"skipped {s.path}: {s.reason}" for s in skipped)


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def servers_json(statuses: list[ServerStatus]) -> dict[str, object]:
    return {
        "servers": [
            {
                "id": s.id, "languages": list(s.languages), "preferred_for": list(s.preferred_for), "found": s.found,
                "executable": s.executable, "version": s.version, "state": s.state, "pid": s.pid,
                "memory_bytes": s.memory_bytes, "restarts": s.restarts, "detail": s.detail,
            }
            for s in statuses
        ]
    }


def servers_text(statuses: list[ServerStatus]) -> str:
    rows = []
    for s in statuses:
        preferred = f"default for {', '.join(s.preferred_for)}" if s.preferred_for else ", ".join(s.languages)
        memory = f"{s.memory_bytes / 2**20:.0f} MiB" if s.memory_bytes else "-"
        pid = str(s.pid) if s.pid else "-"
        restarts = f"  restarts {s.restarts}" if s.restarts else ""
        rows.append(
            f"{s.id:<28} {s.state:<10} {(s.version or '-')[:32]:<33} pid {pid:<8} {memory:>8}  {preferred}{restarts}"
            + (f"\n{'':<28} {s.detail}" if s.detail else "")
        )
    return "\n".join(rows)


def explain_json(found: Explanation) -> dict[str, object]:
    return {**read_json(found.text), "callers": [e.to_json() for e in found.callers], "callees": [e.to_json() for e in found.callees],
            "supertypes": [e.to_json() for e in found.supertypes], "subtypes": [e.to_json() for e in found.subtypes],
            **({"notes": found.notes} if found.notes else {})}


def explain_text(found: Explanation) -> str:
    def names(edges: list[EdgeRef], incoming: bool) -> str:
        return ", ".join(e.source.address if incoming else e.target.address for e in edges) or "(none)"

    return "\n".join([
        read_text(found.text),
        f"callers: {names(found.callers, True)}", f"callees: {names(found.callees, False)}",
        f"supertypes: {names(found.supertypes, False)}", f"subtypes: {names(found.subtypes, True)}",
        *(f"note: {note}" for note in found.notes),
    ])


def diagnostics_json(found: list[Diagnostic]) -> dict[str, object]:
    return {"diagnostics": [
        {"file": d.file, "line": d.range.start.line + 1, "column": d.range.start.column + 1,
         "severity": d.severity, "message": d.message, "code": d.code, "source": d.source}
        for d in found
    ]}


def diagnostics_text(found: list[Diagnostic]) -> str:
    rows = [f"{d.file}:{d.range.start.line + 1}:{d.range.start.column + 1}: {d.severity}: {d.message}" for d in found]
    return "\n".join(rows) or "(no diagnostics)"


def last_apply_check(result: tuple[PendingCheck, list[Diagnostic]] | None) -> tuple[dict[str, object], str, str]:
    """``graft diagnostics --since-last-apply``: (JSON, text, notes)."""
    if result is None:
        return ({"transaction": None, "complete": True, "new_errors": []},
                "the last apply compared its errors within its budget (see its output); nothing left to check", "")
    check, new = result
    complete = check.finished and not check.without_baseline
    payload: dict[str, object] = {
        "transaction": check.transaction, "complete": complete, "compared": sorted(check.after),
        "still_to_compare": check.to_compare, "without_baseline": check.without_baseline,
        "new_errors": diagnostics_json(new)["diagnostics"],
    }
    head = f"transaction {check.transaction}: {len(new)} new error(s) in the {len(check.after)} file(s) compared"
    notes = []
    if check.to_compare:
        notes.append(f"note: not compared yet (no language server answered): {', '.join(check.to_compare)}")
    if check.without_baseline:
        notes.append("note: cannot be compared (the budget ran out before the write, so their errors before it are "
                     f"unknown): {', '.join(check.without_baseline)}")
    return payload, "\n".join([head, *(f"  {row}" for row in diagnostics_text(new).splitlines() if new)]), "\n".join(notes)
