"""One supervised server for one (server spec, workspace root): lazy start, readiness, restart, idle stop."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from lsprotocol import types as t

from engine.languages import language_of
from engine.positions import PositionEncoding
from lsp_pool.capabilities import client_capabilities
from lsp_pool.config import PoolConfig
from lsp_pool.connection import Connection, ServerEvents
from lsp_pool.documents import DocumentTracker
from lsp_pool.memory import resident_memory
from lsp_pool.errors import NotReady, RequestTimeout, ServerDied, ServerNotTrusted, ServerStartFailed
from lsp_pool.pyright_config import whole_workspace_config
from lsp_pool.readiness import ReadinessTracker, ServerState
from lsp_pool.registry import ServerSpec
from lsp_pool import said_once, typescript_style
from lsp_pool.workspace_trust import TRUST_HINT, Confinement, confinement

logger = logging.getLogger(__name__)

_MAX_BACKOFF = 30.0
_UNANSWERED_START_MEMORY = 600.0
"""Seconds a server that did not answer ``initialize`` is not started again: a hung start costs
its whole budget, and a command asking several times (a rename asks for symbols, then the
rename) would pay it each time. A process that exits is retried with backoff."""
_LOG_LINES = 200
_MEMORY_CHECK_SECONDS = 2.0
"""Between two looks at a server's memory: a look walks /proc, a few milliseconds, where a warm
call takes as few."""
_MEMORY_RESTART_SPACING = 600.0
"""Seconds after a restart for memory before another: a project that needs more than the ceiling
is not re-indexed call after call."""


@dataclass(frozen=True)
class Reply:
    """A server's answer and whether the server considered its index complete when it gave it."""

    value: Any
    complete: bool


class ManagedServer:
    def __init__(self, spec: ServerSpec, command: tuple[str, ...], root: Path, config: PoolConfig) -> None:
        self.spec = spec
        self.command = command
        self.root = root
        self.config = config
        self.connection: Connection | None = None
        self.tracker: ReadinessTracker | None = None
        self.encoding = PositionEncoding.UTF16
        self.capabilities: t.ServerCapabilities | None = None
        self.server_version: str | None = None
        self.diagnostics: dict[str, list[t.Diagnostic]] = {}
        self.stale_diagnostics: set[str] = set()
        """URIs shown to the server (didOpen/didChange) since it last published diagnostics for them."""
        self.log: list[str] = []
        self.documents = DocumentTracker(self._notify, lambda path: language_of(path.name),
                                         watches_files_itself=spec.watches_files_itself)
        self.restarts = 0
        self.last_exit: str = ""
        self._failures = 0
        self._last_failure = 0.0
        self._start_lock = asyncio.Lock()
        self._program_settings: dict[str, Any] = {}
        self._unanswered: tuple[float, str] | None = None
        """When and how the last start went unanswered (initialize timed out): not retried for a while."""
        self.notes: list[str] = []
        """What codegraft changed about how the server sees the project, and why (said in `graft servers`)."""
        self._informational_notes: set[str] = set()
        """Those of ``notes`` with nothing for the user to do: an answer carries each once per workspace."""
        self._idle_handle: asyncio.TimerHandle | None = None
        self._diagnostic_waiters: dict[str, asyncio.Event] = {}
        self.memory_restarts = 0
        """Restarts past the memory ceiling (``server_memory_limit_mb``), counted in ``restarts`` too."""
        self.memory_restart_note = ""
        """The last of them, said in `graft servers`."""
        self._memory_checked = 0.0
        self._memory_restarted_at: float | None = None
        self.start_seconds = 0.0
        """Seconds spent starting this server (spawn until ``initialize`` answered), every start summed."""

    # -- state ---------------------------------------------------------------

    @property
    def state(self) -> ServerState:
        if self.connection is None or self.tracker is None:
            return ServerState.DEAD if self.last_exit else ServerState.STOPPED
        if not self.connection.alive:
            return ServerState.DEAD
        return self.tracker.state

    @property
    def readiness_budget(self) -> float:
        return self.config.readiness_budget or self.spec.readiness.budget

    @property
    def request_timeout(self) -> float:
        return self.config.request_timeout or self.spec.request_timeout

    # -- lifecycle -----------------------------------------------------------

    async def ensure_started(self) -> Connection:
        async with self._start_lock:
            if self.connection is not None and self.connection.alive:
                return self.connection
            if self.connection is not None:
                await self._forget_connection()
            if self._unanswered is not None and time.monotonic() - self._unanswered[0] < _UNANSWERED_START_MEMORY:
                ago = time.monotonic() - self._unanswered[0]
                raise ServerStartFailed(f"{self._unanswered[1]} ({ago:.0f} s ago; not started again for "
                                        f"{_UNANSWERED_START_MEMORY:.0f} s)")
            refusal = confinement(self.spec, self.root, self.command, self.config.trusted_by).refusal
            if refusal:
                raise ServerNotTrusted(refusal)
            await self._back_off()
            began = time.monotonic()
            try:
                return await self._start()
            except Exception as error:
                self._failures += 1
                self._last_failure = time.monotonic()
                self.last_exit = str(error)
                if self.connection is not None:
                    await self.connection.close(grace=0.5)
                    self.connection = None
                if isinstance(error, RequestTimeout):
                    self._unanswered = (self._last_failure, f"{self.spec.id} did not answer initialize within "
                                                            f"{self.spec.initialize_timeout:.0f} s")
                if isinstance(error, (ServerStartFailed, ServerDied)):
                    raise
                raise ServerStartFailed(f"{self.spec.id} failed to initialize: {error}") from error
            finally:
                self.start_seconds += time.monotonic() - began

    async def _start(self) -> Connection:
        confined = confinement(self.spec, self.root, self.command, self.config.trusted_by)
        policy = self.spec.readiness
        if self.config.readiness_budget is not None:
            policy = replace(policy, budget=self.config.readiness_budget)
        tracker = ReadinessTracker(policy)
        events = ServerEvents(
            on_log=lambda message: self._on_log(tracker, message),
            on_progress=tracker.progress,
            on_diagnostics=lambda params: self._on_diagnostics(tracker, params),
            settings=self._settings,
            workspace_folders=lambda: [self._folder()],
            on_failure=lambda error: tracker.dead(),
        )
        self._confine(confined)
        connection = Connection(self.spec.id, self.command, str(self.root), events, environment=confined.environment)
        self.connection, self.tracker = connection, tracker
        await connection.start()
        params = t.InitializeParams(
            # Servers that watch this pid exit when we do: one more guard against orphans.
            process_id=os.getpid(),
            root_uri=self.root.as_uri(),
            root_path=str(self.root),
            workspace_folders=[self._folder()],
            capabilities=client_capabilities(pull_diagnostics=self.spec.pull_diagnostics),
            initialization_options=_merged(_merged(dict(self.spec.initialization_options), self._style_options()),
                                           dict(confined.initialization_options)) or None,
            client_info=t.ClientInfo(name="codegraft", version="0.1.0"),
        )
        result = await connection.request(t.INITIALIZE, params, timeout=self.spec.initialize_timeout)
        self._adopt(result)
        connection.notify(t.INITIALIZED, t.InitializedParams())
        tracker.initialized()
        self._failures = 0
        self.touch()
        return connection

    def _adopt(self, result: Any) -> None:
        capabilities = getattr(result, "capabilities", None)
        if capabilities is None and isinstance(result, dict):
            # lsprotocol could not structure the answer; take what we need from the raw payload.
            raw = result.get("capabilities")
            encoding = raw.get("positionEncoding") if isinstance(raw, dict) else None
            self.encoding = PositionEncoding(encoding) if encoding in ("utf-8", "utf-16") else PositionEncoding.UTF16
            self.server_version = (result.get("serverInfo") or {}).get("version")
            if self.spec.columns is not None:
                self.encoding = self.spec.columns
            return
        self.capabilities = capabilities
        encoding = getattr(capabilities, "position_encoding", None)
        self.encoding = PositionEncoding.UTF8 if encoding == t.PositionEncodingKind.Utf8 else PositionEncoding.UTF16
        info = getattr(result, "server_info", None)
        self.server_version = getattr(info, "version", None)
        if self.spec.columns is not None:
            self.encoding = self.spec.columns  # what it really counts, whatever it claims

    async def _back_off(self) -> None:
        if self._failures == 0:
            return
        delay = min(0.5 * 2 ** (self._failures - 1), _MAX_BACKOFF)
        remaining = self._last_failure + delay - time.monotonic()
        if remaining > 0:
            await asyncio.sleep(remaining)

    async def _forget_connection(self) -> None:
        """The process died or broke the protocol: note why, clean up, and count it for the backoff."""
        connection = self.connection
        if connection is None:
            return
        self.last_exit = str(connection.failure or "stopped")
        self._failures += 1
        self._last_failure = time.monotonic()
        self.restarts += 1
        await connection.close(grace=0.5)
        self.connection = None
        self.documents.forget()
        self.diagnostics.clear()

    async def renew_if_over_memory(self) -> bool:
        """Restart the server when its resident memory is past the ceiling; True when it did.
        The pool calls this only between calls, with no request of its own in flight, so no
        request is cut off: the next one starts the server again and waits for its readiness,
        as after any start. A server restarted for memory is not again for a while."""
        limit = self.config.server_memory_limit_mb
        connection = self.connection
        if not limit or connection is None or not connection.alive or connection.pid is None or self._start_lock.locked():
            return False
        now = time.monotonic()
        if now - self._memory_checked < _MEMORY_CHECK_SECONDS:
            return False
        if self._memory_restarted_at is not None and now - self._memory_restarted_at < _MEMORY_RESTART_SPACING:
            return False
        self._memory_checked = now
        resident = resident_memory(connection.pid)
        if resident is None or resident <= limit * 2**20:
            return False
        async with self._start_lock:
            if self.connection is not connection or self._diagnostic_waiters:
                return False
            self.memory_restarts += 1
            self.restarts += 1
            self._memory_restarted_at = now
            self.memory_restart_note = (f"restarted {self.memory_restarts} time(s) between requests past its memory ceiling, "
                                        f"last at {resident / 2**20:.0f} MB over {limit:g} MB (server_memory_limit_mb)")
            logger.warning("%s (pid %s) restarted: %.0f MB resident, over its %g MB ceiling (server_memory_limit_mb)",
                           self.spec.id, connection.pid, resident / 2**20, limit)
            self.connection, self.tracker = None, None
            self.documents.forget()
            self.diagnostics.clear()
            self.stale_diagnostics.clear()
            await connection.close()
        return True

    async def stop(self) -> None:
        if self._idle_handle is not None:
            self._idle_handle.cancel()
            self._idle_handle = None
        if self.connection is not None:
            await self.connection.close()
            self.connection = None
            self.tracker = None
            self.documents.forget()

    def touch(self) -> None:
        """Re-arm the idle timer: the server is shut down after ``idle_timeout`` seconds unused."""
        if self._idle_handle is not None:
            self._idle_handle.cancel()
        loop = asyncio.get_running_loop()
        self._idle_handle = loop.call_later(self.config.idle_timeout, lambda: asyncio.ensure_future(self._idle()))

    async def _idle(self) -> None:
        logger.debug("%s idle for %ss: stopping", self.spec.id, self.config.idle_timeout)
        await self.stop()

    # -- requests ------------------------------------------------------------

    async def request(self, method: str, params: Any, *, wait_ready: bool = True, allow_incomplete: bool = False,
                      read_result: Callable[[Any], Any] | None = None) -> Reply:
        """Send a request once the server is ready; refuse, or label incomplete, if it is not within its budget.
        ``read_result``: see :meth:`Connection.request`."""
        connection = await self.ensure_started()
        self.touch()
        complete = True
        if wait_ready and self.tracker is not None:
            state = await self.tracker.wait()
            if state is ServerState.DEAD:
                raise connection.failure or ServerDied(self.spec.id, None, "")
            if state is not ServerState.READY:
                if not allow_incomplete:
                    raise NotReady(
                        f"{self.spec.id} is still {state.value} after its {self.readiness_budget:g} s readiness budget"
                        " (raise readiness_budget in [tool.graft] for large projects)"
                    )
                complete = False
        value = await connection.request(method, params, timeout=self.request_timeout, read_result=read_result)
        self.touch()
        return Reply(value, complete)

    async def show_documents(self, paths: list[Path]) -> list[str]:
        """Open ``paths`` together (a server that answers only for open documents: tsserver loads
        a file's project only once it is open) and wait until the projects they load have loaded:
        each opened document's first diagnostics (tsserver checks a file only once its project is
        loaded) and then the end of any loading progress that began meanwhile, within the
        readiness budget. Returns what could not be waited for, for the answer's notes."""
        await self.ensure_started()
        self.documents.make_room(len(paths))
        if not self.spec.needs_open:
            # A server that reads unopened files from disk and loads the project of an opened one
            # before it answers (ServerSpec.opens_projects) needs no wait here.
            for path in paths:
                self.use_file(path, open_it=True)
            return []
        arrivals = []
        for path in paths:
            arrived = self.expect_diagnostics(path.as_uri())
            if self.use_file(path, open_it=True):
                arrivals.append(arrived)
        if not arrivals:
            return []
        budget = self.readiness_budget
        try:
            await asyncio.wait_for(asyncio.gather(*(arrived.wait() for arrived in arrivals)), budget)
        except TimeoutError:
            return [f"{self.spec.id} had not checked every file it was shown within {budget:g} s: "
                    "uses in projects it was still loading may be missing"]
        if self.tracker is not None and not await self.tracker.wait_quiet(budget):
            return [f"{self.spec.id} was still loading a project after {budget:g} s: uses there may be missing"]
        return []

    def use_file(self, path: Path, *, open_it: bool) -> bool:
        """Bring the server up to date with ``path``; True when that sent it something
        (didOpen or didChange), after which fresh diagnostics will follow."""
        # Documents opened earlier and unused since are closed first: an open document
        # costs the server memory and, for type checkers, re-checking on every change.
        self.documents.close_idle(self.config.document_idle_timeout)
        return self.documents.use(path, open_it=open_it)

    # -- events --------------------------------------------------------------

    def _notify(self, method: str, params: object) -> None:
        # didOpen and didChange: the document changed, and its diagnostics are due again.
        if isinstance(params, (t.DidOpenTextDocumentParams, t.DidChangeTextDocumentParams)):
            self.stale_diagnostics.add(params.text_document.uri)
        if self.connection is not None and self.connection.alive:
            self.connection.notify(method, params)

    def _on_log(self, tracker: ReadinessTracker, message: str) -> None:
        self.log.append(message)
        del self.log[:-_LOG_LINES]
        tracker.log_message(message)

    def _on_diagnostics(self, tracker: ReadinessTracker, params: t.PublishDiagnosticsParams) -> None:
        self.diagnostics[params.uri] = list(params.diagnostics)
        self.stale_diagnostics.discard(params.uri)
        tracker.diagnostics_published()
        waiter = self._diagnostic_waiters.pop(params.uri, None)
        if waiter is not None:
            waiter.set()

    def expect_diagnostics(self, uri: str) -> asyncio.Event:
        """An event set when the server next publishes diagnostics for ``uri``."""
        return self._diagnostic_waiters.setdefault(uri, asyncio.Event())

    def _confine(self, confined: Confinement) -> None:
        """What the server is told so that it runs nothing the workspace chose (unless trusted),
        and the whole workspace for the pyright family."""
        self._program_settings = dict(confined.settings)
        workspace_python = self.root / ".venv" / "bin" / "python"
        if confined.interpreter is not None and workspace_python.is_file():
            note = (f"the workspace's {workspace_python.relative_to(self.root).as_posix()} is not run (its code is not "
                    f"trusted): {self.spec.id} uses codegraft's interpreter and reads the .venv's packages from disk; "
                    f"{TRUST_HINT}")
            if note not in self.notes:
                self.notes.append(note)
        self._give_whole_workspace(confined.interpreter)

    def _give_whole_workspace(self, interpreter: str | None) -> None:
        """A refactoring needs every workspace file in the server's program, whatever file set
        the project's type-checking config names; and a workspace not trusted, its interpreter
        named in the generated config (``interpreter``: codegraft's own)."""
        if not self.spec.whole_workspace_program:
            return
        program = whole_workspace_config(self.root, interpreter=interpreter)
        if program is None:
            return
        analysis = {"analysis": {"configFilePath": str(program.path)}}
        self._program_settings = _merged(self._program_settings, {"python": analysis, "basedpyright": analysis})
        if program.narrowed_by is None:
            return  # only the source roots were added: nothing the user needs to hear
        note = (f"{program.narrowed_by}, which narrows the server's files; codegraft gives it the whole workspace "
                f"through {program.path.relative_to(self.root).as_posix()} (every other option of the project's kept)")
        if note not in self.notes:
            self.notes.append(note)
        self._informational_notes.add(note)

    def answer_notes(self) -> tuple[str, ...]:
        """The notes an answer carries: each the user must act on, every time; each merely
        informational, the first time in the workspace only (lsp_pool.said_once)."""
        return tuple(note for note in self.notes
                     if note not in self._informational_notes or said_once.first_time(self.root, note))

    def _style_options(self) -> dict[str, Any]:
        return typescript_style.initialization_options(self.root) if self.spec.project_style else {}

    def _settings(self, section: str | None, scope: str | None = None) -> Any:
        if self.spec.project_style and section == typescript_style.FORMATTING_SECTION and scope is not None:
            return typescript_style.formatting_options(self.root, scope)
        settings: Any = _merged(dict(self.spec.settings), self._program_settings)
        if not section:
            return settings
        for part in section.split("."):
            if not isinstance(settings, dict) or part not in settings:
                return None
            settings = settings[part]
        return settings

    def _folder(self) -> t.WorkspaceFolder:
        return t.WorkspaceFolder(uri=self.root.as_uri(), name=self.root.name)


def _merged(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``extra`` laid over it, nested tables merged key by key."""
    merged = dict(base)
    for key, value in extra.items():
        merged[key] = _merged(merged[key], value) if isinstance(value, dict) and isinstance(merged.get(key), dict) else value
    return merged
