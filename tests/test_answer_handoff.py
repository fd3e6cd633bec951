"""From a server's answer, read, to its request's return: one turn of the loop, and pygls's dispatch
without its Protocol checks (lsp_pool.awaited, lsp_pool.connection's handle_message)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.protocol import json_rpc
from pygls.protocol.json_rpc import JsonRPCResponseMessage

from lsp_pool.awaited import answer_of
from lsp_pool.connection import Connection, ServerEvents


class _Written:
    def __init__(self) -> None:
        self.data: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.data.append(data)

    def messages(self) -> list[dict[str, Any]]:
        return [json.loads(chunk.split(b"\r\n\r\n", 1)[1]) for chunk in self.data]


def _connection(tmp_path: Path, events: ServerEvents | None = None) -> tuple[Connection, _Written]:
    connection = Connection("fake", ("true",), str(tmp_path), events or ServerEvents())
    written = _Written()
    connection._client.protocol.set_writer(written)  # type: ignore[arg-type]
    return connection, written


def test_an_answer_resumes_its_request_at_the_next_turn_of_the_loop(tmp_path: Path) -> None:
    """wrap_future handed the answer over through call_soon_threadsafe, and wait_for took two more
    turns: the request returned three turns after its answer was read."""
    connection, written = _connection(tmp_path)

    async def ask() -> tuple[bool, Any]:
        asking = asyncio.ensure_future(connection.request("shutdown", None, timeout=30))
        await asyncio.sleep(0)  # the request is written
        msg_id = written.messages()[-1]["id"]
        connection._client.protocol.handle_message(JsonRPCResponseMessage(id=msg_id, result="done", jsonrpc="2.0"))
        await asyncio.sleep(0)
        return asking.done(), await asking

    assert asyncio.run(ask()) == (True, "done")


class _CountedChecks(type):
    """Stands for one of pygls's runtime-checkable message Protocols, and counts its isinstance checks."""

    checks: list[str] = []

    def __instancecheck__(cls, instance: Any) -> bool:
        _CountedChecks.checks.append(cls.__name__)
        return isinstance(instance, cls.protocol)  # type: ignore[attr-defined]


def test_answers_and_notifications_are_dispatched_without_pygls_protocol_checks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Python 3.11 lists a runtime-checkable Protocol's members anew at each isinstance check: three
    per answer, two per notification (tsc --lsp logs several right after each answer)."""
    for name in ("RPCRequest", "RPCNotification", "RPCResponse"):
        monkeypatch.setattr(json_rpc, name, _CountedChecks(name, (), {"protocol": getattr(json_rpc, name)}))
    _CountedChecks.checks.clear()
    logged: list[str] = []
    connection, written = _connection(tmp_path, ServerEvents(on_log=logged.append, settings=lambda section, scope: {"x": 1}))
    protocol = connection._client.protocol

    async def ask() -> Any:
        asking = asyncio.ensure_future(connection.request("shutdown", None, timeout=30))
        await asyncio.sleep(0)
        msg_id = written.messages()[-1]["id"]
        notification = types.LogMessageNotification(params=types.LogMessageParams(type=types.MessageType.Log, message="hi"))
        protocol.handle_message(notification)  # type: ignore[arg-type]  # pygls's Protocols miss lsprotocol's notifications
        protocol.handle_message(JsonRPCResponseMessage(id=msg_id, result="done", jsonrpc="2.0"))
        return await asking

    assert asyncio.run(ask()) == "done" and logged == ["hi"]
    assert _CountedChecks.checks == []
    # The server's own request still goes through pygls, and is answered.
    request = types.METHOD_TO_TYPES[types.WORKSPACE_CONFIGURATION][0]
    protocol.handle_message(request(id=5, params=types.ConfigurationParams(items=[types.ConfigurationItem(section="s")])))
    assert _CountedChecks.checks == ["RPCRequest"]
    assert written.messages()[-1] == {"id": 5, "jsonrpc": "2.0", "result": [{"x": 1}]}


# -- answer_of keeps wait_for's outcomes ----------------------------------------------------------

def test_an_answer_that_never_comes_times_out_and_its_future_is_cancelled() -> None:
    future: Future[Any] = Future()

    async def wait() -> None:
        await answer_of(future, 0.01)

    with pytest.raises(TimeoutError):
        asyncio.run(wait())
    assert future.cancelled()


def test_a_cancelled_wait_cancels_its_future_and_a_later_answer_is_dropped() -> None:
    future: Future[Any] = Future()

    async def wait() -> bool:
        waiting = asyncio.ensure_future(answer_of(future, 30))
        await asyncio.sleep(0)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        return future.cancelled()

    assert asyncio.run(wait())


def test_an_answer_or_a_failure_set_from_another_thread_reaches_the_waiting_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the loop's thread-safe call, which wakes it (a plain one would leave it asleep)."""
    woken: list[object] = []
    thread_safe = asyncio.base_events.BaseEventLoop.call_soon_threadsafe

    def counted(loop: asyncio.AbstractEventLoop, *args: Any, **kwargs: Any) -> Any:
        woken.append(args[0])
        return thread_safe(loop, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(asyncio.base_events.BaseEventLoop, "call_soon_threadsafe", counted)

    def set_once_the_loop_waits(future: Future[Any], outcome: Any) -> None:
        time.sleep(0.05)  # the loop is asleep in its selector by then: only its wake-up pipe wakes it
        future.set_exception(outcome) if isinstance(outcome, Exception) else future.set_result(outcome)

    async def wait(future: Future[Any], outcome: Any) -> Any:
        waiting = asyncio.ensure_future(answer_of(future, 10))
        await asyncio.sleep(0)
        setter = threading.Thread(target=set_once_the_loop_waits, args=(future, outcome))
        setter.start()
        try:
            return await waiting
        finally:
            setter.join(10)

    assert asyncio.run(wait(Future(), "answer")) == "answer"
    with pytest.raises(ValueError, match="the server died"):
        asyncio.run(wait(Future(), ValueError("the server died")))
    assert len(woken) == 2
