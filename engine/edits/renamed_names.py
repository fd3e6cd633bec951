"""Names an edit swaps for others, and diagnostics' messages read as they would after the swap:
an error whose message quotes a renamed name is the same error, not a new one."""

from __future__ import annotations

import re
from typing import Callable

from engine.edits.model import FileChange, WorkspaceEdit
from engine.edits.text import offset_of
from engine.workspace import Workspace


def renamed_names(edit: WorkspaceEdit, workspace: Workspace) -> dict[str, str]:
    """The names the edit swaps for others (old -> new): every text edit that replaces a name,
    dotted or not, with another. Messages that quote a renamed name change with it (a type
    checker's '"cached_property" is not iterable' becomes '"memoized_property" is not
    iterable'), and such an error is not new. A name swapped for two different names is left out."""
    swaps: dict[str, set[str]] = {}
    for operation in edit.operations:
        if not isinstance(operation, FileChange) or not (workspace.root / operation.path).is_file():
            continue
        source = workspace.read(operation.path)
        text, starts = source.text, source.line_starts
        for text_edit in operation.edits:
            old = text[offset_of(text, starts, text_edit.range.start):offset_of(text, starts, text_edit.range.end)]
            if old != text_edit.new_text and _is_name(old) and _is_name(text_edit.new_text):
                swaps.setdefault(old, set()).add(text_edit.new_text)
    return {old: next(iter(new)) for old, new in swaps.items() if len(new) == 1}


def _is_name(text: str) -> bool:
    return bool(text) and all(part.isidentifier() for part in text.split("."))


def renaming(renamed: dict[str, str]) -> Callable[[str], str]:
    """Rewrites a message as it would read with the renamed names (whole words only)."""
    if not renamed:
        return lambda message: message
    longest_first = sorted(renamed, key=len, reverse=True)
    pattern = re.compile(r"(?<!\w)(" + "|".join(re.escape(old) for old in longest_first) + r")(?!\w)")
    return lambda message: pattern.sub(lambda match: renamed[match.group(1)], message)
