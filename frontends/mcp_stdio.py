"""``graft mcp``'s stdio transport: the SDK's, with every line checked before the SDK reads it.

The SDK's stdio reader discards a line it cannot read as a JSON-RPC message, so the client
waits for an answer that never comes. Each line is checked here first
(:mod:`frontends.jsonrpc_envelope`): a line that is not JSON is answered -32700, one that is not
a JSON-RPC 2.0 message -32600, a request whose params are an array (MCP passes them by name)
-32602, each to the request's id when it can be read, else to null. Well-formed notifications
and responses pass on unanswered; blank lines are skipped.

The answer is sent into the transport's write stream before the next line is read, so it
reaches the client before the answer to any later message.
"""

from __future__ import annotations

import io
import os
import sys
from contextlib import contextmanager
from typing import Any, AsyncIterator, Iterator, cast

import anyio
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import ErrorData, JSONRPCError, jsonrpc_message_adapter

from frontends import jsonrpc_envelope as envelope


class CheckedLines:
    """The lines of stdin that are JSON-RPC messages the SDK can read; the others answered."""

    def __init__(self, source: Any) -> None:
        self.source = source
        self.replies: Any = None
        """The transport's write stream, once it exists."""
        self.ready = anyio.Event()

    def attach(self, write_stream: Any) -> None:
        self.replies = write_stream
        self.ready.set()

    async def _answer(self, error: envelope.EnvelopeError) -> None:
        print(f"graft mcp: {error.message}", file=sys.stderr, flush=True)
        if not error.answer:
            return
        await self.ready.wait()
        reply = JSONRPCError(jsonrpc="2.0", id=error.reply_to, error=ErrorData(code=error.code, message=error.message))
        await self.replies.send(SessionMessage(reply))

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self.source:
            if not line.strip():
                continue
            error = problem(line)
            if error is None:
                yield line
            else:
                await self._answer(error)


def problem(line: str) -> envelope.EnvelopeError | None:
    """Why the SDK could not serve this line, or None when it can."""
    value, error = envelope.decode(line)
    if error is None:
        error = envelope.check(value)
    if error is not None:
        return error
    reply_to = envelope.request_id(value.get("id"))
    if isinstance(value.get("params"), list):
        if envelope.is_notification(value):
            return envelope.EnvelopeError(envelope.INVALID_PARAMS, f"ignored notification {value['method']}: its params are an array",
                                          None, answer=False)
        return envelope.EnvelopeError(envelope.INVALID_PARAMS,
                                      f"invalid params for {value['method']}: MCP passes params by name, as an object, not an array",
                                      reply_to)
    try:
        jsonrpc_message_adapter.validate_python(value, by_name=False)
    except ValueError as failure:  # the SDK's own reading; nothing above should let one through
        return envelope.EnvelopeError(envelope.INVALID_REQUEST, f"invalid request: {failure}", reply_to,
                                      answer="method" in value and not envelope.is_notification(value))
    return None


@contextmanager
def claimed_stdin() -> Iterator[io.TextIOWrapper]:
    """Stdin for the transport alone: the protocol is read from a private copy of fd 0, and
    fd 0 points at the null device meanwhile, so a child process (a language server, a test
    run) that inherits it reads nothing of the protocol. The SDK does the same when it reads
    stdin itself."""
    wire = os.dup(0)
    os.set_inheritable(wire, False)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    try:
        with io.open(wire, "rb", closefd=False) as raw:
            yield io.TextIOWrapper(raw, encoding="utf-8", errors="replace")
    finally:
        # The copy stays open: a reading thread may still be blocked on it when serving ends.
        os.dup2(wire, 0)


async def serve(run: Any) -> None:
    """Serve on stdio: ``run(read_stream, write_stream)`` is the server's loop."""
    with claimed_stdin() as stdin:
        lines = CheckedLines(anyio.wrap_file(stdin))
        async with stdio_server(stdin=cast(Any, lines)) as (read_stream, write_stream):
            lines.attach(write_stream)
            await run(read_stream, write_stream)
