"""The errors before an edit, asked for while its preview is read, so that its apply need not.

An agent or a user previews an edit, reads the diff, then applies it. The apply's check compares
each file's errors before and after the write; the before half is a round of diagnostics over
the whole scope. In a long-lived engine that round is started as the preview is answered, in
the background, and kept with the other kept errors (engine.edits.kept_baseline): the apply then
finds them kept, under the same workspace state, and asks only for the errors after.

Only one fill runs at a time, and an apply waits for the one in flight before its own before
pass (bounded by its budget), so the server is not asked the same thing twice at once. A file
whose content changed while its errors were asked for is not kept: the answer may be of either
content.
"""

from __future__ import annotations

import math
import threading
from typing import Callable


class BaselineFill:
    def __init__(self) -> None:
        self.enabled = False
        """Set by a long-lived engine's front end (the daemon, MCP): a one-shot call would exit
        before the fill is of use to anyone, and an editor applies the LSP server's edits itself."""
        self._running: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self, work: Callable[[], None]) -> bool:
        """Run ``work`` in the background unless a fill is running already; whether it started."""
        with self._lock:
            if not self.enabled or (self._running is not None and self._running.is_alive()):
                return False
            self._running = threading.Thread(target=_quietly, args=(work,), name="graft-baseline-fill", daemon=True)
            self._running.start()
            return True

    def settle(self, timeout: float) -> None:
        """Wait for the fill in flight, at most ``timeout`` seconds (an infinite one: until it ends)."""
        with self._lock:
            running = self._running
        if running is not None:
            running.join(None if math.isinf(timeout) else timeout)


def _quietly(work: Callable[[], None]) -> None:
    try:
        work()
    except Exception:  # a fill is only ahead of time: the apply asks for itself what is not kept
        pass
