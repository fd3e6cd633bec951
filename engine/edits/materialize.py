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
    files = _Materializing(workspace, canonical_paths, decoded, force, reads, check_hashes)
    for operation in edit.operations:
        operation = with_canonical_paths(operation, files.canonical)
        if isinstance(operation, FileChange):
            files.change(operation)
        elif isinstance(operation, CreateFile):
            files.create(operation)
        elif isinstance(operation, RenameFile):
            files.rename(operation)
        elif isinstance(operation, DeleteFile):
            files.delete(operation)
    return files.states(edit)


class _Materializing:
    """One :func:`materialize` call: each touched path's bytes before and now, its mode, its hash
    as read, and its decoded source when read earlier in the call (engine.read_memo)."""

    def __init__(
        self, workspace: Workspace, canonical_paths: dict[str, str] | None, decoded: dict[str, tuple[str, list[int]]] | None,
        force: bool, reads: RememberedReads[SourceFile] | None, check_hashes: bool,
    ) -> None:
        self.workspace, self.decoded, self.force, self.reads, self.check_hashes = workspace, decoded, force, reads, check_hashes
        self.current: dict[str, bytes | None] = {}
        self.in_place: dict[str, InPlaceLines | None] = {}
        self.before: dict[str, bytes | None] = {}
        self.modes: dict[str, int | None] = {}
        self.hashes: dict[str, str] = {}
        self.sources: dict[str, SourceFile] = {}  # read earlier in this call, unchanged since (engine.read_memo)
        self.known = dict(canonical_paths or {})
        self.root = str(workspace.root)  # strings, not pathlib: a rename's dry run reads a hundred files

    def canonical(self, path: str) -> str:
        """The real path, workspace-relative: an edit through a symlink inside the workspace
        changes the file it points to, and the link stays a link."""
        if path not in self.known:
            self.known[path] = self.workspace.canonical(path)  # refuses anything outside, symlinks included
        self.workspace.check_writable(self.known[path])
        return self.known[path]

    def load(self, path: str) -> bytes | None:
        if path not in self.current:
            absolute = f"{self.root}/{path}"  # a canonical path: checked inside, no symlink left in it
            try:
                status = os.stat(absolute)
            except FileNotFoundError:
                status = None
            if status is not None:
                self._check_writable(path, status)
            kept = self.reads.get(path, status) if self.reads is not None and status is not None else None
            data: bytes | None
            if kept is not None:
                data, source = kept
                if source is not None:
                    self.sources[path] = source
            else:
                data = read_bytes(absolute) if status is not None else None
            self.current[path] = data
            self.before[path] = data
            self.modes[path] = stat.S_IMODE(status.st_mode) if status is not None else None
        return self.current[path]

    def _check_writable(self, path: str, status: os.stat_result) -> None:
        if not stat.S_ISREG(status.st_mode):
            raise FileOperationRefused(f"{path} is not a regular file")
        if not self.force and not status.st_mode & stat.S_IWUSR:
            # Root can write anything; a file whose mode says "do not write" is still not ours to write.
            raise ReadOnlyFile(f"{path} is read-only (mode {stat.S_IMODE(status.st_mode):04o}); nothing was changed "
                               "(forced, it is written and its mode kept)", option="force")
        limit = self.workspace.config.max_file_bytes
        if status.st_size > limit:
            # The same limit as every read: editing a file that large is slow, and a plan never reads it anyway.
            raise UnreadableFile(path, f"{status.st_size / 2**20:.1f} MiB is over the {limit / 2**20:.1f} MiB "
                                       "limit for source files; nothing was changed", option="max_file_bytes")

    def change(self, operation: FileChange) -> None:
        path = operation.path
        data = self.load(path)
        if data is None:
            raise StalePlan(f"{path} does not exist; the plan expected to edit it (re-run)")
        unchanged = data is self.before[path]
        source = self.sources[path] if unchanged and path in self.sources else decode_source(path, data, 0.0)
        if self.check_hashes and operation.expected_sha256 and source.sha256 != operation.expected_sha256:
            raise StalePlan(f"{path} changed since the plan was made; re-run")
        starts = source.line_starts
        if path not in self.hashes and self.current[path] is self.before[path]:
            self.hashes[path] = source.sha256  # of the bytes read from disk, unchanged so far
        if self.decoded is not None and path not in self.decoded:
            self.decoded[path] = (source.text, starts)
        # Known only for a file whose one change is this one.
        changed = changed_lines_in_place(source.text, starts, operation.edits) if path not in self.in_place else None
        text = (with_changed_lines(source.text, starts, changed) if changed is not None
                else apply_text_edits(source.text, operation.edits, source.newline, starts))
        try:
            self.current[path] = source.encode(text)
        except UnicodeEncodeError as error:
            raise FileOperationRefused(
                f"{path} is written in {source.encoding}, which cannot hold {error.object[error.start:error.end]!r} "
                "that the edit would put in it; nothing was changed"
            ) from None
        self.in_place[path] = (
            InPlaceLines(source.text, starts, changed, source.encoding == "utf-8" and not source.has_bom)
            if changed is not None else None
        )

    def create(self, operation: CreateFile) -> None:
        exists = self.load(operation.path) is not None
        if exists and operation.ignore_if_exists:
            return
        if exists and not operation.overwrite:
            raise FileOperationRefused(f"{operation.path} already exists (the edit would create it)")
        self.current[operation.path] = operation.content.encode("utf-8")

    def rename(self, operation: RenameFile) -> None:
        data = self.load(operation.old)
        target_exists = self.load(operation.new) is not None
        if data is None:
            raise FileOperationRefused(f"{operation.old} does not exist (the edit would rename it)")
        if target_exists and operation.ignore_if_exists:
            return
        if target_exists and not operation.overwrite:
            raise FileOperationRefused(f"{operation.new} already exists (the edit would rename {operation.old} to it)")
        self.current[operation.new], self.current[operation.old] = data, None
        self.modes[operation.new] = self.modes[operation.old]

    def delete(self, operation: DeleteFile) -> None:
        if self.load(operation.path) is None:
            if operation.ignore_if_not_exists:
                return
            raise FileOperationRefused(f"{operation.path} does not exist (the edit would delete it)")
        self.current[operation.path] = None

    def states(self, edit: WorkspaceEdit) -> list[FileState]:
        default_mode = 0o666 & ~_umask()
        touched_otherwise = {path for operation in edit.operations if not isinstance(operation, FileChange)
                             for path in paths_of(with_canonical_paths(operation, self.canonical))}
        modes = self.modes
        return [
            FileState(
                path, self.before[path], self.current[path], mode if (mode := modes[path]) is not None else default_mode,
                self.in_place.get(path) if path not in touched_otherwise else None, self.hashes.get(path),
            )
            for path in self.current
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
