"""The on-disk journal: before-images and after-hashes of a transaction, written before any target.

Layout under ``<root>/.graft``::

    journal/<txn>/manifest.json   paths, before/after hashes, modes
    journal/<txn>/before/<n>      before-image of entry n (absent when the file did not exist)
    journal/<txn>/lock            held (flock) by the process applying the transaction
    journal/<txn>/COMMITTED       written once every target is in place
    history/<txn>/...             the same, moved here after commit; undo reads it

A directory under journal/ without COMMITTED whose lock is free is an interrupted
transaction: recovery rolls it back.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, IO

from engine.edits.plan import FileState
from engine.workspace import graft_directory


def fsync_directory(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


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

    def before_image(self, number: int) -> bytes | None:
        blob = self.directory / "before" / str(number)
        return blob.read_bytes() if blob.exists() else None


class Journal:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.base = root / ".graft"
        self.journal = self.base / "journal"
        self.history = self.base / "history"

    def begin(self, states: list[FileState], kind: str) -> tuple[JournalRecord, IO[bytes]]:
        """Write the before-images and manifest durably; returns the record and its held lock."""
        graft_directory(self.root)
        now = time.time()
        # Sortable ids: transactions in one second must still list (and undo) in order.
        transaction = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f".{int(now * 1e6) % 1_000_000:06d}-" + uuid.uuid4().hex[:6]
        directory = self.journal / transaction
        (directory / "before").mkdir(parents=True)
        lock = open(directory / "lock", "wb")  # noqa: SIM115 - held for the whole transaction
        fcntl.flock(lock, fcntl.LOCK_EX)
        entries = []
        for number, state in enumerate(states):
            if state.before is not None:
                write_durably(directory / "before" / str(number), state.before)
            entries.append(Entry(state.path, state.before_sha256, state.after_sha256, state.mode))
        record = JournalRecord(transaction, now, kind, entries, directory)
        manifest = {
            "id": transaction, "created": record.created, "kind": kind,
            "entries": [e.__dict__ for e in entries],
        }
        write_durably(directory / "manifest.json", json.dumps(manifest, indent=1).encode())
        fsync_directory(directory / "before")
        fsync_directory(directory)
        fsync_directory(self.journal)
        return record, lock

    def commit(self, record: JournalRecord) -> None:
        write_durably(record.directory / "COMMITTED", b"")
        fsync_directory(record.directory)

    def archive(self, record: JournalRecord) -> None:
        """Move a committed transaction to history, where undo finds it."""
        self.history.mkdir(parents=True, exist_ok=True)
        target = self.history / record.id
        os.replace(record.directory, target)
        fsync_directory(self.history)
        fsync_directory(self.journal)
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


def load(directory: Path) -> JournalRecord | None:
    try:
        manifest: dict[str, Any] = json.loads((directory / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    entries = [Entry(e["path"], e["before_sha256"], e["after_sha256"], e["mode"]) for e in manifest.get("entries", [])]
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
