"""LSP ``WorkspaceEdit`` JSON ⇄ the engine's :class:`WorkspaceEdit`, columns converted exactly.

This is the wire format (plain JSON, as in an EDIT.json file or an LSP message);
``lsp_pool/convert.py`` remains the only place that handles ``lsprotocol`` objects.
Positions are read in the encoding the sender used (UTF-16 unless said otherwise)
against the file's current content. URIs may be ``file://`` URIs or
workspace-relative paths. An optional ``"graft:sha256": {uri: hash}`` carries the
hashes a plan was made from, so that a stale plan is refused at apply.
"""

from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import unquote, urlparse

from engine.edits.edit_schema import MalformedEdit, check_workspace_edit
from engine.edits.model import ChangeAnnotation, CreateFile, DeleteFile, FileChange, Operation, RenameFile, WorkspaceEdit
from engine.answers import TextEdit
from engine.positions import LineIndex, PositionEncoding, Range
from engine.workspace import Workspace

_UTF8_BOM = b"\xef\xbb\xbf"


__all__ = ["MalformedEdit", "edits_without_base", "from_lsp", "to_lsp"]


def edits_without_base(data: dict[str, Any], workspace: Workspace) -> list[str]:
    """Paths a (checked) WorkspaceEdit changes text in with no ``graft:sha256`` saying what content
    its positions were computed on."""
    based = {_path(workspace, uri) for uri in (data.get("graft:sha256") or {})}
    edited = [_path(workspace, uri) for uri in (data.get("changes") or {})]
    edited += [_path(workspace, c["textDocument"]["uri"]) for c in data.get("documentChanges") or [] if "textDocument" in c]
    return sorted({path for path in edited if path not in based})


def from_lsp(data: Any, workspace: Workspace, encoding: PositionEncoding = PositionEncoding.UTF16) -> WorkspaceEdit:
    check_workspace_edit(data)  # the whole shape first: nothing below meets a malformed value
    hashes = {_path(workspace, uri): sha for uri, sha in (data.get("graft:sha256") or {}).items()}
    operations: list[Operation] = []
    for change in data.get("documentChanges") or []:
        operations.append(_operation(change, workspace, encoding, hashes))
    for uri, edits in (data.get("changes") or {}).items():
        path = _path(workspace, uri)
        operations.append(FileChange(path, _text_edits(edits, path, workspace, encoding), _hash(workspace, path, hashes)))
    annotations = {
        key: ChangeAnnotation(value.get("label", key), bool(value.get("needsConfirmation")), value.get("description", ""))
        for key, value in (data.get("changeAnnotations") or {}).items()
    }
    return WorkspaceEdit(tuple(operations), annotations)


def to_lsp(edit: WorkspaceEdit, workspace: Workspace, encoding: PositionEncoding = PositionEncoding.UTF16) -> dict[str, Any]:
    """``documentChanges`` form (versions null: files on disk have none), with the plan's hashes."""
    changes: list[dict[str, Any]] = []
    hashes: dict[str, str] = {}
    for operation in edit.operations:
        if isinstance(operation, FileChange):
            index = _index(workspace, operation.path)
            uri = _uri(workspace, operation.path)
            if operation.expected_sha256:
                hashes[uri] = operation.expected_sha256
            changes.append({
                "textDocument": {"uri": uri, "version": None},
                "edits": [
                    {"range": {"start": _position(index, e.range.start, encoding), "end": _position(index, e.range.end, encoding)},
                     "newText": e.new_text}
                    for e in operation.edits
                ],
            })
        elif isinstance(operation, CreateFile):
            uri = _uri(workspace, operation.path)
            changes.append({"kind": "create", "uri": uri,
                            "options": {"overwrite": operation.overwrite, "ignoreIfExists": operation.ignore_if_exists}})
            if operation.content:
                # LSP creates files empty: the content follows as an insertion into the new file.
                origin = {"line": 0, "character": 0}
                changes.append({"textDocument": {"uri": uri, "version": None},
                                "edits": [{"range": {"start": origin, "end": origin}, "newText": operation.content}]})
        elif isinstance(operation, RenameFile):
            changes.append({"kind": "rename", "oldUri": _uri(workspace, operation.old), "newUri": _uri(workspace, operation.new),
                            "options": {"overwrite": operation.overwrite, "ignoreIfExists": operation.ignore_if_exists}})
        else:
            changes.append({"kind": "delete", "uri": _uri(workspace, operation.path),
                            "options": {"ignoreIfNotExists": operation.ignore_if_not_exists}})
    result: dict[str, Any] = {"documentChanges": changes}
    if edit.annotations:
        result["changeAnnotations"] = {
            key: {"label": a.label, "needsConfirmation": a.needs_confirmation, "description": a.description}
            for key, a in edit.annotations.items()
        }
    if hashes:
        result["graft:sha256"] = hashes
    return result


def _operation(change: Any, workspace: Workspace, encoding: PositionEncoding, hashes: dict[str, str]) -> Operation:
    if not isinstance(change, dict):
        raise MalformedEdit("each entry of documentChanges must be an object")
    kind = change.get("kind")
    options = change.get("options") or {}
    if kind == "create":
        return CreateFile(_path(workspace, change["uri"]), "", bool(options.get("overwrite")), bool(options.get("ignoreIfExists")))
    if kind == "rename":
        return RenameFile(_path(workspace, change["oldUri"]), _path(workspace, change["newUri"]),
                          bool(options.get("overwrite")), bool(options.get("ignoreIfExists")))
    if kind == "delete":
        return DeleteFile(_path(workspace, change["uri"]), bool(options.get("ignoreIfNotExists")))
    document = change.get("textDocument")
    if not isinstance(document, dict) or "uri" not in document or not isinstance(change.get("edits"), list):
        raise MalformedEdit("a text document edit needs 'textDocument.uri' and 'edits'")
    path = _path(workspace, document["uri"])
    return FileChange(path, _text_edits(change["edits"], path, workspace, encoding), _hash(workspace, path, hashes))


def _text_edits(edits: Any, path: str, workspace: Workspace, encoding: PositionEncoding) -> tuple[TextEdit, ...]:
    index = _index(workspace, path)
    found = []
    for edit in edits:
        try:
            start, end = edit["range"]["start"], edit["range"]["end"]
            text = edit["newText"]
            found.append(TextEdit(
                Range(index.from_protocol(int(start["line"]), int(start["character"]), encoding),
                      index.from_protocol(int(end["line"]), int(end["character"]), encoding)),
                str(text),
            ))
        except (KeyError, TypeError, ValueError) as error:
            raise MalformedEdit(f"{path}: a text edit needs range.start/end with line and character, and newText ({error})") from None
    return tuple(found)


def _path(workspace: Workspace, uri: str) -> str:
    if not isinstance(uri, str) or not uri:
        raise MalformedEdit(f"not a URI or path: {uri!r}")
    if uri.startswith("file:"):
        parsed = urlparse(uri)
        uri = unquote(parsed.path)
    relative, _absolute = workspace.resolve(uri)  # refuses anything outside the workspace
    return relative


def _uri(workspace: Workspace, path: str) -> str:
    return workspace.resolve(path)[1].as_uri()


def _index(workspace: Workspace, path: str) -> LineIndex:
    absolute = workspace.resolve(path)[1]
    data = absolute.read_bytes() if absolute.is_file() else b""
    return LineIndex(data[len(_UTF8_BOM):] if data.startswith(_UTF8_BOM) else data)


def _hash(workspace: Workspace, path: str, hashes: dict[str, str]) -> str | None:
    if path in hashes:
        return hashes[path]
    absolute = workspace.resolve(path)[1]
    return hashlib.sha256(absolute.read_bytes()).hexdigest() if absolute.is_file() else None


def _position(index: LineIndex, position: Any, encoding: PositionEncoding) -> dict[str, int]:
    line, character = index.to_protocol(position, encoding)
    return {"line": line, "character": character}
