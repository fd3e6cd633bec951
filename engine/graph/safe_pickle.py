"""Reading the cache under ``.graft/cache`` without trusting it: a workspace can ship that folder.

Unpickling runs whatever callable a pickle names, so a crafted cache entry would run code on the
next warm start. Entries are read by an unpickler that finds only the value classes the cache
holds (facts, symbols, positions, the graph and networkx's graph classes); anything else is an
error the cache treats as a miss. diskcache's file-backed values are named by a path stored in
its database: one that is not of diskcache's own form (``ab/cd/<28 hex>.val``) is never opened or
removed (a crafted ``../..`` there would read, or on cull delete, a file outside).
"""

from __future__ import annotations

import io
import pickle
import re
from typing import IO, Any

import diskcache
import diskcache.core

_VALUE_MODULES = frozenset({"engine.graph.facts", "engine.graph.receivers", "engine.symbols", "engine.graph.modules", "engine.graph.build", "engine.graph.python_names", "engine.positions"})
_VALUE_CLASSES = frozenset({("engine.graph.cache", "FileStat"), ("engine.graph.edges", "SharedEdges"), ("builtins", "set"), ("builtins", "frozenset"), ("builtins", "bytearray")})
_DISKCACHE_FILE = re.compile(r"[0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{28}\.val")


class _ValuesOnly(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        allowed = module in _VALUE_MODULES or (module, name) in _VALUE_CLASSES or module.startswith("networkx.classes.")
        found = super().find_class(module, name) if allowed else None
        if not isinstance(found, type):  # classes only: a function named by a pickle would be called
            raise pickle.UnpicklingError(f"a cache entry names {module}.{name}, which codegraft's cache never holds")
        return found


def safe_load(handle: IO[bytes]) -> Any:
    return _ValuesOnly(handle).load()


def safe_loads(data: bytes) -> Any:
    return _ValuesOnly(io.BytesIO(data)).load()


UNREADABLE_KEY = ("codegraft: an unreadable cache key",)
"""What a key that fails :func:`safe_loads` reads as: never one of the cache's own (string) keys."""


class SafeDisk(diskcache.Disk):
    """diskcache's serializer, reading pickles with :func:`safe_load` and refusing value-file
    names that diskcache itself would never have written."""

    def get(self, key: Any, raw: bool) -> Any:
        if raw:
            return super().get(key, raw)
        try:
            return safe_loads(bytes(key))
        except (AttributeError, ImportError, EOFError, pickle.UnpicklingError):
            return UNREADABLE_KEY

    def fetch(self, mode: int, filename: str | None, value: Any, read: bool) -> Any:
        if filename is not None:
            _check_file_name(filename)
        if mode == diskcache.core.MODE_PICKLE:
            if value is None:
                with open(f"{self._directory}/{filename}", "rb") as reader:
                    return safe_load(reader)
            return safe_loads(bytes(value))
        return super().fetch(mode, filename, value, read)

    def remove(self, file_path: str) -> None:
        if _DISKCACHE_FILE.fullmatch(file_path):
            super().remove(file_path)


def _check_file_name(filename: str) -> None:
    if not _DISKCACHE_FILE.fullmatch(filename):
        raise pickle.UnpicklingError(f"a cache entry points at {filename!r}, outside codegraft's cache")
