"""What ``graft batch --repos`` says on stderr while it runs (``--progress``).

``live``: one line redrawn in place, for a terminal. ``line``: a plain line per finished
repository, for a log or CI. ``json``: one JSON object per line per event (``start``, ``repo``,
``heartbeat``, ``end``), for a machine. ``none``: nothing. ``auto`` is ``live`` on a terminal and
``line`` elsewhere. ``line`` and ``json`` also give a heartbeat while nothing finishes (a
repository can take minutes, and a silent log looks hung), at most once per interval.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter
from typing import Any, TextIO

from engine.api_surface import FleetProgress, FleetRow, UsageError

MODES = ("auto", "line", "json", "none")
HEARTBEAT_SECONDS = 10.0
HEARTBEAT_VARIABLE = "GRAFT_FLEET_HEARTBEAT_SECONDS"
"""Overrides the heartbeat's interval; for tests, which cannot wait a whole default interval for one."""


def heartbeat_interval() -> float:
    raw = os.environ.get(HEARTBEAT_VARIABLE)
    if raw is None:
        return HEARTBEAT_SECONDS
    try:
        seconds = float(raw)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise UsageError(f"{HEARTBEAT_VARIABLE}={raw!r}: give a positive number of seconds, or unset it")
    return seconds


class FleetReporter:
    """The ``progress`` callback of ``engine.fleet.run``, plus a heartbeat thread. Call ``end``
    with the rows when the run returns, and ``close`` in any case (it stops the heartbeat)."""

    def __init__(self, mode: str, stream: TextIO, *, interval: float | None = None) -> None:
        if mode == "auto":
            mode = "live" if stream.isatty() else "line"
        self.mode = mode
        self.stream = stream
        self.interval = heartbeat_interval() if interval is None else interval
        self.started = time.monotonic()
        self.state: FleetProgress | None = None
        self.last_said = self.started
        self.lock = threading.Lock()  # the heartbeat thread and the driver's callback write to one stream
        self.stopped = threading.Event()
        self.heartbeat: threading.Thread | None = None

    def __call__(self, state: FleetProgress) -> None:
        with self.lock:
            self.state = state
            if state.last is None:
                self._start(state)
            else:
                self._finished(state, state.last)
        if state.last is None and self.mode in ("line", "json") and self.heartbeat is None:
            self.heartbeat = threading.Thread(target=self._beat, name="graft-fleet-heartbeat", daemon=True)
            self.heartbeat.start()

    def end(self, rows: list[FleetRow]) -> None:
        self.close()
        counts = Counter(row.status for row in rows)
        with self.lock:
            if self.mode == "live" and self.state is not None:
                self._say("")  # ends the line redrawn in place
            elif self.mode == "json":
                self._say(json.dumps({"event": "end", "repositories": len(rows), "counts": dict(counts),
                                      "elapsed": self._elapsed()}))

    def close(self) -> None:
        self.stopped.set()
        if self.heartbeat is not None:
            self.heartbeat.join()

    def _start(self, state: FleetProgress) -> None:
        if self.mode == "line":
            self._say(f"graft batch: {state.total} repositories to run, {state.in_flight} at a time")
        elif self.mode == "json":
            self._event("start", state)
        elif self.mode == "live":
            self._draw(state)

    def _finished(self, state: FleetProgress, row: FleetRow) -> None:
        if self.mode == "line":
            self._say(f"graft batch: [{state.done}/{state.total}] {row.repo}: {row.status} ({row.seconds:.1f} s) · "
                      f"{state.failed} failed · {state.in_flight} running · {self._elapsed():.0f} s elapsed")
        elif self.mode == "json":
            self._event("repo", state, repo=row.repo, status=row.status, seconds=round(row.seconds, 3))
        elif self.mode == "live":
            self._draw(state)

    def _beat(self) -> None:
        while True:
            with self.lock:
                wait = self.last_said + self.interval - time.monotonic()
            if self.stopped.wait(max(wait, 0.0)):
                return
            with self.lock:
                if self.state is None or time.monotonic() - self.last_said < self.interval:
                    continue  # something was said meanwhile: the next beat is one interval after it
                if self.mode == "json":
                    self._event("heartbeat", self.state)
                else:
                    self._say(f"graft batch: {self.state.done}/{self.state.total} done · {self.state.in_flight} "
                              f"running · {self.state.failed} failed · {self._elapsed():.0f} s elapsed")

    def _event(self, kind: str, state: FleetProgress, **fields: Any) -> None:
        self._say(json.dumps({"event": kind, **fields, "done": state.done, "failed": state.failed,
                              "running": state.in_flight, "total": state.total, "elapsed": self._elapsed()},
                             ensure_ascii=False))

    def _draw(self, state: FleetProgress) -> None:
        width = 24
        filled = width * state.done // max(state.total, 1)
        print(f"\r[{'#' * filled}{'.' * (width - filled)}] {state.done}/{state.total} done · {state.failed} failed · "
              f"{state.in_flight} running", end="", file=self.stream, flush=True)

    def _say(self, line: str) -> None:
        print(line, file=self.stream, flush=True)
        self.last_said = time.monotonic()

    def _elapsed(self) -> float:
        return round(time.monotonic() - self.started, 1)
