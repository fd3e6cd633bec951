"""``lsp_pool``'s implementation of the engine's :class:`engine.ports.LanguageServices` port."""

from __future__ import annotations

import asyncio
import functools
from dataclasses import replace
from pathlib import Path
from typing import Callable, Collection, TypeVar

from engine.errors import ServiceUnavailable
from engine.extract import FileSymbols
from engine.languages import language_of
from engine.answers import CallEdge, CodeAction, Diagnostic, HierarchyItem, Hover, Location, ServerEdit
from engine.ports import ActionDetails, Answered, Feature, Runtime, ServerStatus, Serving
from engine.positions import Position, Range
from engine.symbols import Confidence, Source
from engine.workspace import SourceFile, Workspace
from lsp_pool.config import PoolConfig, load_config
from lsp_pool.memory import resident_memory
from lsp_pool.pool import Pool, probe_version
from lsp_pool.registry import SPECS, ServerSpec, version_numbers
from lsp_pool.typescript_version import MOVE_TO_FILE, typescript_runtime
from lsp_pool.errors import ServerRequestFailed
from lsp_pool.convert import Converter
from lsp_pool.features import LanguageApi, resolves_actions
from lsp_pool import refactorings
from lsp_pool.server import ManagedServer
from lsp_pool.sync import SyncLanguageApi

T = TypeVar("T")


class PoolServices:
    """Starts nothing until first asked; one pool per workspace."""

    def __init__(
        self, workspace: Workspace, config: PoolConfig | None = None, specs: tuple[ServerSpec, ...] = SPECS
    ) -> None:
        self.workspace = workspace
        self.config = config or load_config(workspace.root, trust=workspace.config.trust_workspace_python)
        self.specs = specs
        self._api: SyncLanguageApi | None = None
        self._shown_notes: list[str] = []
        self._closed_start_seconds = 0.0

    @property
    def api(self) -> SyncLanguageApi:
        if self._api is None:
            self._api = SyncLanguageApi(self.workspace.root, self.config, self.specs)
        return self._api

    def document_symbols(self, source: SourceFile) -> FileSymbols:
        path = self.workspace.root / source.path
        answer = self.api.call(lambda api: api.document_symbols(path))
        notes = [f"symbols from {answer.server}"]
        if not answer.complete:
            notes.append(f"{answer.server} had not finished indexing")
        confidence = Confidence.HIGH if answer.complete else Confidence.MEDIUM
        return FileSymbols(source.path, source.language, answer.value, Source.LSP, confidence, notes)

    def references(self, source: SourceFile, position: Position) -> Answered[list[Location]]:
        path = self.workspace.root / source.path
        return self._after_showing(self.api.call(lambda api: api.references(path, position)))

    def definition(self, source: SourceFile, position: Position) -> Answered[list[Location]]:
        path = self.workspace.root / source.path
        return self.api.call(lambda api: api.definition(path, position))

    def implementations(self, source: SourceFile, position: Position) -> Answered[list[Location]]:
        path = self.workspace.root / source.path
        return self.api.call(lambda api: api.implementation(path, position))

    def call_hierarchy(self, source: SourceFile, position: Position) -> Answered[list[HierarchyItem]]:
        path = self.workspace.root / source.path
        return self.api.call(lambda api: api.prepare_call_hierarchy(path, position))

    def calls(self, source: SourceFile, item: HierarchyItem, *, incoming: bool) -> Answered[list[CallEdge]]:
        path = self.workspace.root / source.path
        return self.api.call(lambda api: api.incoming_calls(path, item) if incoming else api.outgoing_calls(path, item))

    def rename(
        self, source: SourceFile, position: Position, new_name: str, sent: Callable[[], None] | None = None,
    ) -> Answered[ServerEdit]:
        path = self.workspace.root / source.path

        async def plan(api: LanguageApi) -> Answered[ServerEdit]:
            # Both requests go out at once (prepareRename changes nothing on the server, and a
            # server answers in turn): the rename is used only if prepareRename allows it, and
            # the round trip between the two is saved.
            renaming = asyncio.ensure_future(api.rename(path, position, new_name))
            if sent is not None:
                # Queued after the rename task's first step, which sends the request unless it
                # has to wait first (a server starting): either way the request needs no more
                # of this thread's time until the answer.
                asyncio.get_running_loop().call_soon(sent)
            if api.server_for(path).spec.rename_says_when_it_cannot:
                answer = await renaming
                if answer.value == ServerEdit():
                    raise ServerRequestFailed(answer.server, "textDocument/rename", None, "nothing to rename here")
                return answer
            try:
                prepared = await api.prepare_rename(path, position)
                if prepared.value is None:
                    raise ServerRequestFailed(prepared.server, "textDocument/prepareRename", None, "nothing to rename here")
            except BaseException:
                renaming.cancel()
                await asyncio.gather(renaming, return_exceptions=True)
                raise
            return await renaming

        return self._after_showing(self.api.call(plan))

    def _after_showing(self, answer: Answered[T]) -> Answered[T]:
        """An answer after :meth:`show_importers`, labelled incomplete (and why) when a project it
        opened had not loaded in time."""
        notes, self._shown_notes = self._shown_notes, []
        return replace(answer, complete=False, notes=(*answer.notes, *notes)) if notes else answer

    def will_rename_file(self, source: SourceFile, new_path: str) -> Answered[ServerEdit]:
        old, new = self.workspace.root / source.path, self.workspace.root / new_path
        return self.api.call(lambda api: api.will_rename_files(old, new))

    def move_to_file(self, source: SourceFile, span: Range, dest_path: str) -> Answered[ServerEdit]:
        path, dest = self.workspace.root / source.path, self.workspace.root / dest_path
        return self.api.call(lambda api: api.move_to_file(path, span, dest))

    def hover(self, source: SourceFile, position: Position) -> Answered[Hover | None]:
        path = self.workspace.root / source.path
        return self.api.call(lambda api: api.hover(path, position))

    def code_actions(self, source: SourceFile, span: Range) -> Answered[list[CodeAction]]:
        path = self.workspace.root / source.path
        return self.api.call(lambda api: api.offered_actions(path, span))

    def code_action_details(self, source: SourceFile, action: CodeAction) -> ActionDetails:
        path = self.workspace.root / source.path

        async def details(api: LanguageApi) -> ActionDetails:
            return Converter.action_details(action.handle, resolves=resolves_actions(api.server_for(path)))

        return self.api.call(details)

    def code_action_edit(self, source: SourceFile, action: CodeAction) -> Answered[ServerEdit | None]:
        path = self.workspace.root / source.path

        async def edit(api: LanguageApi) -> Answered[ServerEdit | None]:
            resolved = await api.resolve_code_action(path, action)
            return Answered(resolved.value.edit, resolved.server or api.server_for(path).spec.id, resolved.complete)

        return self.api.call(edit)

    def refactorings(self, source: SourceFile, span: Range, kind: str) -> Answered[list[CodeAction]]:
        path = self.workspace.root / source.path
        return self.api.call(lambda api: refactorings.refactorings(api, path, span, kind))

    def refactoring_edit(self, source: SourceFile, action: CodeAction) -> Answered[ServerEdit]:
        path = self.workspace.root / source.path
        return self.api.call(lambda api: refactorings.refactoring_edit(api, path, action))

    def diagnostics(self, source: SourceFile, *, when_ready: bool = False, recheck: bool = False,
                    timeout: float | None = None) -> Answered[list[Diagnostic]]:
        path = self.workspace.root / source.path
        return self.api.call(lambda api: api.diagnostics(path, when_ready=when_ready, recheck=recheck), timeout)

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

    def show_importers(self, files: list[str], importers: Callable[[list[str]], list[str]]) -> None:
        api = self.api
        if not any(self._needs_open(path) for path in files):
            return  # the graph's importers cost tens of ms on a large project: asked only when needed

        async def show(paths: list[str]) -> None:
            by_server: dict[int, tuple[ManagedServer, list[Path]]] = {}
            for relative in dict.fromkeys(paths):
                if not self._needs_open(relative):
                    continue  # opening costs a type-check where a server reads the disk anyway
                try:
                    server = api.pool.server_for(language_of(relative) or "", self.workspace.root,
                                                 self.workspace.root / relative)
                except ServiceUnavailable:
                    continue  # the request itself meets it and says why (auto then falls back)
                by_server.setdefault(id(server), (server, []))[1].append(self.workspace.root / relative)
            for server, absolute in by_server.values():
                try:
                    self._shown_notes = [*self._shown_notes, *await server.show_documents(absolute)]
                except (ServiceUnavailable, OSError):
                    continue  # the request itself meets it and says why (auto then falls back)

        shown = importers(files)
        api.run(lambda: show(shown))

    def _needs_open(self, relative: str) -> bool:
        """Whether the server for this file must be shown it (or its project) before a cross-file request."""
        language = language_of(relative)
        if language is None:
            return False
        try:
            spec = self.api.pool.server_for(language, self.workspace.root, self.workspace.root / relative).spec
            return spec.needs_open or spec.opens_projects
        except ServiceUnavailable:
            return False

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
            self.api.submit(functools.partial(self._start, language, path, wait=False))

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
        return statuses

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
        if spec.no_refactor_actions:
            lacking[Feature.MOVE_TO_FILE] = spec.no_refactor_actions
        return Serving(language, choice.state, spec.id, _plain(probe_version(spec.id, command)), command,
                       features=spec.features - set(lacking), lacking=lacking, runtime=runtime, backend=backend)

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


def _plain(version: str | None) -> str | None:
    """A version string fit for a table; gopls reports JSON build information instead."""
    return version if version and not version.lstrip().startswith("{") else None

