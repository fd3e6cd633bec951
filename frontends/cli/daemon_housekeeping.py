"""The daemon's own work between calls: the full garbage collection its calls go without, the
words of files not indexed yet, and handing freed heap back to the system.

It waits until the daemon has nothing to answer. A batch script calls ``graft`` back to back:
done right after each answer, this work delayed the next call, whose client connects moments after
the previous answer. The full collection alone costs more than a warm call (it walks every
module and cache the engine holds), and a warm find back to back took twice as long as with
pauses between the calls.

So after an answer the daemon first waits :data:`GRACE_SECONDS` for another call. A call that
comes meanwhile is answered at once; the work is done once the daemon is idle, and in any case
after :data:`MOST_CALLS_BETWEEN` calls or a call that left much more memory behind
(:data:`HEAVY_CALL_MB`), so that a script that never pauses still has its garbage collected
and its words indexed. The freed heap goes back to the system later still, once the daemon has
been idle for :data:`GIVE_BACK_SECONDS`: the next call would fault it in again.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os
import sys
import time
from typing import Callable, Protocol

GRACE_SECONDS = 1.0
"""How long the daemon waits for a next call after an answer before doing its own work. Longer
than a client takes to start and connect, and than a script's own step between two calls (a
shorter grace met a script's calls in the middle of the collection)."""
MOST_CALLS_BETWEEN = 8
"""Calls answered at most between two rounds, so that a script that never pauses still has its
garbage collected and its words indexed."""
GIVE_BACK_SECONDS = 10.0
"""Idle time after the last answer before the heap the calls freed goes back to the system. Given
back at the end of the grace, it was faulted in again by the next call, which a script's next
call then paid for (benchmarks/RESULTS.md). A person at a shell pauses seconds between calls; at rest the daemon still holds
only what it uses."""
HEAVY_CALL_MB = 64
"""A call after which the daemon holds this much more memory than after the last round gets its
round at once: the cyclic garbage of a large call (a rename of a common name on Django left over
a million objects) is not left to pile up over several calls."""


class EngineUpkeep(Protocol):
    """What the daemon's engines do between calls: index words, and let go what they keep."""

    def index_words(self) -> None: ...

    def forget_kept_reads(self) -> None: ...


class Housekeeping:
    """What is owed since the last round, and the round itself."""

    def __init__(self, engines: EngineUpkeep) -> None:
        self._engines = engines
        self.calls_since = 0
        """Calls answered since the last round: the work is owed when this is not 0."""
        self.rounds = 0
        self.heap_held = False
        """A round has freed heap that is not given back to the system yet (:data:`GIVE_BACK_SECONDS`)."""
        self._last_answer = 0.0
        self._resident_after_round = resident_mb()

    def seconds_to_wait(self, idle_seconds: float) -> float:
        """How long to wait for a connection: what is left of the grace after the last call's
        answer when work is owed (a status request meanwhile does not extend it), then what is
        left until the heap is given back, else the idle time."""
        if self.owed:
            due = self._last_answer + GRACE_SECONDS
        elif self.heap_held:
            due = self._last_answer + GIVE_BACK_SECONDS
        else:
            return idle_seconds
        # Never 0: a socket's timeout of 0 makes it non-blocking, and its accept raises rather than times out.
        return max(0.001, due - time.monotonic())

    @property
    def owed(self) -> bool:
        return self.calls_since > 0

    @property
    def pending(self) -> bool:
        """Work is owed, or heap is still to be given back: the daemon is not at rest."""
        return self.owed or self.heap_held

    def after_call(self) -> None:
        """A call was answered: its work is owed, and done now after too many calls or a heavy one."""
        self.calls_since += 1
        self._last_answer = time.monotonic()
        if self.calls_since >= MOST_CALLS_BETWEEN or resident_mb() - self._resident_after_round >= HEAVY_CALL_MB:
            self.run()

    def run(self, call_waiting: Callable[[], bool] = lambda: False) -> None:
        """The round; left owed, after the words, when ``call_waiting`` says a call came meanwhile
        (the collection that follows walks the engine's caches, and the call would wait for it).
        With no round owed, the heap is given back once the daemon has been idle long enough."""
        if not self.owed:
            if self.heap_held and time.monotonic() - self._last_answer >= GIVE_BACK_SECONDS:
                self._engines.forget_kept_reads()  # kept for a script's next call, not for a daemon at rest
                _give_back_free_memory()
                self.heap_held = False
            return
        self._engines.index_words()  # first: what indexing the words leaves behind is collected too
        if call_waiting() and self.calls_since < MOST_CALLS_BETWEEN:
            return
        self.calls_since = 0
        self.rounds += 1
        gc.collect()
        self.heap_held = True
        self._resident_after_round = resident_mb()

    def describe(self) -> dict[str, int | float | bool]:
        return {"rounds": self.rounds, "calls_since": self.calls_since, "heap_held": self.heap_held,
                "give_back_seconds": GIVE_BACK_SECONDS}


def resident_mb() -> int:
    """This process's resident memory (``/proc/self/statm``: tens of microseconds), 0 where unknown."""
    try:
        with open("/proc/self/statm", "rb") as handle:
            resident_pages = int(handle.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    return resident_pages * os.sysconf("SC_PAGE_SIZE") // (1024 * 1024)


def _give_back_free_memory() -> None:
    """glibc keeps the heap a call freed (file bytes, parse trees: about 25 MB after a rename on
    Django) for the process's next allocations. Handed back to the system, the daemon's resident
    memory is what it holds rather than its high-water mark (a few ms)."""
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def _glibc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") else None  # musl has none


_LIBC = _glibc()
