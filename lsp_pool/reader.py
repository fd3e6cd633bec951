"""Reading a server's messages off its output: pygls's reader (``pygls.io_.run_async``), less the
costs that a rename's answer of a thousand edits (a hundred kilobytes of JSON) made worth cutting.

- The body is parsed by orjson (:func:`parsed`), which builds the same values as ``json.loads``
  in about half its time; a body it refuses is parsed by ``json.loads``, as before.

- The body is parsed without an ``object_hook``. pygls passes its ``structure_message`` as the
  hook, which Python then calls for every object of the message, a thousand times per answer,
  only to return each nested one unchanged (they hold no ``jsonrpc``). It is called here on the
  whole message once, which is what the hook did that mattered.
- The cyclic garbage collector is paused while a large body is parsed (:func:`collection_paused`),
  and a rename's answer is read into the engine's values within that parse
  (``Connection.request``'s ``read_result``). Such a parse allocates thousands of objects, all of
  them alive and none of them in a cycle, and the collector, counting allocations, ran a dozen
  times over them between the answer's arrival and its values (young and middle generations, on
  a warm rename's critical path). What it would have found to collect waits until the block ends.
"""

from __future__ import annotations

import gc
import json
import logging
import re
import threading
from contextlib import contextmanager, nullcontext
from typing import Any, Callable, Iterator, Protocol

import orjson

logger = logging.getLogger(__name__)

LARGE_BODY_BYTES = 64 * 1024
"""A body at least this long is parsed with the collector paused (a rename of a few dozen edits
is a few kilobytes; the collector's young generation fills at 700 objects)."""

_CONTENT_LENGTH = re.compile(rb"^Content-Length: (\d+)\r\n$")


class _Stream(Protocol):
    async def readline(self) -> bytes: ...

    async def readexactly(self, n: int) -> bytes: ...


class _Protocol(Protocol):
    def structure_message(self, data: Any) -> Any: ...

    def handle_message(self, message: Any) -> None: ...


async def read_messages(stop: threading.Event, stream: _Stream, protocol: _Protocol,
                        on_error: Callable[[Exception, Any], None], error_kind: type[Exception]) -> None:
    """Each message of ``stream`` handed to ``protocol`` until the stream ends or ``stop`` is set;
    a message that cannot be parsed or handled goes to ``on_error`` as pygls reports it (with
    ``error_kind``, its JSON-RPC exception type), and reading goes on."""
    content_length = 0
    while not stop.is_set():
        header = await stream.readline()
        if not header:
            break
        if not content_length:
            match = _CONTENT_LENGTH.fullmatch(header)
            if match:
                content_length = int(match.group(1))
        if content_length and not header.strip():
            body = await stream.readexactly(content_length)
            if not body:
                break
            try:
                with collection_paused() if content_length >= LARGE_BODY_BYTES else nullcontext():
                    message = protocol.structure_message(parsed(body))
                protocol.handle_message(message)
            except Exception as error:  # noqa: BLE001 - as pygls: reported, and the session reads on
                logger.exception("Unable to handle message")
                on_error(error, error_kind)
            finally:
                content_length = 0


def parsed(body: bytes) -> Any:
    """A message body's JSON, as ``json.loads`` reads it. orjson refuses what the JSON standard
    does not allow but ``json.loads`` takes (``NaN``, a lone surrogate escape), and reads an
    integer past 64 bits as a float: a body it refuses, one holding a run of digits that long
    (in a string too: only a cost), or one that is not JSON at all, is read by ``json.loads``,
    which then answers or raises as it always did."""
    if _NINETEEN_DIGITS in body.translate(_DIGITS_AS_ZERO):
        return json.loads(body)
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return json.loads(body)


_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_NINETEEN_DIGITS = b"0" * 19
"""Nineteen digits in a row, once every digit is made a 0 (a search for a run of digits cost more
than the parse): every integer orjson reads as an integer has fewer, or is 2**63 and up, which it
reads as one only below 2**64."""


_pause_lock = threading.Lock()
_pauses = 0
_resume = False


@contextmanager
def collection_paused() -> Iterator[None]:
    """The cyclic garbage collector paused for the block (nothing is lost: it collects at its next
    run after it). Blocks may overlap in several threads: the collector resumes when the last one
    ends, and only if it was running when the first began."""
    global _pauses, _resume
    with _pause_lock:
        if _pauses == 0:
            _resume = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses -= 1
            if _pauses == 0 and _resume:
                gc.enable()
