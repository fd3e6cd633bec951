"""Applying text edits to a file's text, keeping its line endings; pure functions."""

from __future__ import annotations

import difflib
import re
from bisect import bisect_right
from functools import lru_cache

from engine.answers import TextEdit
from engine.positions import Position, Range, line_starts

_LINE_BREAKS = re.compile(r"\r\n|\r|\n")


def word_offsets(text: str, word: str, word_characters: str = "_$") -> list[int]:
    """Offsets where ``word`` stands alone (no letter, digit or ``word_characters`` on either side).
    The pattern starts with the word itself, so the regex engine can jump between candidates
    instead of testing a look-behind at every offset of a long file."""
    found = []
    for match in _word_pattern(word, word_characters).finditer(text):
        start = match.start()
        if start > 0 and (text[start - 1].isalnum() or text[start - 1] in word_characters):
            continue
        found.append(start)
    return found


@lru_cache(maxsize=64)
def _word_pattern(word: str, word_characters: str) -> re.Pattern[str]:
    # Built once per word: a rename asks about the same word on every line that holds it.
    extra = re.escape(word_characters.replace("_", ""))
    return re.compile(re.escape(word) + rf"(?![\w{extra}])")


def offset_of(text: str, starts: list[int], position: Position) -> int:
    """Offset of a position; a column past the line's end stops at the line break, as LSP asks."""
    if position.line >= len(starts):
        return len(text)
    start = starts[position.line]
    end = starts[position.line + 1] if position.line + 1 < len(starts) else len(text)
    content_end = end
    while content_end > start and text[content_end - 1] in "\r\n":
        content_end -= 1
    return min(start + position.column, content_end)


def apply_text_edits(text: str, edits: tuple[TextEdit, ...], newline: str, starts: list[int] | None = None) -> str:
    """The text after the edits; inserted line breaks take the file's own style (``newline``).
    ``starts`` are the text's line starts when the caller has them."""
    starts = starts if starts is not None else line_starts(text)
    spans = sorted(
        ((offset_of(text, starts, e.range.start), offset_of(text, starts, e.range.end), e.new_text) for e in edits),
        key=lambda span: (span[0], span[1]),
    )
    pieces: list[str] = []
    cursor = 0
    for start, end, new_text in spans:
        pieces.append(text[cursor:start])
        pieces.append(_LINE_BREAKS.sub(newline, new_text))
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def changed_lines_in_place(text: str, starts: list[int], edits: tuple[TextEdit, ...]) -> dict[int, str] | None:
    """The lines the edits change, by number, each with its new content (without its break),
    when every edit stays within one line and brings no line break (a rename's): each touched
    line is rebuilt alone and compared with what it was. None for any other edit."""
    by_line: dict[int, list[TextEdit]] = {}
    for edit in edits:
        if edit.range.start.line != edit.range.end.line or "\n" in edit.new_text or "\r" in edit.new_text:
            return None
        by_line.setdefault(edit.range.start.line, []).append(edit)
    changed: dict[int, str] = {}
    for line, on_line in by_line.items():
        if line >= len(starts):
            return None  # past the end: let a diff decide
        content = line_content(text, starts, line)
        spliced = splice_line(content, on_line)
        if spliced != content:
            changed[line] = spliced
    return changed


def with_changed_lines(text: str, starts: list[int], changed: dict[int, str]) -> str:
    """The text with the lines :func:`changed_lines_in_place` gave replaced, each line's break
    kept: what :func:`apply_text_edits` makes of those edits, built from the few changed lines
    instead of an offset per edit (a hundred-file rename's preview did that for every edit)."""
    pieces = []
    cursor = 0
    for line in sorted(changed):
        start = starts[line]
        pieces.append(text[cursor:start])
        pieces.append(changed[line])
        cursor = start + len(line_content(text, starts, line))
    pieces.append(text[cursor:])
    return "".join(pieces)


def line_content(text: str, starts: list[int], line: int) -> str:
    """A line of ``text`` without its break (lines as LSP counts them: \n, \r\n, \r)."""
    end = starts[line + 1] if line + 1 < len(starts) else len(text)
    return text[starts[line]:end].rstrip("\r\n")


def splice_line(line: str, edits: list[TextEdit]) -> str:
    """One line (without its break) after edits that each stay within it and bring no line
    break (a rename's); columns past its end stop there, as :func:`offset_of` has them."""
    pieces = []
    cursor = 0
    for edit in sorted(edits, key=lambda e: (e.range.start.column, e.range.end.column)):
        start, end = min(edit.range.start.column, len(line)), min(edit.range.end.column, len(line))
        pieces.append(line[cursor:start])
        pieces.append(edit.new_text)
        cursor = end
    pieces.append(line[cursor:])
    return "".join(pieces)


class Coverage:
    """Which positions a file's (non-overlapping) edits already change, answered by bisection:
    a rename checks hundreds of candidates against hundreds of edits."""

    def __init__(self, edits: tuple[TextEdit, ...] | list[TextEdit]) -> None:
        self._edits = sorted(edits, key=lambda e: (e.range.start, e.range.end))
        self._starts = [(e.range.start.line, e.range.start.column) for e in self._edits]

    def covers(self, position: Position) -> bool:
        index = bisect_right(self._starts, (position.line, position.column))
        # Insertions at the position sort just before a replacement starting there: look back
        # over every edit that starts exactly at it, and the one before.
        while index > 0:
            index -= 1
            if covers(self._edits[index], position):
                return True
            if self._starts[index] < (position.line, position.column):
                return False
        return False


def covers(edit: TextEdit, position: Position) -> bool:
    """Whether an edit already changes the text at ``position`` (its range holds it, or an
    insertion sits exactly there)."""
    start, end = edit.range.start, edit.range.end
    return (start.line, start.column) <= (position.line, position.column) < (end.line, end.column) or start == position


def line_edits(before: str, after: str) -> tuple[TextEdit, ...]:
    """Line-level edits turning ``before`` into ``after``, so a diff shows only what changed."""
    old_lines, new_lines = before.splitlines(keepends=True), after.splitlines(keepends=True)
    edits = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False).get_opcodes():
        if tag != "equal":
            edits.append(TextEdit(Range(Position(i1, 0), Position(i2, 0)), "".join(new_lines[j1:j2])))
    return tuple(edits)
