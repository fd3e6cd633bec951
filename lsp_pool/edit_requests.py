"""The requests of :class:`lsp_pool.features.LanguageApi` that propose changes or judge them:
rename, file renames, moves, code actions and commands, diagnostics."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Sequence

from lsprotocol import types as t

from engine.languages import language_of
from engine.ports import Answered
from engine.answers import CodeAction, Diagnostic, ServerEdit
from engine.positions import Position, Range
from lsp_pool.connection import shared_converter
from lsp_pool.convert import Converter
from lsp_pool.errors import Unsupported
from lsp_pool.server import ManagedServer
from lsp_pool.tsserver_diagnostics import asked_diagnostics
from lsp_pool.feature_base import FeatureBase
from lsp_pool.typescript_companion import COMPANION, companion_label
from lsp_pool.typescript_version import MOVE_TO_FILE, running_typescript

RECHECK_SECONDS = 0.3
"""The wait before asking a file's diagnostics again after what it imports changed."""

ACTION_DIAGNOSTICS_WAIT = 5.0
"""How long code actions wait for a file's pushed diagnostics, which their quick fixes are for."""


class EditRequests(FeatureBase):
    """What the servers would change, and what they find wrong."""

    async def prepare_rename(self, path: Path, position: Position) -> Answered[Range | None]:
        document, lsp_position = await self._positional(path, position)
        params = t.PrepareRenameParams(text_document=document, position=lsp_position)
        value, complete, server, converter = await self._ask(path, t.TEXT_DOCUMENT_PREPARE_RENAME, params)
        lsp_range = getattr(value, "range", value) if value is not None else None
        found = converter.range(path, lsp_range) if isinstance(lsp_range, t.Range) else None
        return Answered(found, server.spec.id, complete)

    async def rename(self, path: Path, position: Position, new_name: str) -> Answered[ServerEdit]:
        document, lsp_position = await self._positional(path, position)
        params = t.RenameParams(text_document=document, position=lsp_position, new_name=new_name)
        edit, complete, server, _converter = await self._ask(path, t.TEXT_DOCUMENT_RENAME, params, read=Converter.workspace_edit)
        return Answered(edit, server.spec.id, complete, server.answer_notes())

    async def will_rename_files(self, old: Path, new: Path) -> Answered[ServerEdit]:
        """``workspace/willRenameFiles`` for one file, when the server registered for it."""
        server = self.server_for(old)
        await server.ensure_started()
        operations = server.capabilities.workspace.file_operations if server.capabilities and server.capabilities.workspace else None
        if operations is None or operations.will_rename is None:
            raise Unsupported(f"{server.spec.id} does not offer workspace/willRenameFiles (import updates on file renames)")
        params = t.RenameFilesParams(files=[t.FileRename(old_uri=old.as_uri(), new_uri=new.as_uri())])
        value, complete, server, converter = await self._ask(old, t.WORKSPACE_WILL_RENAME_FILES, params)
        return Answered(converter.workspace_edit(value), server.spec.id, complete)

    async def move_to_file(self, path: Path, span: Range, dest: Path) -> Answered[ServerEdit]:
        """Move the declarations in ``span`` to ``dest`` with the server's move refactoring.

        typescript-language-server offers "Move to a new file" (``refactor.move.newFile``),
        carried out by its ``_typescript.applyRefactoring`` command; tsserver's "Move to file"
        is the same refactoring with the target passed as ``interactiveRefactorArguments``,
        which the command hands through. Its edits arrive by workspace/applyEdit and are captured.
        """
        if not dest.is_file():
            # tsserver moves only into a file of the same program; asked for a new one, the
            # language server writes it to disk itself, which a plan must never do.
            raise Unsupported(f"{dest.name} does not exist: the server moves code only into an existing file of the project")
        server, said = await self.refactoring_server(dest)
        notes: list[str] = []
        if server.spec.id == COMPANION:
            # tsserver updates the imports only of files whose projects it has loaded, and loads a
            # project only for an open file: the companion is shown what the project's own server
            # was shown for this move (the importers: LanguageServices.show_importers).
            notes = await server.show_documents(self.server_for(dest).documents.open_documents())
        typescript = None if server.spec.id == COMPANION else \
            running_typescript(self.root, server.command, bool(server.config.trusted_by))
        if typescript is not None and typescript[1] < MOVE_TO_FILE:
            folder, (major, minor) = typescript
            raise Unsupported(f"moving code into another file needs TypeScript {MOVE_TO_FILE[0]}.{MOVE_TO_FILE[1]} or later "
                              f"(tsserver's \"Move to file\"), and the server runs TypeScript {major}.{minor} from {folder}; "
                              "install a newer one: npm install -g typescript@5.9")
        server.use_file(dest, open_it=True)
        offered = await self.code_actions(path, span, only=["refactor.move"], server=server)
        for action in offered.value:
            handle = action.handle
            command = handle.command if isinstance(handle, t.CodeAction) else None
            if command is None or command.command != "_typescript.applyRefactoring" or not command.arguments:
                continue
            first = command.arguments[0]
            if not isinstance(first, dict):
                continue  # not the shape typescript-language-server's refactoring command takes
            arguments = dict(first)
            arguments.update(refactor="Move to file", action="Move to file", interactiveRefactorArguments={"targetFile": str(dest)})
            language = language_of(path.name) or ""
            answer = await self.execute_command(language, command.command, [arguments], path=dest, server=server)
            _reply, edits = answer.value
            if not edits:
                raise Unsupported(f"{said} offered a move but sent no edit for it")
            return Answered(ServerEdit.joined(edits), said, answer.complete and not notes, tuple(notes))
        raise Unsupported(f"{said} offers no move-to-file refactoring here")

    async def refactoring_server(self, path: Path) -> tuple[ManagedServer, str]:
        """The server asked for ``path``'s refactoring code actions, and the name its answers go
        under: the project's own server, or, where that one has none (TypeScript 7's), the
        companion beside it (lsp_pool.typescript_companion; UnsupportedByServer when it is missing)."""
        server = self.server_for(path)
        if not server.spec.no_refactor_actions:
            return server, server.spec.id
        await server.ensure_started()  # for the version it reports, said with every answer
        return self.pool.companion(server), companion_label(server)

    async def code_actions(
        self, path: Path, engine_range: Range, only: Sequence[str] | None = None, diagnostics: Sequence[t.Diagnostic] = (),
        *, server: ManagedServer | None = None,
    ) -> Answered[list[CodeAction]]:
        """The actions ``server`` (else the file's own server) offers for a range."""
        server = server or self.server_for(path)
        await server.ensure_started()
        converter = Converter(self.root, server.encoding)
        params = t.CodeActionParams(
            text_document=t.TextDocumentIdentifier(uri=path.as_uri()),
            range=converter.to_lsp_range(path, engine_range),
            context=t.CodeActionContext(
                diagnostics=list(diagnostics), only=[_kind(k) for k in only] if only else None,
                trigger_kind=t.CodeActionTriggerKind.Invoked,
            ),
        )
        server.use_file(path, open_it=server.spec.needs_open)
        reply = await server.request(t.TEXT_DOCUMENT_CODE_ACTION, params)
        return Answered([converter.code_action(a) for a in reply.value or []], server.spec.id, reply.complete)

    async def offered_actions(self, path: Path, engine_range: Range) -> Answered[list[CodeAction]]:
        """Every action the server offers for a range, asked as an editor asks.

        Quick fixes are computed for diagnostics: the file's diagnostics are waited for (pyright
        offers no fix before it has checked the file) and those overlapping the range go in the
        request's context (typescript-language-server offers fixes only for the codes there).
        Source actions (organise imports) are listed by most servers only when asked for by
        kind: when the server registered such kinds and the first answer had none, they are
        asked for once more, and only source actions are kept from that answer (jedi-language-
        server ignores ``only``).
        """
        server = self.server_for(path)
        await server.ensure_started()
        _uri, items, _complete, server = await self._raw_diagnostics(path, wait=ACTION_DIAGNOSTICS_WAIT, when_ready=True)
        lsp_range = Converter(self.root, server.encoding).to_lsp_range(path, engine_range)
        overlapping = [d for d in items if _overlaps(d.range, lsp_range)]
        first = await self.code_actions(path, engine_range, diagnostics=overlapping)
        actions = list(first.value)
        if any(_is_source(kind) for kind in _registered_kinds(server)) and not any(_is_source(a.kind) for a in actions):
            sources = await self.code_actions(path, engine_range, only=[t.CodeActionKind.Source.value], diagnostics=overlapping)
            actions.extend(a for a in sources.value if _is_source(a.kind))
        return Answered(actions, first.server, first.complete)

    async def resolve_code_action(self, path: Path, action: CodeAction, *,
                                  server: ManagedServer | None = None) -> Answered[CodeAction]:
        """The action with its edit filled in by ``codeAction/resolve`` (of ``server``, else the
        file's own), when the listing carried none and the server resolves actions; otherwise the
        action as it is."""
        if not isinstance(action.handle, t.CodeAction) or action.edit is not None:
            return Answered(action, "", True)
        server = server or self.server_for(path)
        await server.ensure_started()
        if not resolves_actions(server):
            return Answered(action, server.spec.id, True)
        server.use_file(path, open_it=server.spec.needs_open)
        reply = await server.request(t.CODE_ACTION_RESOLVE, action.handle)
        value = reply.value
        if isinstance(value, dict):  # kept as JSON when lsprotocol could not read it
            value = shared_converter().structure(value, t.CodeAction)
        return Answered(Converter(self.root, server.encoding).code_action(value), server.spec.id, reply.complete)

    async def execute_command(self, language: str, command: str, arguments: list[Any] | None = None, *,
                              path: Path | None = None, server: ManagedServer | None = None,
                              ) -> Answered[tuple[Any, list[ServerEdit]]]:
        """Run a server command (of ``server``, else of the server for ``path``'s project, when
        given); edits it sends back through ``workspace/applyEdit`` are captured, not applied."""
        server = server or self.pool.server_for(language, self.root, path)
        connection = await server.ensure_started()
        events = connection.events
        events.capture_edits, events.captured_edits = True, []
        try:
            reply = await server.request(t.WORKSPACE_EXECUTE_COMMAND, t.ExecuteCommandParams(command=command, arguments=arguments))
        finally:
            events.capture_edits = False
        converter = Converter(self.root, server.encoding)
        edits = [converter.workspace_edit(edit) for edit in events.captured_edits]
        return Answered((reply.value, edits), server.spec.id, reply.complete)

    async def diagnostics(
        self, path: Path, *, wait: float = 10.0, when_ready: bool = False, recheck: bool = False,
    ) -> Answered[list[Diagnostic]]:
        """Pull diagnostics where the server offers them (or ask tsserver for them), else open the
        file and take what it pushes.

        Either way the answer is labelled incomplete while the server is still indexing; with
        ``when_ready`` the pull waits for the server to be ready first (NotReady past its budget).
        """
        uri, items, complete, server = await self._raw_diagnostics(path, wait=wait, when_ready=when_ready, recheck=recheck)
        converter = Converter(self.root, server.encoding)
        return Answered(converter.diagnostics(uri, items), server.spec.id, complete, current=server.spec.pull_diagnostics)

    async def _raw_diagnostics(
        self, path: Path, *, wait: float = 10.0, when_ready: bool = False, recheck: bool = False,
    ) -> tuple[str, list[t.Diagnostic], bool, ManagedServer]:
        """The server's own diagnostics of a file (see :meth:`diagnostics`), as it sent them."""
        server = self.server_for(path)
        await server.ensure_started()
        uri = path.as_uri()
        if server.spec.pull_diagnostics:
            return await self._pulled_diagnostics(server, path, when_ready=when_ready)
        if recheck:
            # A server re-checks the dependents of a changed file on its own schedule: under load its
            # first answer for an importer after an apply could still be the one from before it.
            # tsserver too learns of a change to a file that is not open on its own schedule (its
            # file watchers), before which even a synchronous ask answers for the old program.
            await asyncio.sleep(RECHECK_SECONDS)
        if server.spec.tsserver_diagnostics:
            asked = await asked_diagnostics(server, path, when_ready=when_ready)
            if asked is not None:
                return uri, asked[0], asked[1], server
        if server.capabilities is not None and server.capabilities.diagnostic_provider is not None:
            params = t.DocumentDiagnosticParams(text_document=t.TextDocumentIdentifier(uri=uri))
            value, complete, server, _converter = await self._ask(path, t.TEXT_DOCUMENT_DIAGNOSTIC, params, allow_incomplete=not when_ready)
            items = getattr(value, "items", None) or []
            return uri, list(items), complete, server
        arrived = server.expect_diagnostics(uri)
        sent = server.use_file(path, open_it=True)
        tracker_state = await server.tracker.wait() if server.tracker is not None else None
        complete = tracker_state is not None and tracker_state.value == "ready"
        if sent or uri not in server.diagnostics or uri in server.stale_diagnostics:
            # The server was just shown the document: its diagnostics for this version follow.
            try:
                await asyncio.wait_for(arrived.wait(), wait)
            except TimeoutError:
                complete = False
        # Otherwise the document is open and unchanged since the server last published for it.
        return uri, list(server.diagnostics.get(uri, [])), complete, server

    async def _pulled_diagnostics(
        self, server: ManagedServer, path: Path, *, when_ready: bool,
    ) -> tuple[str, list[t.Diagnostic], bool, ManagedServer]:
        """Ask a server that was told the client pulls (``ServerSpec.pull_diagnostics``). It answers
        for the document as it has it when the request arrives, so no wait for a re-check is needed
        after an apply: the changes were sent before the request, on the same stream."""
        uri = path.as_uri()
        if server.tracker is not None:
            # Readiness first, so that nothing can run between the didOpen below and the request
            # (another question's didOpen could close this document, and the server answers an
            # empty report for a closed one in its openFilesOnly mode).
            await server.tracker.wait()
        server.use_file(path, open_it=True)
        restarts = server.restarts
        params = t.DocumentDiagnosticParams(text_document=t.TextDocumentIdentifier(uri=uri))
        reply = await server.request(t.TEXT_DOCUMENT_DIAGNOSTIC, params, allow_incomplete=not when_ready)
        items = getattr(reply.value, "items", None) or []
        # A server restarted before the request knows no open document, and answers an empty
        # report for a closed one: that answer says nothing, so it is not called complete.
        return uri, list(items), reply.complete and server.restarts == restarts, server


def _kind(kind: str) -> t.CodeActionKind | str:
    """A kind LSP names (``refactor.extract``) as its enum member, any other
    (``refactor.extract.function``) as its string, which the protocol allows too."""
    known = {member.value for member in t.CodeActionKind}
    return t.CodeActionKind(kind) if kind in known else kind


def resolves_actions(server: ManagedServer) -> bool:
    """Whether the server fills in a code action's edit on ``codeAction/resolve``."""
    provider = server.capabilities.code_action_provider if server.capabilities is not None else None
    return isinstance(provider, t.CodeActionOptions) and bool(provider.resolve_provider)


def _registered_kinds(server: ManagedServer) -> list[str]:
    provider = server.capabilities.code_action_provider if server.capabilities is not None else None
    if not isinstance(provider, t.CodeActionOptions):
        return []
    return [str(kind) for kind in provider.code_action_kinds or []]


def _is_source(kind: str) -> bool:
    return kind == "source" or kind.startswith("source.")


def _overlaps(a: t.Range, b: t.Range) -> bool:
    """Ranges that share a position (touching counts: a cursor at a diagnostic's end is on it)."""
    return (a.start.line, a.start.character) <= (b.end.line, b.end.character) and \
        (b.start.line, b.start.character) <= (a.end.line, a.end.character)
