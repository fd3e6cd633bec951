"""Positions in text, and exact conversion between the encodings that name them.

The engine's own columns count Unicode code points (what Python's ``str``
indexes). Tree-sitter reports byte offsets into UTF-8, LSP reports UTF-16
code units unless the server agreed to UTF-8, and people read 1-based
lines and columns. All of these conversions live here, so none of them is
re-derived (wrongly) elsewhere.

Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r``: that is the LSP definition,
and it differs from ``str.splitlines`` (which also splits on form feeds and
U+2028), so ``splitlines`` must not be used for positions.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from enum import Enum
from itertools import accumulate

_LINE_BREAK_TEXT = re.compile(r"\r\n|\r|\n")


class PositionEncoding(str, Enum):
    """How a protocol counts columns; values are LSP's ``PositionEncodingKind``."""

    UTF8 = "utf-8"
    UTF16 = "utf-16"
    UTF32 = "utf-32"


@dataclass(frozen=True, order=True)
class Position:
    """0-based line and 0-based column in code points."""

    line: int
    column: int


@dataclass(frozen=True)
class Range:
    """Half-open range ``[start, end)`` in engine positions."""

    start: Position
    end: Position

    def contains(self, position: Position) -> bool:
        return self.start <= position < self.end or self.start == position == self.end

    def encloses(self, other: "Range") -> bool:
        return self.start <= other.start and other.end <= self.end

    @property
    def first_line(self) -> int:
        """1-based first line."""
        return self.start.line + 1

    @property
    def last_line(self) -> int:
        """1-based last line, inclusive: a range ending at column 0 ends on the line before."""
        if self.end.column == 0 and self.end.line > self.start.line:
            return self.end.line
        return self.end.line + 1


def split_lines(text: str) -> list[str]:
    """Lines without their terminators, split exactly where LSP splits them."""
    if "\r" not in text:
        return text.split("\n")  # the common case, several times faster than the pattern
    return _LINE_BREAK_TEXT.split(text)


def utf16_length(text: str) -> int:
    """Number of UTF-16 code units in ``text``."""
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def code_points_to_units(line_text: str, column: int, encoding: PositionEncoding) -> int:
    """Convert a code-point column on ``line_text`` into ``encoding``'s units."""
    prefix = line_text[:column]
    if encoding is PositionEncoding.UTF32:
        return len(prefix)
    if encoding is PositionEncoding.UTF16:
        return utf16_length(prefix)
    return len(prefix.encode("utf-8"))


def units_to_code_points(line_text: str, units: int, encoding: PositionEncoding) -> int:
    """Convert a column in ``encoding``'s units into code points.

    A column that falls inside a character (half a surrogate pair, the middle
    of a UTF-8 sequence) is rounded up to the end of that character; a column
    past the end of the line is clamped to it, as the LSP specification asks.
    """
    if encoding is PositionEncoding.UTF32 or line_text.isascii():
        return min(units, len(line_text))
    counted = 0
    for index, char in enumerate(line_text):
        if counted >= units:
            return index
        if encoding is PositionEncoding.UTF16:
            counted += 2 if ord(char) > 0xFFFF else 1
        else:
            counted += len(char.encode("utf-8"))
    return len(line_text)


_LINE_BREAKS = re.compile(r"\r\n|\r|\n")


def line_starts(text: str) -> list[int]:
    """Code-point offsets where each line starts (LSP line breaks: \\n, \\r\\n, \\r)."""
    if "\r" in text:
        return [0] + [m.end() for m in _LINE_BREAKS.finditer(text)]
    # Only \n: running sums of the line lengths, all in C (this runs on every touched file).
    return list(accumulate(map((1).__add__, map(len, text.split("\n")[:-1])), initial=0))


class LineIndex:
    """Maps byte offsets of a UTF-8 buffer to engine positions, and positions to other encodings.

    Built once per file; lookups are a bisection plus, on non-ASCII lines
    only, a decode of the line prefix.
    """

    # Weakly referable: what is kept for an index's content elsewhere (lsp_pool.kept_ranges)
    # must not keep the index, and its bytes, alive.
    __slots__ = ("_data", "_line_starts", "_line_count", "_lines", "_ascii", "__weakref__")

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._line_starts: list[int] | None = None  # built when first needed
        self._line_count: int | None = None
        self._lines: list[str] | None = None
        self._ascii = data.isascii()
        """Most source files are all ASCII: a byte column is then a code-point column."""

    @property
    def _starts(self) -> list[int]:
        if self._line_starts is None:
            # bytes.splitlines breaks exactly at \n, \r\n and a lone \r (unlike str.splitlines).
            starts = [0, *accumulate(map(len, self._data.splitlines(keepends=True)))]
            if len(starts) > 1 and not self._data.endswith((b"\n", b"\r")):
                starts.pop()  # the last line has no terminator, so no line starts after it
            self._line_starts = starts
        return self._line_starts

    @property
    def line_count(self) -> int:
        if self._line_count is None:
            if self._line_starts is None and b"\r" not in self._data:
                self._line_count = self._data.count(b"\n") + 1  # a quarter of the cost of the line table
            else:
                self._line_count = len(self._starts)
        return self._line_count

    def position_of_byte(self, offset: int) -> Position:
        line = bisect_right(self._starts, offset) - 1
        start = self._starts[line]
        if self._ascii:
            return Position(line, min(offset, len(self._data)) - start)
        chunk = self._data[start:offset]
        column = len(chunk) if chunk.isascii() else len(chunk.decode("utf-8", errors="replace"))
        return Position(line, column)

    def line_text(self, line: int) -> str:
        if self._lines is None:
            self._lines = split_lines(self._data.decode("utf-8", errors="replace"))
        return self._lines[line] if 0 <= line < len(self._lines) else ""

    def to_protocol(self, position: Position, encoding: PositionEncoding) -> tuple[int, int]:
        """(line, character) as a protocol using ``encoding`` expects them."""
        return position.line, code_points_to_units(self.line_text(position.line), position.column, encoding)

    def edit_position(self, line: int, character: int, encoding: PositionEncoding) -> Position:
        """:meth:`from_protocol` for the ends of a text edit. In an all-ASCII file a column is
        the same in every encoding, so the line table is not built: a column past its line's
        end is left for the edit's application to clamp (``engine.edits.text.offset_of``), as
        every column of an edit is. Lines past the end are clamped here."""
        if self._ascii:
            count = self.line_count
            if line < count:
                return Position(line, max(0, character))
            return self.from_protocol(count, 0, encoding)
        return self.from_protocol(line, character, encoding)

    def edit_range(self, start_line: int, start_character: int, end_line: int, end_character: int,
                   encoding: PositionEncoding) -> Range:
        """:meth:`edit_position` of both ends of a text edit, the all-ASCII case decided once for
        the two (a rename answer converts a thousand edits)."""
        if self._ascii:
            count = self._line_count if self._line_count is not None else self.line_count
            if start_line < count and end_line < count:
                # Conditions rather than max(): a builtin's call per end cost a tenth of the conversion.
                return Range(Position(start_line, start_character if start_character > 0 else 0),
                             Position(end_line, end_character if end_character > 0 else 0))
        return Range(self.edit_position(start_line, start_character, encoding), self.edit_position(end_line, end_character, encoding))

    def from_protocol(self, line: int, character: int, encoding: PositionEncoding) -> Position:
        """Engine position for a protocol's (line, character); lines past the end clamp to it."""
        if line >= self.line_count:
            last = self.line_count - 1
            return Position(last, len(self.line_text(last)))
        if self._ascii:
            # One unit per character in every encoding: only the clamp to the line's end is
            # left, measured on the bytes (a rename answer touches a hundred files this way).
            start = self._starts[line]
            end = self._starts[line + 1] if line + 1 < len(self._starts) else len(self._data)
            while end > start and self._data[end - 1] in (10, 13):
                end -= 1
            return Position(line, max(0, min(character, end - start)))
        return Position(line, units_to_code_points(self.line_text(line), character, encoding))
