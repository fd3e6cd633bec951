"""A request's answer awaited on the pool's loop, handed over in one turn of the loop.

pygls completes a request's ``concurrent.futures.Future`` in the reader, on the loop's own thread.
``asyncio.wrap_future`` then hands the outcome over with ``call_soon_threadsafe`` (a write to the
loop's wake-up pipe, and a turn of the loop), and ``asyncio.wait_for`` adds two more turns (its
future's callback, then its waiter's) before the request's coroutine resumes. Here the outcome is
copied as the future completes, and the coroutine resumes at the next turn; from another thread
(none completes these futures today) it still goes through ``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future
from typing import Any


async def answer_of(future: Future[Any], timeout: float) -> Any:
    """``future``'s result (or its exception), awaited at most ``timeout`` seconds (then
    TimeoutError). Cancelled, or timed out, the wait cancels ``future`` too, as ``wait_for`` on
    ``wrap_future`` did."""
    loop = asyncio.get_running_loop()
    loop_thread = threading.get_ident()
    answered: asyncio.Future[Any] = loop.create_future()

    def deliver(done: Future[Any]) -> None:
        if threading.get_ident() == loop_thread:
            _copy(done, answered)
        else:
            loop.call_soon_threadsafe(_copy, done, answered)

    future.add_done_callback(deliver)
    timer = loop.call_later(timeout, _time_out, answered)
    try:
        return await answered
    except (TimeoutError, asyncio.CancelledError):
        future.cancel()
        raise
    finally:
        timer.cancel()


def _copy(source: Future[Any], destination: asyncio.Future[Any]) -> None:
    if destination.done():
        return  # timed out, or the waiting task was cancelled, first
    if source.cancelled():
        destination.cancel()
        return
    error = source.exception()
    if error is not None:
        destination.set_exception(error)
    else:
        destination.set_result(source.result())


def _time_out(answered: asyncio.Future[Any]) -> None:
    if not answered.done():
        answered.set_exception(TimeoutError())
