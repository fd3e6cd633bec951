"""Finding the symbols an address names, and refusing helpfully when there is not exactly one."""

from __future__ import annotations

import difflib
from typing import Iterable

from engine.errors import AmbiguousAddress, Candidate, SymbolNotFound
from engine.extract import FileSymbols
from engine.names import NamePath, PositionAddress
from engine.positions import Position
from engine.symbols import Symbol, SymbolKind, walk_all

_SUGGESTIONS = 5


def match_name_path(files: Iterable[FileSymbols], name_path: NamePath, kind: SymbolKind | None = None) -> list[Symbol]:
    """Every symbol that ``name_path`` names, in file order then source order."""
    return [
        symbol
        for file_symbols in files
        for symbol in walk_all(file_symbols.symbols)
        if name_path.matches(symbol.path) and (kind is None or symbol.kind is kind)
    ]


def not_found(files: list[FileSymbols], wanted: str, name_path: NamePath, where: str) -> SymbolNotFound:
    """A refusal that offers the addresses closest to what was asked for."""
    everything = [symbol for f in files for symbol in walk_all(f.symbols)]
    last = name_path.segments[-1].name
    # Same name, other parents: the strict-parent rule is the likeliest surprise, so say so first.
    same_name = [s.address for s in everything if s.name == last]
    by_path = {s.name_path: s.address for s in everything}
    close = difflib.get_close_matches(str(name_path).lstrip("/"), list(by_path), n=_SUGGESTIONS, cutoff=0.6)
    close_names = difflib.get_close_matches(last, list({s.name for s in everything}), n=_SUGGESTIONS, cutoff=0.7)
    suggestions: list[str] = []
    for address in same_name + [by_path[p] for p in close] + [
        s.address for name in close_names for s in everything if s.name == name
    ]:
        if address not in suggestions:
            suggestions.append(address)
    suggestions = suggestions[:_SUGGESTIONS]
    message = f"no symbol {wanted} in {where}"
    if same_name and len(name_path.segments) > 1:
        message += f"; '{last}' exists, but not directly under '{name_path.segments[-2].name}'"
    if suggestions:
        message += ". Did you mean:\n  " + "\n  ".join(suggestions)
    return SymbolNotFound(message, suggestions)


def ambiguous(wanted: str, matches: list[Symbol]) -> AmbiguousAddress:
    return ambiguous_among(wanted, [Candidate(s.address, s.kind.label, s.range.first_line) for s in matches])


def ambiguous_among(wanted: str, candidates: list[Candidate]) -> AmbiguousAddress:
    """The refusal for an address that names several things, each listed ready to paste."""
    listing = "\n  ".join(f"{c.address}   ({c.kind}, line {c.line})" for c in candidates)
    return AmbiguousAddress(f"{wanted} is ambiguous: {len(candidates)} candidates\n  {listing}", candidates)


def symbol_at(file_symbols: FileSymbols, address: PositionAddress) -> Symbol:
    """The innermost symbol at a line (and column, if given)."""
    line = address.line - 1
    best: Symbol | None = None
    for symbol in walk_all(file_symbols.symbols):
        if address.column is not None:
            inside = symbol.range.contains(Position(line, address.column - 1))
        else:
            inside = symbol.range.start.line <= line <= symbol.range.last_line - 1
        if inside and (best is None or best.range.encloses(symbol.range)):
            best = symbol
    if best is None:
        nearest = sorted(
            walk_all(file_symbols.symbols), key=lambda s: abs(s.range.start.line - line)
        )[:3]
        hint = "; nearest: " + ", ".join(f"{s.address} (line {s.range.first_line})" for s in nearest) if nearest else ""
        raise SymbolNotFound(f"no symbol encloses {address}{hint}", [s.address for s in nearest])
    return best
