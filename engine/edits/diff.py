"""Unified diffs of a planned edit, with a per-file summary; colour only for terminals."""

from __future__ import annotations

import difflib
from itertools import compress, count
from operator import ne
from dataclasses import dataclass
from typing import Hashable, Iterator, Protocol, Sequence

from engine.edits.materialize import FileState, InPlaceLines
from engine.edits.text import line_content

_RED, _GREEN, _CYAN, _BOLD, _RESET = "\x1b[31m", "\x1b[32m", "\x1b[36m", "\x1b[1m", "\x1b[0m"


@dataclass(frozen=True)
class FileSummary:
    path: str
    status: str
    """modified | created | deleted | renamed-away | unchanged"""
    added: int
    removed: int


def summarize(states: list[FileState]) -> list[FileSummary]:
    found = []
    for state in states:
        status = (
            "unchanged" if not state.changed else "created" if state.before is None
            else "deleted" if state.after is None else "modified"
        )
        if state.lines_changed is not None and state.before is not None and state.after is not None:
            added = removed = state.lines_changed  # changed within lines: counted when the edit was applied
        else:
            # Counted on bytes: no decoding, and equal lines compare the same either way.
            added, removed = _counts((state.before or b"").splitlines(), (state.after or b"").splitlines())
        found.append(FileSummary(state.path, status, added, removed))
    return found


Opcode = tuple[str, int, int, int, int]
"""(tag, i1, i2, j1, j2), as ``difflib.SequenceMatcher.get_opcodes`` gives them."""


def _counts(before: list[bytes], after: list[bytes]) -> tuple[int, int]:
    """Lines added and removed by a line diff."""
    added = removed = 0
    for tag, i1, i2, j1, j2 in _opcodes(before, after):
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
    return added, removed


def _opcodes(before: Sequence[Hashable], after: Sequence[Hashable]) -> list[Opcode]:
    """A line diff computed on the part that differs. The common head and tail are trimmed
    first, since an edit usually touches a few lines of a long file; when what is left has as
    many lines on both sides (a rename), the lines that differ in place are matched run by run.
    A hundred-file rename's diff no longer runs the matcher over whole files (it was most of
    a warm rename's preview)."""
    shorter = min(len(before), len(after))
    start = _first_difference(map(ne, before, after), shorter)
    tail = _first_difference(map(ne, reversed(before), reversed(after)), shorter - start)
    end_before, end_after = len(before) - tail, len(after) - tail
    old, new = before[start:end_before], after[start:end_after]
    codes: list[Opcode] = [("equal", 0, start, 0, start)]
    if len(old) != len(new):
        codes += _shifted(_matched(old, new), start, start)
    else:
        differing = list(compress(range(len(old)), map(ne, old, new)))  # found in C, not line by line
        done = 0
        for first, last in _runs(differing):
            codes.append(("equal", start + done, start + first, start + done, start + first))
            codes += _shifted(_matched(old[first:last], new[first:last]), start + first, start + first)
            done = last
        codes.append(("equal", start + done, end_before, start + done, end_after))
    codes.append(("equal", end_before, len(before), end_after, len(after)))
    return _joined(codes)


def _runs(numbers: list[int]) -> Iterator[tuple[int, int]]:
    """Each run of consecutive numbers (ascending) as (first, last + 1)."""
    run_start = 0
    for position in range(1, len(numbers) + 1):
        if position == len(numbers) or numbers[position] != numbers[position - 1] + 1:
            yield numbers[run_start], numbers[position - 1] + 1
            run_start = position


def _first_difference(differs: Iterator[bool], limit: int) -> int:
    """How many leading comparisons were equal, at most ``limit``: found in C, not line by line."""
    return min(next(compress(count(), differs), limit), limit)


def _matched(before: Sequence[Hashable], after: Sequence[Hashable]) -> list[Opcode]:
    if before and after and set(before).isdisjoint(after):
        # No line in common: the matcher's answer, without building one (a rename's runs of
        # changed lines are nearly all like this, hundreds of them).
        return [("replace", 0, len(before), 0, len(after))]
    return [(tag, i1, i2, j1, j2) for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after).get_opcodes()]


def _shifted(codes: list[Opcode], by_before: int, by_after: int) -> list[Opcode]:
    return [(tag, i1 + by_before, i2 + by_before, j1 + by_after, j2 + by_after) for tag, i1, i2, j1, j2 in codes]


def _joined(codes: list[Opcode]) -> list[Opcode]:
    """Empty opcodes dropped and neighbouring equal ones made one, as the matcher gives them."""
    joined: list[Opcode] = []
    for code in codes:
        tag, i1, i2, j1, j2 = code
        if i1 == i2 and j1 == j2:
            continue
        if joined and tag == "equal" and joined[-1][0] == "equal":
            joined[-1] = ("equal", joined[-1][1], i2, joined[-1][3], j2)
        else:
            joined.append(code)
    return joined


def _grouped(codes: list[Opcode], context: int = 3) -> Iterator[list[Opcode]]:
    """Hunks with ``context`` lines around each change: difflib's grouping of the same opcodes."""
    codes = list(codes) or [("equal", 0, 1, 0, 1)]
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = tag, max(i1, i2 - context), i2, max(j1, j2 - context), j2
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * context:
            group.append((tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)))
            yield group
            group = []
            i1, j1 = max(i1, i2 - context), max(j1, j2 - context)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        yield group


def unified_diff(states: list[FileState], *, colour: bool = False) -> str:
    chunks: list[str] = []
    for state in states:
        if not state.changed:
            continue
        old = f"a/{state.path}" if state.before is not None else "/dev/null"
        new = f"b/{state.path}" if state.after is not None else "/dev/null"
        in_place = state.in_place if state.in_place is not None and _diffable_in_place(state.in_place) else None
        if in_place is not None:
            lines = _unified(_InPlaceBefore(in_place), _InPlaceAfter(in_place), old, new, _in_place_opcodes(in_place))
        else:
            before, after = _lines(state.before), _lines(state.after)
            lines = _unified(before, after, old, new, _opcodes(before, after))
        chunks.extend(map(_paint, lines) if colour else lines)
    return "\n".join(chunks)


# -- an edit within lines (a rename): only the changed lines and their context are read -------------
# Splitting and comparing whole files was most of a hundred-file rename's diff. The lines shown
# are those ``bytes.decode().splitlines()`` gives, which are the LSP lines of the text the edit
# was applied to when that text is the bytes' own UTF-8 and holds no other break splitlines knows.

_OTHER_BREAKS = ("\x0b", "\x0c", "\x1c", "\x1d", "\x1e")
_OTHER_BREAKS_BEYOND_ASCII = ("\x85", "\u2028", "\u2029")


def _diffable_in_place(lines: InPlaceLines) -> bool:
    """Whether the lines splitlines gives are the LSP lines, the same number before and after."""
    if not lines.utf8:
        return False
    count = _line_count(lines)
    if any(number >= count for number in lines.changed):
        return False  # text put on the empty line after a final break: one line more
    if count and not lines.text.endswith(("\n", "\r")) and lines.changed.get(count - 1) == "":
        return False  # the last line, without a break, emptied: one line less
    # One character at a time: each is found by memchr in an ASCII text, where the other three cannot be.
    breaks = _OTHER_BREAKS if lines.text.isascii() else _OTHER_BREAKS + _OTHER_BREAKS_BEYOND_ASCII
    new_lines = "".join(lines.changed.values())
    return not any(breaking in lines.text or breaking in new_lines for breaking in breaks)


def _line_count(lines: InPlaceLines) -> int:
    """``len(text.splitlines())``: a break at the very end starts no line."""
    return len(lines.starts) - 1 if lines.text.endswith(("\n", "\r")) else len(lines.starts) if lines.text else 0


def _in_place_opcodes(lines: InPlaceLines) -> list[Opcode]:
    """:func:`_opcodes` of the text before and after, from the changed lines alone: the lines
    stay where they are, so each run of adjacent changed lines is matched alone, as there."""
    codes: list[Opcode] = []
    done = 0
    for first, last in _runs(sorted(lines.changed)):
        codes.append(("equal", done, first, done, first))
        old = [line_content(lines.text, lines.starts, number) for number in range(first, last)]
        codes += _shifted(_matched(old, [lines.changed[number] for number in range(first, last)]), first, first)
        done = last
    count = _line_count(lines)
    codes.append(("equal", done, count, done, count))
    return _joined(codes)


class _InPlaceBefore:
    def __init__(self, lines: InPlaceLines) -> None:
        self._lines = lines

    def __getitem__(self, span: slice) -> list[str]:
        # One slice split at once: the text holds no break splitlines knows beyond \n, \r\n
        # and \r (_diffable_in_place), so its lines are the LSP lines.
        starts, text = self._lines.starts, self._lines.text
        if span.start >= span.stop:
            return []
        return text[starts[span.start]:starts[span.stop] if span.stop < len(starts) else len(text)].splitlines()


class _InPlaceAfter(_InPlaceBefore):
    def __getitem__(self, span: slice) -> list[str]:
        lines = super().__getitem__(span)
        changed = self._lines.changed
        for number in range(span.start, span.stop):
            if number in changed:
                lines[number - span.start] = changed[number]
        return lines


class _Lines(Protocol):
    def __getitem__(self, span: slice, /) -> list[str]: ...


def _unified(before: _Lines, after: _Lines, old: str, new: str, codes: list[Opcode]) -> list[str]:
    """``difflib.unified_diff(before, after, old, new, lineterm="")``'s lines, from their opcodes.
    A list built by comprehensions, not a generator: a rename's diff has thousands of lines."""
    lines: list[str] = []
    for group in _grouped(codes):
        if not lines:
            lines += (f"--- {old}", f"+++ {new}")
        lines.append(f"@@ -{_range(group[0][1], group[-1][2])} +{_range(group[0][3], group[-1][4])} @@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [" " + line for line in before[i1:i2]]
                continue
            lines += ["-" + line for line in before[i1:i2]]
            lines += ["+" + line for line in after[j1:j2]]
    return lines


def _range(start: int, stop: int) -> str:
    """A hunk's line range as unified diffs write it (``difflib._format_range_unified``)."""
    length = stop - start
    if length == 1:
        return f"{start + 1}"
    return f"{start if length == 0 else start + 1},{length}"


def _lines(data: bytes | None) -> list[str]:
    if data is None:
        return []
    return data.decode("utf-8", errors="replace").splitlines()


def _paint(line: str) -> str:
    if line.startswith(("+++", "---")):
        return f"{_BOLD}{line}{_RESET}"
    if line.startswith("@@"):
        return f"{_CYAN}{line}{_RESET}"
    if line.startswith("+"):
        return f"{_GREEN}{line}{_RESET}"
    if line.startswith("-"):
        return f"{_RED}{line}{_RESET}"
    return line


def paint(diff: str) -> str:
    """A unified diff's lines coloured for a terminal."""
    return "\n".join(_paint(line) for line in diff.split("\n"))
