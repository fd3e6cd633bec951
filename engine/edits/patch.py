"""A change as a ``git apply``-able patch, byte for byte.

The preview diff (``diff.unified_diff``) is for people: it splits lines and drops their
endings. A patch that another machine applies must keep them: CRLF lines, a last line with no
newline (git's ``\\ No newline at end of file``), new and deleted files with their modes.
Files that are not UTF-8 text are left out and named, never written as a broken hunk.
"""

from __future__ import annotations

import difflib

from engine.edits.materialize import FileState

_NO_NEWLINE = "\\ No newline at end of file"


def git_patch(states: list[FileState]) -> tuple[str, list[str]]:
    """(the patch, the paths left out because they are not text)."""
    chunks: list[str] = []
    left_out: list[str] = []
    for state in states:
        if not state.changed:
            continue
        try:
            before = _lines(state.before)
            after = _lines(state.after)
        except UnicodeDecodeError:
            left_out.append(state.path)
            continue
        chunks.append(_file_patch(state, before, after))
    return "".join(chunks), left_out


def _file_patch(state: FileState, before: list[str], after: list[str]) -> str:
    mode = f"{0o100000 | (state.mode if state.mode is not None else 0o644):o}"
    head = [f"diff --git a/{state.path} b/{state.path}\n"]
    if state.before is None:
        head.append(f"new file mode {mode}\n")
    elif state.after is None:
        head.append(f"deleted file mode {mode}\n")
    old = f"a/{state.path}" if state.before is not None else "/dev/null"
    new = f"b/{state.path}" if state.after is not None else "/dev/null"
    body: list[str] = []
    for line in difflib.unified_diff(before, after, old, new, n=3):
        if line.startswith(("---", "+++")):
            body.append(line.rstrip("\n") + "\n")
            continue
        if line.startswith("@@"):
            body.append(line)
            continue
        # A line that kept its own ending goes out as is; the file's last line without one is
        # followed by git's marker.
        if line.endswith("\n"):
            body.append(line)
        else:
            body.append(line + "\n" + _NO_NEWLINE + "\n")
    return "".join(head + body)


def _lines(data: bytes | None) -> list[str]:
    """Lines as git splits them: at ``\n`` only (a ``\r`` or a form feed inside a line stays there)."""
    if data is None:
        return []
    pieces = data.decode("utf-8").split("\n")
    lines = [piece + "\n" for piece in pieces[:-1]]
    return lines + [pieces[-1]] if pieces[-1] else lines
