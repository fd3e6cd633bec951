"""A server's message body is parsed by orjson (lsp_pool.reader.parsed), with the values
``json.loads`` gives: what orjson refuses but ``json.loads`` takes goes to ``json.loads``."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsp_pool import reader
from lsp_pool.connection import Connection
from lsp_pool.reader import parsed
from lsp_pool.server import ServerEvents

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20,
)


def _same(left: Any, right: Any) -> bool:
    """Equal values, NaN equal to NaN (json.dumps writes both the same)."""
    if isinstance(left, float) and isinstance(right, float) and math.isnan(left):
        return math.isnan(right)
    return json.dumps(left) == json.dumps(right) and type(left) is type(right)


@settings(max_examples=400, deadline=None)
@given(JSON_VALUES)
def test_a_body_is_read_as_json_loads_reads_it(value: Any) -> None:
    body = json.dumps(value).encode()  # NaN, Infinity and surrogates as json.dumps writes them
    assert _same(parsed(body), json.loads(body))


@pytest.mark.parametrize("body", [b'{"a": NaN}', b'{"a": 123456789012345678901234567890}', b'{"a": "\\ud800"}',
                                  b'{"a": 1, "a": 2}'])
def test_what_orjson_refuses_or_reads_otherwise_is_read_as_before(body: bytes) -> None:
    assert _same(parsed(body), json.loads(body))


def test_a_body_that_is_not_json_raises_as_before() -> None:
    with pytest.raises(json.JSONDecodeError):
        parsed(b'{"a": ')


def test_the_reader_parses_with_orjson(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parses: list[bytes] = []
    real = orjson.loads

    def counted(body: bytes) -> Any:
        parses.append(body)
        return real(body)

    monkeypatch.setattr(reader.orjson, "loads", counted)
    connection = Connection("fake", ("true",), str(tmp_path), ServerEvents())
    protocol = connection._client.protocol
    handled: list[Any] = []
    protocol.handle_message = handled.append  # type: ignore[method-assign,assignment]
    body = json.dumps({"jsonrpc": "2.0", "method": "window/logMessage", "params": {"type": 3, "message": "hi"}}).encode()

    async def read() -> None:
        stream = asyncio.StreamReader()
        stream.feed_data(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        stream.feed_eof()
        await connection._read_messages(stream)

    asyncio.run(read())
    assert parses == [body] and len(handled) == 1
