"""typescript-language-server's diagnostics, asked of tsserver rather than awaited.

The server pushes a document's diagnostics in stages: tsserver reports the syntactic, the
semantic and the suggestion diagnostics as three events, and the server publishes after each
(debounced). When its check is interrupted between two events (a hover, an organise-imports
code action, a configuration change or tsserver's own ``projectsUpdatedInBackground`` restart
it), the first publication holds the syntactic diagnostics alone, and a client waiting for "the
next publication" takes an empty list for the file's whole set: a quick fix for an unused import
went missing that way on a loaded CI machine. The server's ``typescript.tsserverRequest`` command
forwards the three synchronous requests to tsserver instead: they answer for the document as the
changes sent before them left it, whole, in milliseconds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types as t

from lsp_pool.errors import ServerRequestFailed
from lsp_pool.server import ManagedServer

TSSERVER_REQUEST = "typescript.tsserverRequest"
_KINDS = ("syntacticDiagnosticsSync", "semanticDiagnosticsSync", "suggestionDiagnosticsSync")
# The server's own mapping (toDiagnosticSeverity): anything else counts as an error.
_SEVERITY = {"warning": t.DiagnosticSeverity.Warning, "suggestion": t.DiagnosticSeverity.Hint}


async def asked_diagnostics(server: ManagedServer, path: Path, *, when_ready: bool) -> tuple[list[t.Diagnostic], bool] | None:
    """The document's whole set of diagnostics as the server would publish it, and whether the
    server was ready when asked; None when the server or tsserver refused a request (an older
    server without the command): the caller then waits for the published set, as for any other
    server, and the server's notes say so."""
    # tsserver loads a project only for an opened document, and the server is ready once it has:
    # open, wait, then make sure once more that the document is open and current (another
    # question's didOpen may have closed it as idle in between).
    server.use_file(path, open_it=True)
    if server.tracker is not None:
        await server.tracker.wait()
    server.use_file(path, open_it=True)
    restarts = server.restarts
    found: list[t.Diagnostic] = []
    complete = True
    for kind in _KINDS:
        params = t.ExecuteCommandParams(command=TSSERVER_REQUEST, arguments=[kind, {"file": str(path), "includeLinePosition": False}])
        try:
            reply = await server.request(t.WORKSPACE_EXECUTE_COMMAND, params, allow_incomplete=not when_ready)
        except ServerRequestFailed as failure:
            _note_refusal(server, f"it refused {TSSERVER_REQUEST} ({failure.message})")
            return None
        response = reply.value
        if not isinstance(response, dict) or not response.get("success") or not isinstance(response.get("body"), list):
            said = response.get("message") if isinstance(response, dict) else None
            _note_refusal(server, f"tsserver did not answer {kind}" + (f" ({said})" if said else ""))
            return None
        found.extend(_diagnostic(item) for item in response["body"] if isinstance(item, dict))
        complete = complete and reply.complete
    # A server restarted in between had not been shown the document: not a whole answer.
    return found, complete and server.restarts == restarts


def _note_refusal(server: ManagedServer, reason: str) -> None:
    """Said once in the server's notes (shown with its answers): its diagnostics are then the
    published ones, which can be a part of the whole."""
    note = f"diagnostics are taken as published, which may be a part of them: {reason}"
    if note not in server.notes:
        server.notes.append(note)


def _diagnostic(item: dict[str, Any]) -> t.Diagnostic:
    related = [
        t.DiagnosticRelatedInformation(t.Location(Path(info["span"]["file"]).as_uri(), _range(info["span"])), str(info.get("message", "")))
        for info in item.get("relatedInformation") or [] if isinstance(info, dict) and isinstance(info.get("span"), dict)
    ]
    return t.Diagnostic(
        range=_range(item), message=str(item.get("text", "")),
        severity=_SEVERITY.get(str(item.get("category")), t.DiagnosticSeverity.Error),
        code=item.get("code"), source=str(item.get("source") or "typescript"),
        related_information=related or None,
    )


def _range(span: dict[str, Any]) -> t.Range:
    # tsserver counts lines and offsets from 1, offsets in UTF-16 code units like LSP's columns.
    start, end = span["start"], span["end"]
    return t.Range(t.Position(start["line"] - 1, start["offset"] - 1), t.Position(end["line"] - 1, end["offset"] - 1))
