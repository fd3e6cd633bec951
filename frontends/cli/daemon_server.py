"""The workspace's warm daemon: one process per workspace that keeps the engine, the project graph
and the language servers between CLI calls, and answers each call as ``graft`` would in-process.

Run as ``python -m frontends.cli.daemon_server ROOT`` (frontends.cli.daemon_client starts it).
Connections are accepted and read on threads of their own (:class:`Doorkeeper`), each within a
deadline, so a client that stalls mid-request is dropped and never holds up another; every
call read is answered "queued" at once and heartbeats keep coming while it waits or runs.
Calls are run one at a time, in arrival order, on the main thread: the output streams are the
process's own, and the engine is not shared between threads. A call runs only once its client
has said "go" to the daemon's "taken" (see frontends.cli.daemon_client), and its request id
goes into every transaction it writes. Before
each call the engine is brought up to date with the disk (inotify events, else a stat sweep),
so a git checkout or an editor's save is never answered from the old graph. Writes take the
workspace's apply lock as they do in-process. Its own work (a full garbage collection, indexing
words) waits until no call is waiting (frontends.cli.daemon_housekeeping). After ``daemon_idle``
seconds without a call (default 600) it stops.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import io
import json
import os
import queue
import socket
import struct
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from engine.api_surface import (
    GraftError, LanguageServices, load_engine_settings, load_language_services, load_tools, nothing_to_discard,
    open_state_file, SourcePreference, state_folder, Tools, Workspace, WorkspaceConfig,
)
from frontends.cli import daemon_client
from frontends.cli.daemon_housekeeping import Housekeeping, resident_mb
from frontends.cli.startup import start_early

if TYPE_CHECKING:
    from engine.api_surface import Engine

# The engine and the CLI (slow imports) are imported by the first call, after it has
# started the servers it names (start_servers_named): see frontends.cli.startup.


class WarmEngines:
    """The daemon's engines, one per (source preference, file-size limit), sharing one pool of
    language servers and one set of process tools: kept between calls, never closed by them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._engines: dict[tuple[SourcePreference, int], Engine] = {}
        self._services: LanguageServices | None = None
        self._services_loaded = False
        self._tools: Tools | None = None
        self._discard_early_servers: Callable[[], None] = nothing_to_discard

    def start_servers_named(self, argv: list[str]) -> None:
        """Start the language servers of the files a call names, without waiting, when none is
        loaded yet: their processes first, then the pool (which adopts them) is imported, and the
        call imports the engine while they boot."""
        if self._services_loaded:
            return
        files, self._discard_early_servers = start_early(argv, self.root)
        if not files:
            return
        try:
            services = self._shared_services(Workspace(self.root))
        except (GraftError, OSError):
            return  # only a head start: the call meets the same failure and reports it
        if services is not None:
            services.warm_up(files)

    def discard_early_servers(self) -> None:
        """Kill the server processes started early for the call that the pool did not adopt."""
        discard, self._discard_early_servers = self._discard_early_servers, nothing_to_discard
        discard()

    def acquire(self, root: Path, source: SourcePreference, *, servers: bool, tools: bool, max_file_bytes: int) -> Engine:
        from engine.api_surface import Engine
        from engine.api_surface import open_engine

        if root.resolve() != self.root:
            # Not this daemon's workspace (the client routes by the same rule, so this is rare): a fresh engine.
            return open_engine(root, source, servers=servers, tools=tools, max_file_bytes=max_file_bytes)
        key = (source, max_file_bytes)
        engine = self._engines.get(key)
        if engine is None:
            workspace = Workspace(self.root, WorkspaceConfig(max_file_bytes=max_file_bytes))
            workspace.keep_reads_between_calls()
            engine = Engine(workspace, services=self._shared_services(workspace), tools=self._shared_tools(workspace), source=source)
            engine.baseline_fill.enabled = True  # a preview's apply comes as another call to this engine
            self._engines[key] = engine
        else:
            # A crash of another process (an in-process graft, an MCP server) may have left a
            # transaction behind since the last call; and files may have changed behind our back.
            engine.recovered = engine.transactions.recover()
            engine.refresh_from_disk()
        return engine

    def release(self, engine: Engine) -> None:
        if engine not in self._engines.values():
            engine.close()

    def _shared_services(self, workspace: Workspace) -> LanguageServices | None:
        if not self._services_loaded:
            self._services = load_language_services(workspace)
            self._services_loaded = True
        return self._services

    def _shared_tools(self, workspace: Workspace) -> Tools | None:
        if self._tools is None:
            self._tools = load_tools(workspace)
        return self._tools

    def finish_pending_checks(self) -> None:
        """An apply answers once its diagnostics budget is spent; the rest of its check is
        finished here, after the answer (the next call waits in the queue meanwhile), so that
        ``graft diagnostics --since-last-apply`` finds it done."""
        from engine.api_surface import load_pending_checks

        engine = next((e for e in self._engines.values() if e.services is not None), None)
        pending = load_pending_checks(self.root) if engine is not None else None
        if engine is not None and pending is not None and not pending.finished:
            with contextlib.suppress(Exception):  # a failure here is the next --since-last-apply's to report
                engine.edits().finish_diagnostics()

    def index_words(self) -> None:
        """Part of the daemon's work between calls (frontends.cli.daemon_housekeeping): the words
        of files not indexed yet (the first time every source file, then those changed), so that
        the next refactoring reads only the files that may mention its name (engine.refactor.mentions)."""
        for engine in self._engines.values():
            try:
                engine.index_words()
            except Exception:  # noqa: BLE001 - without the words a search reads every file, as before; the daemon stays
                traceback.print_exc()  # into the daemon's log

    def forget_kept_reads(self) -> None:
        """What the engines keep for the next call (files read, their strings and comments found)
        let go, when the daemon has been idle long enough to give its heap back."""
        from engine.api_surface import forget_scans

        for engine in self._engines.values():
            engine.workspace.forget_kept_reads()
        forget_scans()

    def describe(self) -> tuple[list[str], list[str]]:
        """(the engines held, one line per language server with its memory)."""
        engines = [f"{source.value} (graph {'loaded' if engine.graph_loaded else 'not loaded'}; {engine.disk_changes}; "
                   f"words of {engine.words_indexed} files indexed)" for (source, _limit), engine in self._engines.items()]
        servers = []
        if self._services is not None:
            for status in self._services.status():
                if status.state in ("not-found", "stopped"):
                    continue
                servers.append(f"{status.id}: {status.state}" + (f", pid {status.pid}" if status.pid else "")
                               + (f", {status.memory_bytes // (1024 * 1024)} MB" if status.memory_bytes else ""))
        return engines, servers

    def close(self) -> None:
        for engine in self._engines.values():
            engine.services = None  # the shared pool is closed once, below
            engine.close()
        if self._services is not None:
            self._services.close()


class Client:
    """One connection, shared by the thread that read its request, the heartbeat and the call:
    a frame is sent whole under the lock, and a heartbeat never waits for a client that does
    not read (what it could not send is sent before the next frame)."""

    def __init__(self, connection: socket.socket) -> None:
        self.connection = connection
        self.request: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._unsent = b""

    def send(self, message: dict[str, Any]) -> None:
        with self._lock:
            self.connection.sendall(self._unsent + daemon_client.frame(message))
            self._unsent = b""

    def beat(self) -> None:
        if not self._lock.acquire(blocking=False):
            return  # a frame is going out: that says the daemon is alive as well
        try:
            data = self._unsent or _HEARTBEAT
            sent = self.connection.send(data, socket.MSG_DONTWAIT)
            self._unsent = data[sent:]
        except OSError:
            pass  # its buffer is full (the client does not read), or it is gone: the call learns that itself
        finally:
            self._lock.release()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.connection.close()


_HEARTBEAT = daemon_client.frame({"working": True})


class Forwarded(io.TextIOBase):
    """stdout or stderr of a call: what is written goes to the client as it comes; ``isatty``
    answers for the client's terminal, so colours and progress bars decide as they would there."""

    def __init__(self, client: Client, key: str, tty: bool) -> None:
        self._client = client
        self._key = key
        self._tty = tty

    def write(self, text: str) -> int:
        if text:
            with contextlib.suppress(OSError):  # a client gone mid-call: the call still finishes (an apply stays whole)
                self._client.send({self._key: text})
        return len(text)

    def isatty(self) -> bool:
        return self._tty

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"


class Doorkeeper:
    """The daemon's threads around its calls: one accepts connections, one reads each (within
    :data:`daemon_client.READ_SECONDS`, the peer's uid checked) and answers "queued" or
    "stale", and one sends every held client a heartbeat each :data:`daemon_client.HEARTBEAT_SECONDS`.
    What they read waits in :attr:`waiting` for the main thread; None there asks it to stop."""

    def __init__(self, listener: socket.socket, fingerprint: str) -> None:
        self.listener = listener
        self.fingerprint = fingerprint
        self.waiting: queue.Queue[Client | None] = queue.Queue()
        self._held: set[Client] = set()
        self._held_lock = threading.Lock()
        self._closed = threading.Event()

    def start(self) -> None:
        for target in (self._accept, self._beat):
            threading.Thread(target=target, name=f"graft-daemon-{target.__name__.strip('_')}", daemon=True).start()

    def release(self, client: Client) -> None:
        """No more heartbeats for the client (its call has answered), and its connection closed."""
        with self._held_lock:
            self._held.discard(client)
        client.close()

    def close(self) -> None:
        """No more connections; those still waiting are hung up on (their clients run the call
        themselves: none of them was told to run)."""
        self._closed.set()
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
        self.listener.close()
        while True:
            try:
                client = self.waiting.get_nowait()
            except queue.Empty:
                break
            if client is not None:
                self.release(client)

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                connection, _ = self.listener.accept()
            except OSError:
                if self._closed.is_set():
                    return
                self._closed.wait(0.05)  # out of descriptors, say: not a reason to stop serving
                continue
            threading.Thread(target=self._admit, args=(connection,), name="graft-daemon-read", daemon=True).start()

    def _admit(self, connection: socket.socket) -> None:
        client = Client(connection)
        try:
            if not _same_user(connection):
                client.close()
                return
            request = daemon_client.read_request(connection, time.monotonic() + daemon_client.READ_SECONDS)
            connection.settimeout(None)  # the call's output is sent at the client's pace
            if request is None:
                client.close()  # not this protocol (an older client), cut short, or too slow: hung up on
                return
            if "control" not in request and (request.get("fingerprint") != self.fingerprint
                                              or request.get("protocol") != daemon_client.PROTOCOL):
                client.send({"stale": f"started from other code than the client's ({self.fingerprint})"})
                client.close()
                self.waiting.put(None)
                return
            client.request = request
            with self._held_lock:
                if self._closed.is_set():
                    client.close()
                    return
                self._held.add(client)
            if "control" not in request:
                client.send({"queued": True})
            self.waiting.put(client)
        except OSError:
            self.release(client)

    def _beat(self) -> None:
        while not self._closed.wait(daemon_client.HEARTBEAT_SECONDS):
            with self._held_lock:
                held = list(self._held)
            for client in held:
                client.beat()


class Daemon:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.folder = state_folder(self.root, "daemon")
        os.chmod(self.folder, 0o700)
        self.fingerprint = daemon_client.code_fingerprint()
        self.idle_seconds = load_engine_settings(self.root).daemon_idle
        self.engines = WarmEngines(self.root)
        self.housekeeping = Housekeeping(self.engines)
        self.started = time.time()
        self.calls = 0

    def serve(self) -> None:
        lock = os.fdopen(open_state_file(self.folder / "lock", os.O_WRONLY | os.O_CREAT, 0o600), "wb")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print("graft daemon: another daemon serves this workspace", file=sys.stderr)
            raise SystemExit(3) from None
        doors = Doorkeeper(self._listen(), self.fingerprint)
        stopper: Client | None = None
        try:
            self._write_info()
            print(daemon_client.READY, flush=True)  # the starting client waits for this line
            self._redirect_output()
            doors.start()
            while stopper is None:
                # Its own work waits until no call comes: see frontends.cli.daemon_housekeeping.
                try:
                    client = doors.waiting.get(timeout=self.housekeeping.seconds_to_wait(self.idle_seconds))
                except queue.Empty:
                    if self.housekeeping.pending:
                        self.housekeeping.run(call_waiting=lambda: not doors.waiting.empty())
                        continue
                    print(f"graft daemon: idle for {self.idle_seconds:.0f} s, stopping", file=sys.stderr)
                    return
                if client is None:
                    return  # a client of other code: it starts a daemon of its own once this one is gone
                try:
                    keep_serving = self._handle(client, doors)
                except OSError:  # the client went away mid-answer: its loss, not the daemon's
                    traceback.print_exc()
                    keep_serving = True
                if keep_serving:
                    doors.release(client)
                else:
                    stopper = client  # held open until the servers are closed: its end is the daemon's
        finally:
            doors.close()
            for name in (daemon_client.SOCKET_NAME, daemon_client.INFO_NAME):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.folder / name)
            self.engines.close()
            lock.close()
            if stopper is not None:
                doors.release(stopper)

    def _write_info(self) -> None:
        """``daemon.json``, written without following a link a cloned workspace could have planted."""
        path = self.folder / daemon_client.INFO_NAME
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        info = {"pid": os.getpid(), "fingerprint": self.fingerprint, "started": self.started, "root": str(self.root),
                "idle_seconds": self.idle_seconds}
        with os.fdopen(open_state_file(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8") as handle:
            json.dump(info, handle)

    def _redirect_output(self) -> None:
        """From here on, what the daemon itself prints goes to its log in its own folder."""
        log = open_state_file(self.folder / "daemon.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)

    def _listen(self) -> socket.socket:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.folder / daemon_client.SOCKET_NAME)  # ours to replace: we hold the lock
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        previous = os.umask(0o177)  # the socket is born 0600: no window in which others may connect
        try:
            with daemon_client.socket_address(self.folder) as address:
                listener.bind(address)
        finally:
            os.umask(previous)
        listener.listen(16)
        return listener

    def _handle(self, client: Client, doors: Doorkeeper) -> bool:
        """Answer one client's request; False when the daemon should stop."""
        request = client.request
        control = request.get("control")
        if control == "stop":
            client.send({"stopping": True})
            return False
        if control == "status":
            engines, servers = self.engines.describe()
            client.send({"status": {"pid": os.getpid(), "started": self.started, "calls": self.calls, "rss_mb": resident_mb(),
                                    "idle_seconds": self.idle_seconds, "engines": engines, "servers": servers,
                                    "fingerprint": self.fingerprint, "housekeeping": self.housekeeping.describe()}})
            return True
        if control is not None:
            return True
        try:
            client.send({"taken": True})
        except OSError:
            return True  # the client gave up waiting while its call was queued
        go = daemon_client.read_message(client.connection, time.monotonic() + daemon_client.READ_SECONDS)
        client.connection.settimeout(None)
        if not go or not go.get("go"):
            # The client gave up waiting (and runs the call itself), or is stuck: not run here.
            print(f"graft daemon: request {request.get('request')} not run: its client did not say go", file=sys.stderr)
            return True
        self.calls += 1
        with _young_collections_only():
            code = self._call(client, request)
            with contextlib.suppress(OSError):
                client.send({"exit": code})
            doors.release(client)  # the client has its answer: what follows is the daemon's own time
        # An apply's unfinished check is finished now, not deferred: `graft diagnostics
        # --since-last-apply`, likely the next call, expects it done.
        self.engines.finish_pending_checks()
        self.housekeeping.after_call()
        return True

    def _call(self, client: Client, request: dict[str, Any]) -> int:
        with _as_the_client(client, request):
            try:
                argv = list(request["argv"])
                self.engines.start_servers_named(argv)
                from frontends.cli import main as cli

                identity = request.get("request")
                return cli.main(argv, engines=self.engines, request=identity if isinstance(identity, str) else None)
            except SystemExit as stop:  # argparse's own exits (a usage message)
                return stop.code if isinstance(stop.code, int) else 0 if stop.code is None else 1
            except Exception:  # noqa: BLE001 - a bug in one call must not take the warm daemon down
                traceback.print_exc()
                return 1
            finally:
                self.engines.discard_early_servers()


@contextlib.contextmanager
def _as_the_client(client: Client, request: dict[str, Any]) -> Iterator[None]:
    """The call's world for its duration: the client's cwd, environment, streams and stdin."""
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    saved_cwd = os.getcwd()
    saved_environment = dict(os.environ)
    try:
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in dict(request["env"]).items()})
        sys.stdin = io.StringIO(request.get("stdin") or "")
        sys.stdout = Forwarded(client, "out", bool(request.get("stdout_tty")))
        sys.stderr = Forwarded(client, "err", bool(request.get("stderr_tty")))
        yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.environ.clear()
        os.environ.update(saved_environment)
        os.chdir(saved_cwd)


_CALL_YOUNG_THRESHOLD = 10_000
"""Allocations between two young collections during a call (Python's default is 700)."""
_NO_FULL_COLLECTION = 1 << 30


@contextlib.contextmanager
def _young_collections_only() -> Iterator[None]:
    """The cyclic collector during a call: no full collection, and young ones less often.

    On a warm rename of a large project, Python's default thresholds ran a full collection in
    about one call of six, in the middle of the answer (it walks the engine's caches as well as
    the call's objects), and young collections often. With these thresholds the young
    collections are cheap (most objects die before one is due) and still reclaim a long call's cycles; the full collection runs once the daemon
    has no call to answer (frontends.cli.daemon_housekeeping). The graph itself is frozen out of every collection (``engine.graph.index``)."""
    previous = gc.get_threshold()
    gc.set_threshold(_CALL_YOUNG_THRESHOLD, previous[1], _NO_FULL_COLLECTION)
    try:
        yield
    finally:
        gc.set_threshold(*previous)


def _same_user(connection: socket.socket) -> bool:
    """Only this user's processes are answered (the socket's mode says so too; this is the check
    that does not depend on the file system)."""
    try:
        credentials = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except (AttributeError, OSError):
        return True  # no SO_PEERCRED here: the socket's 0600 mode is the guard
    _pid, uid, _gid = struct.unpack("3i", credentials)
    return uid == os.getuid()


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m frontends.cli.daemon_server ROOT", file=sys.stderr)
        return 2
    try:
        Daemon(Path(argv[0])).serve()
    except Exception as error:  # noqa: BLE001 - said once, where the starting client reads it
        print(f"graft daemon: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
