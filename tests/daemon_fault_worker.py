"""A warm parent that forks workspace daemons which SIGKILL themselves at a chosen point
(tests/test_daemon_kills.py).

Run as ``python -m tests.daemon_fault_worker ROOT``. It imports what a call needs once, then
for each line ``POINT`` read on stdin forks a daemon of ROOT (frontends.cli.daemon_server,
unchanged) that kills itself with SIGKILL when it reaches POINT; the daemon prints the usual
ready line, and the parent prints ``exited STATUS`` once the child is gone. Forking spares
each round the daemon's start (its imports: most of a second), which is what lets the test
kill 200 daemons within CI's budget. The daemons here load no language servers: what is
tested is the journal and the protocol, and a server's diagnostics would only slow each round.

Points: ``go`` (told to run the call, nothing done yet), any step of the journal's hook
(``locked``, ``verified``, ``journaled``, ``staged``, ``replaced:0``, ``committed``: the kill
comes as the engine reports that step), ``answered`` (the call's first output, after its
commit and archive), ``exit`` (as the exit status is sent), ``random:SECONDS`` (at a uniformly
random moment within SECONDS of "go"), and ``none``.
"""

from __future__ import annotations

import os
import random
import signal
import sys
import threading
from typing import Any

import frontends.cli.daemon_server as daemon_server
import frontends.cli.main  # noqa: F401 - imported once here, not by each forked daemon
import frontends.cli.file_commands  # noqa: F401
import frontends.cli.edit_commands  # noqa: F401
import frontends.cli.operation_commands  # noqa: F401
import engine.refactor.operations  # noqa: F401


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _arm(point: str) -> None:
    """Patch the forked daemon so that it dies at ``point``."""
    daemon_server.load_language_services = lambda workspace: None
    call, acquire, send = daemon_server.Daemon._call, daemon_server.WarmEngines.acquire, daemon_server.Client.send

    def dying_call(self: daemon_server.Daemon, client: daemon_server.Client, request: dict[str, Any]) -> int:
        if point == "go":
            _die()
        if point.startswith("random:"):
            threading.Timer(random.uniform(0, float(point.split(":")[1])), _die).start()
        return call(self, client, request)

    def hooked_acquire(self: daemon_server.WarmEngines, *args: Any, **kwargs: Any) -> Any:
        engine = acquire(self, *args, **kwargs)
        engine.transactions.hook = lambda step: _die() if step == point or step.split(":")[0] == point else None
        return engine

    def dying_send(self: daemon_server.Client, message: dict[str, Any]) -> None:
        if (point == "answered" and ("out" in message or "err" in message)) or (point == "exit" and "exit" in message):
            _die()
        send(self, message)

    daemon_server.Daemon._call = dying_call  # type: ignore[method-assign]
    daemon_server.WarmEngines.acquire = hooked_acquire  # type: ignore[method-assign]
    daemon_server.Client.send = dying_send  # type: ignore[method-assign]


def main(root: str) -> None:
    for line in sys.stdin:
        point = line.strip()
        child = os.fork()
        if child == 0:
            code = 1
            try:
                _arm(point)
                code = daemon_server.main([root])
            finally:
                os._exit(code)
        _, status = os.waitpid(child, 0)
        print(f"exited {status}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
