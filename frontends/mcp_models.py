"""MCP output models derived from the engine's values, never hand-copied.

A tool's structured content is a value's JSON (``to_json`` or its fields), so its schema is
made from the same dataclass: a field added to the value appears in the schema. Enums are
their string values and nested values are objects, as the JSON has them.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, create_model


class Output(BaseModel):
    """Every result: open-ended objects whose documented fields are listed per tool."""

    model_config = ConfigDict(extra="allow")
    omitted: dict[str, int] | None = None
    """What was cut to fit: list key → items left out, ``text``/``diff`` → characters left out."""


def _json_type(hint: Any) -> Any:
    """The JSON form of a field's type: enums as strings, values as objects, lists of either alike."""
    origin = typing.get_origin(hint)
    if origin is list:
        (item,) = typing.get_args(hint) or (Any,)
        return list[_json_type(item)]  # type: ignore[misc]  # a type built at run time for pydantic
    if origin in (typing.Union, types.UnionType):
        return typing.Optional[_json_type(next(a for a in typing.get_args(hint) if a is not type(None)))]
    if isinstance(hint, type) and issubclass(hint, Enum):
        return str
    if dataclasses.is_dataclass(hint):
        return dict[str, Any]
    return hint


def model_of(value_type: type, name: str, json_names: dict[str, str] | None = None) -> type[Output]:
    """An output model with one field per field of a dataclass, typed as its JSON is; ``json_names``
    where the JSON names a field otherwise (EditOutcome's ``verification`` is ``verified``)."""
    if not dataclasses.is_dataclass(value_type):
        raise TypeError(f"{value_type.__name__} is not a dataclass")
    hints = typing.get_type_hints(value_type)
    fields: dict[str, Any] = {}
    for declared in dataclasses.fields(value_type):
        # Optional in the schema: a tool may leave out what its text already says (see mcp_server._edit).
        fields[(json_names or {}).get(declared.name, declared.name)] = (_json_type(hints[declared.name]) | None, None)
    model: type[Output] = create_model(name, __base__=Output, **fields)
    return model
