"""Readiness as a state, driven by the server's own signals and bounded by a budget. No sleeps.

A server is ready when any signal its policy names has arrived:
- a ``window/logMessage`` matching ``log_pattern`` (pyright's "Found N source files");
- every ``$/progress`` whose title matches ``progress_pattern`` that began has ended;
- its first ``textDocument/publishDiagnostics`` (tsserver and clangd check an opened file
  only once the project is loaded), while no matching progress is still running;
- ``quiet_after`` seconds since ``initialized`` with no matching progress ever begun.
A policy with no signal at all is ready as soon as ``initialized`` is sent.
"""

from __future__ import annotations

import asyncio
import re
import time
from enum import Enum

from lsp_pool.registry import ReadinessPolicy


class ServerState(str, Enum):
    STOPPED = "stopped"
    STARTING = "starting"
    INDEXING = "indexing"
    READY = "ready"
    DEAD = "dead"


class ReadinessTracker:
    def __init__(self, policy: ReadinessPolicy) -> None:
        self.policy = policy
        self.state = ServerState.STARTING
        self.started_at = time.monotonic()
        self._log = re.compile(policy.log_pattern) if policy.log_pattern else None
        self._progress = re.compile(policy.progress_pattern) if policy.progress_pattern else None
        self._running: set[str | int] = set()
        self._ever_began = False
        self._ready = asyncio.Event()
        self._quiet_now = asyncio.Event()
        """Set while no matching progress runs (a project load after readiness, tsserver's)."""
        self._quiet_now.set()
        self._quiet: asyncio.TimerHandle | None = None
        self.signal: str = ""
        """What made the server ready, for `graft servers`."""

    @property
    def deadline(self) -> float:
        return self.started_at + self.policy.budget

    def initialized(self) -> None:
        if self.state is not ServerState.STARTING:
            return
        policy = self.policy
        if not (policy.log_pattern or policy.progress_pattern or policy.diagnostics or policy.quiet_after):
            self._become_ready("initialized")
            return
        self.state = ServerState.INDEXING
        if policy.quiet_after is not None:
            self._quiet = asyncio.get_running_loop().call_later(policy.quiet_after, self._quiet_elapsed)

    def log_message(self, message: str) -> None:
        if self._log is not None and self._log.search(message):
            self._become_ready(f"log: {message.strip()[:80]}")

    def progress(self, token: str | int, kind: str, title: str | None) -> None:
        if self._progress is None:
            return
        if kind == "begin" and title is not None and self._progress.search(title):
            self._running.add(token)
            self._ever_began = True
            self._quiet_now.clear()
        elif kind == "end" and token in self._running:
            self._running.discard(token)
            if not self._running:
                self._quiet_now.set()
                self._become_ready(f"progress ended: {self.policy.progress_pattern}")

    def diagnostics_published(self) -> None:
        if self.policy.diagnostics and not self._running:
            self._become_ready("first diagnostics published")

    def _quiet_elapsed(self) -> None:
        if not self._ever_began:
            self._become_ready(f"no indexing announced within {self.policy.quiet_after:g} s")

    def dead(self) -> None:
        self.state = ServerState.DEAD
        self._ready.set()  # wake waiters; they check the state
        self._quiet_now.set()

    async def wait_quiet(self, limit: float) -> bool:
        """Wait until no matching progress runs (one that began after readiness: tsserver loading
        another project for a document just opened), at most ``limit`` seconds; True when quiet."""
        if self._quiet_now.is_set():
            return True
        try:
            await asyncio.wait_for(self._quiet_now.wait(), limit)
        except TimeoutError:
            return False
        return True

    def _become_ready(self, signal: str) -> None:
        if self.state in (ServerState.STARTING, ServerState.INDEXING):
            self.state = ServerState.READY
            self.signal = signal
            self._ready.set()
            if self._quiet is not None:
                self._quiet.cancel()

    async def wait(self, limit: float | None = None) -> ServerState:
        """Wait until ready or dead, at most until the budget (or ``limit`` seconds) runs out."""
        remaining = self.deadline - time.monotonic()
        if limit is not None:
            remaining = min(remaining, limit)
        if not self._ready.is_set() and remaining > 0:
            try:
                await asyncio.wait_for(self._ready.wait(), remaining)
            except TimeoutError:
                pass
        return self.state
