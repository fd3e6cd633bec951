"""One language-server process and the JSON-RPC session with it, on pygls's machinery.

This layer knows processes and messages, not LSP features: it starts the
process, answers the server's own requests, times out and cancels requests,
and fails every pending request at once, with a typed error, when the
process dies or breaks the protocol.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import itertools
import logging
import os
import signal
import subprocess
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, cast

from lsprotocol import types
from pygls.client import JsonRPCClient
from pygls.exceptions import JsonRpcException, PyglsError
from pygls.protocol import JsonRPCProtocol, default_converter
from pygls.protocol.json_rpc import JsonRPCResponseMessage, ResponseErrorMessage

from lsp_pool.errors import ProtocolError, RequestTimeout, ServerDied, ServerRequestFailed, ServerStartFailed
from lsp_pool.adopted import AdoptedProcess, adopt
from lsp_pool.awaited import answer_of
from lsp_pool.early import take as take_early
from lsp_pool.launch import guarded_command
from lsp_pool.reader import read_messages

logger = logging.getLogger(__name__)
# pygls warns on stderr about every notification it has no handler for; a library must not
# write to the user's terminal, so its records go nowhere unless the application configures logging.
logging.getLogger("pygls").addHandler(logging.NullHandler())

_STDERR_LINES = 40
_STREAM_LIMIT = 64 * 1024 * 1024  # one LSP message may be a large workspace symbol list


@dataclass(frozen=True)
class _ServerRequestId:
    """The id of a request the server sent us, kept apart from the ids of our own requests.

    pygls keys its futures and expected result types by id in one table, for the requests it
    sends and for those it handles; a server picks its ids itself, and one equal to the id of
    a request of ours in flight made the reply to the server's request pop our future (our
    request then waited for its timeout) and our result type."""

    id: int | str


class _ClientProtocol(JsonRPCProtocol):
    """JSON-RPC with lsprotocol's types, tolerant of answers lsprotocol cannot structure.

    pygls only logs a response that fails conversion and never completes its
    request; here such a response is delivered raw instead (and counted), so
    the caller gets the server's answer rather than a timeout. The server's own
    requests are handled under ids of their own (:class:`_ServerRequestId`).
    """

    raw_fallbacks = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.result_readers: dict[int, Callable[[Any], Any]] = {}
        """By request id: what turns a workspace edit's JSON into its value, run as the answer is
        read (:meth:`Connection.request`'s ``read_result``)."""

    def _handle_request(self, msg_id: Any, method_name: str, params: Any) -> None:
        # pygls only uses the id as a table key and hands it back to _send_response below.
        super()._handle_request(_ServerRequestId(msg_id), method_name, params)  # type: ignore[arg-type]  # not a MsgId, on purpose

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        super()._handle_cancel_notification(_ServerRequestId(msg_id))  # type: ignore[arg-type]  # a table key, as above

    def _send_response(self, msg_id: Any, result: Any | None = None, error: Any = None) -> None:
        if not isinstance(msg_id, _ServerRequestId):
            super()._send_response(msg_id, result, error)
            return
        # Our reply to the server's request: its own id back, and none of our result types touched.
        if error is not None:
            self._send_data(ResponseErrorMessage(id=msg_id.id, error=error))
        else:
            self._send_data(JsonRPCResponseMessage(id=msg_id.id, result=result, jsonrpc=JsonRPCProtocol.VERSION))

    def handle_message(self, message: Any) -> None:
        """pygls's dispatch, less its cost for the two kinds a session is made of: an answer to
        our request, and a notification (tsc --lsp sends several right after each answer, read
        before the answer's waiter resumes). pygls tells the kinds apart by ``isinstance`` against
        runtime-checkable Protocols, which (Python 3.11) lists each Protocol's members anew at
        every check, three checks for an answer; the same test here is on the members themselves.
        A message of another kind, or one pygls would drop, goes to pygls."""
        if message.jsonrpc != JsonRPCProtocol.VERSION or self._shutdown:
            super().handle_message(message)
        elif hasattr(message, "method") and hasattr(message, "params"):
            if hasattr(message, "id"):
                super().handle_message(message)  # the server's request
            else:
                contextvars.copy_context().run(self._handle_notification, message.method, message.params)
        elif hasattr(message, "id") and hasattr(message, "result"):
            contextvars.copy_context().run(self._handle_response, message.id, message.result)
        else:
            super().handle_message(message)

    def get_message_type(self, method: str) -> type[Any] | None:
        return types.METHOD_TO_TYPES.get(method, (None,))[0]

    def get_result_type(self, method: str) -> type[Any] | None:
        return types.METHOD_TO_TYPES.get(method, (None, None))[1]

    def structure_message(self, data: dict[str, Any]) -> Any:
        # json.loads calls this for every object in a message, most of them nested values:
        # return those at once (a large documentSymbol answer holds thousands).
        if "jsonrpc" not in data:
            return data
        is_result = "id" in data and "method" not in data and "error" not in data
        if is_result and self._result_types.get(data["id"]) is None:
            # A method lsprotocol does not know (a server's own extension): keep plain JSON
            # rather than pygls's namedtuple conversion.
            self._result_types.pop(data["id"], None)
            return self._raw_result(data)
        if is_result and self._result_types.get(data["id"]) is _CODE_ACTION_RESULT and isinstance(data.get("result"), list):
            return self._code_actions(data)
        if is_result and self._result_types.get(data["id"]) is _DOCUMENT_DIAGNOSTIC_RESULT:
            _name_the_full_report(data.get("result"))
        if is_result and self._result_types.get(data["id"]) in _WORKSPACE_EDIT_RESULTS:
            # A rename's WorkspaceEdit holds thousands of positions: lsprotocol's validated
            # objects for them cost about as much as the server took to compute the rename.
            # Kept as JSON, which the Converter reads directly.
            self._result_types.pop(data["id"], None)
            reader = self.result_readers.pop(data["id"], None)
            return self._raw_result(data if reader is None else {**data, "result": _read(reader, data.get("result"))})
        try:
            return super().structure_message(data)
        except JsonRpcException:
            if is_result:
                self.raw_fallbacks += 1
                return self._raw_result(data)
            raise

    def _code_actions(self, data: dict[str, Any]) -> JsonRPCResponseMessage:
        """``(Command | CodeAction)[]``: cattrs takes a CodeAction that carries a command for a
        Command (both have ``title`` and ``command``) and loses its kind. A Command's
        ``command`` is a string, a CodeAction's an object: that decides."""
        self._result_types.pop(data["id"], None)
        converter = shared_converter()
        actions = [
            converter.structure(item, types.Command if isinstance(item.get("command"), str) else types.CodeAction)
            for item in data["result"]
        ]
        return JsonRPCResponseMessage(id=data["id"], jsonrpc=data["jsonrpc"], result=actions)

    @staticmethod
    def _raw_result(data: dict[str, Any]) -> JsonRPCResponseMessage:
        return JsonRPCResponseMessage(id=data["id"], jsonrpc=data["jsonrpc"], result=data.get("result"))


@dataclass(frozen=True)
class _Unread:
    """A result its reader failed on: raised to the request's caller, as if read there."""

    error: Exception


def _read(reader: Callable[[Any], Any], result: Any) -> Any:
    try:
        return reader(result)
    except Exception as error:  # noqa: BLE001 - the caller's to raise: the session itself is fine
        return _Unread(error)


_CODE_ACTION_RESULT = types.METHOD_TO_TYPES[types.TEXT_DOCUMENT_CODE_ACTION][1]
_DOCUMENT_DIAGNOSTIC_RESULT = types.METHOD_TO_TYPES[types.TEXT_DOCUMENT_DIAGNOSTIC][1]
_WORKSPACE_EDIT_RESULTS = (
    types.METHOD_TO_TYPES[types.TEXT_DOCUMENT_RENAME][1],
    types.METHOD_TO_TYPES[types.WORKSPACE_WILL_RENAME_FILES][1],
)


def _name_the_full_report(report: Any) -> None:
    """gopls (0.23) answers textDocument/diagnostic with ``"kind": ""``: it keeps no result ids, so
    every report it sends is a full one, and lsprotocol refuses the empty kind (the answer then
    came back as plain JSON, its items unread)."""
    if isinstance(report, dict) and report.get("kind") == "" and isinstance(report.get("items"), list):
        report["kind"] = types.DocumentDiagnosticReportKind.Full.value


class _Client(JsonRPCClient):
    """pygls's client, with the errors it reports handed to the connection."""

    def __init__(self, on_error: Callable[[Exception, Any], None]) -> None:
        super().__init__(protocol_cls=_ClientProtocol, converter_factory=shared_converter)
        self._on_error = on_error

    def report_server_error(self, error: Exception, source: type[PyglsError] | type[JsonRpcException]) -> None:
        self._on_error(error, source)


@functools.cache
def shared_converter() -> Any:
    """One cattrs converter for every connection: it generates its (un)structuring code per type
    on first use, for the initialize exchange alone a noticeable cost, so each new one would pay again."""
    return default_converter()


@dataclass
class ServerEvents:
    """Callbacks for what the server tells us unasked. All run on the event loop."""

    on_log: Callable[[str], None] = lambda message: None
    on_progress: Callable[[str | int, str, str | None], None] = lambda token, kind, title: None
    on_diagnostics: Callable[[types.PublishDiagnosticsParams], None] = lambda params: None
    settings: Callable[[str | None, str | None], Any] = lambda section, scope: None
    """Answers ``workspace/configuration`` for a section, and the document it asks about (or None)."""
    workspace_folders: Callable[[], list[types.WorkspaceFolder]] = list
    on_failure: Callable[[Exception], None] = lambda error: None
    """The connection became unusable (the process died, or broke the protocol)."""
    captured_edits: list[types.WorkspaceEdit] = field(default_factory=list)
    capture_edits: bool = False


class Connection:
    def __init__(self, server_id: str, command: tuple[str, ...], cwd: str, events: ServerEvents,
                 environment: Mapping[str, str] | None = None) -> None:
        self.server_id = server_id
        self.command = command
        self.cwd = cwd
        self.environment = dict(environment or {})
        """Laid over codegraft's own environment for the server's process."""
        self.events = events
        self.process: asyncio.subprocess.Process | AdoptedProcess | None = None
        self.stderr_tail: deque[str] = deque(maxlen=_STDERR_LINES)
        self.failure: Exception | None = None
        """Set once the connection is unusable; every later request fails with it."""
        self._ids = itertools.count(1)
        self._client = _Client(self._on_protocol_error)
        self._tasks: list[asyncio.Task[Any]] = []
        self._local_errors: list[Exception] = []
        self._register_handlers()

    # -- lifecycle -----------------------------------------------------------

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None and self.failure is None

    async def start(self) -> None:
        # A process lsp_pool.early started for this server before the pool was imported, if any.
        early = take_early(self.server_id, self.cwd, self.command, self.environment)
        process = await self._adopt(early) if early is not None else await self._spawn()
        self.process = process
        if process.stdin is None or process.stdout is None or process.stderr is None:
            raise ServerStartFailed(f"{self.server_id}: no stdio pipes")
        self._client.protocol.set_writer(process.stdin)
        reader = asyncio.create_task(self._read_messages(process.stdout), name=f"{self.server_id}-reader")
        drain = asyncio.create_task(self._drain_stderr(process.stderr), name=f"{self.server_id}-stderr")
        watcher = asyncio.create_task(self._watch_exit(process, drain), name=f"{self.server_id}-exit")
        self._tasks = [reader, drain, watcher]

    async def _adopt(self, early: subprocess.Popen[bytes]) -> AdoptedProcess:
        try:
            return await adopt(early, limit=_STREAM_LIMIT)
        except (OSError, ValueError) as error:
            _signal_group(early.pid, signal.SIGKILL)  # ours now: nobody else would stop it
            early.wait()
            raise ServerStartFailed(f"cannot take over {self.server_id}'s process {early.pid}: {error}") from error

    async def _spawn(self) -> asyncio.subprocess.Process:
        command = guarded_command(self.command, os.getpid())
        try:
            return await asyncio.create_subprocess_exec(
                *command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.cwd,
                env={**os.environ, **self.environment} if self.environment else None,
                start_new_session=True,
                limit=_STREAM_LIMIT,
            )
        except OSError as error:
            raise ServerStartFailed(f"cannot start {self.server_id} ({self.command[0]}): {error}") from error

    async def close(self, grace: float = 2.0) -> None:
        """``shutdown`` and ``exit``, then SIGTERM and SIGKILL to the process group if it lingers."""
        process = self.process
        if process is None:
            return
        asked_to_exit = False
        if self.alive:
            try:
                await self.request("shutdown", None, timeout=grace)
            except Exception:  # noqa: BLE001 - a server that cannot shut down politely is killed below
                pass
            if self.alive:
                self.notify("exit", None)
                asked_to_exit = True
        # A server that was asked to exit gets `grace` seconds; a broken one goes straight to SIGTERM.
        steps = ((None, grace),) if asked_to_exit else ()
        for signal_number, wait in (*steps, (signal.SIGTERM, 1.0), (signal.SIGKILL, 5.0)):
            if signal_number is not None:
                _signal_group(process.pid, signal_number)
            try:
                await asyncio.wait_for(process.wait(), wait)
                break
            except TimeoutError:
                continue
        # The server may have left children in its group (node workers): they go too.
        _signal_group(process.pid, signal.SIGKILL)
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()
        for task in self._tasks:
            if not task.done():
                task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._client._stop_event.set()

    # -- messages ------------------------------------------------------------

    async def request(self, method: str, params: Any, timeout: float, read_result: Callable[[Any], Any] | None = None) -> Any:
        """The server's answer, through ``read_result`` when given: for a workspace edit (a rename's)
        it runs as the answer is read, on its JSON. A rename's thousand edits were read into JSON,
        then into the engine's values moments later, and the collector, paused for the first
        (lsp_pool.reader), ran over all of them between the two."""
        if self.failure is not None:
            raise self.failure
        msg_id = next(self._ids)
        protocol = cast(_ClientProtocol, self._client.protocol)
        self._local_errors.clear()
        if read_result is not None:
            protocol.result_readers[msg_id] = read_result
        future: Future[Any] = protocol.send_request(method, params, msg_id=msg_id)
        if self._local_errors:
            protocol._request_futures.pop(msg_id, None)
            protocol._result_types.pop(msg_id, None)
            protocol.result_readers.pop(msg_id, None)
            raise TypeError(f"codegraft could not encode its {method} request: {self._local_errors[0]!r}")
        try:
            value = await answer_of(future, timeout)
        except TimeoutError:
            self._cancel(msg_id)
            raise RequestTimeout(self.server_id, method, timeout) from None
        except asyncio.CancelledError:
            self._cancel(msg_id)
            raise
        except JsonRpcException as error:
            raise ServerRequestFailed(self.server_id, method, error.code, error.message) from None
        finally:
            unread = protocol.result_readers.pop(msg_id, None)  # still there: an answer of another kind, or none
        if isinstance(value, _Unread):
            raise value.error
        return read_result(value) if unread is not None and read_result is not None else value

    def notify(self, method: str, params: Any) -> None:
        if self.failure is not None:
            raise self.failure
        self._client.protocol.notify(method, params)

    def _cancel(self, msg_id: int) -> None:
        protocol = self._client.protocol
        protocol._request_futures.pop(msg_id, None)
        protocol._result_types.pop(msg_id, None)
        if self.alive:
            protocol.notify("$/cancelRequest", types.CancelParams(id=msg_id))

    def _fail_pending(self, error: Exception) -> None:
        if self.failure is None:
            self.failure = error
            self.events.on_failure(error)
        pending = self._client.protocol._request_futures
        for future in list(pending.values()):
            if not future.done():
                future.set_exception(error)
        pending.clear()

    # -- background tasks ----------------------------------------------------

    async def _read_messages(self, stdout: asyncio.StreamReader) -> None:
        try:
            await read_messages(self._client._stop_event, stdout, self._client.protocol, self._on_protocol_error, JsonRpcException)
        except (asyncio.IncompleteReadError, ValueError, OSError) as error:
            # The stream ended inside a message, or a header was unreadable: the session is over.
            self._on_protocol_error(error, type(error))

    async def _drain_stderr(self, stderr: asyncio.StreamReader) -> None:
        # Always drained: a full stderr pipe blocks the server.
        while line := await stderr.readline():
            self.stderr_tail.append(line.decode("utf-8", errors="replace").rstrip())

    async def _watch_exit(self, process: asyncio.subprocess.Process | AdoptedProcess, drain: asyncio.Task[None]) -> None:
        code = await process.wait()
        try:
            await asyncio.wait_for(asyncio.shield(drain), 1.0)
        except (TimeoutError, asyncio.CancelledError):
            pass
        self._fail_pending(ServerDied(self.server_id, code, "\n".join(self.stderr_tail)))

    def _on_protocol_error(self, error: Exception, source: Any = None) -> None:
        local = isinstance(source, type) and (
            issubclass(source, PyglsError) or (issubclass(source, JsonRpcException) and source is not JsonRpcException)
        )
        if local:
            # pygls reports its own failures here too (a message we could not encode, a handler
            # of ours that raised, a server request we have no handler for): those are not the
            # server breaking the protocol and must not restart it.
            self._local_errors.append(error)
            return
        logger.debug("%s broke the protocol: %r", self.server_id, error)
        self._fail_pending(ProtocolError(f"{self.server_id} sent an unreadable message ({error!r}); it will be restarted"))

    # -- what the server asks of us -------------------------------------------

    def _register_handlers(self) -> None:
        feature = self._client.feature
        events = self.events

        @feature(types.WORKSPACE_CONFIGURATION)
        def configuration(params: types.ConfigurationParams) -> list[Any]:
            return [events.settings(item.section, item.scope_uri) for item in params.items]

        @feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def progress_create(params: types.WorkDoneProgressCreateParams) -> None:
            return None

        @feature(types.CLIENT_REGISTER_CAPABILITY)
        def register_capability(params: types.RegistrationParams) -> None:
            return None

        @feature(types.CLIENT_UNREGISTER_CAPABILITY)
        def unregister_capability(params: types.UnregistrationParams) -> None:
            return None

        @feature(types.WORKSPACE_WORKSPACE_FOLDERS)
        def folders(params: Any) -> list[types.WorkspaceFolder]:
            return events.workspace_folders()

        @feature(types.WORKSPACE_APPLY_EDIT)
        def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            # codegraft applies edits itself, through its journaled apply layer. During a
            # command whose edits we asked for, the edit is captured and reported applied;
            # otherwise it is declined, so the server does not believe a change happened.
            if events.capture_edits:
                events.captured_edits.append(params.edit)
                return types.ApplyWorkspaceEditResult(applied=True)
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="codegraft applies edits itself")

        @feature("_typescript.rename")
        def typescript_rename(params: Any) -> None:
            # typescript-language-server asks its client to start a rename where an extract put
            # the new name, once the edit is applied; a refactoring's new name is codegraft's to give.
            return None

        @feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        def show_message_request(params: types.ShowMessageRequestParams) -> None:
            return None

        for refresh in (
            types.WORKSPACE_SEMANTIC_TOKENS_REFRESH, types.WORKSPACE_INLAY_HINT_REFRESH,
            types.WORKSPACE_CODE_LENS_REFRESH, types.WORKSPACE_DIAGNOSTIC_REFRESH,
            types.WORKSPACE_INLINE_VALUE_REFRESH, types.WORKSPACE_FOLDING_RANGE_REFRESH,
        ):
            feature(refresh)(lambda params: None)

        @feature(types.WINDOW_LOG_MESSAGE)
        def log_message(params: types.LogMessageParams) -> None:
            events.on_log(params.message)

        @feature(types.PROGRESS)
        def progress(params: types.ProgressParams) -> None:
            value = params.value
            kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
            title = value.get("title") if isinstance(value, dict) else getattr(value, "title", None)
            if kind:
                events.on_progress(params.token, str(kind), title)

        @feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def diagnostics(params: types.PublishDiagnosticsParams) -> None:
            events.on_diagnostics(params)

        for ignored in (types.WINDOW_SHOW_MESSAGE, types.TELEMETRY_EVENT, types.LOG_TRACE, "$/typescriptVersion"):
            feature(ignored)(lambda params: None)


def _signal_group(pid: int, signal_number: int) -> None:
    try:
        os.killpg(pid, signal_number)
    except (ProcessLookupError, PermissionError):
        pass
