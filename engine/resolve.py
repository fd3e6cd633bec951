"""Finding the symbols an address names, and refusing helpfully when there is not exactly one."""

from __future__ import annotations

import difflib
import re
from typing import Iterable

from engine.errors import AmbiguousAddress, Candidate, PositionOutOfRange, SymbolNotFound
from engine.extract import FileSymbols
from engine.extract.treesitter import TreeSitterExtractor
from engine.languages import profile_of
from engine.names import NamePath, PositionAddress
from engine.positions import Position, split_lines
from engine.symbols import Symbol, SymbolKind, walk_all
from engine.workspace import SourceFile

_SUGGESTIONS = 5
_WORD = re.compile(r"[^\W\d]\w*|\$[\w$]*")


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


def checked_position(text: str, address: PositionAddress) -> Position:
    """The 0-based position ``address`` names in a file's ``text``, refused when it lies past the
    file's last line or past the end of its line (the column just after the last character, where
    a cursor can stand, is the end): clamping would silently answer about another place."""
    lines = split_lines(text)
    # A final line break ends the last line; the empty "line" after it holds nothing to point at.
    last = len(lines) - 1 if lines[-1] == "" else len(lines)
    if address.line > last:
        where = "is empty" if last == 0 else f"has {last} line(s), so line {address.line} is past its end"
        raise PositionOutOfRange(f"{address}: {address.file} {where}", address.file, address.line, address.column, last)
    if address.column is None:
        return Position(address.line - 1, 0)
    width = len(lines[address.line - 1])
    if address.column > width + 1:
        raise PositionOutOfRange(
            f"{address}: line {address.line} of {address.file} has {width} character(s), so column {address.column} "
            f"is past its end (columns run from 1 to {width + 1}, the end of the line)",
            address.file, address.line, address.column, width + 1,
        )
    return Position(address.line - 1, address.column - 1)


def name_at(source: SourceFile, position: Position) -> tuple[int, int] | None:
    """The 0-based code-point span, on its line, of the identifier at a position; None where the
    position is on no name: a space, punctuation, a keyword, a string's text or prefix (the ``f``
    of ``f"…"``), a comment. The file's syntax tree says where its language has a grammar; else
    the identifier pattern and the language's keywords."""
    line = split_lines(source.text)[position.line]
    if position.column >= len(line):
        return None
    language = source.language
    if language is None or not TreeSitterExtractor.supports(language):
        match = next((m for m in _WORD.finditer(line) if m.start() <= position.column < m.end()), None)
        kind = profile_of(source.path)
        if match is None or (kind is not None and match.group() in kind.keywords):
            return None
        return match.start(), match.end()
    encoded = line.encode("utf-8")
    start = len(line[:position.column].encode("utf-8"))
    end = start + len(line[position.column].encode("utf-8"))
    tree = TreeSitterExtractor().parse(language, source.text.encode("utf-8"))  # columns as the line text has them
    node = tree.root_node.descendant_for_point_range((position.line, start), (position.line, end))
    # Every grammar calls its names *identifier: identifier, type_identifier, field_identifier, simple_identifier.
    if node is None or "identifier" not in node.type or node.start_point.row != position.line:
        return None
    first = len(encoded[:node.start_point.column].decode("utf-8", errors="replace"))
    return first, first + len((node.text or b"").decode("utf-8", errors="replace"))


def declaration_at(file_symbols: FileSymbols, position: Position) -> Symbol | None:
    """The symbol whose own name is at ``position`` (or whose declaration starts there, as some
    servers' definitions point), innermost first; None when the position names no declaration."""
    symbols = list(walk_all(file_symbols.symbols))  # outer symbols before the ones they contain
    named = [s for s in symbols if s.selection_range.contains(position)]
    starting = [s for s in symbols if s.range.start == position]
    found = named or starting
    return found[-1] if found else None
