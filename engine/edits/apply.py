"""The only code that writes the user's files: journaled, locked, all or nothing, even across a crash.

apply:  canonical paths → the workspace's apply lock → hashes checked → dirty-git guard → syntax
        check → journal (before-images) and every file staged beside its target → one
        file-system sync → per file: replace → one sync → commit marker → archive to
        history → unlock
recover: every journal entry without a commit marker and without a live owner is
        rolled back to its before-images, each path re-validated inside the root.
undo:   a new journaled transaction that writes a past one's before-images back,
        refused when a file no longer has that transaction's after-hash; redo reverts an undo
        the same way (the undone transaction again), so both work as a stack.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import shutil
import stat
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, IO, Iterator

from engine.edits.outcome import EditOutcome
from engine.edits.diff import FileSummary, summarize
from engine.edits.journal import (
    DamagedJournal, Entry, Journal, JournalRecord, RequestState, fsync_directory, sync_filesystems, try_lock, write_durably,
)
from engine.edits.journal_trust import UntrustedJournal, restorable_mode
from engine.edits.model import WorkspaceEdit
from engine.edits.materialize import FileState, with_canonical_paths, materialize
from engine.edits.syntax import newly_broken
from engine.errors import GraftError, Refused, UnsafePath
from engine.extract.treesitter import TreeSitterExtractor
from engine.state_folder import Quarantined, check_state_folders, open_state_file, quarantine, read_state_file, state_folder
from engine.read_memo import RememberedReads
from engine.workspace import SourceFile, Workspace

Hook = Callable[[str], None]
"""Called after each step (``locked``, ``journaled``, ``replaced:N``, ``committed``): fault injection in tests."""


class DirtyFiles(Refused):
    code = "dirty_files"


class SyntaxBroken(Refused):
    code = "syntax_errors"


class UndoRefused(Refused):
    code = "undo_refused"


class VerifyFailed(Refused):
    code = "verify_failed"


class WriteFailed(Refused):
    """The system refused a write (permissions, an immutable file); everything was rolled back."""

    code = "write_failed"


class DiskFull(WriteFailed):
    code = "disk_full"


@dataclass(frozen=True)
class ApplyOptions:
    allow_dirty: bool = False
    allow_syntax_errors: bool = False
    own_changes: frozenset[str] = frozenset()
    """Paths whose uncommitted changes are this caller's own (earlier steps of a batch)."""
    force: bool = False
    """Write files whose mode denies writing (their mode is kept)."""
    request: str | None = None
    """The caller's id for this request, recorded in the journal (see :meth:`Transactions.request_state`)."""


@dataclass(frozen=True)
class Recovered:
    transaction: str
    action: str
    """rolled-back | finished (committed but not archived) | quarantined (not trusted: moved aside)"""
    files: list[str]
    reason: str = ""
    """For a quarantined entry: why, and where it was moved."""
    code: str = ""
    """For a quarantined entry: the refusal's code (``untrusted_journal``, ``damaged_journal``, ``unsafe_path``, ...)."""

    @staticmethod
    def of(moved: Quarantined, files: list[str] | None = None, code: str = "unsafe_state_folder") -> Recovered:
        return Recovered(moved.path, "quarantined", files or [], moved.message(), code)

    def message(self) -> str:
        if self.action == "quarantined":
            return self.reason + (f"; the files it names may be half-written: {', '.join(self.files)}" if self.files else "")
        if self.action == "finished":
            return f"finished transaction {self.transaction}, committed before a crash"
        return f"rolled back transaction {self.transaction}, interrupted by a crash"


DirtyCheck = Callable[[list[str]], set[str]]
"""Returns which of the given workspace paths have uncommitted changes in version control."""


class Transactions:
    def __init__(self, workspace: Workspace, *, hook: Hook | None = None, dirty_check: DirtyCheck | None = None) -> None:
        self.workspace = workspace
        self.root = workspace.root
        self.journal = Journal(self.root)
        self.hook = hook or (lambda step: None)
        self.dirty_check = dirty_check
        self._parser = TreeSitterExtractor()

    # -- apply -------------------------------------------------------------------

    def preview(self, edit: WorkspaceEdit) -> list[FileState]:
        """What the edit would write, checked against the disk; writes nothing."""
        return materialize(edit, self.workspace)

    def apply(self, edit: WorkspaceEdit, options: ApplyOptions = ApplyOptions(),
              settle: Callable[[list[FileSummary]], None] | None = None,
              before_write: Callable[[], None] | None = None) -> EditOutcome:
        """Write the edit as one journaled transaction. ``before_write`` runs under the lock once
        the edit has passed its checks, before anything is written (the errors before the edit
        are gathered there, so a refused edit costs no server's time). ``settle`` runs once the
        files are in place and before the commit, under the lock: what it raises rolls the
        transaction back, and so does a crash while it runs (recovery finds the transaction
        uncommitted)."""
        canonical = self.workspace.canonical_all(edit.touched)
        for path in canonical.values():
            self.workspace.check_writable(path)  # before the lock: a refused edit leaves no trace
        with self._locked(list(canonical.values())), self._dirty_meanwhile(canonical, options) as dirty:
            self.hook("locked")
            decoded: dict[str, tuple[str, list[int]]] = {}
            states = self._states(edit, options, canonical, decoded)
            broken = self._checked(states, edit, options, canonical, decoded, dirty)
            if before_write is not None:
                before_write()
            record = self._write(states, "apply", (lambda: settle(summarize(states))) if settle is not None else None,
                                 request=options.request)
        return EditOutcome("apply", True, summarize(states), record.id, edits=edit.edit_count, new_syntax_errors=broken)

    def dry_run(self, edit: WorkspaceEdit, options: ApplyOptions = ApplyOptions()) -> tuple[list[FileState], GraftError | None]:
        """What the edit would write, and the refusal an apply with these options would meet (None:
        it would be written), from one reading of the files; writes nothing. A dry run reports the
        refusal rather than showing a clean diff of a change that cannot land."""
        canonical = self.workspace.canonical_all(edit.touched)
        decoded: dict[str, tuple[str, list[int]]] = {}
        with self._dirty_meanwhile(canonical, options) as dirty:
            # A stale plan is refused here, as a preview is; this call's reads are the disk's (engine.read_memo).
            states = self._states(edit, options, canonical, decoded, self.workspace.remembered_reads)
            try:
                for path in canonical.values():
                    self.workspace.check_writable(path)
                self._checked(states, edit, options, canonical, decoded, dirty)
            except GraftError as refusal:
                return states, refusal
        return states, None

    @contextmanager
    def _dirty_meanwhile(self, canonical: dict[str, str], options: ApplyOptions) -> Iterator[Future[set[str]] | None]:
        """The uncommitted-changes check of the edit's files, started now and run beside the
        reading and editing of those files: it is another program (``git status``, often the
        larger part of a warm rename's dry run), whose wait needs no interpreter
        lock. It asks about every path the edit touches; :meth:`_checked` keeps those it writes
        over. An apply starts it once its lock is taken, as the check after the reading was."""
        if options.allow_dirty or self.dirty_check is None or not canonical:
            yield None
            return
        check = self.dirty_check
        with ThreadPoolExecutor(1, thread_name_prefix="graft-dirty-check") as background:
            yield background.submit(check, sorted(set(canonical.values())))

    def _states(self, edit: WorkspaceEdit, options: ApplyOptions, canonical: dict[str, str],
                decoded: dict[str, tuple[str, list[int]]], reads: RememberedReads[SourceFile] | None = None) -> list[FileState]:
        """The files the edit changes, before and after, checked against the disk (stale plans).
        ``reads`` only for a dry run: an apply reads every file it writes."""
        states = [s for s in materialize(edit, self.workspace, canonical_paths=canonical, decoded=decoded, force=options.force,
                                         reads=reads) if s.changed]
        self.hook("verified")
        return states

    def _checked(self, states: list[FileState], edit: WorkspaceEdit, options: ApplyOptions, canonical: dict[str, str],
                 decoded: dict[str, tuple[str, list[int]]], dirty_check: Future[set[str]] | None) -> list[str]:
        """The checks an apply makes on what it would write: uncommitted changes that are not the
        engine's own, and syntax. Raises the refusal; returns the files left broken when allowed."""
        if dirty_check is not None:
            dirty = dirty_check.result() & {s.path for s in states if s.before is not None}
            dirty -= options.own_changes
            dirty -= self._written_by_engine([s for s in states if s.path in dirty])
            if dirty:
                raise DirtyFiles(f"uncommitted changes in {', '.join(sorted(dirty))}; commit or stash them, or allow dirty "
                                 "files to write anyway", option="allow_dirty")
        operations = [with_canonical_paths(o, canonical.__getitem__) for o in edit.operations]
        broken = newly_broken(states, operations, self._parser, decoded)
        if broken and not options.allow_syntax_errors:
            where = "; ".join(f"{path} {error}" for path, error in broken.items())
            raise SyntaxBroken(f"the edit would break the syntax of {where} (it parses now); nothing was changed",
                               option="allow_syntax_errors")
        return list(broken)

    def _written_by_engine(self, states: list[FileState]) -> set[str]:
        """Paths whose uncommitted content is exactly what this workspace's own journal last wrote
        there: an agent's second edit of a file it edited itself is not over the user's work. A
        file changed by hand since has another hash and stays guarded."""
        if not states:
            return set()
        last_written = self.journal.last_written({s.path for s in states})
        return {s.path for s in states if s.before is not None and last_written.get(s.path) == _sha(s.before)}

    def _write(self, states: list[FileState], kind: str, settle: Callable[[], None] | None = None, *,
               request: str | None = None) -> JournalRecord:
        try:
            record, lock = self.journal.begin(states, kind, request)
        except OSError as error:
            raise _typed(error, "writing the journal") from None
        doing = "writing the journal"
        try:
            self.hook("journaled")
            targets = [self.root / state.path for state in states]
            # One file-system sync for the journal and all the staged files, and one for all the
            # renames, instead of an fsync per file and per folder: as durable, and on a
            # hundred-file rename the difference between a few ms and most of the apply.
            staged = []
            for target, state in zip(targets, states):
                doing = f"staging {state.path}"
                staged.append(_stage(target, state.after, state.mode, record.id, durable=False))
                self.hook(f"staged:{state.path}")
            doing = "syncing the file system"
            sync_filesystems(self.root, self.journal.journal)  # the journal is durable before any target changes
            for number, (target, staged_file) in enumerate(zip(targets, staged)):
                doing = f"replacing {states[number].path}"
                _put_staged(target, staged_file)
                self.hook(f"replaced:{number}")
            # Before the commit marker: the renames are then durable, and a crash before this
            # point is rolled back from the journal anyway.
            sync_filesystems(self.root)
            if settle is not None:
                doing = "settling the transaction's conditions"
                self.hook("settling")
                settle()
            self.journal.commit(record)
            self.hook("committed")
            self.journal.archive(record)
        except BaseException as failure:
            # An exception (not a crash) mid-write: roll back now rather than at next start.
            if record.committed:
                raise  # written and committed: only archiving failed, and recovery finishes that
            self._roll_back(record)
            if isinstance(failure, OSError):
                raise _typed(failure, doing) from None
            raise
        finally:
            lock.close()
        return record

    # -- recovery, undo, history -------------------------------------------------

    def recover(self) -> list[Recovered]:
        """Roll back what crashes interrupted. Whatever under ``.graft`` cannot be trusted (a
        symlink, a manifest or before-image that fails validation, a path outside the workspace
        or into ``.git``) is moved aside and reported instead, so that it never blocks the next
        command and nothing is written from it."""
        reports = [Recovered.of(moved) for moved in check_state_folders(self.root)]
        for directory in self.journal.pending():
            lock = try_lock(directory)
            if lock is None:
                continue  # a live process owns it
            record: JournalRecord | None = None
            try:
                record = self.journal.load(directory)
                if record is None:
                    shutil.rmtree(directory, ignore_errors=True)  # begun, nothing written yet
                    continue
                if record.committed:
                    self.journal.archive(record)
                    reports.append(Recovered(record.id, "finished", [e.path for e in record.entries]))
                else:
                    self._roll_back(record)
                    reports.append(Recovered(record.id, "rolled-back", [e.path for e in record.entries]))
            except (DamagedJournal, UntrustedJournal, UnsafePath) as error:
                named = [e.path for e in record.entries] if record is not None else []
                reports.append(Recovered.of(quarantine(self.root, directory, error.message), named, error.code))
            finally:
                lock.close()
        return reports

    def _roll_back(self, record: JournalRecord) -> None:
        # Every before-image is checked before any is written: a journal that cannot be
        # trusted whole writes nothing.
        images: list[tuple[Entry, Path, bytes | None, bool]] = []
        for number, entry in enumerate(record.entries):
            target = self._inside(entry.path)  # a crafted journal cannot point outside the root, nor into .git
            # A target that is still the very file kept as its before-image was never replaced:
            # whatever it holds now is not this transaction's, and it is left as it is.
            replaced = not record.still_in_place(number, target)
            before = record.before_image(number) if replaced else None
            if replaced and entry.before_sha256 is not None and (before is None or _sha(before) != entry.before_sha256):
                raise DamagedJournal(f"journal {record.id} is damaged: the before-image of {entry.path} is missing or wrong")
            images.append((entry, target, before, replaced))
        for entry, target, before, replaced in reversed(images):
            current = target.read_bytes() if replaced and target.is_file() else None
            if replaced and current != before:
                _put(target, before, restorable_mode(entry.mode, target), record.id)
            _remove_staged(target, record.id)
        shutil.rmtree(record.directory, ignore_errors=True)
        fsync_directory(self.journal.journal)

    def history(self) -> list[JournalRecord]:
        return self.journal.records()

    def request_state(self, request: str) -> RequestState:
        """Whether the request with this id committed (its transactions), or is still being written."""
        return self.journal.request_state(request)

    def undo(self, transaction: str | None = None, *, request: str | None = None) -> EditOutcome:
        """Revert the latest applied (or redone) transaction not yet undone, or the one named:
        called again, it reverts the one before (a stack)."""
        candidates = [r for r in self.history() if not r.undone and r.kind in ("apply", "redo")]
        if transaction is not None:
            candidates = [r for r in candidates if r.id == transaction]
        if not candidates:
            raise UndoRefused(f"no transaction {transaction} to undo" if transaction else "nothing to undo")
        record = candidates[-1]
        undo_record, states = self._revert(record, "undo", request)
        return EditOutcome("undo", True, summarize(states), undo_record.id, reverted=record.id)

    def redo(self, transaction: str | None = None, *, request: str | None = None) -> EditOutcome:
        """Re-apply the latest undone transaction: a new journaled transaction (kind ``redo``) that
        writes the undo's before-images back, refused when a file changed since the undo.
        ``transaction`` names the undo to revert or the transaction it undid; without it, the
        latest undo not yet redone, as long as no new edit came after it (a new edit empties
        the redo stack, as in an editor)."""
        records = self.history()
        undos = [r for r in records if r.kind == "undo" and not r.undone]
        if transaction is not None:
            named = ([r for r in undos if r.id == transaction]
                     or [r for r in undos if self._undone_by(records, r) == transaction])
            if not named:
                raise UndoRefused(f"no undone transaction {transaction} to redo (`graft history` lists them)")
            undo_record = named[-1]
        else:
            undo_record = self._latest_redoable(records)
        original = self._undone_by(records, undo_record)
        redo_record, states = self._revert(undo_record, "redo", request)
        return EditOutcome("redo", True, summarize(states), redo_record.id, reverted=original or undo_record.id)

    @staticmethod
    def _latest_redoable(records: list[JournalRecord]) -> JournalRecord:
        """The top of the redo stack: the newest undo not yet redone, skipping redos and undos
        already redone; an apply met first means a new edit came after the undos."""
        for record in reversed(records):
            if record.kind == "apply":
                break
            if record.kind == "undo" and not record.undone:
                return record
        raise UndoRefused("nothing to redo: no undo since the last edit")

    @staticmethod
    def _undone_by(records: list[JournalRecord], undo_record: JournalRecord) -> str | None:
        """The transaction an undo reverted, for the answer only (from the UNDONE marker, which
        names the undo; what is written comes from the sealed undo record alone)."""
        for record in records:
            if record.kind != "undo" and record.undone and record.id != undo_record.id:
                try:
                    marker = read_state_file(record.directory / "UNDONE")
                except OSError:
                    continue
                if marker.decode(errors="replace").strip() == undo_record.id:
                    return record.id
        return None

    def _revert(self, record: JournalRecord, kind: str, request: str | None) -> tuple[JournalRecord, list[FileState]]:
        """Write a sealed record's before-images back as a new transaction of ``kind``, refused
        when a file no longer has the record's after-hash; marks the record UNDONE."""
        doing = "undone" if kind == "undo" else "redone"
        try:
            paths = [self._canonical(e.path) for e in record.entries]
            for entry in record.entries:
                self._inside(entry.path)
        except UnsafePath as error:
            moved = quarantine(self.root, record.directory, error.message)
            raise UndoRefused(f"transaction {record.id} cannot be {doing}: {moved.message()}") from None
        with self._locked(paths):
            states = []
            for number, entry in enumerate(record.entries):
                target = self._inside(entry.path)
                current = target.read_bytes() if target.is_file() else None
                if (_sha(current) if current is not None else None) != entry.after_sha256:
                    raise UndoRefused(f"{entry.path} changed after transaction {record.id}; it cannot be {doing}")
                before = record.before_image(number)
                if (_sha(before) if before is not None else None) != entry.before_sha256:
                    raise UndoRefused(f"the before-image of {entry.path} in transaction {record.id} is missing or "
                                      f"changed (the journal under .graft/history is damaged); it cannot be {doing}")
                states.append(FileState(entry.path, current, before, restorable_mode(entry.mode, target)))
            written = self._write(states, kind, request=request)
            write_durably(record.directory / "UNDONE", written.id.encode())
        return written, states

    # -- helpers -----------------------------------------------------------------

    def _canonical(self, path: str) -> str:
        return self.workspace.canonical(path)

    def _inside(self, path: str) -> Path:
        if os.path.isabs(path) or ".." in Path(path).parts:
            raise UnsafePath(f"journal path {path} is outside the workspace")
        self.workspace.check_writable(self.workspace.canonical(path))
        return self.workspace.resolve(path)[1]

    def _locked(self, paths: list[str]) -> ExitStack:
        """One cross-process lock for the workspace's applies, held from the hash checks to the
        commit: two applies touching the same file can then never interleave. (A lock per path
        would let disjoint applies run at once, at the price of a lock file opened per touched
        file; applies take milliseconds, so they simply queue.) ``paths`` is what is touched:
        nothing to lock when it is empty."""
        stack = ExitStack()
        if paths:
            lock_file = state_folder(self.root, "locks") / "apply.lock"
            handle: IO[bytes] = stack.enter_context(os.fdopen(open_state_file(lock_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND), "ab"))
            fcntl.flock(handle, fcntl.LOCK_EX)
        return stack


def _typed(error: OSError, doing: str) -> WriteFailed:
    """A system error during an apply as the refusal it is: which file, why, and that nothing changed."""
    reason = error.strerror or str(error)
    if error.errno == errno.ENOSPC:
        return DiskFull(f"the disk is full ({reason}) while {doing}; every file was rolled back, nothing was changed")
    return WriteFailed(f"the system refused a write ({reason}) while {doing}; every file was rolled back, nothing was changed")


def _put(target: Path, data: bytes | None, mode: int | None, transaction: str) -> None:
    """Replace (or delete) one file atomically: stage beside it, fsync, rename over it, fsync the folder."""
    _put_staged(target, _stage(target, data, mode, transaction))
    fsync_directory(target.parent)


def _stage(target: Path, data: bytes | None, mode: int | None, transaction: str, *, durable: bool = True) -> Path | None:
    """Write the new content beside the target (fsynced unless the caller syncs the file system
    itself); None when the target is to be deleted."""
    if data is None:
        return None
    if not target.parent.is_dir():
        target.parent.mkdir(parents=True)
    staged = target.parent / f".{target.name}.graft-{transaction}.tmp"
    # Created with its mode; set again only where the umask took bits away (a chmod a file
    # costs a tenth of an 83-file stage).
    descriptor = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), mode if mode is not None else 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(descriptor, view):]
        if mode is not None and stat.S_IMODE(os.fstat(descriptor).st_mode) != mode:
            os.fchmod(descriptor, mode)
        if durable:
            os.fsync(descriptor)
    finally:
        os.close(descriptor)
    return staged


def _put_staged(target: Path, staged: Path | None) -> None:
    if staged is not None:
        os.replace(staged, target)
    elif target.exists():
        target.unlink()


def _remove_staged(target: Path, transaction: str) -> None:
    staged = target.parent / f".{target.name}.graft-{transaction}.tmp"
    if staged.exists():
        staged.unlink()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
