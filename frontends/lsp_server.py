"""``graft lsp``: the engine as a language server for editor plugins (pygls).

- ``textDocument/documentSymbol`` serves the engine's outline; ``prepareRename`` and
  ``rename`` its rename (the editor asks for the new name and applies the edit itself).
- Code actions on the symbol under the cursor, one per operation of the registry that has
  one (engine.refactor.operations: rename, move, safe delete, replace body), each a command;
  on a non-empty selection, extract function and extract variable of that span, and inline on
  a name (``graft.extractFunction``, ``graft.extractVariable``, ``graft.inline``).
- One command per registered operation (``graft.rename``, ``graft.move``, ``graft.renameFile``,
  ``graft.safeDelete``, ``graft.replaceSymbolBody``, ``graft.insertBefore``, ``graft.insertAfter``),
  its arguments the operation's fields in order or one object of them: it plans the
  change and sends it through ``workspace/applyEdit``, so the editor's buffers and undo
  stay in step; the edit carries a change annotation with the engine's source and
  confidence. ``graft.outline`` and ``graft.impact`` return data. Long work reports
  ``$/progress``. A command missing an argument it needs (a destination) asks with
  ``window/showMessageRequest`` where a choice can be offered.
- An engine refusal in a request (documentSymbol, prepareRename, rename, codeAction,
  ``graft.outline``, ``graft.impact``) is a RequestFailed error (-32803) whose message is the
  engine's sentence and whose data carries its ``code``; arguments of the wrong shape (a
  malformed address, a missing argument) are InvalidParams (-32602) alike; a failure of graft
  itself is InternalError (-32603) with one line, its traceback on stderr, never in the answer.
  Refactoring commands answer ``{"applied": false, "error": ...}`` and show the message.
- Frames are read by :mod:`frontends.lsp_stdio`: a broken frame is answered or skipped, and a
  message pygls would drop (not JSON, not JSON-RPC, params of the wrong shape) is answered.
- Plans are made from the files on disk: a command on a document with unsaved changes
  is refused with a message, rather than computed from stale text.
- Every plan passes the guards of an apply before the editor gets it (engine.client.EngineClient.checked_plan):
  an edit that would leave a syntax error, or write over uncommitted changes, is refused with the
  code the CLI and MCP give. A command's object of arguments may lift them as they can
  (``"allow_dirty": true``, ``"allow_syntax_errors": true``); ``[tool.graft] allow_dirty`` holds here too.
- A refactoring command checks its edit as an apply does (engine.edits.editor_check): the errors
  of the edited files and their importers are taken before the edit is sent, and compared once
  the editor has saved every file it edited (``textDocument/didSave``); the server then sends
  ``graft/checkFinished`` (``{"transaction": "editor-…", "verified": …, "summary": …}``) and, when
  the edit brought new errors, ``window/showMessage``. The command's result has ``verified`` as
  it stands when the edit is sent (nothing compared yet), its confidence capped by it. A
  ``"check": "none" | "fast" | "full"`` key in the command's object of arguments chooses the
  check (default fast).
"""

from __future__ import annotations

import argparse
import functools
import inspect
import re
import sys
import traceback
import uuid
from pathlib import Path
from typing import Any, Callable, TypeVar
from urllib.parse import unquote, urlparse

from lsprotocol import types as t
from lsprotocol.converters import get_converter
from pygls.exceptions import JsonRpcException, JsonRpcInternalError
from pygls.lsp.server import LanguageServer

from engine.api_surface import (
    capped, ChangeAnnotation, CheckMode, Confidence, EditOptions, EditorCheck, Engine, EngineClient, FieldInfo, keep_editor_check,
    prepare_editor_check,
    GraftError, language_of, LineIndex, MalformedAddress, open_engine, OPERATIONS, parse_address, Position, PositionAddress,
    PositionEncoding, RefactorOperation, RefactorPlan, Rename, SourcePreference, Symbol, SymbolNotFound, to_lsp,
    UsageError, WorkspaceEdit,
)
from frontends import lsp_stdio
from frontends.render import option_hints

_CONVERTER = get_converter()
REQUEST_FAILED = -32803
"""LSP's RequestFailed: the request was valid and the server refuses it (the engine's refusals)."""
INVALID_PARAMS = -32602
COMMANDS = ("graft.outline", "graft.impact", *(operation.lsp_command for operation in OPERATIONS.values()))
CHECK_FINISHED = "graft/checkFinished"
"""The notification that carries a refactoring command's check once the editor has saved its files."""
Handler = TypeVar("Handler", bound=Callable[..., Any])


class BadArguments(UsageError):
    """A command's arguments are missing or of the wrong kind."""

    code = "bad_arguments"


#: Refusals that say the request's arguments are malformed (InvalidParams), not that the
#: engine declines a well-formed request (RequestFailed).
ARGUMENT_ERRORS: tuple[type[GraftError], ...] = (MalformedAddress, BadArguments)


def refused(error: GraftError) -> JsonRpcException:
    """An engine refusal as the protocol's error: the engine's sentence, its code in ``data``."""
    code = INVALID_PARAMS if isinstance(error, ARGUMENT_ERRORS) else REQUEST_FAILED
    return JsonRpcException(error.message, code=code, data=error.to_json())


def _as_protocol_error(error: Exception) -> JsonRpcException:
    if isinstance(error, JsonRpcException):
        return error
    if isinstance(error, GraftError):
        return refused(error)
    # A bug of graft's: the editor gets one line, the log (stderr) the traceback.
    traceback.print_exception(error, file=sys.stderr)
    return JsonRpcInternalError(f"internal error in graft: {type(error).__name__}: {error} (the traceback is in the server's log)")


def typed_errors(handler: Handler) -> Handler:
    """The handler, its failures answered as typed errors (pygls would answer anything it does
    not know as -32603 with the traceback in ``data``)."""
    if inspect.iscoroutinefunction(handler):
        @functools.wraps(handler)
        async def run_async(*arguments: Any, **named: Any) -> Any:
            try:
                return await handler(*arguments, **named)
            except Exception as error:  # noqa: BLE001 - every failure becomes a typed answer
                raise _as_protocol_error(error) from None
        return run_async  # type: ignore[return-value]  # the same signature, wrapped

    @functools.wraps(handler)
    def run(*arguments: Any, **named: Any) -> Any:
        try:
            return handler(*arguments, **named)
        except Exception as error:  # noqa: BLE001 - every failure becomes a typed answer
            raise _as_protocol_error(error) from None
    return run  # type: ignore[return-value]  # the same signature, wrapped


class GraftLanguageServer(LanguageServer):
    def __init__(self, source: SourcePreference) -> None:
        super().__init__("codegraft", "0.1.0")
        self.source = source
        self.engine: Engine | None = None
        self.client: EngineClient | None = None
        """The engine's client: plans pass its guards (syntax, uncommitted changes) before the editor gets them."""
        self.awaiting: tuple[EditorCheck, set[str]] | None = None
        """The last command's check and the files the editor has still to save before it is compared."""

    def require_engine(self) -> Engine:
        if self.engine is None:
            raise UsageError("the server has no workspace yet (initialize with a rootUri or workspace folder)")
        return self.engine

    def require_client(self) -> EngineClient:
        if self.client is None:
            raise UsageError("the server has no workspace yet (initialize with a rootUri or workspace folder)")
        return self.client

    def current_engine(self) -> Engine:
        """The engine, with what changed on disk since the last request (a checkout, a file
        another tool wrote) read into its graph and told to its servers: for the requests that
        plan or query the graph."""
        engine = self.require_engine()
        engine.refresh_from_disk()
        return engine

    # -- positions --------------------------------------------------------------------

    def path_of(self, uri: str) -> str:
        engine = self.require_engine()
        return engine.workspace.resolve(unquote(urlparse(uri).path))[0]

    def index_of(self, path: str) -> LineIndex:
        return LineIndex((self.require_engine().workspace.root / path).read_bytes())

    def to_engine(self, path: str, position: t.Position) -> Position:
        return self.index_of(path).from_protocol(position.line, position.character, PositionEncoding.UTF16)

    def to_lsp_range(self, index: LineIndex, start: Position, end: Position) -> t.Range:
        (line, column), (end_line, end_column) = index.to_protocol(start, PositionEncoding.UTF16), index.to_protocol(end, PositionEncoding.UTF16)
        return t.Range(t.Position(line, column), t.Position(end_line, end_column))

    def check_saved(self, uri: str) -> None:
        """Plans are computed from disk; an editor buffer with unsaved changes would be clobbered."""
        document = self.workspace.get_text_document(uri)
        path = self.path_of(uri)
        on_disk = (self.require_engine().workspace.root / path).read_text(encoding="utf-8-sig", errors="replace")
        if document.source is not None and document.version is not None and document.source.replace("\r\n", "\n") != on_disk.replace("\r\n", "\n"):
            raise UsageError(f"{path} has unsaved changes; save it first (graft plans from the files on disk)")

    def check_plan_saved(self, plan: RefactorPlan) -> None:
        """Every file the plan edits that the editor has open must match the disk."""
        root = self.require_engine().workspace.root
        for path in plan.files:
            uri = (root / path).as_uri()
            if uri in self.workspace.text_documents:
                self.check_saved(uri)

    def symbol_at(self, uri: str, position: t.Position) -> Symbol:
        path = self.path_of(uri)
        engine_position = self.to_engine(path, position)
        address = PositionAddress(path, engine_position.line + 1, engine_position.column + 1)
        return self.require_engine().find(address).matches[0]

    # -- edits ------------------------------------------------------------------------

    def as_lsp_edit(self, plan: RefactorPlan) -> t.WorkspaceEdit:
        label = f"graft {plan.operation} ({plan.source.value} · {plan.confidence.value})"
        annotated = WorkspaceEdit(plan.edit.operations, {"graft": ChangeAnnotation(label, False, "; ".join(plan.warnings))})
        data = to_lsp(annotated, self.require_engine().workspace)
        data.pop("graft:sha256", None)
        for change in data["documentChanges"]:
            if "edits" in change:
                change["edits"] = [{**edit, "annotationId": "graft"} for edit in change["edits"]]
                # An open buffer's version (the plan was checked against it): the editor refuses the
                # edit if the buffer moved on since. Closed files have none (null: the file on disk).
                document = self.workspace.text_documents.get(change["textDocument"]["uri"])
                change["textDocument"]["version"] = document.version if document is not None else None
            else:
                change["annotationId"] = "graft"
        return _CONVERTER.structure(data, t.WorkspaceEdit)

    async def send(self, plan: RefactorPlan, check: CheckMode = CheckMode.FAST) -> dict[str, Any]:
        self.check_plan_saved(plan)
        # The errors before, from the files as they are: once the editor has the edit, its saves change them.
        before = prepare_editor_check(self.require_engine().edits(), plan.edit, check)
        label = f"graft {plan.operation} ({plan.source.value} · {plan.confidence.value})"
        reply = await self.workspace_apply_edit_async(t.ApplyWorkspaceEditParams(edit=self.as_lsp_edit(plan), label=label))
        for warning in plan.warnings:
            self.window_log_message(t.LogMessageParams(t.MessageType.Info, f"{plan.operation}: {warning}"))
        confidence: Confidence = plan.confidence
        verified: dict[str, object] | None = None
        if reply.applied:
            sent = before.as_sent()
            confidence, verified = capped(confidence, sent.label()[0]), sent.to_json()
            self.awaiting = (before, set(before.saved_first)) if before.before is not None else None
            if self.awaiting is not None and not before.saved_first:
                self.finish_check()  # file operations only: the editor has done them on disk already
        return {"applied": bool(reply.applied), "files": plan.files, "source": plan.source.value,
                "confidence": confidence.value, "warnings": plan.warnings, "verified": verified,
                **({"failure": reply.failure_reason} if reply.failure_reason else {})}

    def saved(self, uri: str) -> None:
        """The editor wrote a file: the last command's check is compared once every file it edited is."""
        if self.awaiting is None:
            return
        self.awaiting[1].discard(self.path_of(uri))
        if not self.awaiting[1]:
            self.finish_check()

    def finish_check(self) -> None:
        """Compare the errors after the edit with those before (what the editor saved, read from
        disk), keep the result for ``graft check --last``, and tell the editor."""
        if self.awaiting is None:
            return
        check, _unsaved = self.awaiting
        self.awaiting = None
        engine = self.current_engine()  # the saved files read into the graph and told to the servers first
        keep_editor_check(engine.workspace.root, check)
        result = engine.edits().check_last()
        if result is None:
            return
        transaction, verified = result
        summary = verified.summary()
        self.protocol.notify(CHECK_FINISHED, {"transaction": transaction, "verified": verified.to_json(), "summary": summary})
        if verified.new_errors:
            listing = "; ".join(f"{d.file}:{d.range.start.line + 1}: {d.message.splitlines()[0]}" for d in verified.new_errors[:3])
            self.window_show_message(t.ShowMessageParams(t.MessageType.Warning, f"graft: the last edit {summary}: {listing}"))


def build_server(source: SourcePreference = SourcePreference.AUTO) -> GraftLanguageServer:
    server = GraftLanguageServer(source)
    _register_lifecycle(server)
    _register_outline_features(server)
    _register_rename_and_actions(server)
    _register_data_commands(server)
    for operation in OPERATIONS.values():
        _register_refactor_command(server, operation)
    return server


def _register_lifecycle(server: GraftLanguageServer) -> None:
    """Opening the workspace's engine, the editor's saves (the last command's check), shutdown."""
    @server.feature(t.INITIALIZED)
    def initialized(ls: GraftLanguageServer, params: t.InitializedParams) -> None:
        folders = list(ls.workspace.folders.values())
        root = ls.workspace.root_path or (unquote(urlparse(folders[0].uri).path) if folders else None)
        if not root:
            ls.window_show_message(t.ShowMessageParams(t.MessageType.Error, "graft: no workspace root given; open a folder"))
            return
        ls.engine = open_engine(Path(root).resolve(), ls.source)
        ls.client = EngineClient(ls.engine)
        for report in ls.engine.recovered:
            ls.window_show_message(t.ShowMessageParams(t.MessageType.Warning, f"graft: {report.message()}"))

    @server.feature(t.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: GraftLanguageServer, params: t.DidSaveTextDocumentParams) -> None:
        try:
            ls.saved(params.text_document.uri)
        except GraftError as error:  # a notification has no answer: the check's failure is shown
            ls.window_show_message(t.ShowMessageParams(t.MessageType.Error, f"graft: the check of the last edit failed: {error.message}"))

    @server.feature(t.SHUTDOWN)
    def shutdown(ls: GraftLanguageServer, params: None) -> None:
        if ls.engine is not None:
            ls.engine.close()
            ls.engine, ls.client = None, None


def _register_outline_features(server: GraftLanguageServer) -> None:
    """The outline (documentSymbol) and the name under the cursor (prepareRename)."""
    @server.feature(t.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    @typed_errors
    def document_symbol(ls: GraftLanguageServer, params: t.DocumentSymbolParams) -> list[t.DocumentSymbol]:
        path = ls.path_of(params.text_document.uri)
        listing = ls.require_engine().outline(path)
        index = ls.index_of(path)

        def convert(symbol: Symbol) -> t.DocumentSymbol:
            return t.DocumentSymbol(
                name=symbol.name, kind=t.SymbolKind(int(symbol.kind)), detail=f"{symbol.source.value} · {symbol.confidence.value}",
                range=ls.to_lsp_range(index, symbol.range.start, symbol.range.end),
                selection_range=ls.to_lsp_range(index, symbol.selection_range.start, symbol.selection_range.end),
                children=[convert(child) for child in symbol.children],
            )

        return [convert(symbol) for symbol in listing.symbols]

    @server.feature(t.TEXT_DOCUMENT_PREPARE_RENAME)
    @typed_errors
    def prepare_rename(ls: GraftLanguageServer, params: t.PrepareRenameParams) -> t.Range | None:
        path = ls.path_of(params.text_document.uri)
        position = ls.to_engine(path, params.position)
        line = ls.index_of(path).line_text(position.line)
        start = position.column
        while start > 0 and (line[start - 1].isalnum() or line[start - 1] == "_"):
            start -= 1
        end = position.column
        while end < len(line) and (line[end].isalnum() or line[end] == "_"):
            end += 1
        if start == end:
            return None
        return ls.to_lsp_range(ls.index_of(path), Position(position.line, start), Position(position.line, end))


def _register_rename_and_actions(server: GraftLanguageServer) -> None:
    """The editor's rename, and a code action per operation of the registry that has one."""
    @server.feature(t.TEXT_DOCUMENT_RENAME)
    @typed_errors
    def rename(ls: GraftLanguageServer, params: t.RenameParams) -> t.WorkspaceEdit:
        ls.check_saved(params.text_document.uri)
        address = _address_at(ls, params.text_document.uri, params.position)
        ls.current_engine()
        client = ls.require_client()
        plan = client.checked_plan(Rename(address, params.new_name), client.default_options())
        ls.check_plan_saved(plan)
        return ls.as_lsp_edit(plan)

    @server.feature(t.TEXT_DOCUMENT_CODE_ACTION, t.CodeActionOptions(code_action_kinds=[t.CodeActionKind.Refactor]))
    @typed_errors
    def code_action(ls: GraftLanguageServer, params: t.CodeActionParams) -> list[t.CodeAction]:
        spans = _selection_actions(ls, params)
        try:
            symbol = ls.symbol_at(params.text_document.uri, params.range.start)
        except SymbolNotFound:
            return spans  # no symbol under the cursor: nothing more to offer, not a failure
        offered = [(o.lsp_command, o.code_action) for o in OPERATIONS.values() if o.code_action is not None]
        return spans + [t.CodeAction(title=f"{action.title}: {symbol.name_path}", kind=t.CodeActionKind(action.kind),
                                     command=t.Command(title=action.title, command=command, arguments=[symbol.address]))
                        for command, action in offered if len(symbol.path) == 1 or not action.top_level_only]


_SPAN_ACTIONS = (("extract-function", "Extract function (graft)", "refactor.extract.function", "extracted function"),
                 ("extract-variable", "Extract variable (graft)", "refactor.extract.variable", "extracted value"))
"""What a non-empty selection offers: the operation, its title and kind, and the words of the
name it is given (the editor's rename renames it after)."""


def _selection_actions(ls: GraftLanguageServer, params: t.CodeActionParams) -> list[t.CodeAction]:
    """Extract function and extract variable for the editor's selection, inline for the name under
    an empty one: each a command running the registry's operation on the span, as
    ``FILE:LINE:COL-LINE:COL``. Whether it can be done is found when it runs (a refusal is shown then)."""
    if params.context.only and not any(str(kind).startswith("refactor") for kind in params.context.only):
        return []
    path = ls.path_of(params.text_document.uri)
    start, end = ls.to_engine(path, params.range.start), ls.to_engine(path, params.range.end)
    text = (ls.require_engine().workspace.root / path).read_text(encoding="utf-8-sig", errors="replace")
    if start == end:
        line = text.splitlines()[start.line] if start.line < len(text.splitlines()) else ""
        if not re.match(r"\w", line[start.column:start.column + 1]) and not re.search(r"\w$", line[:start.column]):
            return []
        inline = OPERATIONS["inline"]
        address = f"{path}:{start.line + 1}:{start.column + 1}"
        return [t.CodeAction(title="Inline (graft)", kind=t.CodeActionKind.RefactorInline,
                             command=t.Command(title="Inline (graft)", command=inline.lsp_command, arguments=[{"address": address}]))]
    span = f"{path}:{start.line + 1}:{start.column + 1}-{end.line + 1}:{end.column + 1}"
    actions = []
    for name, title, kind, words in _SPAN_ACTIONS:
        arguments = {"address": span, "new_name": _free_name(text, words, language_of(path))}
        actions.append(t.CodeAction(title=title, kind=kind,
                                    command=t.Command(title=title, command=OPERATIONS[name].lsp_command, arguments=[arguments])))
    return actions


def _free_name(text: str, words: str, language: str | None) -> str:
    """``words`` as the language writes a name (snake_case in Python, camelCase elsewhere), with a
    number added when the file already has it as a word."""
    first, *rest = words.split()
    stem = "_".join(words.split()) if language == "python" else first + "".join(word.title() for word in rest)
    taken = set(re.findall(r"\w+", text))
    return next(name for name in (f"{stem}{n}" if n else stem for n in range(len(taken) + 2)) if name not in taken)


def _register_data_commands(server: GraftLanguageServer) -> None:
    """Commands that return data: graft.outline and graft.impact."""
    @server.command("graft.outline")
    @typed_errors
    def outline(ls: GraftLanguageServer, *arguments: Any) -> list[dict[str, Any]]:
        path = _argument(list(arguments), 0, "a file path or URI")
        listing = ls.require_engine().outline(ls.path_of(path) if path.startswith("file:") else path)
        return [{"name_path": s.name_path, "kind": s.kind.label, "line": s.range.first_line, "source": s.source.value}
                for top in listing.symbols for s in top.walk()]

    @server.command("graft.impact")
    @typed_errors
    def impact(ls: GraftLanguageServer, *arguments: Any) -> list[dict[str, Any]]:
        return [r.to_json() for r in ls.current_engine().served_graph().impact(_argument(list(arguments), 0, "an address")).rows]


def _register_refactor_command(server: GraftLanguageServer, operation: type[RefactorOperation]) -> None:
    """The operation's command: its arguments as the operation's fields; plans pass the apply's guards, then go to the editor."""
    @server.command(operation.lsp_command)
    @typed_errors
    async def run(ls: GraftLanguageServer, *arguments: Any) -> dict[str, Any]:
        window = ls.client_capabilities.window
        token = uuid.uuid4().hex if window is not None and window.work_done_progress else None
        if token is not None:
            await ls.work_done_progress.create_async(token)
            ls.work_done_progress.begin(token, t.WorkDoneProgressBegin(title=operation.lsp_command, message="planning"))
        try:
            values = await _values(ls, operation, list(arguments))
            if values is None:
                return {"applied": False, "cancelled": True}
            options = _edit_options(ls.require_engine(), values)
            ls.current_engine()
            plan = ls.require_client().checked_plan(operation.build(values), options)
            if token is not None:
                ls.work_done_progress.report(token, t.WorkDoneProgressReport(message="applying in the editor"))
            return await ls.send(plan, options.check)
        except GraftError as error:
            hint = option_hints.LSP(error.option, operation)
            ls.window_show_message(t.ShowMessageParams(t.MessageType.Error, f"graft: {error.message}{hint}"))
            return {"applied": False, "error": error.to_json()}
        finally:
            if token is not None:
                ls.work_done_progress.end(token, t.WorkDoneProgressEnd(message="done"))


def _edit_options(engine: Engine, values: dict[str, Any]) -> EditOptions:
    """The guards and the check a command's arguments ask for, taken out of them (they are not the operation's fields)."""
    check = _check_mode(values.pop("check", CheckMode.FAST.value))
    # The apply's guards a command's object of arguments can lift, as the CLI's flags and MCP's arguments do.
    lifted = {name: values.pop(name, False) for name in option_hints.LSP.apply_options}
    for name, value in lifted.items():
        if not isinstance(value, bool):
            raise BadArguments(f'"{name}" must be true or false, not {value!r}')
    return EditOptions(allow_dirty=lifted["allow_dirty"] or engine.settings.allow_dirty,
                       allow_syntax_errors=lifted["allow_syntax_errors"], check=check)


def _check_mode(value: Any) -> CheckMode:
    try:
        return CheckMode(value)
    except ValueError:
        raise BadArguments(f'"check" must be one of {", ".join(m.value for m in CheckMode)}, not {value!r}') from None


def _argument(arguments: list[Any], index: int, what: str) -> str:
    if len(arguments) <= index or not isinstance(arguments[index], str) or not arguments[index]:
        raise BadArguments(f"argument {index + 1} must be {what}")
    return arguments[index]


async def _values(ls: GraftLanguageServer, operation: type[RefactorOperation], arguments: list[Any]) -> dict[str, Any] | None:
    """A command's arguments as the operation's fields: one object of named fields, or the fields
    in order (required ones first, as the registry lists them). A missing destination module is
    asked for with the modules beside the symbol's own; None when the user cancels."""
    fields = operation.fields()
    if len(arguments) == 1 and isinstance(arguments[0], dict):
        values = dict(arguments[0])
    else:
        if len(arguments) > len(fields):
            raise BadArguments(f"{operation.lsp_command} takes at most {len(fields)} arguments ({_names(fields)}), not {len(arguments)}")
        values = {info.name: value for info, value in zip(fields, arguments)}
    if "dest" in {f.name for f in fields if f.required} and "dest" not in values and isinstance(values.get("address"), str):
        chosen = await _choose_module(ls, ls.require_engine().resolve(parse_address(values["address"])))
        if chosen is None:
            return None
        values["dest"] = chosen
    return values


def _names(fields: list[FieldInfo]) -> str:
    return ", ".join(info.name for info in fields)


def _address_at(ls: GraftLanguageServer, uri: str, position: t.Position) -> str:
    """A name path when the cursor is on a declaration's name (so the whole hierarchy and stubs
    follow), else ``FILE:LINE:COL`` (parameters, locals, uses)."""
    path = ls.path_of(uri)
    engine_position = ls.to_engine(path, position)
    try:
        symbol = ls.symbol_at(uri, position)
        if symbol.selection_range.start <= engine_position <= symbol.selection_range.end:
            return symbol.address
    except GraftError:
        pass
    return f"{path}:{engine_position.line + 1}:{engine_position.column + 1}"


async def _choose_module(ls: GraftLanguageServer, symbol: Symbol) -> str | None:
    """Offer the modules beside the symbol's own as choices."""
    folder = (ls.require_engine().workspace.root / symbol.file).parent
    root = ls.require_engine().workspace.root
    choices = sorted(p.relative_to(root).as_posix() for p in folder.glob("*.py") if p.name != Path(symbol.file).name)[:12]
    if not choices:
        raise UsageError(f"no other module beside {symbol.file}; pass the destination as the command's second argument")
    answer = await ls.window_show_message_request_async(t.ShowMessageRequestParams(
        t.MessageType.Info, f"Move {symbol.name_path} to which module?", [t.MessageActionItem(c) for c in choices]))
    return answer.title if answer is not None else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="graft lsp", description="Serve the engine to editors over stdio (LSP).")
    parser.add_argument("--source", choices=[s.value for s in SourcePreference], default="auto")
    args = parser.parse_args(argv)
    return lsp_stdio.start_io(build_server(SourcePreference(args.source)))


if __name__ == "__main__":
    sys.exit(main())

