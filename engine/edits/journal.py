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
transaction: recovery rolls it back. An entry with no place in the pack has its
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

from engine.edits.plan import FileState
from engine.workspace import graft_directory


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
    return function  # type: ignore[no-any-return]


def write_durably(path: Path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


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
    """apply | undo"""
    entries: list[Entry]
    directory: Path

    @property
    def committed(self) -> bool:
        return (self.directory / "COMMITTED").exists()

    @property
    def undone(self) -> bool:
        return (self.directory / "UNDONE").exists()

    def still_in_place(self, number: int, target: Path) -> bool:
        """True when the n-th entry's before-image is a hard link to ``target`` itself: the
        target was never replaced, so there is nothing of this transaction in it to undo."""
        if self.entries[number].image is not None:
            return False
        try:
            return os.path.samefile(self.directory / "before" / str(number), target)
        except OSError:
            return False

    def before_image(self, number: int) -> bytes | None:
        image = self.entries[number].image
        if image is not None:
            offset, length = image
            try:
                with open(self.directory / "before.pack", "rb") as pack:
                    pack.seek(offset)
                    data = pack.read(length)
            except OSError:
                return None  # a missing pack is a damaged journal; the caller says so
            return data if len(data) == length else None
        blob = self.directory / "before" / str(number)  # the layout before the pack
        return blob.read_bytes() if blob.exists() else None


class Journal:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.base = root / ".graft"
        self.journal = self.base / "journal"
        self.history = self.base / "history"

    def begin(self, states: list[FileState], kind: str) -> tuple[JournalRecord, IO[bytes]]:
        """Write the before-images and manifest; returns the record and its held lock. Not
        synced here: the caller syncs the file system once, for the journal and its staged
        files together, before it replaces any target."""
        graft_directory(self.root)
        now = time.time()
        # Sortable ids: transactions in one second must still list (and undo) in order.
        transaction = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f".{int(now * 1e6) % 1_000_000:06d}-" + uuid.uuid4().hex[:6]
        directory = self.journal / transaction
        directory.mkdir(parents=True)
        lock = open(directory / "lock", "wb")  # noqa: SIM115 - held for the whole transaction
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
        record = JournalRecord(transaction, now, kind, entries, directory)
        manifest = {
            "id": transaction, "created": record.created, "kind": kind,
            "entries": [{**e.__dict__, "image": list(e.image) if e.image else None} for e in entries],
        }
        if images:
            (directory / "before.pack").write_bytes(b"".join(images))
        (directory / "manifest.json").write_bytes(json.dumps(manifest, indent=1).encode())
        return record, lock

    def commit(self, record: JournalRecord) -> None:
        write_durably(record.directory / "COMMITTED", b"")
        fsync_directory(record.directory)

    def archive(self, record: JournalRecord) -> None:
        """Move a committed transaction to history, where undo finds it."""
        self.history.mkdir(parents=True, exist_ok=True)
        target = self.history / record.id
        os.replace(record.directory, target)
        # Not synced: if a crash loses this rename, recovery finds the transaction committed
        # under journal/ and archives it again.
        record.directory = target

    def pending(self) -> list[Path]:
        return sorted(p for p in self.journal.iterdir() if p.is_dir()) if self.journal.is_dir() else []

    def records(self) -> list[JournalRecord]:
        found = []
        if self.history.is_dir():
            for directory in sorted(self.history.iterdir()):
                record = load(directory)
                if record is not None:
                    found.append(record)
        return sorted(found, key=lambda record: (record.created, record.id))


def _link_before_image(target: Path, folder: Path, number: int, before: bytes) -> bool:
    """Keep the target file itself as its before-image, as ``folder/<number>`` (a hard link),
    when it still holds exactly ``before``; False when it cannot (another file system, no hard
    links there, or the file changed since it was read), and the caller copies the bytes.

    Besides saving the copy, this makes replacing the target cheap: with the old file still
    linked, the rename over it only updates a directory entry, where freeing the old file's
    blocks cost ext4 about 0.1 ms a file (83 files: 10 ms of a 40 ms apply, measured)."""
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


def load(directory: Path) -> JournalRecord | None:
    try:
        manifest: dict[str, Any] = json.loads((directory / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    entries = [
        Entry(e["path"], e["before_sha256"], e["after_sha256"], e["mode"], tuple(e["image"]) if e.get("image") else None)
        for e in manifest.get("entries", [])
    ]
    return JournalRecord(str(manifest.get("id", directory.name)), float(manifest.get("created", 0)),
                         str(manifest.get("kind", "apply")), entries, directory)


def try_lock(directory: Path) -> IO[bytes] | None:
    """The transaction's lock if no live process holds it (it died), else None."""
    try:
        handle = open(directory / "lock", "ab")  # noqa: SIM115
    except OSError:
        return None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle
