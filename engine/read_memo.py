"""Files read once per call: within one call (a plan and its preview), a file read again whose
status is unchanged is answered from the first read.

A warm rename of ``cached_property`` on Django reads its 91 files to plan, then reads, decodes
and hashes them again moments later for the preview, a cost paid on every call. The status is the
file's inode, size and modification and change times, in nanoseconds. Two writes within one tick
of the file system's clock can leave the same times (a racy read, as git calls it), so only a
file whose times were already :data:`RACY_SECONDS` old when it was read is remembered: any later
write or ``touch`` gives it a newer change time. Never used to write: an apply reads the disk.

A long-lived engine (the CLI's daemon) keeps one memo from call to call, bounded by
:data:`KEPT_BYTES`: the same check holds whatever time has passed, since any write since the read
leaves a newer change time. A script's renames then read only what changed in between.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from typing import Generic, TypeVar

RACY_SECONDS = 3.0
"""How old a file's times must be for its read to be remembered: more than any file system's
timestamp granularity (FAT's is the coarsest)."""

KEPT_BYTES = 32 * 2**20
"""What a memo kept between calls holds at most (the bytes, twice over when the decoded text is
kept too); the least recently used files go first."""

Read = TypeVar("Read")
Signature = tuple[int, int, int, int]


class RememberedReads(Generic[Read]):
    def __init__(self, limit_bytes: int | None = None) -> None:
        """``limit_bytes``: for a memo kept between calls (:data:`KEPT_BYTES`); None, unbounded
        (one call's, let go at its end)."""
        self._reads: OrderedDict[str, tuple[Signature, bytes, Read | None]] = OrderedDict()
        self._limit = limit_bytes
        self._held = 0
        self._lock = threading.Lock()  # kept between calls, it outlives any one thread's use

    def get(self, path: str, status: os.stat_result) -> tuple[bytes, Read | None] | None:
        """(the bytes, their decoded form if it was made) of ``path`` if it was read with this status."""
        with self._lock:
            kept = self._reads.get(path)
            if kept is None or kept[0] != _signature(status):
                return None
            if self._limit is not None:
                self._reads.move_to_end(path)
            return kept[1], kept[2]

    def keep(self, path: str, status: os.stat_result, data: bytes, read: Read | None = None) -> None:
        """``status`` as it was before ``data`` was read: a write in between leaves a newer one."""
        settled = time.time_ns() - int(RACY_SECONDS * 1e9)
        if status.st_mtime_ns >= settled or status.st_ctime_ns >= settled:
            return
        with self._lock:
            self._drop(path)
            self._reads[path] = (_signature(status), data, read)
            self._held += _weight(data, read)
            while self._limit is not None and self._held > self._limit and self._reads:
                self._drop(next(iter(self._reads)))

    def clear(self) -> None:
        with self._lock:
            self._reads.clear()
            self._held = 0

    def _drop(self, path: str) -> None:
        dropped = self._reads.pop(path, None)
        if dropped is not None:
            self._held -= _weight(dropped[1], dropped[2])


def _weight(data: bytes, read: object | None) -> int:
    """The memory a kept read holds, about: its bytes, and as much again for a decoded text."""
    return len(data) * (2 if read is not None else 1)


def _signature(status: os.stat_result) -> Signature:
    return status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns
