"""``lsp_pool``'s implementation of the engine's :class:`engine.ports.LanguageServices` port."""

from __future__ import annotations

import asyncio
import functools
import posixpath
from pathlib import Path
from typing import Callable, Collection

from engine.errors import ServiceUnavailable
from engine.languages import language_of
from engine.ports import Feature, Runtime, ServerStatus, Serving
from engine.workspace import Workspace
from lsp_pool.memory import resident_memory
from lsp_pool.pool import Pool, probe_version
from lsp_pool.registry import ServerSpec, version_numbers
from lsp_pool.typescript7 import TSLS
from lsp_pool.typescript_companion import companion_detail, companion_label, missing_companion
from lsp_pool.typescript_version import MOVE_TO_FILE, typescript_runtime
from lsp_pool.server import ManagedServer
from lsp_pool.pool_requests import PoolEdits, PoolNavigation


class _ServersByFolder:
    """The server of each file for one request, chosen once per language and folder: the choice
    depends on a file only through its folder (lsp_pool.typescript7.project_folder), and a
    request shows the server the importers of a file, often a hundred in a few folders."""

    def __init__(self, pool: Pool, root: Path) -> None:
        self._pool, self._root = pool, root
        self._servers: dict[tuple[str, str], ManagedServer | None] = {}

    def server(self, relative: str) -> ManagedServer | None:
        """The server for this file, None when none serves its language here."""
        language = language_of(relative)
        if language is None:
            return None
        key = (language, posixpath.dirname(relative))
        if key not in self._servers:
            try:
                self._servers[key] = self._pool.server_for(language, self._root, self._root / relative)
            except ServiceUnavailable:
                self._servers[key] = None
        return self._servers[key]

    def needs_open(self, relative: str) -> bool:
        """Whether the server for this file must be shown it (or its project) before a cross-file request."""
        server = self.server(relative)
        return server is not None and _must_be_shown(server)


def _must_be_shown(server: ManagedServer) -> bool:
    return server.spec.needs_open or server.spec.opens_projects


class PoolServices(PoolNavigation, PoolEdits):
    """The engine's LanguageServices port: the pool's requests (lsp_pool.pool_requests) and its servers' lifecycle."""

    def files_changed(self, paths: list[str], rewritten: Collection[str] = ()) -> None:
        if self._api is None:
            return  # no server was started, so none has a stale view
        pool = self._api.pool
        in_place = set(rewritten)
        absolute = [(self.workspace.root / p, p in in_place) for p in paths]

        async def notify() -> None:
            for server in pool.running():
                for path, existed in absolute:
                    server.documents.changed_by_us(path, existed=existed)

        self._api.run(notify)

    def start_for_workspace(self) -> None:
        """Start the preferred server of every language present in the workspace and wait for readiness."""
        first_file: dict[str, str] = {}
        for path in self.workspace.scan().files:
            language = language_of(path)
            if language is not None:
                first_file.setdefault(language, path)
        api = self.api

        async def start_all() -> None:
            await asyncio.gather(*(self._start(language, path, wait=True) for language, path in sorted(first_file.items())))

        api.run(start_all)

    def show_importers(self, files: list[str], importers: Callable[[list[str]], list[str]],
                       same_project: Callable[[str, str], bool] | None = None) -> None:
        api = self.api
        servers = _ServersByFolder(api.pool, self.workspace.root)
        if not any(servers.needs_open(path) for path in files):
            return  # the graph's importers cost tens of ms on a large project: asked only when needed

        async def show(paths: list[str]) -> None:
            by_server: dict[int, tuple[ManagedServer, list[Path]]] = {}
            for relative in dict.fromkeys(paths):
                server = servers.server(relative)
                if server is None or not _must_be_shown(server):
                    # No server (the request itself meets it and says why; auto then falls back),
                    # or one that reads the disk anyway: opening costs a type-check.
                    continue
                if server.spec.searches_open_projects and same_project is not None and any(
                        same_project(file, relative) for file in files):
                    continue  # the request opens its own file, and the server searches that file's project
                by_server.setdefault(id(server), (server, []))[1].append(self.workspace.root / relative)
            for server, absolute in by_server.values():
                try:
                    self._shown_notes = [*self._shown_notes, *await server.show_documents(absolute)]
                except (ServiceUnavailable, OSError):
                    continue  # the request itself meets it and says why (auto then falls back)

        shown = importers(files)
        api.run(lambda: show(shown))

    def warm_up(self, paths: list[str]) -> None:
        """Start the servers of these files' languages without waiting, so that a cold server's
        start, the longest wait of a first request, overlaps the caller's own work. Nothing is opened that
        a request would not open (LANGUAGE-SERVERS.md: an open file is type-checked).
        A failure is not raised here: the first real request meets it and says why."""
        first_file: dict[str, str] = {}
        for path in paths:
            language = language_of(path)
            if language is not None:
                first_file.setdefault(language, path)
        for language, path in first_file.items():
            if not self._serving_already(language, path):
                self.api.submit(functools.partial(self._start, language, path, wait=False))

    def _serving_already(self, language: str, relative: str) -> bool:
        """Whether the server for this file runs and has nothing to open early: then there is
        nothing to warm, and waking the pool's thread would only contend with the caller's own
        work (a warm plan's, before its request goes out). Read from the caller's thread: a server
        that stops meanwhile is started again by the request, as after any exit."""
        try:
            server = self.api.pool.server_for(language, self.workspace.root, self.workspace.root / relative)
        except ServiceUnavailable:
            return False  # _start says nothing either: the request meets it and says why
        connection = server.connection
        return connection is not None and connection.alive and not server.spec.needs_open

    async def _start(self, language: str, relative: str, *, wait: bool) -> None:
        try:
            server = self.api.pool.server_for(language, self.workspace.root, self.workspace.root / relative)
        except ServiceUnavailable:
            return  # status() reports it as not found
        try:
            await server.ensure_started()
            # Servers that load a project only for an open document need one.
            server.use_file(self.workspace.root / relative, open_it=server.spec.needs_open)
            if wait and server.tracker is not None:
                await server.tracker.wait()
        except ServiceUnavailable:
            return  # status() reports it as dead, with the reason; a request raises it

    def status(self) -> list[ServerStatus]:
        running = {s.spec.id: s for s in self._api.pool.running()} if self._api is not None else {}
        pool = self._api.pool if self._api is not None else None
        # Without a running pool, one that starts nothing still finds the servers and their versions.
        locator = pool if pool is not None else Pool(self.config)
        statuses = []
        for spec in self.specs:
            preferred_for = tuple(lang for lang, ids in self.config.preference.items() if ids and ids[0] == spec.id)
            located = locator.locate(spec.id)
            found = located.command
            managed = running.get(spec.id)
            if found is None:
                state, detail = "not-found", f"install: {spec.install_hint}"
            elif located.too_old:
                state, detail = "too-old", located.too_old
            elif managed is None:
                state, detail = "stopped", "starts on first use"
            else:
                state = managed.state.value
                tracker = managed.tracker
                detail = (tracker.signal if tracker is not None and tracker.signal else managed.last_exit) or ""
                if managed.memory_restart_note:
                    detail = f"{detail}; {managed.memory_restart_note}" if detail else managed.memory_restart_note
            pid = managed.connection.pid if managed is not None and managed.connection is not None else None
            statuses.append(
                ServerStatus(
                    id=spec.id,
                    languages=spec.languages,
                    preferred_for=preferred_for,
                    found=found is not None,
                    executable=found[0] if found else None,
                    version=_plain(managed.server_version if managed else None)
                    or (probe_version(spec.id, found) if found else None),
                    state=state,
                    pid=pid if state not in ("dead", "stopped") else None,
                    memory_bytes=resident_memory(pid) if pid and state not in ("dead", "stopped") else None,
                    detail=detail,
                    restarts=managed.restarts if managed is not None else 0,
                )
            )
        configured = {spec.id for spec in self.specs}
        beside = [server for server in pool.running() if server.spec.id not in configured] if pool is not None else []
        return statuses + [_beside_status(server) for server in beside]

    def serving(self, language: str, folder: str = ".") -> Serving:
        pool = self._api.pool if self._api is not None else Pool(self.config, self.specs)
        choice = pool.choose(language, self.workspace.root, self.workspace.root / folder)
        backend = choice.backend.why if choice.backend is not None else ""
        chosen = choice.chosen.command if choice.chosen is not None else None
        if choice.chosen is None or chosen is None:
            passed = choice.passed_over[0] if choice.passed_over else None
            found = pool.locate(passed.spec_id) if passed is not None else None
            command = found.command if found is not None else None
            named = passed.spec_id if passed is not None else next(iter(choice.preferred), None)
            return Serving(language, choice.state, named, _plain(probe_version(named, command)) if named and command else None,
                           command or (), choice.reason, backend=backend)
        spec, command = choice.chosen.spec, chosen
        runtime = (typescript_runtime(self.workspace.root, command, bool(self.config.trusted_by))
                   if spec.id == "typescript-language-server" else None)
        lacking = _lacking(spec, runtime)
        version = _plain(probe_version(spec.id, command))
        features, refactored_by = spec.features, ""
        if spec.no_refactor_actions:
            # Its refactorings are asked of the companion beside it (lsp_pool.typescript_companion), when installed.
            missing = missing_companion(pool.locate(TSLS).command is not None if TSLS in pool.specs else False)
            if missing:
                lacking[Feature.MOVE_TO_FILE] = f"{spec.no_refactor_actions}. {missing}"
            else:
                features, refactored_by = features | {Feature.MOVE_TO_FILE}, companion_label(f"{spec.id} {version or ''}".strip())
        return Serving(language, choice.state, spec.id, version, command, features=features - set(lacking), lacking=lacking,
                       runtime=runtime, backend=backend, refactored_by=refactored_by)

    def start_seconds(self) -> float:
        running = sum(server.start_seconds for server in self._api.pool.running()) if self._api is not None else 0.0
        return self._closed_start_seconds + running

    def close(self) -> None:
        if self._api is not None:
            self._closed_start_seconds = self.start_seconds()  # still said after the close
            self._api.close()
            self._api = None


def create(workspace: Workspace) -> PoolServices:
    """Entry point ``codegraft.language_services``: how the engine's front ends find this package."""
    return PoolServices(workspace)


def _lacking(spec: ServerSpec, runtime: Runtime | None) -> dict[Feature, str]:
    """The measured features ``spec``'s server lacks on what it runs here, and why."""
    if Feature.MOVE_TO_FILE not in spec.features or runtime is None:
        return {}
    found = version_numbers(runtime.version)
    if found is not None and found >= MOVE_TO_FILE:
        return {}
    wanted = ".".join(map(str, MOVE_TO_FILE))
    return {Feature.MOVE_TO_FILE: f"tsserver's \"Move to file\" needs TypeScript {wanted} or later, and the server runs "
                                  f"TypeScript {runtime.version or '(no version)'} from {runtime.folder}: "
                                  "npm install -g typescript@5.9"}


def _beside_status(managed: ManagedServer) -> ServerStatus:
    """A server the pool runs beside a configured one: a TypeScript 7 project's refactoring companion."""
    alive = managed.state.value not in ("dead", "stopped")
    pid = managed.connection.pid if alive and managed.connection is not None else None
    return ServerStatus(id=managed.spec.id, languages=managed.spec.languages, preferred_for=(), found=True,
                        executable=managed.command[0], version=_plain(managed.server_version), state=managed.state.value,
                        pid=pid, memory_bytes=resident_memory(pid) if pid else None,
                        detail=managed.last_exit or companion_detail(managed), restarts=managed.restarts)


def _plain(version: str | None) -> str | None:
    """A version string fit for a table; gopls reports JSON build information instead."""
    return version if version and not version.lstrip().startswith("{") else None

