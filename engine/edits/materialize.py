"""Turning an edit into the exact bytes each touched file will have: shared by preview and apply."""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Callable

from engine.edits.model import CreateFile, DeleteFile, FileChange, Operation, RenameFile, WorkspaceEdit, paths_of
from engine.edits.text import apply_text_edits, changed_lines_in_place, with_changed_lines
from engine.errors import Refused, UnreadableFile
from engine.read_memo import RememberedReads
from engine.workspace import SourceFile, Workspace, decode_source, read_bytes



class StalePlan(Refused):
    code = "stale_plan"


class FileOperationRefused(Refused):
    code = "file_operation_refused"


class ReadOnlyFile(Refused):
    code = "read_only"


@dataclass(frozen=True)
class InPlaceLines:
    """A file's text before an edit within lines, its line starts, and the new content of each
    line the edit changed (lines as LSP counts them)."""

    text: str
    starts: list[int]
    changed: dict[int, str]
    utf8: bool
    """``text`` is the file's bytes decoded as UTF-8, as they are (no BOM, no other encoding)."""


@dataclass(frozen=True)
class FileState:
    """One path before and after the edit; None means 'does not exist'."""

    path: str
    before: bytes | None
    after: bytes | None
    mode: int | None
    """Permission bits to give the written file (the old file's, or the default for new ones)."""
    in_place: InPlaceLines | None = None
    """The lines changed, when the edit only changed text within lines (a rename): the summary
    counts them and the diff shows them without splitting and comparing the whole file."""
    known_before_sha256: str | None = None
    """The hash of ``before`` when the caller has it already (the plan's hash check computed it)."""

    @property
    def lines_changed(self) -> int | None:
        return len(self.in_place.changed) if self.in_place is not None else None

    @cached_property  # read by the journal, the summary and undo: hashed once
    def before_sha256(self) -> str | None:
        if self.before is None:
            return None
        return self.known_before_sha256 or hashlib.sha256(self.before).hexdigest()

    @cached_property
    def after_sha256(self) -> str | None:
        return hashlib.sha256(self.after).hexdigest() if self.after is not None else None

    @property
    def changed(self) -> bool:
        return self.before != self.after


def materialize(
    edit: WorkspaceEdit, workspace: Workspace, *, check_hashes: bool = True, canonical_paths: dict[str, str] | None = None,
    decoded: dict[str, tuple[str, list[int]]] | None = None, force: bool = False, reads: RememberedReads[SourceFile] | None = None,
) -> list[FileState]:
    """The before and after bytes of every touched path, operations applied in order.

    Refuses (changing nothing) when a file no longer has the hash the plan was made from,
    or a file operation's precondition does not hold. ``canonical_paths`` are the real paths
    of the edit's paths when the caller has them already; ``decoded``, when given, receives
    each changed file's text before the edit and its line starts (the syntax check reuses them).
    ``reads``: this call's reads (engine.read_memo), for a preview only; an apply reads the disk.
    """
    current: dict[str, bytes | None] = {}
    in_place: dict[str, InPlaceLines | None] = {}
    before: dict[str, bytes | None] = {}
    modes: dict[str, int | None] = {}
    hashes: dict[str, str] = {}
    sources: dict[str, SourceFile] = {}  # read earlier in this call, unchanged since (engine.read_memo)

    known = dict(canonical_paths or {})
    root = str(workspace.root)  # strings, not pathlib: a rename's dry run reads a hundred files

    def canonical(path: str) -> str:
        """The real path, workspace-relative: an edit through a symlink inside the workspace
        changes the file it points to, and the link stays a link."""
        if path not in known:
            known[path] = workspace.canonical(path)  # refuses anything outside, symlinks included
        workspace.check_writable(known[path])
        return known[path]

    def load(path: str) -> bytes | None:
        if path not in current:
            absolute = f"{root}/{path}"  # a canonical path: checked inside, no symlink left in it
            try:
                status = os.stat(absolute)
            except FileNotFoundError:
                status = None
            if status is not None and not stat.S_ISREG(status.st_mode):
                raise FileOperationRefused(f"{path} is not a regular file")
            if status is not None and not force and not status.st_mode & stat.S_IWUSR:
                # Root can write anything; a file whose mode says "do not write" is still not ours to write.
                raise ReadOnlyFile(f"{path} is read-only (mode {stat.S_IMODE(status.st_mode):04o}); nothing was changed "
                                   "(forced, it is written and its mode kept)", option="force")
            if status is not None and status.st_size > workspace.config.max_file_bytes:
                # The same limit as every read: editing a file that large is slow, and a plan never reads it anyway.
                raise UnreadableFile(path, f"{status.st_size / 2**20:.1f} MiB is over the {workspace.config.max_file_bytes / 2**20:.1f} MiB "
                                           "limit for source files; nothing was changed", option="max_file_bytes")
            kept = reads.get(path, status) if reads is not None and status is not None else None
            data: bytes | None
            if kept is not None:
                data, source = kept
                if source is not None:
                    sources[path] = source
            else:
                data = read_bytes(absolute) if status is not None else None
            current[path] = data
            before[path] = data
            modes[path] = stat.S_IMODE(status.st_mode) if status is not None else None
        return current[path]

    for operation in edit.operations:
        operation = with_canonical_paths(operation, canonical)
        if isinstance(operation, FileChange):
            data = load(operation.path)
            if data is None:
                raise StalePlan(f"{operation.path} does not exist; the plan expected to edit it (re-run)")
            unchanged = data is before[operation.path]
            source = sources[operation.path] if unchanged and operation.path in sources else decode_source(operation.path, data, 0.0)
            if check_hashes and operation.expected_sha256 and source.sha256 != operation.expected_sha256:
                raise StalePlan(f"{operation.path} changed since the plan was made; re-run")
            starts = source.line_starts
            if operation.path not in hashes and current[operation.path] is before[operation.path]:
                hashes[operation.path] = source.sha256  # of the bytes read from disk, unchanged so far
            if decoded is not None and operation.path not in decoded:
                decoded[operation.path] = (source.text, starts)
            # Known only for a file whose one change is this one.
            changed = changed_lines_in_place(source.text, starts, operation.edits) if operation.path not in in_place else None
            text = (with_changed_lines(source.text, starts, changed) if changed is not None
                    else apply_text_edits(source.text, operation.edits, source.newline, starts))
            try:
                current[operation.path] = source.encode(text)
            except UnicodeEncodeError as error:
                raise FileOperationRefused(
                    f"{operation.path} is written in {source.encoding}, which cannot hold {error.object[error.start:error.end]!r} "
                    "that the edit would put in it; nothing was changed"
                ) from None
            in_place[operation.path] = (
                InPlaceLines(source.text, starts, changed, source.encoding == "utf-8" and not source.has_bom)
                if changed is not None else None
            )
        elif isinstance(operation, CreateFile):
            exists = load(operation.path) is not None
            if exists and operation.ignore_if_exists:
                continue
            if exists and not operation.overwrite:
                raise FileOperationRefused(f"{operation.path} already exists (the edit would create it)")
            current[operation.path] = operation.content.encode("utf-8")
        elif isinstance(operation, RenameFile):
            data = load(operation.old)
            target_exists = load(operation.new) is not None
            if data is None:
                raise FileOperationRefused(f"{operation.old} does not exist (the edit would rename it)")
            if target_exists and operation.ignore_if_exists:
                continue
            if target_exists and not operation.overwrite:
                raise FileOperationRefused(f"{operation.new} already exists (the edit would rename {operation.old} to it)")
            current[operation.new], current[operation.old] = data, None
            modes[operation.new] = modes[operation.old]
        elif isinstance(operation, DeleteFile):
            if load(operation.path) is None:
                if operation.ignore_if_not_exists:
                    continue
                raise FileOperationRefused(f"{operation.path} does not exist (the edit would delete it)")
            current[operation.path] = None
    default_mode = 0o666 & ~_umask()
    touched_otherwise = {path for operation in edit.operations if not isinstance(operation, FileChange)
                         for path in paths_of(with_canonical_paths(operation, canonical))}
    return [
        FileState(
            path, before[path], current[path], modes[path] if modes[path] is not None else default_mode,
            in_place.get(path) if path not in touched_otherwise else None, hashes.get(path),
        )
        for path in current
    ]


def with_canonical_paths(operation: Operation, canonical: Callable[[str], str]) -> Operation:
    """The operation on real paths; the same object when they already are (the usual case, and
    rebuilding a change would check its edits for overlaps again)."""
    if isinstance(operation, RenameFile):
        old, new = canonical(operation.old), canonical(operation.new)
        return operation if (old, new) == (operation.old, operation.new) else replace(operation, old=old, new=new)
    path = canonical(operation.path)
    return operation if path == operation.path else replace(operation, path=path)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def absolute(workspace: Workspace, path: str) -> Path:
    return workspace.resolve(path)[1]
