"""The errors a check has already had, kept for the next check of the same files.

A check compares each file's errors before an edit with its errors after it. The errors after
one apply are the errors before the next, when nothing changed in between; and after an undo,
the errors before the undone apply are current again. Asking the server again costs it a
re-check of each file (it re-checks a module's dependents after any change), so a long-lived
engine (the CLI's daemon) keeps what its checks had.

A file's errors depend on every file it reads, so each is kept under the whole workspace's
content (:func:`workspace_state`: every indexed file's content hash, from the project graph) and
the file's own hash. Any change anywhere, an edit of graft's or one the long-lived engine learnt
of from the disk, makes a new state, and what was kept for the old one is not used.
Configuration files are not indexed: those at the workspace's root that type checkers read
(:data:`CONFIG_FILES`) are part of the state by size and modification time.
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from engine.answers import Diagnostic

_STATES_PER_FILE = 4
"""States kept per file, the newest last: an apply, its undo and a redo each make one."""


@dataclass(frozen=True)
class KeptErrors:
    errors: tuple[Diagnostic, ...]
    server: str


class KeptBaseline:
    def __init__(self) -> None:
        self._kept: dict[str, dict[tuple[str, str], KeptErrors]] = {}
        self._lock = threading.Lock()  # a preview's fill keeps errors from its own thread (engine.edits.baseline_fill)

    def get(self, path: str, file_hash: str, state: str) -> KeptErrors | None:
        with self._lock:
            return self._kept.get(path, {}).get((file_hash, state))

    def put(self, path: str, file_hash: str, state: str, errors: list[Diagnostic], server: str) -> None:
        with self._lock:
            kept = self._kept.setdefault(path, {})
            kept.pop((file_hash, state), None)
            kept[(file_hash, state)] = KeptErrors(tuple(errors), server)
            while len(kept) > _STATES_PER_FILE:
                del kept[next(iter(kept))]

    def states_of(self, path: str) -> list[tuple[str, str]]:
        """The (file hash, workspace state) pairs kept for ``path``, oldest first."""
        with self._lock:
            return list(self._kept.get(path, {}))

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()


CONFIG_FILES = ("pyproject.toml", "pyrightconfig.json", "setup.cfg", "mypy.ini", "tsconfig.json", "jsconfig.json",
                "package.json", "go.mod", "go.work")


def workspace_state(root: Path, hashes: Mapping[str, str]) -> str:
    """One hash of every file's content hash and of the root's configuration files' stat."""
    digest = hashlib.sha256()
    for path, file_hash in sorted(hashes.items()):
        digest.update(f"{path}\0{file_hash}\n".encode("utf-8", "surrogateescape"))
    for name in CONFIG_FILES:
        try:
            stat = os.stat(root / name)
        except OSError:
            continue
        digest.update(f"{name}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()
