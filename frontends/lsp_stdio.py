"""``graft lsp``'s stdio loop: frames read so that a broken one is answered or skipped, never
the end of the conversation.

pygls's own loop matches ``Content-Length: N\\r\\n`` exactly and drops whatever it cannot read
without a word: a frame without that header made it read the next frame's header as part of a
body, and every frame after that, so the server was deaf for good; a body that was not JSON,
or whose params did not fit the method, got no answer. Here:

- header names are matched case-insensitively and a bare ``\\n`` ends a line too;
- a message without a usable Content-Length (no header block at all, a header block without
  it, a line that is not a header) is skipped up to the next ``Content-Length:``. When what
  was skipped is a JSON request, it is answered with -32600 and its id; the skip is reported
  on stderr either way;
- a body is checked as a JSON-RPC 2.0 envelope (:mod:`frontends.jsonrpc_envelope`: -32700,
  -32600), then its params against the method's type (-32602, saying which field), before
  pygls handles it; a request after ``shutdown`` is -32600, as LSP says (pygls dropped it).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import threading
from dataclasses import dataclass
from typing import Any, Callable

import cattrs
from pygls.lsp.server import LanguageServer
from pygls.io_ import StdoutWriter

from frontends import jsonrpc_envelope as envelope

_HEADER = re.compile(rb"[A-Za-z0-9-]+[ \t]*:")
_NEXT_FRAME = re.compile(rb"(?i)content-length[ \t]*:")
_TOKEN = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-")
#: A header line longer than this is not one: what follows is skipped to the next frame.
MAX_HEADER_LINE = 8 * 1024
#: An unframed JSON message larger than this is skipped without being read for its id.
MAX_UNFRAMED = 1024 * 1024
#: A body larger than this is refused rather than buffered (LSP messages are a few MB at most).
MAX_BODY = 512 * 1024 * 1024


@dataclass(frozen=True)
class Frame:
    body: bytes


@dataclass(frozen=True)
class BrokenFrame:
    """Bytes that were not a frame, skipped; ``message`` is the JSON value they held, if any."""

    reason: str
    skipped: int
    message: Any = None
    readable: bool = False


class FrameReader:
    """Frames from a byte source (``read`` returns what is available, ``b""`` at the end)."""

    def __init__(self, read: Callable[[], bytes]) -> None:
        self._read = read
        self._buffer = bytearray()
        self._ended = False

    def _fill(self) -> bool:
        if self._ended:
            return False
        chunk = self._read()
        if not chunk:
            self._ended = True
            return False
        self._buffer += chunk
        return True

    def next(self) -> Frame | BrokenFrame | None:
        """The next frame or skipped stretch; None at the end of the input."""
        headers: dict[bytes, bytes] = {}
        while True:
            if not self._buffer and not self._fill():
                return None if not headers else BrokenFrame("the input ended inside a header block", 0)
            if self._buffer[0] not in _TOKEN and self._buffer[0] not in b"\r\n":
                return self._skip("a message without a Content-Length header" if not headers
                                  else "a header block not ended by a blank line", from_start=not headers)
            end = self._buffer.find(b"\n")
            if end < 0:
                if len(self._buffer) > MAX_HEADER_LINE:
                    return self._skip("a header line too long to be one", from_start=not headers)
                if not self._fill():
                    return self._drop("the input ended inside a header line")
                continue
            if end > MAX_HEADER_LINE:
                return self._skip("a header line too long to be one", from_start=not headers)
            line = bytes(self._buffer[:end]).rstrip(b"\r")
            glued = _NEXT_FRAME.search(line, 1)
            if glued is not None and not headers:
                # Stray bytes right before a frame (`junkContent-Length: 42`): the frame is served.
                del self._buffer[: glued.start()]
                return BrokenFrame(f"bytes before a header ({line[:min(glued.start(), 60)]!r})", glued.start())
            if line and not _HEADER.match(line):
                return self._skip(f"a line that is not a header ({line[:60]!r})", from_start=not headers)
            del self._buffer[: end + 1]
            if line:
                name, _, value = line.partition(b":")
                headers.setdefault(name.strip().lower(), value.strip())
                continue
            if not headers:
                continue  # blank lines between frames carry nothing
            length = headers.get(b"content-length", b"")
            if not length.isdigit():
                return self._skip("a message without a Content-Length header" if not length
                                  else f"a message with an unreadable Content-Length ({length[:20]!r})", from_start=False)
            if int(length) > MAX_BODY:
                return self._skip(f"a message of {int(length)} bytes, over the {MAX_BODY} a message may have", from_start=False)
            while len(self._buffer) < int(length):
                if not self._fill():
                    return self._drop(f"the input ended inside a body of {int(length)} bytes")
            body = bytes(self._buffer[: int(length)])
            del self._buffer[: int(length)]
            return Frame(body)

    def _drop(self, reason: str) -> BrokenFrame:
        """The input ended: what is left is skipped."""
        skipped = len(self._buffer)
        self._buffer.clear()
        return BrokenFrame(reason, skipped)

    def _skip(self, reason: str, *, from_start: bool) -> BrokenFrame:
        """Skip what is not a frame: a JSON value when one is there (so its request can be
        answered), else everything up to the next ``Content-Length:``. ``from_start``: the
        stretch starts where a header would (a marker right there is not the next frame)."""
        decoder = json.JSONDecoder()
        skipped = 0
        while True:
            stripped = len(self._buffer) - len(self._buffer.lstrip())
            if stripped:
                del self._buffer[:stripped]
                skipped += stripped
            if self._buffer[:1] in (b"{", b"[") and len(self._buffer) <= MAX_UNFRAMED:
                text = self._buffer.decode("utf-8", "surrogateescape")
                try:
                    value, end = decoder.raw_decode(text)
                except ValueError:
                    # Not a whole value yet: wait for more unless the next frame already began.
                    if _NEXT_FRAME.search(self._buffer) is None and self._fill():
                        continue
                else:
                    taken = len(text[:end].encode("utf-8", "surrogateescape"))
                    del self._buffer[:taken]
                    return BrokenFrame(reason, skipped + taken, value, readable=True)
            marker = _NEXT_FRAME.search(self._buffer, 1 if from_start and not skipped else 0)
            if marker is not None:
                stretch = bytes(self._buffer[: marker.start()])
                del self._buffer[: marker.start()]
                value, error = envelope.decode(stretch)
                return BrokenFrame(reason, skipped + len(stretch), value, readable=error is None)
            # Keep a marker's length: the next chunk may complete one split across reads.
            keep = 32
            if len(self._buffer) > keep:
                skipped += len(self._buffer) - keep
                del self._buffer[:-keep]
            if not self._fill():
                skipped += len(self._buffer)
                self._buffer.clear()
                return BrokenFrame(reason, skipped)


def _say(text: str) -> None:
    print(f"graft lsp: {text}", file=sys.stderr, flush=True)


class Dispatcher:
    """Checks each frame's message and hands it to pygls, answering what pygls would drop."""

    def __init__(self, server: LanguageServer) -> None:
        self.server = server
        self.shut_down = False
        """After ``shutdown`` LSP serves only ``exit``; pygls drops other requests unanswered."""

    def send(self, payload: dict[str, Any]) -> None:
        body = json.dumps(payload).encode()
        writer = self.server.protocol.writer
        if writer is not None:
            writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def broken(self, frame: BrokenFrame) -> None:
        _say(f"skipped {frame.skipped} bytes: {frame.reason}")
        if not frame.readable or not isinstance(frame.message, dict) or envelope.is_notification(frame.message):
            return
        reply_to = envelope.request_id(frame.message.get("id"))
        if "method" in frame.message and reply_to is not None:
            self.send(envelope.error_response(reply_to, envelope.INVALID_REQUEST,
                                              f"invalid request: {frame.reason}; every message needs one, and this one was skipped"))

    def body(self, body: bytes) -> None:
        value, error = envelope.decode(body)
        if error is None:
            error = envelope.check(value)
        if error is not None:
            _say(error.message)
            if error.answer:
                self.send(error.response())
            return
        reply_to = envelope.request_id(value.get("id")) if "method" in value else None
        if self.shut_down and reply_to is not None:
            self.send(envelope.error_response(reply_to, envelope.INVALID_REQUEST,
                                              f"the server is shutting down: after shutdown only exit is served, not {value['method']}"))
            return
        try:
            message = self.server.protocol.structure_message(value)
        except Exception as failure:  # noqa: BLE001 - pygls wraps every structuring failure
            problem = _structure_problem(failure)
            if reply_to is None:
                _say(f"ignored {value.get('method') or 'a response'}: {problem}")
                return
            self.send(envelope.error_response(reply_to, envelope.INVALID_PARAMS, f"invalid params for {value['method']}: {problem}"))
            return
        self.server.protocol.handle_message(message)
        self.shut_down = self.shut_down or (reply_to is not None and value["method"] == "shutdown")


def _field_problem(error: BaseException, expected: type | None) -> str:
    """A field's problem: a validator's own sentence (``Position.line should be in range
    [0:2147483647], but was -1``), else what cattrs says by default."""
    if type(error) is ValueError and str(error):
        return str(error).rstrip(".")
    return cattrs.v.format_exception(error, expected)


def _structure_problem(failure: Exception) -> str:
    """What did not fit, as cattrs says it (``required field missing @ $.position``)."""
    cause = failure.__cause__ if failure.__cause__ is not None else failure
    if isinstance(cause, cattrs.BaseValidationError):
        # cattrs names the Python fields (`text_document`); the client wrote `textDocument`.
        messages = [re.sub(r"_([a-z])", lambda m: m.group(1).upper(), message.replace("$.params.", "").replace("$.", ""))
                    for message in cattrs.transform_error(cause, path="$", format_exception=_field_problem)]
        return "; ".join(messages) or str(cause)
    return str(cause) or type(cause).__name__


async def _serve(server: LanguageServer, reader: FrameReader, stop: threading.Event) -> None:
    loop = asyncio.get_running_loop()
    items: asyncio.Queue[Frame | BrokenFrame | None] = asyncio.Queue()

    def pump() -> None:
        # A thread of its own, not the server's pool: a read blocked on an open stdin must not
        # hold up the pool's shutdown after `exit`.
        while True:
            item = reader.next()
            try:
                loop.call_soon_threadsafe(items.put_nowait, item)
            except RuntimeError:  # the loop is closed: the server is exiting
                return
            if item is None:
                return

    threading.Thread(target=pump, name="graft-lsp-stdin", daemon=True).start()
    dispatcher = Dispatcher(server)
    while not stop.is_set():
        item = await items.get()
        if item is None:
            break
        if isinstance(item, BrokenFrame):
            dispatcher.broken(item)
        else:
            dispatcher.body(item.body)


def start_io(server: LanguageServer) -> int:
    """Serve ``server`` on stdin/stdout until the input ends (0) or the client sends ``exit``
    (0 after ``shutdown``, else 1, as LSP says)."""
    stop = threading.Event()
    server._stop_event = stop  # shutdown() sets it: the loop ends after the message being handled
    fd = sys.stdin.buffer.fileno()
    reader = FrameReader(lambda: os.read(fd, 1 << 16))
    server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
    try:
        asyncio.run(_serve(server, reader, stop))
    except BrokenPipeError:
        _say("the client closed the connection")
    except KeyboardInterrupt:
        pass
    except SystemExit as exiting:  # pygls's `exit` handler
        return exiting.code if isinstance(exiting.code, int) else 0
    finally:
        server.shutdown()
    return 0
