"""What changed under the workspace, as the Linux kernel reports it (inotify), so that a
long-lived engine (the CLI's daemon) need not walk and stat every file before each call: on a
large project that sweep is a large share of every warm answer.

The watcher only narrows the sweep; it never widens what is trusted. Whatever it cannot vouch
for makes :meth:`ChangeWatcher.changes` answer None, and the caller sweeps the whole workspace:
a full event queue, a folder created, moved or removed (its files were never watched), a
``.gitignore`` or virtual environment appearing (the scan's rules change). Elsewhere than
Linux, or past the kernel's watch limit, there is no watcher and every call sweeps.

inotify is a system call on this process's own descriptor, not a program or a protocol, so it
stays in the engine (which talks to processes only through ports).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
import sys
from typing import Iterable

_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x002, 0x004, 0x008
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x040, 0x080, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF = 0x400, 0x800
_IN_Q_OVERFLOW, _IN_IGNORED, _IN_ONLYDIR, _IN_ISDIR = 0x4000, 0x8000, 0x01000000, 0x40000000
_IN_NONBLOCK, _IN_CLOEXEC = os.O_NONBLOCK, os.O_CLOEXEC

_WATCHED = (_IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE
            | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR)
_SWEEP_AGAIN = _IN_Q_OVERFLOW | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_IGNORED
"""Events after which the watched set no longer matches the tree: sweep."""
_RULE_FILES = frozenset({".gitignore", "pyvenv.cfg"})
"""Files whose appearance or change changes what the scan includes."""
_EVENT = struct.Struct("iIII")


class ChangeWatcher:
    """inotify watches on a set of workspace folders (relative paths, ``""`` for the root)."""

    def __init__(self, root: str, descriptor: int, libc: ctypes.CDLL) -> None:
        self.root = root
        self._fd = descriptor
        self._libc = libc
        self._folders: dict[int, str] = {}
        self._watched: set[str] = set()
        self._unsure = False
        """Set when folders were added after their contents may have changed: the next call sweeps."""

    @classmethod
    def start(cls, root: str, folders: Iterable[str]) -> ChangeWatcher | str:
        """A watcher on ``folders``, or why there is none (said by ``graft daemon status``)."""
        if not sys.platform.startswith("linux"):
            return f"no inotify on {sys.platform}"
        name = ctypes.util.find_library("c")
        try:
            libc = ctypes.CDLL(name or "libc.so.6", use_errno=True)
            descriptor = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        except (OSError, AttributeError):
            return "this C library has no inotify"
        if descriptor < 0:
            return f"inotify refused ({os.strerror(ctypes.get_errno())}; raise fs.inotify.max_user_instances)"
        watcher = cls(root, descriptor, libc)
        if not watcher.add(folders):
            error = os.strerror(ctypes.get_errno())
            watcher.close()
            return f"inotify refused a watch ({error}; raise fs.inotify.max_user_watches)"
        # Still unsure: a file created between the caller's walk and these watches has no
        # event, so the next call sweeps once more, with every folder watched by then.
        return watcher

    def add(self, folders: Iterable[str]) -> bool:
        """Watch these folders too; False when the kernel refuses one (the watch limit)."""
        for folder in folders:
            if folder in self._watched:
                continue
            path = os.path.join(self.root, folder).encode()
            wd = self._libc.inotify_add_watch(self._fd, path, _WATCHED)
            if wd < 0:
                if ctypes.get_errno() in (errno.ENOENT, errno.ENOTDIR):
                    self._unsure = True  # gone already: the next sweep sees it
                    continue
                return False
            self._folders[wd] = folder
            self._watched.add(folder)
            self._unsure = True  # its files may have changed before the watch began
        return True

    @property
    def watched(self) -> frozenset[str]:
        return frozenset(self._watched)

    def changes(self) -> set[str] | None:
        """Workspace paths with events since the last call, or None when only a whole sweep can
        say what changed. Events are queued by the kernel as each write happens, so a file saved
        before this call is in the answer."""
        touched: set[str] = set()
        sweep = self._unsure
        self._unsure = False
        while True:
            try:
                chunk = os.read(self._fd, 65536)
            except BlockingIOError:
                break
            offset = 0
            while offset < len(chunk):
                wd, mask, _cookie, length = _EVENT.unpack_from(chunk, offset)
                raw_name = chunk[offset + _EVENT.size: offset + _EVENT.size + length].rstrip(b"\0")
                offset += _EVENT.size + length
                if mask & _SWEEP_AGAIN or (mask & _IN_ISDIR and mask & (_IN_CREATE | _IN_MOVED_TO | _IN_MOVED_FROM | _IN_DELETE)):
                    sweep = True
                    continue
                folder = self._folders.get(wd)
                name = os.fsdecode(raw_name)
                if folder is None or not name:
                    continue
                if name in _RULE_FILES:
                    sweep = True
                touched.add(f"{folder}/{name}" if folder else name)
        return None if sweep else touched

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
