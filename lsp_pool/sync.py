"""A thin synchronous face on the async pool, for the CLI and other blocking callers.

The pool runs on its own event loop in one daemon thread. That thread starts
every server (so Linux's parent-death signal, which follows the thread that
forked, ties the servers to it), and :meth:`SyncLanguageApi.close` shuts them
down and stops it. ``atexit`` closes anything a caller forgot.
"""

from __future__ import annotations

import asyncio
import atexit
import threading
from pathlib import Path
from typing import Awaitable, Callable, TypeVar

from lsp_pool.config import PoolConfig
from lsp_pool.features import LanguageApi
from lsp_pool.pool import Pool
from lsp_pool.registry import SPECS, ServerSpec

T = TypeVar("T")


class SyncLanguageApi:
    def __init__(self, root: Path, config: PoolConfig | None = None, specs: tuple[ServerSpec, ...] = SPECS) -> None:
        self.root = root
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="graft-lsp-pool", daemon=True)
        self._thread.start()
        self.pool = Pool(config, specs)
        self.api = LanguageApi(self.pool, root)
        self._closed = False
        self._active = 0
        """Calls running on the loop: a server past its memory ceiling is restarted only when none is."""
        atexit.register(self.close)

    async def _between_calls(self, work: Callable[[], Awaitable[T]]) -> T:
        """``work``, after the servers past their memory ceiling are restarted, when no other call
        runs (a restart never cuts a request off, nor loses a document a call opened)."""
        self._active += 1
        try:
            if self._active == 1:
                await self.pool.renew_over_memory()
            return await work()
        finally:
            self._active -= 1

    def call(self, request: Callable[[LanguageApi], Awaitable[T]], timeout: float | None = None) -> T:
        """Run ``request(api)`` on the pool's loop and wait for its result; past ``timeout``
        seconds the request is cancelled on the loop and TimeoutError raised."""
        if self._closed:
            raise RuntimeError("the language-server pool is closed")

        async def run() -> T:
            return await self._between_calls(lambda: request(self.api))

        future = asyncio.run_coroutine_threadsafe(run(), self._loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()  # nothing is left waiting on the loop for an answer nobody reads
            raise

    def run(self, coroutine_factory: Callable[[], Awaitable[T]], timeout: float | None = None) -> T:
        """Run any coroutine on the pool's loop (for callers that need the pool itself)."""

        async def run() -> T:
            return await self._between_calls(coroutine_factory)

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(timeout)

    def submit(self, coroutine_factory: Callable[[], Awaitable[object]]) -> None:
        """Start a coroutine on the pool's loop without waiting for it; whatever it raises is
        retrieved and dropped (the caller's later requests meet the same failure)."""
        if self._closed:
            return

        async def run() -> object:
            return await self._between_calls(coroutine_factory)

        future = asyncio.run_coroutine_threadsafe(run(), self._loop)
        future.add_done_callback(lambda done: done.cancelled() or done.exception())

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.close)
        try:
            asyncio.run_coroutine_threadsafe(self.pool.close(), self._loop).result(30)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._loop.close()
