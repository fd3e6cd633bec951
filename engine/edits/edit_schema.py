"""The LSP ``WorkspaceEdit`` JSON checked whole, against the protocol's schema, before anything is read.

An edit from an agent, a script or another tool is input: a reversed range duplicated lines,
negative positions duplicated text, ``"newText": null`` inserted ``None``, and a list where an
object belongs crashed with a traceback. Every shape is checked here first, and anything that
is not a WorkspaceEdit is a :class:`MalformedEdit` naming where (``documentChanges[2].edits[0]
.range.start.line``) and what was expected; nothing else in the engine sees it.
"""

from __future__ import annotations

import re
from typing import Any

from engine.errors import UsageError

_SHA256 = re.compile(r"[0-9a-f]{64}")
_KINDS = ("create", "rename", "delete")
_OPTIONS = {"create": ("overwrite", "ignoreIfExists"), "rename": ("overwrite", "ignoreIfExists"), "delete": ("recursive", "ignoreIfNotExists")}


class MalformedEdit(UsageError):
    code = "malformed_edit"


def check_workspace_edit(data: Any) -> None:
    """Raise MalformedEdit unless ``data`` is a WorkspaceEdit in the protocol's JSON form."""
    _object(data, "the WorkspaceEdit")
    if "changes" not in data and "documentChanges" not in data:
        raise MalformedEdit("the WorkspaceEdit has neither 'changes' nor 'documentChanges'")
    if data.get("changes") is not None:
        changes = _object(data["changes"], "changes")
        for uri, edits in changes.items():
            _text_edits(edits, f"changes[{uri!r}]")
    if data.get("documentChanges") is not None:
        entries = data["documentChanges"]
        if not isinstance(entries, list):
            raise MalformedEdit(f"documentChanges must be a list, not {_kind_of(entries)}")
        for number, entry in enumerate(entries):
            _document_change(entry, f"documentChanges[{number}]")
    if data.get("changeAnnotations") is not None:
        for key, annotation in _object(data["changeAnnotations"], "changeAnnotations").items():
            where = f"changeAnnotations[{key!r}]"
            _object(annotation, where)
            _string(annotation.get("label"), f"{where}.label")
            for flag in ("needsConfirmation",):
                if flag in annotation and not isinstance(annotation[flag], bool):
                    raise MalformedEdit(f"{where}.{flag} must be true or false")
            if "description" in annotation and not isinstance(annotation["description"], str):
                raise MalformedEdit(f"{where}.description must be a string")
    if data.get("graft:sha256") is not None:
        for uri, sha in _object(data["graft:sha256"], "graft:sha256").items():
            if not isinstance(sha, str) or not _SHA256.fullmatch(sha):
                raise MalformedEdit(f"graft:sha256[{uri!r}] must be a sha256 in hex (64 characters 0-9a-f)")


def _document_change(entry: Any, where: str) -> None:
    _object(entry, where)
    kind = entry.get("kind")
    if kind is None:
        document = _object(entry.get("textDocument"), f"{where}.textDocument")
        _string(document.get("uri"), f"{where}.textDocument.uri")
        version = document.get("version")
        if version is not None and (type(version) is not int or version < 0):
            raise MalformedEdit(f"{where}.textDocument.version must be a non-negative integer or null")
        _text_edits(entry.get("edits"), f"{where}.edits")
        return
    if kind not in _KINDS:
        raise MalformedEdit(f"{where}.kind must be one of {', '.join(_KINDS)}, not {kind!r}")
    for field in ("oldUri", "newUri") if kind == "rename" else ("uri",):
        _string(entry.get(field), f"{where}.{field}")
    if entry.get("options") is not None:
        options = _object(entry["options"], f"{where}.options")
        for name, value in options.items():
            if name in _OPTIONS[kind] and not isinstance(value, bool):
                raise MalformedEdit(f"{where}.options.{name} must be true or false")


def _text_edits(edits: Any, where: str) -> None:
    if not isinstance(edits, list):
        raise MalformedEdit(f"{where} must be a list of text edits, not {_kind_of(edits)}")
    for number, edit in enumerate(edits):
        here = f"{where}[{number}]"
        _object(edit, here)
        span = _object(edit.get("range"), f"{here}.range")
        start = _position(span.get("start"), f"{here}.range.start")
        end = _position(span.get("end"), f"{here}.range.end")
        if end < start:
            raise MalformedEdit(f"{here}.range ends ({end[0]}:{end[1]}) before it starts ({start[0]}:{start[1]})")
        if not isinstance(edit.get("newText"), str):
            raise MalformedEdit(f"{here}.newText must be a string, not {_kind_of(edit.get('newText'))}")
        if "annotationId" in edit and not isinstance(edit["annotationId"], str):
            raise MalformedEdit(f"{here}.annotationId must be a string")


def _position(value: Any, where: str) -> tuple[int, int]:
    position = _object(value, where)
    found = []
    for field in ("line", "character"):
        number = position.get(field)
        if type(number) is not int or number < 0:
            raise MalformedEdit(f"{where}.{field} must be a non-negative integer, not {number!r}")
        found.append(number)
    return found[0], found[1]


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise MalformedEdit(f"{where} must be a JSON object, not {_kind_of(value)}")
    return value


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise MalformedEdit(f"{where} must be a non-empty string, not {_kind_of(value)}")
    return value


def _kind_of(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)
