"""What :class:`lsp_pool.adapter.PoolServices` answers, by concern: the pool it asks, a file's
navigation (symbols, references, definitions, hierarchy), and its edits (renames, moves, code
actions, diagnostics), as the engine's port splits them (engine.ports)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Callable, TypeVar

from engine.answers import CallEdge, CodeAction, Diagnostic, HierarchyItem, Hover, Location, ServerEdit
from engine.extract import FileSymbols
from engine.ports import ActionDetails, Answered
from engine.positions import Position, Range
from engine.symbols import Confidence, Source
from engine.workspace import SourceFile, Workspace
from lsp_pool import refactorings
from lsp_pool.config import PoolConfig, load_config
from lsp_pool.convert import Converter
from lsp_pool.errors import ServerRequestFailed
from lsp_pool.edit_requests import resolves_actions
from lsp_pool.features import LanguageApi
from lsp_pool.registry import SPECS, ServerSpec
from lsp_pool.sync import SyncLanguageApi

T = TypeVar("T")


class PoolBase:
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

    def _after_showing(self, answer: Answered[T]) -> Answered[T]:
        """An answer after :meth:`show_importers`, labelled incomplete (and why) when a project it
        opened had not loaded in time."""
        notes, self._shown_notes = self._shown_notes, []
        return replace(answer, complete=False, notes=(*answer.notes, *notes)) if notes else answer


class PoolNavigation(PoolBase):
    """A file's symbols, and what a position refers to."""

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

    def hover(self, source: SourceFile, position: Position) -> Answered[Hover | None]:
        path = self.workspace.root / source.path
        return self.api.call(lambda api: api.hover(path, position))


async def _why_not_renamed(api: LanguageApi, path: Path, position: Position, server: str) -> ServerRequestFailed:
    """The refusal of a rename that answered nothing, with the server's own reason when its
    prepareRename gives one ("You cannot rename elements that are defined in the standard
    TypeScript library"): asked only now, since the rename answers nothing wherever it refuses."""
    try:
        await api.prepare_rename(path, position)
    except ServerRequestFailed as error:
        return error
    return ServerRequestFailed(server, "textDocument/rename", None, "nothing to rename here")


class PoolEdits(PoolBase):
    """What the servers would change: renames, moves, code actions; and their diagnostics."""

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
                    raise await _why_not_renamed(api, path, position, answer.server)
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

    def will_rename_file(self, source: SourceFile, new_path: str) -> Answered[ServerEdit]:
        old, new = self.workspace.root / source.path, self.workspace.root / new_path
        return self.api.call(lambda api: api.will_rename_files(old, new))

    def move_to_file(self, source: SourceFile, span: Range, dest_path: str) -> Answered[ServerEdit]:
        path, dest = self.workspace.root / source.path, self.workspace.root / dest_path
        return self.api.call(lambda api: api.move_to_file(path, span, dest))

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
