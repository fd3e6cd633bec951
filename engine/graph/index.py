"""Indexing a workspace into a :class:`ProjectGraph`: cold, warm and incremental, with the cache."""

from __future__ import annotations

import gc
import hashlib
import os
import sqlite3
import pickle
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
import threading
from multiprocessing import get_all_start_methods, get_context
from pathlib import Path
from typing import Callable, Iterable

from engine.errors import GraftError
from engine.extract import FileSymbols, SymbolExtractor
from engine.graph.build import ProjectGraph
from engine.graph.cache import FactsCache, FileStat, Fingerprint
from engine.graph.facts import FileFacts, file_facts
from engine.graph.listing import KeptListing
from engine.graph.watch import ChangeWatcher
from engine.languages import language_of
from engine.state_folder import state_folder
from engine.workspace import Skipped, SourceFile, Workspace, WorkspaceConfig

Progress = Callable[[int, int], None]
"""Called with (files done, files to extract) while extracting."""
ServedSymbols = Callable[[SourceFile, "FileSymbols"], "FileSymbols | None"]
"""A language server's symbols for a file, given the file's syntax-tree symbols to reconcile them
with; None when the server does not answer (the tree's symbols are used then)."""

_PARALLEL_FROM = {"fork": 64, "spawn": 500}
"""Fewer files than this are extracted in-process. Forked workers start at once; spawned
ones (the process has threads: a rename starts its server before the graph) import the engine
first, which pays off only for many files, the more so as a first rename's server is starting
on the same cores."""


@dataclass
class IndexStats:
    files: int = 0
    files_by_language: dict[str, int] = field(default_factory=dict)
    symbols: int = 0
    edges_by_kind: dict[str, int] = field(default_factory=dict)
    symbols_by_source: dict[str, int] = field(default_factory=dict)
    cache_hits: int = 0
    extracted: int = 0
    recomputed: int = 0
    """Files whose edges were re-resolved (all of them on a full build)."""
    culled: int = 0
    """Cache entries dropped because no file on disk has that content any more."""
    mode: str = "cold"
    """cold (built from facts), incremental (snapshot plus changes) or warm (snapshot as is)."""
    seconds: float = 0.0
    skipped: list[Skipped] = field(default_factory=list)
    swept: list[str] = field(default_factory=list)
    """Files a sweep of an already loaded graph found added, changed or removed, and re-read."""


class ProjectIndex:
    """Owns the workspace's cache; builds and keeps the graph current."""

    def __init__(
        self, workspace: Workspace, *, jobs: int | None = None, progress: Progress | None = None,
        served_symbols: ServedSymbols | None = None,
    ) -> None:
        self.workspace = workspace
        self.served_symbols = served_symbols
        """When set, each file's symbols are asked of the language server first (in this process)."""
        self.jobs = jobs or min(2, os.cpu_count() or 1)
        self.progress = progress
        self.cache = FactsCache(state_folder(workspace.root, "cache"))
        self.extractor = SymbolExtractor()
        self.graph = ProjectGraph()
        self._snapshot_stale = False
        self._last_scan_skipped: list[Skipped] = []
        self._loaded = False
        """Whether this index holds a graph it loaded: asked again, it sweeps the disk instead."""
        self._snapshot_writer: int | None = None
        """The pid of a child writing the snapshot, until waited for."""
        self._stats: dict[str, FileStat] | None = None
        """The stat table as of the last load or refresh; written back on close when refreshed."""
        self._unsaved_facts: dict[str, FileFacts] = {}
        """Facts of refreshed files, written on close (or before the next load)."""
        self._left_the_scan: set[str] = set()
        """Files the last whole sweep found missing from the scan (deleted, or ignored now)."""
        self._watcher: ChangeWatcher | None = None
        """Started by the first sweep of a loaded graph (a long-lived engine asks again; a
        one-shot command never does), so that later sweeps stat only what the kernel saw change."""
        self.watch_note: str | None = None
        """Why a long-lived engine sweeps the whole workspace before each call, if it does."""
        self._listing = KeptListing(str(workspace.root))
        self._unstored: list[tuple[FileFacts, bytes | None]] = []
        """Facts extracted by the last load, with their pickles: written with its snapshot."""

    def _write_snapshot(self) -> None:
        """Write the graph's snapshot, and the facts extracted for it. Pickling the graph is the
        last serial step of a cold index and one core sits idle by then: where forking is safe
        (no other thread, as for the extraction workers), a forked child writes both through its
        own cache connection while this process goes on; it is waited for before the snapshot is
        next read or written, and on close. The facts wait for it too: stored while the workers
        extracted, they took the parent's processor time from the two workers
        sharing the two cores."""
        self._wait_for_snapshot()
        extracted, self._unstored = self._unstored, []
        if threading.active_count() > 1 or "fork" not in get_all_start_methods():
            with self.cache.transaction():
                self.cache.store_many(extracted)
                self.cache.store_snapshot(self._fingerprint(), self.graph, self._symbols_from)
            return
        fingerprint = self._fingerprint()
        child = os.fork()
        if child == 0:  # the child: write, and leave without running any of the parent's exit handlers
            status = 1
            try:
                own = FactsCache(self.cache.directory)
                own.store_many(extracted)
                own.store_snapshot(fingerprint, self.graph, self._symbols_from)
                own.close()
                status = 0
            finally:
                os._exit(status)
        self._snapshot_writer = child

    def _save_facts(self) -> None:
        for facts in self._unsaved_facts.values():
            self.cache.store_facts(facts)
        self._unsaved_facts.clear()

    def _wait_for_snapshot(self) -> None:
        """Wait for a snapshot being written by a child; write it here if the child failed."""
        if self._snapshot_writer is None:
            return
        _pid, status = os.waitpid(self._snapshot_writer, 0)
        self._snapshot_writer = None
        if status != 0:  # the facts it was given are no longer held here: every fact of the graph, then
            with self.cache.transaction():
                self.cache.store_many([(facts, None) for facts in self.graph.facts.values()])
                self.cache.store_snapshot(self._fingerprint(), self.graph, self._symbols_from)

    def close(self) -> None:
        self._stop_watching()
        try:
            self._wait_for_snapshot()
            if self._snapshot_stale:
                with self.cache.transaction():
                    self._save_facts()
                    self.graph.edge_counts()
                    self.cache.store_snapshot(self._fingerprint(), self.graph, self._symbols_from)
                    if self._stats is not None:
                        self.cache.store_stats(self._stats)
        except (OSError, sqlite3.Error):
            # A cache that cannot be written (a full disk) costs the next start a re-index from the
            # files, never a failed command: nothing the user asked for depends on it.
            pass
        finally:
            self._snapshot_stale = False
            self.cache.close()
            self.graph.release()

    @property
    def _symbols_from(self) -> str:
        return "lsp" if self.served_symbols is not None else "ast"

    def _fingerprint(self) -> Fingerprint:
        return tuple(sorted((p, f.sha256) for p, f in self.graph.facts.items()))

    def load(self) -> IndexStats:
        """Bring the graph up to date with the disk, as cheaply as the cache allows."""
        started = time.perf_counter()
        if self._loaded:
            # Asked again by a long-lived engine (the daemon's `graft index`): the graph in memory
            # is current but for what a stat sweep finds. Reading the snapshot again cost most of
            # the call, and the replaced graph, frozen below, was never collected (+170 MB a call).
            return self._swept(started)
        gc_was_enabled = gc.isenabled()
        gc.disable()  # bulk object creation: the collector would dominate (LANGUAGE-SERVERS.md)
        try:
            stats = self._load()
        finally:
            # The graph lives as long as the index; frozen, its hundreds of thousands of objects
            # are no longer walked by every full collection, which otherwise lands in the
            # middle of later requests (a server reply being decoded) for tens of ms each.
            gc.freeze()
            if gc_was_enabled:
                gc.enable()
        stats.seconds = time.perf_counter() - started
        self._loaded = True
        return stats

    def catch_up(self) -> tuple[list[str], int]:
        """Re-read what changed on disk into the loaded graph: (the files found changed, the
        files re-resolved). What a long-lived engine does before each call; unlike ``load`` it
        counts nothing (no caller of this reads them, and they cost a walk of the graph)."""
        changed = self.changed_on_disk()
        return changed, len(self.refresh(changed, left=self._left_the_scan)) if changed else 0

    def _swept(self, started: float) -> IndexStats:
        changed, recomputed = self.catch_up()
        stats = IndexStats(mode="incremental" if changed else "warm", swept=changed, extracted=len(changed),
                           recomputed=recomputed)
        stats.skipped = list(self._last_scan_skipped)
        self._count(stats)
        stats.seconds = time.perf_counter() - started
        return stats

    def _load(self) -> IndexStats:
        stats = IndexStats()
        scan = self.workspace.scan()
        self._listing.keep(scan.files)
        stats.skipped = list(scan.skipped)
        sources = [p for p in scan.files if language_of(p) is not None]
        go_mods = {p: (self.workspace.root / p).read_text(encoding="utf-8", errors="replace")
                   for p in scan.files if p == "go.mod" or p.endswith("/go.mod")}  # strings: every file is asked
        known = self.cache.stats()
        current: dict[str, FileStat] = {}
        for path in sources:
            try:
                current[path] = self._stat(path, known.get(path))
            except GraftError as error:
                stats.skipped.append(Skipped(path, getattr(error, "reason", error.message)))
            except OSError as error:  # gone or made unreadable since the scan listed it
                stats.skipped.append(Skipped(path, f"cannot be read: {error.strerror or error}"))
        fingerprint: Fingerprint = tuple(sorted((p, s.sha256) for p, s in current.items()))
        self._wait_for_snapshot()
        self._save_facts()
        snapshot = self.cache.snapshot(self._symbols_from)
        if snapshot is not None and snapshot[0] == fingerprint and snapshot[1]._go_mod_texts == go_mods:
            self.graph = snapshot[1]
            stats.mode = "warm"
        else:
            old = dict(snapshot[0]) if snapshot is not None else None
            changed_paths = [p for p, s in current.items() if old is None or old.get(p) != s.sha256]
            facts, extracted = self._facts_for(changed_paths, current, stats)
            stats.extracted = extracted
            if snapshot is not None and old is not None and snapshot[1]._go_mod_texts == go_mods:
                self.graph = snapshot[1]
                removed = [p for p in old if p not in current]
                stats.recomputed = len(self.graph.update(facts, removed))
                stats.mode = "incremental"
            else:
                everything = {f.path: f for f in facts}
                asked = set(changed_paths)  # a file skipped above is not asked (and reported) twice
                unchanged = [p for p in current if p not in asked]
                more, more_extracted = self._facts_for(unchanged, current, stats)
                stats.extracted += more_extracted
                everything.update({f.path: f for f in more})
                self.graph = ProjectGraph(go_mods)
                self.graph.build(everything.values())
                stats.recomputed = len(everything)
            self.graph.edge_counts()  # counted before the snapshot is written, so a warm start has them
            self._write_snapshot()
            stats.culled = self.cache.cull(self._fingerprint())
        if current != known:
            self.cache.store_stats(current)  # a warm start with nothing changed writes nothing
        self._stats = current
        stats.cache_hits = self.cache.hits
        self._count(stats)
        return stats

    def changed_on_disk(self) -> list[str]:
        """The source files added, changed (size or mtime) or removed since the graph last saw
        them: what ``refresh`` needs when files changed behind a long-lived engine's back (a git
        checkout, an editor's save). With a watcher, a stat of each file it saw touched; else, or
        when it cannot vouch for what changed, a walk and a stat of every file."""
        self._left_the_scan = set()
        touched = self._watcher.changes() if self._watcher is not None else None
        if touched is not None:
            self._listing.notice(touched)
            changed = self._changed_among(touched)
            if changed is not None:
                return changed
        return self._sweep()

    def _sweep(self) -> list[str]:
        known = self._stats if self._stats is not None else self.cache.stats()
        scan = self.workspace.scan()
        self._listing.keep(scan.files)
        self._last_scan_skipped = list(scan.skipped)
        if self._loaded and (self._watcher is None or self._watcher.watched != frozenset(scan.folders)):
            # A fresh watcher when the folders changed: a folder moved or removed leaves stale
            # watches behind. Started before the stats below, so a change after a stat is an event.
            # The same folders: the watcher stands, and this sweep settled what it could not vouch for.
            self._stop_watching()
            started = ChangeWatcher.start(str(self.workspace.root), scan.folders)
            self._watcher, self.watch_note = (started, None) if isinstance(started, ChangeWatcher) else (None, started)
        sources = [p for p in scan.files if language_of(p) is not None]
        changed = []
        for path in sources:
            seen = known.get(path)
            try:
                info = (self.workspace.root / path).stat()
            except OSError:
                changed.append(path)
                continue
            if seen is None or (info.st_size, info.st_mtime_ns) != (seen.size, seen.mtime_ns):
                changed.append(path)
        present = set(sources)
        # Gone from the scan, though maybe still on disk: deleted, or newly ignored.
        self._left_the_scan = {p for p in known if p not in present}
        return changed + sorted(self._left_the_scan)

    def _changed_among(self, touched: set[str]) -> list[str] | None:
        """Which of the files the watcher saw touched changed; None when one is a new source
        file (whether the scan includes it is for its ignore rules to say: sweep)."""
        known = self._stats if self._stats is not None else self.cache.stats()
        changed = []
        for path in sorted(touched):
            if language_of(path) is None:
                continue
            seen = known.get(path)
            try:
                info = (self.workspace.root / path).stat()
            except OSError:
                if seen is not None:
                    changed.append(path)  # removed (or unreadable: refresh says which)
                continue
            if seen is None:
                return None
            if (info.st_size, info.st_mtime_ns) != (seen.size, seen.mtime_ns):
                changed.append(path)
        return changed

    def workspace_files(self) -> list[str]:
        """Every file of the workspace scan, sources or not (callers must not change the list):
        the listing of the last sweep while nothing touched since appeared or went, else a new
        walk (kept in turn). Current as of the last ``changed_on_disk`` or ``refresh``."""
        files = self._listing.files()
        if files is None:
            files = self.workspace.scan().files
            self._listing.keep(files)
        return files

    @property
    def loaded(self) -> bool:
        """Whether a graph was loaded (asked again, the index sweeps the disk instead)."""
        return self._loaded

    @property
    def watching(self) -> int:
        """The folders the watcher follows (0: none, see ``watch_note``)."""
        return len(self._watcher.watched) if self._watcher is not None else 0

    def _stop_watching(self) -> None:
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None

    def refresh(self, paths: Iterable[str], *, left: Iterable[str] = ()) -> set[str]:
        """Re-index just these files after an edit (the apply layer calls this); returns the files
        re-resolved. ``left``: those of them the scan no longer includes (ignored now), dropped
        like deleted files."""
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            return self._refresh(paths, set(left))
        finally:
            if gc_was_enabled:
                gc.enable()

    def _refresh(self, paths: Iterable[str], left: set[str]) -> set[str]:
        paths = list(paths)
        self._listing.notice(paths)  # an edit may have created or removed a file
        changed: list[FileFacts] = []
        removed: list[str] = []
        if self._stats is None:
            self._stats = self.cache.stats()
        known = self._stats
        for path in paths:
            if path in left or not (self.workspace.root / path).exists():
                removed.append(path)
                known.pop(path, None)
                continue
            try:
                source = self.workspace.read(path)
            except GraftError:
                # Over the size limit, binary or undecodable now: out of the graph, as a load leaves
                # it (a refactoring names it when it mentions what is changed), and its status
                # kept so that the next sweep does not take it for new again.
                removed.append(path)
                status = (self.workspace.root / path).stat()
                known[path] = FileStat(status.st_size, status.st_mtime_ns, "")
                continue
            known[path] = FileStat(source.size, (self.workspace.root / path).stat().st_mtime_ns, source.sha256)
            facts = _extract_one(self.workspace, self.extractor, path, self.served_symbols, source)
            if isinstance(facts, Skipped):
                removed.append(path)
                continue
            self._unsaved_facts[path] = facts
            changed.append(facts)
        recomputed = self.graph.update(changed, removed)
        # The snapshot, the stat table and the new facts are written on close, not per edit:
        # pickling them costs more than the update itself. Unwritten, nothing is lost: a later
        # load sees the changed files' size or mtime differ from the table, hashes them, finds
        # no facts for the new hashes, and extracts those files again.
        self._snapshot_stale = True
        return recomputed

    # -- helpers -------------------------------------------------------------

    def _stat(self, path: str, known: FileStat | None) -> FileStat:
        # Paths come from the scan, which already refused anything outside the workspace.
        absolute = os.path.join(self.workspace.root, path)
        stat = os.stat(absolute)
        if known is not None and (known.size, known.mtime_ns) == (stat.st_size, stat.st_mtime_ns):
            return known
        if stat.st_size > self.workspace.config.max_file_bytes:
            return FileStat(stat.st_size, stat.st_mtime_ns, "")  # refused with its reason at extraction
        with open(absolute, "rb") as handle:
            digest = hashlib.sha256(handle.read()).hexdigest()
        return FileStat(stat.st_size, stat.st_mtime_ns, digest)

    def _facts_for(self, paths: list[str], current: dict[str, FileStat], stats: IndexStats) -> tuple[list[FileFacts], int]:
        found: list[FileFacts] = []
        missing: list[str] = []
        for path in paths:
            cached = self.cache.facts(path, current[path].sha256, self._symbols_from)
            if cached is not None:
                found.append(cached)
            else:
                missing.append(path)
        # Extracted largest first: workers take chunks in this order, so the last chunks are small
        # and neither worker is left with a big file while the other has finished. The facts
        # come back in the order asked, as the graph's updates take them.
        place = {path: index for index, path in enumerate(missing)}
        extracted = self._extract(sorted(missing, key=lambda path: current[path].size, reverse=True), stats)
        extracted.sort(key=lambda facts: place.get(facts.path, len(place)))
        return found + extracted, len(extracted)

    def _extract(self, paths: list[str], stats: IndexStats) -> list[FileFacts]:
        results: list[FileFacts] = []
        total = len(paths)
        # fork starts workers at once but is unsafe once other threads exist (a language-
        # server pool, say); spawn re-imports the engine in each worker and is always safe.
        method = "fork" if threading.active_count() == 1 and "fork" in get_all_start_methods() else "spawn"
        # A language server lives in this process's pool, so server-sourced extraction stays here.
        if total < _PARALLEL_FROM[method] or self.jobs < 2 or self.served_symbols is not None:
            for done, path in enumerate(paths, start=1):
                outcome = _extract_one(self.workspace, self.extractor, path, self.served_symbols)
                _collect(outcome, results, stats)
                if self.progress is not None:
                    self.progress(done, total)
            self._unstored += [(facts, None) for facts in results]
            return results
        chunks = [paths[i:i + 32] for i in range(0, total, 32)]
        done = 0
        with ProcessPoolExecutor(
            max_workers=self.jobs, mp_context=get_context(method),
            initializer=_worker_start, initargs=(str(self.workspace.root), self.workspace.config),
        ) as pool:
            for chunk_results in pool.map(_worker_extract, chunks):
                # Each chunk is taken in while the workers go on with the next ones; the pickles
                # are kept for the snapshot's writer to store.
                for pickled in chunk_results:
                    if isinstance(pickled, Skipped):
                        stats.skipped.append(pickled)
                        continue
                    facts = pickle.loads(pickled)
                    results.append(facts)
                    self._unstored.append((facts, pickled))
                done += len(chunk_results)
                if self.progress is not None:
                    self.progress(done, total)
        return results

    def _count(self, stats: IndexStats) -> None:
        graph = self.graph
        stats.files = len(graph.facts)
        stats.files_by_language = dict(Counter(f.language or "unknown" for f in graph.facts.values()))
        stats.symbols = sum(len(f.symbols) for f in graph.facts.values())
        stats.symbols_by_source = dict(Counter(s.source for f in graph.facts.values() for s in f.symbols))
        stats.edges_by_kind = graph.edge_counts()


def _extract_one(
    workspace: Workspace, extractor: SymbolExtractor, path: str, served_symbols: ServedSymbols | None = None,
    source: SourceFile | None = None,
) -> FileFacts | Skipped:
    try:
        source = source if source is not None else workspace.read(path)
        # Parsed once, for the server's symbols and the facts; the facts keep no signatures.
        extracted = extractor.extract_with_tree(source, details=served_symbols is not None)
        served = served_symbols(source, extracted[0]) if served_symbols is not None else None
        return file_facts(source, extractor, served, extracted)
    except GraftError as error:
        return Skipped(path, getattr(error, "reason", error.message))


def _collect(outcome: FileFacts | Skipped, results: list[FileFacts], stats: IndexStats) -> None:
    if isinstance(outcome, Skipped):
        stats.skipped.append(outcome)
    else:
        results.append(outcome)


_WORKER: tuple[Workspace, SymbolExtractor] | None = None


def _worker_start(root: str, config: WorkspaceConfig) -> None:
    global _WORKER  # one workspace and parser set per worker process, reused across chunks
    gc.disable()
    _WORKER = (Workspace(Path(root), config), SymbolExtractor())


def _worker_extract(paths: list[str]) -> list[bytes | Skipped]:
    """Each file's facts pickled here, once: the parent unpickles them for the graph and stores
    the same bytes in the cache (it would otherwise pickle them all again, serially)."""
    # Workers only compute; the snapshot's writer stores the facts, in one transaction (measured:
    # workers writing concurrently contend for SQLite's lock and end up slower).
    if _WORKER is None:
        raise RuntimeError("worker not initialised")
    workspace, extractor = _WORKER
    outcomes = (_extract_one(workspace, extractor, path) for path in paths)
    return [o if isinstance(o, Skipped) else pickle.dumps(o, pickle.HIGHEST_PROTOCOL) for o in outcomes]
