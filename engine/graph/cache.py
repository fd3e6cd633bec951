"""The on-disk cache under ``<root>/.graft/cache``: per-file facts, file stats, and a graph snapshot.

Per-file facts are keyed by schema version, extractor id, path and content
sha256 (joined into one string key), so a changed file misses and a bumped schema misses everywhere. The
stat table lets a warm start hash only files whose size or mtime moved. The
snapshot (the whole graph, with the fingerprint of every file it was built
from) makes a warm start with nothing changed a single read. diskcache keeps
all of this consistent across processes (SQLite underneath).
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import diskcache

from engine.graph.build import GRAPH_FORMAT
from engine.graph.facts import EXTRACTOR_ID, SCHEMA_VERSION, FileFacts
from engine.graph.safe_pickle import SafeDisk, safe_loads

_UNREADABLE = (AttributeError, ImportError, EOFError, pickle.UnpicklingError)
"""What reading an entry raises when it is damaged, from an older codegraft, or crafted: a miss."""

Fingerprint = tuple[tuple[str, str], ...]
_INLINE_LIMIT = 2**20

#: Keys are strings: diskcache stores them as they are, where tuple keys are pickled and
#: pickle-optimised on every lookup (a measurable share of a cold index).
_SEPARATOR = "\x1f"


def _key(*parts: object) -> str:
    return _SEPARATOR.join(str(part) for part in parts)
"""Sorted (path, sha256) of every indexed file."""


@dataclass(frozen=True)
class FileStat:
    size: int
    mtime_ns: int
    sha256: str


class FactsCache:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        # No eviction: the cache holds one entry per file and version, and stale ones are culled below.
        # Values up to 1 MB stay in SQLite: diskcache's default (32 kB) gave a large file's facts a
        # file of its own, and making those folders and files cost a cold index more than the
        # inserts; the snapshot (tens of MB) is still a file, read in one go.
        self._cache = diskcache.Cache(str(directory), eviction_policy="none", size_limit=2**40, disk=SafeDisk,
                                      disk_min_file_size=_INLINE_LIMIT)
        self.hits = 0
        self.misses = 0

    def close(self) -> None:
        self._cache.close()

    def facts(self, path: str, sha256: str, symbols_from: str = "ast") -> FileFacts | None:
        """Cached facts of one file version; ``symbols_from="lsp"`` asks only for server-sourced ones."""
        try:
            found = self._cache.get(_key("facts", SCHEMA_VERSION, EXTRACTOR_ID, path, sha256, symbols_from))
            facts = safe_loads(found) if isinstance(found, bytes) else found
        except _UNREADABLE:
            facts = None
        if not isinstance(facts, FileFacts):
            self.misses += 1
            return None
        self.hits += 1
        return facts

    def store_facts(self, facts: FileFacts, pickled: bytes | None = None) -> None:
        """Facts are stored pickled by us (diskcache keeps bytes as they are): a worker that
        computed them hands over that pickle, and the parent does not make it again."""
        symbols_from = "lsp" if facts.source == "lsp" else "ast"
        blob = pickled if pickled is not None else pickle.dumps(facts, pickle.HIGHEST_PROTOCOL)
        self._cache.set(_key("facts", SCHEMA_VERSION, EXTRACTOR_ID, facts.path, facts.sha256, symbols_from), blob)

    def store_many(self, many: list[tuple[FileFacts, bytes | None]]) -> None:
        """One transaction for many entries: a commit per entry would cost more than the pickling."""
        with self._cache.transact():
            for facts, pickled in many:
                self.store_facts(facts, pickled)

    def transaction(self) -> Any:
        """Group writes into one SQLite transaction (``with cache.transaction(): ...``)."""
        return self._cache.transact()

    def stats(self) -> dict[str, FileStat]:
        try:
            stats = self._cache.get(_key("stats", SCHEMA_VERSION), {})
        except _UNREADABLE:
            return {}
        return stats if isinstance(stats, dict) else {}

    def store_stats(self, stats: dict[str, FileStat]) -> None:
        self._cache.set(_key("stats", SCHEMA_VERSION), stats)

    def snapshot(self, symbols_from: str = "ast") -> tuple[Fingerprint, Any] | None:
        """The last graph written, or None (also when it cannot be read back: it is then rebuilt).
        A graph built with server symbols and one built from the tree alone are kept apart."""
        try:
            # diskcache is untyped; store_snapshot below writes this shape.
            snapshot: tuple[Fingerprint, Any] | None = self._cache.get(
                _key("snapshot", SCHEMA_VERSION, EXTRACTOR_ID, GRAPH_FORMAT, symbols_from)
            )
            return snapshot
        except _UNREADABLE:
            return None

    def store_snapshot(self, fingerprint: Fingerprint, graph: Any, symbols_from: str = "ast") -> None:
        self._cache.set(_key("snapshot", SCHEMA_VERSION, EXTRACTOR_ID, GRAPH_FORMAT, symbols_from), (fingerprint, graph))

    def cull(self, keep: Fingerprint) -> int:
        """Delete facts of file versions no longer on disk, and everything of other schema versions."""
        wanted = set(keep)
        removed = 0
        for key in list(self._cache.iterkeys()):
            if not isinstance(key, str):
                self._cache.delete(key)  # an older cache's tuple key
                removed += 1
                continue
            parts = key.split(_SEPARATOR)
            kind, version = parts[0], parts[1] if len(parts) > 1 else ""
            stale_version = version != str(SCHEMA_VERSION) or (kind == "snapshot" and parts[3] != str(GRAPH_FORMAT))
            stale_facts = kind == "facts" and (parts[2] != EXTRACTOR_ID or (parts[3], parts[4]) not in wanted)
            if stale_version or stale_facts:
                self._cache.delete(key)
                removed += 1
        return removed
