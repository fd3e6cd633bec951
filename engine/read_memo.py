"""Files read once per call: within one call (a plan and its preview), a file read again whose
status is unchanged is answered from the first read.

A warm rename of ``cached_property`` on Django reads its 91 files to plan, then reads, decodes
and hashes them again 150 ms later for the preview (about 6 ms of every call). The status is the
file's inode, size and modification and change times, in nanoseconds. Two writes within one tick
of the file system's clock can leave the same times (a racy read, as git calls it), so only a
file whose times were already :data:`RACY_SECONDS` old when it was read is remembered: any later
write or ``touch`` gives it a newer change time. Never used to write: an apply reads the disk.
"""

from __future__ import annotations

import os
import time
from typing import Generic, TypeVar

RACY_SECONDS = 3.0
"""How old a file's times must be for its read to be remembered: more than any file system's
timestamp granularity (FAT's is 2 s)."""

Read = TypeVar("Read")
Signature = tuple[int, int, int, int]


class RememberedReads(Generic[Read]):
    def __init__(self) -> None:
        self._reads: dict[str, tuple[Signature, bytes, Read | None]] = {}

    def get(self, path: str, status: os.stat_result) -> tuple[bytes, Read | None] | None:
        """(the bytes, their decoded form if it was made) of ``path`` if it was read with this status."""
        kept = self._reads.get(path)
        if kept is None or kept[0] != _signature(status):
            return None
        return kept[1], kept[2]

    def keep(self, path: str, status: os.stat_result, data: bytes, read: Read | None = None) -> None:
        """``status`` as it was before ``data`` was read: a write in between leaves a newer one."""
        settled = time.time_ns() - int(RACY_SECONDS * 1e9)
        if status.st_mtime_ns < settled and status.st_ctime_ns < settled:
            self._reads[path] = (_signature(status), data, read)


def _signature(status: os.stat_result) -> Signature:
    return status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns
