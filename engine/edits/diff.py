"""Unified diffs of a planned edit, with a per-file summary; colour only for terminals."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from engine.edits.plan import FileState

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
        before, after = _lines(state.before), _lines(state.after)
        status = (
            "unchanged" if not state.changed else "created" if state.before is None
            else "deleted" if state.after is None else "modified"
        )
        added, removed = _counts(before, after)
        found.append(FileSummary(state.path, status, added, removed))
    return found


def _counts(before: list[str], after: list[str]) -> tuple[int, int]:
    """Lines added and removed, as the unified diff counts them; the common head and tail are
    trimmed first, since an edit usually touches a few lines of a long file."""
    start = 0
    while start < len(before) and start < len(after) and before[start] == after[start]:
        start += 1
    end_before, end_after = len(before), len(after)
    while end_before > start and end_after > start and before[end_before - 1] == after[end_after - 1]:
        end_before, end_after = end_before - 1, end_after - 1
    added = removed = 0
    matcher = difflib.SequenceMatcher(None, before[start:end_before], after[start:end_after])
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
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
