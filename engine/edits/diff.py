"""Unified diffs of a planned edit, with a per-file summary; colour only for terminals."""

from __future__ import annotations

import difflib
from itertools import compress
from operator import ne
from dataclasses import dataclass

from engine.edits.materialize import FileState

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


def _counts(before: list[bytes], after: list[bytes]) -> tuple[int, int]:
    """Lines added and removed by a line diff. The common head and tail are trimmed first,
    since an edit usually touches a few lines of a long file; when what is left has as many
    lines on both sides (a rename), the lines that differ in place are diffed run by run,
    which keeps a hundred-file rename from running the matcher over whole files."""
    start = 0
    while start < len(before) and start < len(after) and before[start] == after[start]:
        start += 1
    end_before, end_after = len(before), len(after)
    while end_before > start and end_after > start and before[end_before - 1] == after[end_after - 1]:
        end_before, end_after = end_before - 1, end_after - 1
    old, new = before[start:end_before], after[start:end_after]
    if len(old) != len(new):
        return _matched(old, new)
    added = removed = 0
    differing = list(compress(range(len(old)), map(ne, old, new)))  # found in C, not line by line
    run_start = 0
    for position in range(1, len(differing) + 1):
        if position == len(differing) or differing[position] != differing[position - 1] + 1:
            first, last = differing[run_start], differing[position - 1] + 1
            run_added, run_removed = _matched(old[first:last], new[first:last])
            added, removed, run_start = added + run_added, removed + run_removed, position
    return added, removed


def _matched(before: list[bytes], after: list[bytes]) -> tuple[int, int]:
    added = removed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after).get_opcodes():
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
    return added, removed


def unified_diff(states: list[FileState], *, colour: bool = False) -> str:
    chunks = []
    for state in states:
        if not state.changed:
            continue
        old = f"a/{state.path}" if state.before is not None else "/dev/null"
        new = f"b/{state.path}" if state.after is not None else "/dev/null"
        for line in difflib.unified_diff(_lines(state.before), _lines(state.after), old, new, lineterm=""):
            chunks.append(_paint(line) if colour else line)
    return "\n".join(chunks)


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
