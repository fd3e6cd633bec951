"""The on-disk journal: before-images and after-hashes of a transaction, written before any target.

Layout under ``<root>/.graft``::

    journal/<txn>/manifest.json   paths, before/after hashes, modes, where each before-image lies
    journal/<txn>/before/<n>      the n-th entry's file itself, hard-linked, while it still held
                                  exactly what was read (and in records older than the pack, a copy)
    journal/<txn>/before.pack     the other before-images, one after another in one file
    journal/<txn>/lock            held (flock) by the process applying the transaction
    journal/<txn>/COMMITTED       written once every target is in place
    history/<txn>/...             the same, moved here after commit; undo reads it

A directory under journal/ without COMMITTED whose lock is free is an interrupted
transaction: recovery rolls it back. A workspace can ship a ``.graft`` of its own, so every
file here is opened without following symlinks, every manifest is validated field by field
(:class:`DamagedJournal` otherwise), and the caller quarantines what fails. An entry with no place in the pack has its
before-image at ``before/<n>``: a hard link to the file it was, or, in transactions written
before the pack existed, a copy; both are read the same way, for recovery and undo.
"""

from __future__ import annotations

import ctypes
import fcntl
import functools
import json
import os
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, IO

from engine.edits.journal_trust import UntrustedJournal, check_sealed, existing_secret, seal, workspace_secret
from engine.edits.materialize import FileState
from engine.errors import Refused
from engine.state_folder import Quarantined, is_real_folder, open_state_file, quarantine, read_state_file, state_folder, write_new_file

_SHA256_LENGTH = 64
_KINDS = ("apply", "undo", "redo")
_REQUEST_LENGTH = 200


class DamagedJournal(Refused):
    code = "damaged_journal"


def fsync_directory(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def sync_filesystems(*paths: Path) -> None:
    """Make everything written so far on the file systems holding ``paths`` durable: Linux's
    syncfs(2), one call per file system however many files (as dpkg does when it unpacks);
    elsewhere sync(2). Raises OSError when the kernel reports a write-back error, so a failed
    write is never committed."""
    syncfs = _libc_syncfs()
    if syncfs is None:
        os.sync()
        return
    done: set[int] = set()
    for path in paths:
        descriptor = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            device = os.fstat(descriptor).st_dev
            if device in done:
                continue
            done.add(device)
            if syncfs(descriptor) != 0:
                error = ctypes.get_errno()
                raise OSError(error, f"syncfs failed: {os.strerror(error)}", str(path))
        finally:
            os.close(descriptor)


@functools.lru_cache(maxsize=1)
def _libc_syncfs() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None
    function.argtypes, function.restype = [ctypes.c_int], ctypes.c_int
    return function


def write_durably(path: Path, data: bytes) -> None:
    write_new_file(path, data, durable=True)


@dataclass(frozen=True)
class Entry:
    path: str
    before_sha256: str | None
    after_sha256: str | None
    mode: int | None
    image: tuple[int, int] | None = None
    """(offset, length) of the before-image in before.pack; None for a new file or one whose
    before-image is ``before/<n>``."""


@dataclass
class JournalRecord:
    id: str
    created: float
    kind: str
    """apply | undo | redo (an undo's before-images written back: the undone apply again)"""
    entries: list[Entry]
    directory: Path
    request: str | None = None
    """The id of the request that wrote it (a CLI call, a fleet task): a client that lost the
    answer asks the journal whether that request committed instead of running it again."""

    @property
    def committed(self) -> bool:
        return os.path.lexists(self.directory / "COMMITTED")

    @property
    def undone(self) -> bool:
        return os.path.lexists(self.directory / "UNDONE")

    def still_in_place(self, number: int, target: Path) -> bool:
        """True when the n-th entry's before-image is a hard link to ``target`` itself: the
        target was never replaced, so there is nothing of this transaction in it to undo.
        (lstat on the image: a symlink planted there is not the file.)"""
        if self.entries[number].image is not None:
            return False
        try:
            image, current = os.lstat(self.directory / "before" / str(number)), os.stat(target)
        except OSError:
            return False
        return (image.st_dev, image.st_ino) == (current.st_dev, current.st_ino)

    def before_image(self, number: int) -> bytes | None:
        """The n-th entry's before-image, or None when it is missing, short, or reached only
        through a symlink (the caller refuses the journal as damaged)."""
        image = self.entries[number].image
        try:
            if image is not None:
                offset, length = image
                descriptor = open_state_file(self.directory / "before.pack", os.O_RDONLY)
                try:
                    data = os.pread(descriptor, length, offset) if length else b""
                finally:
                    os.close(descriptor)
                return data if len(data) == length else None
            if not is_real_folder(self.directory / "before"):
                return None
            return read_state_file(self.directory / "before" / str(number))  # a hard link, or the layout before the pack
        except OSError:
            return None


@dataclass(frozen=True)
class RequestState:
    committed: list[JournalRecord]
    in_progress: bool


class Journal:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.base = root / ".graft"
        self.journal = self.base / "journal"
        self.history = self.base / "history"
        self.quarantined: list[Quarantined] = []
        """History records moved aside while listing them, for the caller to report."""
        self._written: dict[str, tuple[tuple[str, str | None], ...]] = {}
        """History record id → (path, after-hash) of each entry: a committed record's entries never
        change, so each manifest is read once however often the dirty guard asks."""
        self._secret: bytes | None = None
        """This workspace's sealing key (engine.edits.journal_trust), once read or made."""

    def load(self, directory: Path) -> JournalRecord | None:
        """The record in ``directory`` (see :func:`load`), refused unless this user's codegraft sealed it."""
        if self._secret is None:
            self._secret = existing_secret(self.root)
        return load(directory, self._secret)

    def begin(self, states: list[FileState], kind: str, request: str | None = None) -> tuple[JournalRecord, IO[bytes]]:
        """Write the before-images and manifest; returns the record and its held lock. Not
        synced here: the caller syncs the file system once, for the journal and its staged
        files together, before it replaces any target."""
        if request is not None and not _valid_request(request):
            raise ValueError(f"a request id is 1 to {_REQUEST_LENGTH} printable characters, not {request!r}")
        if self._secret is None:
            self._secret = workspace_secret(self.root)
        journal = state_folder(self.root, "journal")
        now = time.time()
        # Sortable ids: transactions in one second must still list (and undo) in order.
        transaction = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f".{int(now * 1e6) % 1_000_000:06d}-" + uuid.uuid4().hex[:6]
        directory = journal / transaction
        directory.mkdir()
        lock = os.fdopen(open_state_file(directory / "lock", os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "wb")
        fcntl.flock(lock, fcntl.LOCK_EX)
        entries, images, offset = [], [], 0
        (directory / "before").mkdir()
        for number, state in enumerate(states):
            image = None
            if state.before is not None and not _link_before_image(self.root / state.path, directory / "before", number, state.before):
                image = (offset, len(state.before))
                images.append(state.before)
                offset += len(state.before)
            entries.append(Entry(state.path, state.before_sha256, state.after_sha256, state.mode, image))
        record = JournalRecord(transaction, now, kind, entries, directory, request)
        manifest: dict[str, Any] = {
            "id": transaction, "created": record.created, "kind": kind, "request": request, "creator_uid": os.getuid(),
            "entries": [{**e.__dict__, "image": list(e.image) if e.image else None} for e in entries],
        }
        manifest["seal"] = seal(manifest, self._secret)
        if images:
            write_new_file(directory / "before.pack", b"".join(images))
        # Written whole or not at all: a manifest that does not parse is then never a crash's
        # doing, but damage, and is quarantined.
        write_new_file(directory / "manifest.json.tmp", json.dumps(manifest, indent=1).encode())
        os.replace(directory / "manifest.json.tmp", directory / "manifest.json")
        return record, lock

    def commit(self, record: JournalRecord) -> None:
        write_durably(record.directory / "COMMITTED", b"")
        fsync_directory(record.directory)

    def archive(self, record: JournalRecord) -> None:
        """Move a committed transaction to history, where undo finds it."""
        target = state_folder(self.root, "history") / record.id
        os.replace(record.directory, target)
        # Not synced: if a crash loses this rename, recovery finds the transaction committed
        # under journal/ and archives it again.
        record.directory = target

    def pending(self) -> list[Path]:
        """Transaction folders under journal/ (real folders only: anything else there is
        quarantined when the engine starts)."""
        if not is_real_folder(self.journal):
            return []
        return sorted(p for p in self.journal.iterdir() if is_real_folder(p))

    def records(self) -> list[JournalRecord]:
        """Committed transactions, oldest first; one whose record fails validation is moved
        aside (listed in :attr:`quarantined`) and left out."""
        found = []
        if is_real_folder(self.history):
            for directory in sorted(self.history.iterdir()):
                record = self._checked_load(directory)
                if record is not None:
                    found.append(record)
        return sorted(found, key=lambda record: (record.created, record.id))

    def last_written(self, paths: set[str]) -> dict[str, str | None]:
        """For each of ``paths`` some committed transaction wrote, the hash the latest one left
        there (None: it deleted the file). Newest records first, stopping once every path is
        found; ids sort in time order (see :meth:`begin`)."""
        found: dict[str, str | None] = {}
        if not is_real_folder(self.history):
            return found
        for directory in sorted(self.history.iterdir(), reverse=True):
            if directory.name not in self._written:
                record = self._checked_load(directory)
                if record is None:
                    continue
                self._written[directory.name] = tuple((e.path, e.after_sha256) for e in record.entries)
            for path, after in self._written[directory.name]:
                if path in paths and path not in found:
                    found[path] = after
            if len(found) == len(paths):
                break
        return found

    def request_state(self, request: str) -> RequestState:
        """What the journal knows of request ``request``: the transactions it committed (a batch
        committed step by step has several), and whether one of its transactions is still being
        written by a live process, whose outcome is then not known yet."""
        committed = [record for record in self.records() if record.request == request]
        in_progress = False
        for directory in self.pending():
            try:
                record = self.load(directory)
            except (DamagedJournal, UntrustedJournal):
                continue  # recovery quarantines it; it proves nothing either way
            if record is None or record.request != request:
                continue
            if record.committed:
                committed.append(record)
            else:
                lock = try_lock(directory)
                if lock is None:
                    in_progress = True  # a live process holds it
                else:
                    lock.close()  # its writer died: recovery rolls it back, so it never happened
        return RequestState(sorted(committed, key=lambda record: (record.created, record.id)), in_progress)

    def _checked_load(self, directory: Path) -> JournalRecord | None:
        """The record in a history folder, or None after quarantining one that fails validation."""
        try:
            record = self.load(directory) if is_real_folder(directory) else None
            if record is None:
                raise DamagedJournal(f"{directory.name} has no readable manifest")
        except (DamagedJournal, UntrustedJournal) as error:
            self.quarantined.append(quarantine(self.root, directory, error.message))
            return None
        return record


def _link_before_image(target: Path, folder: Path, number: int, before: bytes) -> bool:
    """Keep the target file itself as its before-image, as ``folder/<number>`` (a hard link),
    when it still holds exactly ``before``; False when it cannot (another file system, no hard
    links there, or the file changed since it was read), and the caller copies the bytes.

    Besides saving the copy, this makes replacing the target cheap: with the old file still
    linked, the rename over it only updates a directory entry, where freeing the old file's
    blocks costs ext4 work per file, a large share of an apply that writes many files."""
    link = folder / str(number)
    try:
        os.link(target, link)
    except OSError:
        return False
    try:
        with open(link, "rb") as handle:
            if handle.read() == before:
                return True
    except OSError:
        pass
    link.unlink(missing_ok=True)  # it is not the file that was read: copy what was read
    return False


def load(directory: Path, secret: bytes | None) -> JournalRecord | None:
    """The record in ``directory``; None when it has no manifest yet (begun, nothing written);
    :class:`DamagedJournal` when the manifest is there but is malformed, :class:`UntrustedJournal`
    when it is well formed but not sealed with ``secret`` by this user."""
    try:
        data = read_state_file(directory / "manifest.json")
    except FileNotFoundError:
        return None
    except OSError as error:
        raise DamagedJournal(f"its manifest cannot be read ({error.strerror or error})") from None
    try:
        manifest = json.loads(data)
    except ValueError:
        raise DamagedJournal("its manifest is not JSON") from None
    record = _record(manifest, directory)
    check_sealed(manifest, secret)
    return record


def _record(manifest: Any, directory: Path) -> JournalRecord:
    """A manifest checked field by field: a crafted one is refused, never half-used."""
    def check(condition: bool, what: str) -> None:
        if not condition:
            raise DamagedJournal(f"its manifest has {what}")

    check(isinstance(manifest, dict), "no object at its top")
    transaction, created, kind, entries = (manifest.get(key) for key in ("id", "created", "kind", "entries"))
    check(isinstance(transaction, str) and transaction == directory.name, "an id that is not its folder's name")
    check(isinstance(created, (int, float)) and not isinstance(created, bool), "no creation time")
    check(kind in _KINDS, f"an unknown kind {kind!r}")
    check(isinstance(entries, list), "no list of entries")
    request = manifest.get("request")
    check(request is None or (isinstance(request, str) and _valid_request(request)), "a malformed request id")
    parsed = []
    for entry in entries:
        check(isinstance(entry, dict) and isinstance(entry.get("path"), str) and entry["path"] != "", "an entry without a path")
        for key in ("before_sha256", "after_sha256"):
            value = entry.get(key)
            check(value is None or (isinstance(value, str) and len(value) == _SHA256_LENGTH), f"a malformed {key}")
        mode, image = entry.get("mode"), entry.get("image")
        check(mode is None or (type(mode) is int and 0 <= mode <= 0o7777), "a malformed mode")
        check(image is None or (isinstance(image, list) and len(image) == 2
                                and all(type(n) is int and n >= 0 for n in image)), "a malformed image")
        parsed.append(Entry(entry["path"], entry.get("before_sha256"), entry.get("after_sha256"), mode,
                            (image[0], image[1]) if image else None))
    return JournalRecord(transaction, float(created), kind, parsed, directory, request)


def _valid_request(request: str) -> bool:
    return 0 < len(request) <= _REQUEST_LENGTH and request.isprintable()


def try_lock(directory: Path) -> IO[bytes] | None:
    """The transaction's lock if no live process holds it (it died), else None."""
    try:
        handle = os.fdopen(open_state_file(directory / "lock", os.O_WRONLY | os.O_CREAT | os.O_APPEND), "ab")
    except OSError:
        return None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle
