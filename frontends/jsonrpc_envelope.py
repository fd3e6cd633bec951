"""JSON-RPC 2.0 envelopes checked before a protocol library sees them (``graft lsp``, ``graft mcp``).

The libraries drop a message they cannot read without a word (pygls logs it, the mcp SDK's
stdio transport discards it), so a client waits for an answer that never comes. Here every
message that is not a well-formed JSON-RPC 2.0 request, notification or response gets the
error the specification names, answered to its ``id`` when that can be read, else to null:

- not JSON: -32700 (parse error);
- not an object (a batch array, a number), no or a wrong ``jsonrpc``, an ``id`` that is not
  a string or an integer, a ``method`` that is not a string, ``params`` that are not an
  object or an array, an object with neither ``method`` nor ``result``/``error``: -32600.

A well-formed notification (``jsonrpc`` "2.0", a string ``method``, no ``id``) is never
answered, not even when its method is unknown or its params are wrong: the specification
forbids replying to one. Neither is a response (``result`` or ``error`` without ``method``):
answering a response could start two peers answering each other's errors forever.
Batches are refused: LSP has none and MCP dropped them (2025-06-18).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602

RequestId = int | str


@dataclass(frozen=True)
class EnvelopeError:
    """Why a message was refused, and whether and to which id to answer."""

    code: int
    message: str
    reply_to: RequestId | None
    answer: bool = True
    """False for a malformed response: it is logged, never answered."""

    def response(self) -> dict[str, Any]:
        return error_response(self.reply_to, self.code, self.message)


def error_response(reply_to: RequestId | None, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": reply_to, "error": error}


def request_id(value: object) -> RequestId | None:
    """The value as an id a reply may carry: a string or an integer (booleans are not)."""
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return None


def decode(text: str | bytes) -> tuple[Any, EnvelopeError | None]:
    """The message's JSON value, or the parse error to answer (id null)."""
    try:
        return json.loads(text), None
    except ValueError as error:  # UnicodeDecodeError is a ValueError too
        return None, EnvelopeError(PARSE_ERROR, f"parse error: the message is not JSON ({error})", None)


def check(value: Any) -> EnvelopeError | None:
    """None for a well-formed request, notification or response; else the error to answer."""
    if isinstance(value, list):
        return EnvelopeError(INVALID_REQUEST, "invalid request: batches (JSON arrays) are not supported; send one message at a time", None)
    if not isinstance(value, dict):
        return EnvelopeError(INVALID_REQUEST, f"invalid request: a message is a JSON object, not {type(value).__name__}", None)
    has_id = "id" in value
    reply_to = request_id(value.get("id"))
    is_response = "method" not in value and ("result" in value or "error" in value)
    if value.get("jsonrpc") != "2.0":
        return EnvelopeError(INVALID_REQUEST, f'invalid request: "jsonrpc" must be "2.0", not {value.get("jsonrpc")!r}', reply_to,
                             answer=not is_response)
    if is_response:
        if not has_id or (reply_to is None and value["id"] is not None):
            return EnvelopeError(INVALID_REQUEST, "invalid response: its id must be a string, an integer or null", None, answer=False)
        return None
    if has_id and reply_to is None:
        return EnvelopeError(INVALID_REQUEST, f"invalid request: id must be a string or an integer, not {json.dumps(value['id'])}", None)
    if "method" not in value:
        return EnvelopeError(INVALID_REQUEST, 'invalid request: no "method" (and no "result" or "error": not a response either)', reply_to)
    if not isinstance(value["method"], str):
        return EnvelopeError(INVALID_REQUEST, f'invalid request: "method" must be a string, not {json.dumps(value["method"])}', reply_to)
    params = value.get("params")
    if params is not None and not isinstance(params, (dict, list)):
        return EnvelopeError(INVALID_REQUEST, f'invalid request: "params" must be an object, not {json.dumps(params)}', reply_to)
    return None


def is_notification(value: dict[str, Any]) -> bool:
    """A well-formed message with a method and no id: never answered."""
    return "method" in value and "id" not in value
