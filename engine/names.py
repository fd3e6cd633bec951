"""Addresses: ``[FILE:]Seg(/Seg)*`` name paths and ``FILE:LINE[:COL]`` positions, parsed once at the edge,
and for the operations that act on a span of code (extract, inline) ``FILE:LINE:COL-LINE:COL`` ranges.

Grammar::

    address   := [file ":"] ["/"] segment ("/" segment)*   |   file ":" line [":" column]
    span      := address   |   file ":" line ":" column "-" line ":" column
    segment   := name ["[" index "]"]
    name      := (letter | digit | "_" | "$" | "~")+ ["?" | "!"]

A leading ``/`` anchors the path at the file's top level; an index picks one
of several same-named siblings (overloads), 0-based in source order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.errors import MalformedAddress
from engine.languages import language_of
from engine.symbols import Segment

_POSITION = re.compile(r"(\d+)(?::(\d+))?")
_RANGE = re.compile(r"(\d+):(\d+)-(\d+):(\d+)")


@dataclass(frozen=True)
class NamePath:
    segments: tuple[Segment, ...]
    anchored: bool = False

    def __str__(self) -> str:
        return ("/" if self.anchored else "") + "/".join(str(s) for s in self.segments)

    def matches(self, path: tuple[Segment, ...]) -> bool:
        """Strict suffix match: ``A/b`` needs ``b``'s direct parent to be ``A``."""
        wanted = self.segments
        if len(path) < len(wanted) or (self.anchored and len(path) != len(wanted)):
            return False
        for query, actual in zip(wanted, path[len(path) - len(wanted):]):
            if query.name != actual.name:
                return False
            if query.index is not None and query.index != (actual.index or 0):
                return False
        return True


@dataclass(frozen=True)
class SymbolAddress:
    file: str | None
    name_path: NamePath

    def __str__(self) -> str:
        return f"{self.file}:{self.name_path}" if self.file else str(self.name_path)


@dataclass(frozen=True)
class PositionAddress:
    file: str
    line: int
    """1-based."""
    column: int | None
    """1-based, in code points; None for 'anywhere on the line'."""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" + (f":{self.column}" if self.column is not None else "")


Address = SymbolAddress | PositionAddress


@dataclass(frozen=True)
class RangeAddress:
    """A span of code: 1-based lines and columns in code points, the end column exclusive
    (``f.py:3:9-3:14`` is the five characters from column 9)."""

    file: str
    start_line: int
    start_column: int
    end_line: int
    end_column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.start_line}:{self.start_column}-{self.end_line}:{self.end_column}"


SpanAddress = Address | RangeAddress


def parse_span_address(text: str) -> SpanAddress:
    """An address as :func:`parse_address` reads it, or a ``FILE:LINE:COL-LINE:COL`` range."""
    colon = text.find(":")
    found = _RANGE.fullmatch(text[colon + 1:]) if colon > 0 and text == text.strip() else None
    if found is None:
        return parse_address(text)
    start_line, start_column, end_line, end_column = (int(part) for part in found.groups())
    for offset, value, what in ((colon + 1, start_line, "lines"), (found.start(2) + colon + 1, start_column, "columns"),
                                (found.start(3) + colon + 1, end_line, "lines"), (found.start(4) + colon + 1, end_column, "columns")):
        if value < 1:
            raise MalformedAddress(text, offset, f"{what} are numbered from 1")
    if (end_line, end_column) <= (start_line, start_column):
        raise MalformedAddress(text, found.start(3) + colon + 1, "the range ends before it starts")
    return RangeAddress(text[:colon], start_line, start_column, end_line, end_column)


def parse_address(text: str) -> Address:
    if not text or not text.strip():
        raise MalformedAddress(text, 0, "the address is empty")
    if text != text.strip():
        offset = 0 if text[0].isspace() else len(text.rstrip())
        raise MalformedAddress(text, offset, "unexpected whitespace")
    colon = text.find(":")
    if colon == -1:
        if language_of(text) is not None and "." in text.rsplit("/", 1)[-1]:
            raise MalformedAddress(
                text, len(text), f"this is a file, not a symbol: add ':Name' ({text}:Name), or outline the file"
            )
        return SymbolAddress(None, parse_name_path(text, text, 0))
    if colon == 0:
        raise MalformedAddress(text, 0, "expected a file path before ':'")
    file_part, rest = text[:colon], text[colon + 1:]
    if not rest:
        raise MalformedAddress(text, len(text), "expected a name path or a line number after ':'")
    position = _POSITION.fullmatch(rest)
    if position is not None:
        line = int(position.group(1))
        column = int(position.group(2)) if position.group(2) is not None else None
        if line < 1:
            raise MalformedAddress(text, colon + 1, "lines are numbered from 1")
        if column is not None and column < 1:
            raise MalformedAddress(text, colon + 2 + len(position.group(1)), "columns are numbered from 1")
        return PositionAddress(file_part, line, column)
    if _RANGE.fullmatch(rest) is not None:
        raise MalformedAddress(text, colon + 1, "a range addresses a span of code, which only extract and inline take; "
                                                "give a name path or LINE[:COL]")
    return SymbolAddress(file_part, parse_name_path(rest, text, colon + 1))


def parse_name_path(text: str, whole: str | None = None, base: int = 0) -> NamePath:
    """Parse ``text``; errors point into ``whole`` (the full address) at ``base + offset``."""
    whole = text if whole is None else whole
    anchored = text.startswith("/")
    position = 1 if anchored else 0
    segments: list[Segment] = []
    while True:
        start = position
        while position < len(text) and _is_name_char(text[position]):
            position += 1
        if position < len(text) and text[position] in "?!":
            position += 1
        if position == start:
            found = text[position] if position < len(text) else None
            reason = "expected a name" + (f", found {found!r}" if found else " at the end")
            raise MalformedAddress(whole, base + position, reason)
        name = text[start:position]
        index: int | None = None
        if position < len(text) and text[position] == "[":
            close = text.find("]", position)
            digits = text[position + 1:close] if close != -1 else text[position + 1:]
            if close == -1:
                raise MalformedAddress(whole, base + len(text), "missing ']' after the overload index")
            if not digits.isdigit():
                raise MalformedAddress(whole, base + position + 1, "an overload index is a number: name[0], name[1], ...")
            index = int(digits)
            position = close + 1
        segments.append(Segment(name, index))
        if position == len(text):
            return NamePath(tuple(segments), anchored)
        char = text[position]
        if char == "/":
            position += 1
            continue
        hint = " (separate names with '/', as in Order/total)" if char in ".:" or char == "#" else ""
        raise MalformedAddress(whole, base + position, f"unexpected character {char!r}{hint}")


def _is_name_char(char: str) -> bool:
    return char.isalnum() or char in "_$~"
