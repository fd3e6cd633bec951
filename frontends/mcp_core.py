"""The MCP front end's shared parts: the stricter server, the tools' binding to one engine (a client
per session), the annotations, and how an answer is made (fit to its budget) or a refusal told.
The tools themselves are in frontends/mcp_reading_tools.py, frontends/mcp_edit_tools.py and
frontends/mcp_file_tools.py; frontends/mcp_server.py puts them together."""

from __future__ import annotations

import json
import threading
from typing import Annotated, Any, Callable, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, Icon, TextContent, ToolAnnotations
from mcp_types import Tool as MCPTool

from engine.api_surface import (
    CheckMode, EditOptions, EditOutcome, Engine, EngineClient, FileView, GraftError, located, NavigationResult,
    OPERATIONS, RefactorOperation, SymbolKind, UsageError,
)
from frontends import mcp_stdio
from frontends.mcp_models import Output, model_of
from frontends.mcp_views import located_view
from frontends.render import graph as graph_render, option_hints
from frontends.render.edits import outcome_text

#: Characters of structured content a result may carry before it is cut.
RESULT_BUDGET = 60_000
LIST_CUT = 200


EditOutput = model_of(EditOutcome, "EditOutput", json_names={"verification": "verified"})
FileOutput = model_of(FileView, "FileOutput")


class Listing(Output):
    items: list[Any]
    total: int


Result = Annotated[CallToolResult, Output]


def hints(*, read_only: bool, idempotent: bool, destructive: bool = False) -> ToolAnnotations:
    """What an agent decides approvals on. No tool reaches beyond the workspace (openWorldHint).

    A hint equal to the MCP specification's default is left out, as is one the specification
    says means nothing for a tool that only reads (destructive, idempotent): every session
    pays for the listing, and a client reads a missing hint as its default (read-only false,
    destructive true, idempotent false, open-world true)."""
    if read_only:
        return ToolAnnotations(read_only_hint=True, open_world_hint=False)
    return ToolAnnotations(destructive_hint=None if destructive else False, idempotent_hint=idempotent or None,
                           open_world_hint=False)


READS = hints(read_only=True, idempotent=True)
"""A tool that only reads (the read ledger it keeps is the session's, not the workspace)."""
EDITS_TEXT = hints(read_only=False, destructive=True, idempotent=False)
"""Text edits (old → new, a pattern, ranges, a server's code action): they may remove text, and
the same edit again may match again (a replacement that contains what it replaces)."""
WRITES_FILE = hints(read_only=False, destructive=True, idempotent=True)
"""A whole file's content: what was there is replaced; the same content again changes nothing."""
UNDOES = hints(read_only=False, destructive=True, idempotent=False)
"""Undo drops a transaction's changes; called again, it undoes the one before."""
BATCH = hints(read_only=False, destructive=any(o.destructive for o in OPERATIONS.values()),
              idempotent=all(o.idempotent for o in OPERATIONS.values()))
"""Any refactoring of the registry, so what any of them may be."""


def operation_hints(operation: type[RefactorOperation]) -> ToolAnnotations:
    """A refactoring writes (with apply=true: a dry run by default is still a tool that writes)."""
    if not hasattr(operation, "destructive") or not hasattr(operation, "idempotent"):
        raise TypeError(f"{operation.__qualname__} must say whether it is destructive and idempotent (its class variables)")
    return hints(read_only=False, destructive=operation.destructive, idempotent=operation.idempotent)


class UnknownArgument(UsageError):
    """A tool call with an argument the tool does not take: refused, not dropped."""

    code = "unknown_argument"

    def __init__(self, tool: str, unknown: list[str], accepted: list[str]) -> None:
        super().__init__(f"{tool} takes no argument {', '.join(unknown)}; it takes {', '.join(accepted)}")
        self.unknown = unknown
        self.accepted = accepted

    def to_json(self) -> dict[str, object]:
        return {**super().to_json(), "unknown": self.unknown, "accepted": self.accepted}


class GraftMCPServer(MCPServer):
    """The SDK's server, stricter where it is lenient: a tool must be annotated, a call to an
    unknown tool is a JSON-RPC error (-32602, as MCP says; the SDK answered a tool result),
    an argument a tool does not take is refused (the SDK dropped it), and on stdio every
    malformed message is answered (:mod:`frontends.mcp_stdio`)."""

    def __init__(self, *, output_schemas: bool = False, **settings: Any) -> None:
        super().__init__(**settings)
        self._arguments: dict[str, list[str]] | None = None
        self.output_schemas = output_schemas
        """List each tool's output schema (``graft mcp --structured-output``). Off by default: every
        session pays for the listing before it does anything, the schemas were two thirds of it,
        and only a client that reads structured output uses them (the content is sent either way)."""

    def add_tool(self, fn: Callable[..., Any], name: str | None = None, title: str | None = None, description: str | None = None,
                 annotations: ToolAnnotations | None = None, icons: list[Icon] | None = None, meta: dict[str, Any] | None = None,
                 structured_output: bool | None = None) -> None:
        if annotations is None:
            raise TypeError(f"tool {name or fn.__name__} has no annotations: say whether it only reads, destroys, repeats safely")
        super().add_tool(fn, name=name, title=title, description=description, annotations=annotations, icons=icons, meta=meta,
                         structured_output=structured_output)
        self._arguments = None

    async def list_tools(self) -> list[MCPTool]:
        """The SDK's listing, without what an agent does not read: pydantic's generated titles
        (the property's name again) and, unless asked for, the output schemas."""
        return [tool.model_copy(update={"input_schema": untitled(tool.input_schema),
                                        "output_schema": tool.output_schema if self.output_schemas else None})
                for tool in await super().list_tools()]

    async def arguments(self) -> dict[str, list[str]]:
        """Each tool's arguments, as its input schema lists them."""
        if self._arguments is None:
            self._arguments = {tool.name: list(tool.input_schema.get("properties", {})) for tool in await self.list_tools()}
        return self._arguments

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        known = await self.arguments()
        if name not in known:
            raise MCPError(code=INVALID_PARAMS, message=f"unknown tool {name!r}; the tools are {', '.join(sorted(known))}",
                           data={"tool": name})
        unknown = sorted(set(arguments) - set(known[name]))
        if unknown:
            return refused(UnknownArgument(name, unknown, known[name]))
        return await super().call_tool(name, arguments, context)

    async def run_stdio_async(self) -> None:
        async def run(read_stream: Any, write_stream: Any) -> None:
            await self._lowlevel_server.run(read_stream, write_stream, self._lowlevel_server.create_initialization_options())

        await mcp_stdio.serve(run)


def untitled(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON schema without the ``title`` keys pydantic generates (a property named ``title`` stays),
    and an optional argument (``X | None = None``) as plain ``X``: leaving it out says the same."""
    options = schema.get("anyOf")
    if (schema.get("default", ...) is None and isinstance(options, list) and len(options) == 2
            and {"type": "null"} in options):
        schema = {**next(o for o in options if o != {"type": "null"}),
                  **{key: value for key, value in schema.items() if key not in ("anyOf", "default")}}
    kept: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "properties" and isinstance(value, dict):
            kept[key] = {name: untitled(sub) if isinstance(sub, dict) else sub for name, sub in value.items()}
        elif isinstance(value, dict):
            kept[key] = untitled(value)
        elif isinstance(value, list):
            kept[key] = [untitled(item) if isinstance(item, dict) else item for item in value]
        else:
            kept[key] = value
    return kept


def tool_result(payload: dict[str, Any], text: str) -> CallToolResult:
    payload, text = fit(payload, text)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=payload)


def both_ways(*sides: tuple[str, list[Any], bool], notes: list[str] | None = None) -> CallToolResult:
    """Edges both ways from a symbol (callers and callees, bases and subclasses): each side is
    (its name, its edges, whether they go out from the symbol); ``notes`` say what the graph
    could not see (calls on receivers of unknown type)."""
    payload: dict[str, Any] = {name: [edge.to_json() for edge in edges] for name, edges, _outgoing in sides}
    text = "\n".join(f"{name}:\n{graph_render.edges_result(edges, outgoing=outgoing)[1]}" for name, edges, outgoing in sides)
    if notes:
        payload["notes"] = notes
        text += "\n" + "\n".join(f"note: {note}" for note in notes)
    return tool_result(payload, text)


def fit(payload: dict[str, Any], text: str) -> tuple[dict[str, Any], str]:
    """Cut lists first, then the diff and the text, until the result fits the budget."""
    omitted: dict[str, int] = {}
    if len(json.dumps(payload, default=str)) > RESULT_BUDGET:
        for key, value in list(payload.items()):
            if isinstance(value, list) and len(value) > LIST_CUT:
                omitted[key] = len(value) - LIST_CUT
                payload[key] = value[:LIST_CUT]
    for key in ("diff", "content"):
        value = payload.get(key)
        if isinstance(value, str) and len(value) > RESULT_BUDGET // 2:
            omitted[key] = len(value) - RESULT_BUDGET // 2
            payload[key] = value[: RESULT_BUDGET // 2]
    if len(text) > RESULT_BUDGET // 2:
        omitted["text"] = len(text) - RESULT_BUDGET // 2
        text = text[: RESULT_BUDGET // 2]
    if omitted:
        payload["omitted"] = omitted
        text += "\n… cut to fit: " + ", ".join(f"{key}: {count} left out" for key, count in omitted.items())
    return payload, text


def edit_result(outcome: EditOutcome, target: str = "", structured: bool = False) -> CallToolResult:
    """The outcome as text (head, diff of a dry run, files, notes); the structured content repeats
    none of it unless asked: what a script branches on (applied, would_refuse). The transaction
    to undo is in the text's head, and in the structured content with structured=true."""
    text, notes = outcome_text(outcome, target=target, apply_hint="pass apply=true to write", option_hint=option_hint,
                               finish_hint="call check_edit to finish the check")
    full = outcome.to_json()
    payload = full if structured else {key: full[key] for key in ("applied", "would_refuse")
                                       if full[key] is not None}
    verified = full["verified"]
    if not structured and isinstance(verified, dict):
        # What a script decides on (was it all checked, how sure, did it break anything); the
        # checker and the counts are in the text's note, and the scope, the files left for later
        # and the fixed errors come with structured=true.
        payload["verified"] = {key: verified[key] for key in VERIFIED_BRIEFLY}
    return tool_result(payload, "\n".join(filter(None, [text, notes])))


VERIFIED_BRIEFLY = ("complete", "confidence", "new_errors")
"""The part of an apply's ``verified`` every answer carries (engine.edits.verification.Verification.to_json)."""


def option_hint(option: str | None) -> str:
    return option_hints.MCP(option)


STRUCTURED = bool
"""Also the whole answer as structured data: explained once, in the server's instructions (most tools take it)."""


def view_result(view: tuple[dict[str, Any], str]) -> CallToolResult:
    payload, text = view
    return tool_result(payload, text)


def checked_kinds(kinds: list[str] | None) -> frozenset[str]:
    """Kind labels, checked: an unknown one is refused with the known ones rather than matching nothing."""
    labels = frozenset(kind.label for kind in SymbolKind)
    unknown = sorted(set(kinds or ()) - labels)
    if unknown:
        raise UsageError(f"unknown kind(s) {', '.join(unknown)}; kinds are {', '.join(sorted(labels))}")
    return frozenset(kinds or ())


def refused(error: GraftError) -> CallToolResult:
    """The refusal as text, and as data what a program branches on: its code and the option that
    would let it pass, plus any facts beyond the sentence (candidates, suggestions, positions)."""
    hint = option_hint(error.option)
    data = {key: value for key, value in error.to_json().items() if key != "message"}
    return CallToolResult(
        content=[TextContent(type="text", text=f"{error.code}: {error.message}{hint}")],
        structured_content={"error": data}, is_error=True,
    )


def edit_options(engine: Engine, allow_dirty: bool, check: str) -> EditOptions:
    return EditOptions(allow_dirty=allow_dirty or engine.settings.allow_dirty, check=CheckMode(check))


ALLOW_DIRTY = bool
"""Write over uncommitted changes: explained once, in the server's instructions (every edit tool takes it)."""
CHECK = Literal["none", "fast", "full"]
"""How much of the errors check after an apply to wait for: explained once, in the server's instructions."""


class GraftTools:
    """The tools, bound to one engine; one :class:`EngineClient` per MCP session."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.clients: dict[str, EngineClient] = {}
        # The SDK may run tool calls in worker threads at the same time; the engine (its graph,
        # its caches) is used by one call at a time.
        self.lock = threading.Lock()

    def client(self, ctx: Context | None) -> EngineClient:
        """The client of this connection: over HTTP each MCP session (its ``mcp-session-id``
        header) is one; stdio serves a single connection per process. An HTTP request without
        a session is refused: sharing one read ledger between such clients let one client's
        read pass another's edit (the soak benchmark's probes all leaked)."""
        headers = ctx.headers if ctx is not None else None
        key = headers.get("mcp-session-id", "") if headers is not None else ""
        if headers is not None and not key:
            raise UsageError("this MCP server keeps a read ledger per session: connect with the session handshake "
                             "(initialize), not a sessionless request")
        if key not in self.clients:
            self.clients[key] = EngineClient(self.engine, own_undo_only=True)
        return self.clients[key]

    def call(self, work: Callable[[], CallToolResult]) -> CallToolResult:
        with self.lock:
            try:
                # An agent edits files with its own tools too: the graph and the servers see those
                # edits before the next answer (a watcher's few events, or one stat sweep).
                self.engine.refresh_from_disk()
                return work()
            except GraftError as error:
                return refused(error)

    def show(self, fetch: Callable[[], Any], present: Callable[[Any], CallToolResult]) -> CallToolResult:
        """One facade call, then its rendering; a refusal becomes a tool error."""
        return self.call(lambda: present(fetch()))


def navigation_result(engine: Engine, result: NavigationResult, max_chars: int, structured: bool) -> CallToolResult:
    return view_result(located_view(result, located(engine.workspace, engine.graph(), result.locations), max_chars, structured))


def triple(result: tuple[dict[str, Any], str, str]) -> CallToolResult:
    payload, text, notes = result
    return tool_result(dict(payload), "\n".join(filter(None, [text, notes])))
