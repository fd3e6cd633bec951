"""Server processes started before the pool is imported, for the pool to adopt on its first use.

The pool's import is slow (lsprotocol's types, most of it) and comes before it can start anything,
and a cold basedpyright is slower still from its start to its first answer. A call that names
its files starts their servers' processes from here first (this module imports only the registry
and the project's config), so that the server boots on the other core while the rest is imported.
:meth:`lsp_pool.connection.Connection.start` takes the process instead of starting its own when the
server, the command line and the folder are the same; every other early process is killed.

Start early processes from the main thread: Linux's parent-death signal (:mod:`lsp_pool.launch`)
follows the thread that forked, and a worker thread's end would kill the server with it.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import signal
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Collection, Iterable, Mapping

from engine.errors import GraftError
from lsp_pool.config import load_config
from lsp_pool.launch import guarded_command
from lsp_pool.registry import SPECS_BY_ID, locate
from lsp_pool.typescript7 import SERVER_IDS as TYPESCRIPT_SERVERS
from lsp_pool.typescript7 import typescript_backend
from lsp_pool.workspace_trust import confinement


@dataclass(frozen=True)
class EarlyProcess:
    server_id: str
    command: tuple[str, ...]
    """The command line as the pool would write it (before :func:`guarded_command`)."""
    cwd: str
    process: subprocess.Popen[bytes]
    environment: Mapping[str, str] = field(default_factory=dict)
    """What was laid over this process's environment for the server's (lsp_pool.workspace_trust)."""


_waiting: dict[tuple[str, str], EarlyProcess] = {}
_lock = threading.Lock()


def start_early(root: Path, languages: Collection[str]) -> Callable[[], None]:
    """Start the preferred installed server of each language for the workspace ``root``, unless
    one is already waiting; returns what kills those nobody adopted (the caller runs it when its
    call is over). Nothing is raised: a config error or a server that cannot start is met, and
    reported, by the call's own first request."""
    try:
        config = load_config(root)
    except (GraftError, OSError):
        return functools.partial(discard, [])
    started: list[EarlyProcess] = []
    for language in dict.fromkeys(languages):
        for server_id in config.preference.get(language, ()):
            if server_id in TYPESCRIPT_SERVERS and server_id != typescript_backend(root, root, bool(config.trusted_by)).server:
                continue  # the project's own TypeScript picks its server (the pool decides per file likewise)
            spec = SPECS_BY_ID.get(server_id)
            command = locate(spec) if spec is not None else None
            if spec is None or command is None:
                continue  # the pool goes on to the next preference too
            confined = confinement(spec, root, command, config.trusted_by)
            if confined.refusal:
                continue  # nor is it started by the pool (a --trust call's pool starts its own)
            early = spawn(server_id, command, str(root), confined.environment)
            if early is not None:
                started.append(early)
            break
    return functools.partial(discard, started)


def take(server_id: str, cwd: str, command: tuple[str, ...],
         environment: Mapping[str, str] | None = None) -> subprocess.Popen[bytes] | None:
    """The early process of this server in ``cwd``, if it was started with ``command`` and
    ``environment`` and still runs; it is the caller's from now on. One started otherwise is
    killed: the pool starts its own."""
    with _lock:
        early = _waiting.pop((server_id, os.path.realpath(cwd)), None)
    if early is None:
        return None
    if early.command == command and dict(early.environment) == dict(environment or {}) and early.process.poll() is None:
        return early.process
    _kill(early.process)
    return None


def spawn(server_id: str, command: tuple[str, ...], cwd: str,
          environment: Mapping[str, str] | None = None) -> EarlyProcess | None:
    """Start one server's process in ``cwd`` for :func:`take`, unless one is already waiting there
    (None then, or when it cannot start: the pool's own start meets that failure and says why)."""
    cwd = os.path.realpath(cwd)
    key = (server_id, cwd)
    with _lock:
        if key in _waiting:
            return None
        try:
            process = subprocess.Popen(guarded_command(command, os.getpid()), stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, start_new_session=True,
                                       env={**os.environ, **environment} if environment else None)
        except OSError:
            return None
        early = EarlyProcess(server_id, command, cwd, process, dict(environment or {}))
        _waiting[key] = early
        return early


def waiting() -> dict[tuple[str, str], int]:
    """(server id, folder) → pid of every early process not adopted yet."""
    with _lock:
        return {key: early.process.pid for key, early in _waiting.items()}


def discard(started: Iterable[EarlyProcess]) -> None:
    """Kill those of ``started`` that were not adopted."""
    for early in started:
        with _lock:
            if _waiting.get((early.server_id, early.cwd)) is not early:
                continue  # adopted (or already discarded)
            del _waiting[(early.server_id, early.cwd)]
        _kill(early.process)


def discard_all() -> None:
    """Kill every early process not adopted (at exit, and between tests)."""
    with _lock:
        left = list(_waiting.values())
    discard(left)


def _kill(process: subprocess.Popen[bytes]) -> None:
    """The whole process group (the server may have spawned helpers), then its pipes closed."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            stream.close()


atexit.register(discard_all)
