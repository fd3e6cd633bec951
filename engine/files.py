"""File tools that know the code: what plain-text agent tools lack.

- ``read``: a header (path, sha256, mtime, lines), a line gutter, optionally the outline;
  every read is recorded in the client's :class:`ReadLedger`.
- ``write`` and ``edit`` plans refuse a file this client has not read, or that changed on
  disk since it did (unless ``overwrite_changed``): an agent never writes over what it has
  not seen. ``edit`` takes an ``old_string`` that must match exactly once (line endings
  tolerated, a pasted line gutter stripped), an anchor pair, or a line range.
- ``search`` annotates every hit with its enclosing symbol; ``find_replace`` plans a
  regex or literal replacement across files.
Plans are WorkspaceEdits; writing goes through the journaled apply like every edit.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from typing import Callable

from engine.edits.model import CreateFile, FileChange, WorkspaceEdit
from engine.errors import FileNotInWorkspace, Refused, UsageError
from engine.answers import TextEdit
from engine.positions import Position, Range, split_lines
from engine.workspace import ScanResult, Skipped, Workspace

#: A gutter as read_file prints it (``  12│ ``), or as other tools do (``12: ``, ``12\t``, ``L12 ``).
_GUTTER = re.compile(r"^\s*L?\d+(?:│ ?|: |\t| \| ?)")


class NotRead(Refused):
    code = "not_read"


class ChangedSinceRead(Refused):
    code = "changed_since_read"


class NoUniqueMatch(Refused):
    code = "no_unique_match"


@dataclass
class ReadLedger:
    """What one client has read: path → sha256 of the bytes it saw. One per MCP connection."""

    seen: dict[str, str] = field(default_factory=dict)

    def record(self, path: str, sha256: str) -> None:
        self.seen[path] = sha256

    def check(self, workspace: Workspace, path: str, *, overwrite_changed: bool) -> str | None:
        """The file's current sha256 (None when it does not exist), refusing a blind or stale write."""
        relative, absolute = workspace.resolve(path)
        if not absolute.exists():
            return None
        current = workspace.read(relative).sha256
        if overwrite_changed:
            return current
        if relative not in self.seen:
            raise NotRead(f"{relative} was not read by this client; read it first (or pass overwrite_changed)")
        if self.seen[relative] != current:
            raise ChangedSinceRead(
                f"{relative} changed on disk since this client read it; read it again (or pass overwrite_changed)"
            )
        return current


@dataclass(frozen=True)
class FileView:
    path: str
    sha256: str
    mtime: float
    total_lines: int
    first_line: int
    lines: list[str]
    outline: list[str]

    def render(self) -> str:
        width = len(str(self.first_line + len(self.lines)))
        header = f"{self.path}  sha256={self.sha256[:16]}  mtime={self.mtime:.0f}  lines={self.total_lines}"
        body = [f"{number:>{width}}│ {line}" for number, line in enumerate(self.lines, self.first_line)]
        outline = ["outline:", *(f"  {entry}" for entry in self.outline)] if self.outline else []
        return "\n".join([header, *outline, *body])


def read(
    workspace: Workspace, ledger: ReadLedger, path: str, *, start: int = 1, end: int | None = None,
    outline: Callable[[str], list[str]] | None = None,
) -> FileView:
    source = workspace.read(path)
    ledger.record(source.path, source.sha256)
    lines = split_lines(source.text)
    if lines and lines[-1] == "":
        lines = lines[:-1]
    if start < 1 or (end is not None and end < start):
        raise UsageError(f"line range {start}-{end} is not valid (lines are 1-based, start <= end)")
    stop = len(lines) if end is None else min(end, len(lines))
    return FileView(source.path, source.sha256, source.mtime, len(lines), start, lines[start - 1: stop],
                    outline(source.path) if outline else [])


def plan_write(workspace: Workspace, ledger: ReadLedger, path: str, content: str, *, overwrite_changed: bool = False) -> WorkspaceEdit:
    current = ledger.check(workspace, path, overwrite_changed=overwrite_changed)
    relative, _absolute = workspace.resolve(path)
    if current is None:
        return WorkspaceEdit((CreateFile(relative, content),))
    source = workspace.read(relative)
    lines = split_lines(source.text)
    whole = Range(Position(0, 0), Position(len(lines) - 1, len(lines[-1])))
    return WorkspaceEdit((FileChange(relative, (TextEdit(whole, content),), current),))


@dataclass(frozen=True)
class EditRequest:
    path: str
    new_string: str
    old_string: str | None = None
    start_anchor: str | None = None
    end_anchor: str | None = None
    """With ``start_anchor``: replace from the start anchor's line through the end anchor's line."""
    start_line: int | None = None
    end_line: int | None = None
    overwrite_changed: bool = False


def plan_edit(workspace: Workspace, ledger: ReadLedger, request: EditRequest) -> WorkspaceEdit:
    current = ledger.check(workspace, request.path, overwrite_changed=request.overwrite_changed)
    if current is None:
        raise UsageError(f"{request.path} does not exist; use write_file to create it")
    source = workspace.read(request.path)
    text = source.text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if request.old_string is not None:
        old = _without_gutter(request.old_string.replace("\r\n", "\n"))
        count = text.count(old)
        if count != 1 or not old:
            raise NoUniqueMatch(
                f"old_string matches {count} times in {source.path}; it must match exactly once "
                + ("(add surrounding lines to make it unique)" if count > 1 else "(copy it from read_file, whitespace included)")
            )
        offset = text.index(old)
        first = text.count("\n", 0, offset)
        start = Position(first, offset - (text.rfind("\n", 0, offset) + 1))
        end_offset = offset + len(old)
        last = text.count("\n", 0, end_offset)
        end = Position(last, end_offset - (text.rfind("\n", 0, end_offset) + 1))
        new = _without_gutter(request.new_string) if _has_gutter(request.old_string) else request.new_string
        return _edit(source.path, Range(start, end), new, current)
    if request.start_anchor is not None:
        first = _unique_line(lines, request.start_anchor, source.path, "start_anchor")
        last = _unique_line(lines, request.end_anchor or request.start_anchor, source.path, "end_anchor", after=first)
        return _edit(source.path, Range(Position(first, 0), Position(last, len(lines[last]))), request.new_string.rstrip("\n"), current)
    if request.start_line is not None:
        last_line = request.end_line or request.start_line
        if not 1 <= request.start_line <= last_line <= len(lines):
            raise UsageError(f"lines {request.start_line}-{last_line} are outside {source.path} (1-{len(lines)})")
        span = Range(Position(request.start_line - 1, 0), Position(last_line - 1, len(lines[last_line - 1])))
        return _edit(source.path, span, request.new_string.rstrip("\n"), current)
    raise UsageError("edit_file needs old_string, or start_anchor (and end_anchor), or start_line (and end_line)")


def _edit(path: str, span: Range, new: str, sha256: str) -> WorkspaceEdit:
    return WorkspaceEdit((FileChange(path, (TextEdit(span, new),), sha256),))


def _has_gutter(text: str) -> bool:
    lines = [line for line in text.split("\n") if line.strip()]
    return bool(lines) and all(_GUTTER.match(line) for line in lines)


def _without_gutter(text: str) -> str:
    """A block pasted from read_file output, line numbers and all, without them."""
    if not _has_gutter(text):
        return text
    return "\n".join(_GUTTER.sub("", line, count=1) for line in text.split("\n"))


def _unique_line(lines: list[str], anchor: str, path: str, what: str, after: int = 0) -> int:
    found = [number for number, line in enumerate(lines) if number >= after and anchor in line]
    if len(found) != 1:
        raise NoUniqueMatch(f"{what} {anchor!r} is on {len(found)} lines of {path}{' after the start anchor' if after else ''}; it must be on exactly one")
    return found[0]


# -- searching --------------------------------------------------------------------------


@dataclass(frozen=True)
class Hit:
    path: str
    line: int
    column: int
    text: str
    symbol: str | None
    """Name path of the innermost symbol around the hit."""


@dataclass(frozen=True)
class SearchResult:
    hits: list[Hit]
    """At most the limit asked for."""
    total: int
    """How many hits there were in all."""
    skipped: list[Skipped]
    """What the scan left out under the glob (dangling symlinks, loops, links out), and why."""


def find_files(workspace: Workspace, pattern: str, under: str = ".") -> list[str]:
    return matching(workspace, pattern, under).files


def matching(workspace: Workspace, pattern: str, under: str = ".") -> ScanResult:
    """The scan's files under ``under`` that match a glob (by path or by name), and what it
    skipped there that matches too."""
    scan = workspace.scan(under)
    return ScanResult([path for path in scan.files if _matches(path, pattern)],
                      [skipped for skipped in scan.skipped if _matches(skipped.path, pattern)], scan.folders)


def _matches(path: str, pattern: str) -> bool:
    return fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(path.rsplit("/", 1)[-1], pattern)


def skipped_notes(skipped: list[Skipped]) -> list[str]:
    """One warning per file a scan left out, as ``find`` reports them."""
    return [f"skipped {s.path}: {s.reason}" for s in skipped]


def search(
    workspace: Workspace, query: str, *, regex: bool = False, glob: str = "*", under: str = ".",
    enclosing: Callable[[str, int], str | None] | None = None, limit: int = 500,
) -> SearchResult:
    """Hits (at most ``limit``), how many there were in all, and the files left out."""
    pattern = _pattern(query, regex)
    hits: list[Hit] = []
    total = 0
    listed = matching(workspace, glob, under)
    for path in listed.files:
        try:
            text = workspace.read(path).text
        except Refused:
            continue  # binary or unreadable: not searchable text
        for number, line in enumerate(split_lines(text), 1):
            for match in pattern.finditer(line):
                total += 1
                if len(hits) < limit:
                    symbol = enclosing(path, number) if enclosing else None
                    hits.append(Hit(path, number, match.start() + 1, line.strip()[:200], symbol))
    return SearchResult(hits, total, listed.skipped)


def plan_find_replace(
    workspace: Workspace, query: str, replacement: str, *, regex: bool = False, glob: str = "*", under: str = "."
) -> tuple[WorkspaceEdit, list[Skipped]]:
    """The replacement's edit, and the files the scan left out under the glob."""
    pattern = _pattern(query, regex)
    changes = []
    listed = matching(workspace, glob, under)
    for path in listed.files:
        try:
            source = workspace.read(path)
        except Refused:
            continue
        edits = []
        for number, line in enumerate(split_lines(source.text)):
            for match in pattern.finditer(line):
                new = match.expand(replacement) if regex else replacement
                edits.append(TextEdit(Range(Position(number, match.start()), Position(number, match.end())), new))
        if edits:
            changes.append(FileChange(source.path, tuple(edits), source.sha256))
    if not changes:
        raise NoUniqueMatch(f"{query!r} occurs nowhere in {glob} under {under}; nothing to replace")
    return WorkspaceEdit(tuple(changes)), listed.skipped


def _pattern(query: str, regex: bool) -> re.Pattern[str]:
    if not query:
        raise UsageError("the search text is empty")
    try:
        return re.compile(query if regex else re.escape(query))
    except re.error as error:
        raise UsageError(f"{query!r} is not a valid regular expression: {error}") from None


@dataclass(frozen=True)
class DirEntry:
    kind: str
    """``dir`` or ``file``."""
    size: int | None
    """Bytes for a file; None for a folder."""
    path: str

    def render(self) -> str:
        return f"{self.kind:<4} {'-' if self.size is None else self.size:>9} {self.path}{'/' if self.kind == 'dir' else ''}"


def list_dir(workspace: Workspace, path: str = ".", *, max_depth: int = 1, show_hidden: bool = False) -> list[DirEntry]:
    """Entries under a folder down to ``max_depth`` levels (1: its own entries), ignored files
    left out as ``find_files`` leaves them, and hidden ones (a dot first) unless asked for.
    Folders appear when something under them is listed (an ignored or empty folder does not)."""
    relative, absolute = workspace.resolve(path)
    if not absolute.is_dir():
        raise FileNotInWorkspace(f"{relative} is not a folder of the workspace")
    prefix = "" if relative in (".", "") else relative.rstrip("/") + "/"
    entries: dict[str, DirEntry] = {}
    for file in workspace.scan(relative).files:
        parts = file[len(prefix):].split("/")
        if not show_hidden and any(part.startswith(".") for part in parts):
            continue
        for depth in range(1, min(len(parts), max_depth) + 1):
            entry_path = prefix + "/".join(parts[:depth])
            if depth < len(parts):
                entries.setdefault(entry_path, DirEntry("dir", None, entry_path))
            else:
                entries[entry_path] = DirEntry("file", (workspace.root / entry_path).stat().st_size, entry_path)
    return sorted(entries.values(), key=lambda e: e.path)
