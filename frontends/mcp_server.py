"""``graft mcp``: the engine as an MCP server for coding agents (official ``mcp`` SDK, stdio or
streamable HTTP on 127.0.0.1 behind a bearer token).

Every tool parses its arguments, makes one facade call (:class:`engine.client.EngineClient`
or the engine's queries) and renders the value: structured content with a schema, plus a
short readable text. Edit tools are dry runs unless ``apply`` is true, and return the diff.
Long results are cut in stages (list items first, then text) and say what was left out.
Refusals come back as tool errors carrying the engine's code and message; so does an argument
the tool does not take (the SDK would drop it and run without it). An unknown tool is a
JSON-RPC error (-32602), and so is every malformed message on stdio (:mod:`frontends.mcp_stdio`).
Every tool is annotated (read-only, destructive, idempotent; never the open world): the
refactorings from the registry's class variables, the others where they are defined.
"""

from __future__ import annotations

import argparse
import inspect
import json
import secrets
import sys
import threading
from pathlib import Path
from typing import Annotated, Any, Callable, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, Icon, TextContent, ToolAnnotations
from mcp_types import Tool as MCPTool
from pydantic import Field

from engine.api_surface import hover as hover_answer
from engine.api_surface import (
    code_action_edit, list_code_actions,
    CheckMode, EditOptions, EditOutcome, EditRequest, Engine, EngineClient, FileView, find_root,
    GraftError, list_dir as files_list_dir, located, NavigationResult, open_engine, OPERATIONS, parse_address,
    plan_steps, RefactorOperation, run_batch, search_symbols, SourcePreference, SymbolKind, UsageError,
)
from frontends import mcp_stdio
from frontends.mcp_models import Output, model_of
from frontends.mcp_views import DEFAULT_MAX_CHARS, bounded, located_view, outline_view, overview_view, symbols_view
from frontends.render import graph as graph_render, option_hints, symbols as render
from frontends.render.edits import last_check, outcome_text

#: Characters of structured content a result may carry before it is cut.
RESULT_BUDGET = 60_000
_LIST_CUT = 200


EditOutput = model_of(EditOutcome, "EditOutput", json_names={"verification": "verified"})
FileOutput = model_of(FileView, "FileOutput")


class Listing(Output):
    items: list[Any]
    total: int


Result = Annotated[CallToolResult, Output]


def hints(*, read_only: bool, idempotent: bool, destructive: bool = False) -> ToolAnnotations:
    """What an agent decides approvals on. No tool reaches beyond the workspace (openWorldHint)."""
    return ToolAnnotations(read_only_hint=read_only, destructive_hint=destructive, idempotent_hint=idempotent,
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
        return [tool.model_copy(update={"input_schema": _untitled(tool.input_schema),
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
            return _refused(UnknownArgument(name, unknown, known[name]))
        return await super().call_tool(name, arguments, context)

    async def run_stdio_async(self) -> None:
        async def run(read_stream: Any, write_stream: Any) -> None:
            await self._lowlevel_server.run(read_stream, write_stream, self._lowlevel_server.create_initialization_options())

        await mcp_stdio.serve(run)


def _untitled(schema: dict[str, Any]) -> dict[str, Any]:
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
            kept[key] = {name: _untitled(sub) if isinstance(sub, dict) else sub for name, sub in value.items()}
        elif isinstance(value, dict):
            kept[key] = _untitled(value)
        elif isinstance(value, list):
            kept[key] = [_untitled(item) if isinstance(item, dict) else item for item in value]
        else:
            kept[key] = value
    return kept


def _result(payload: dict[str, Any], text: str) -> CallToolResult:
    payload, text = _fit(payload, text)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=payload)


def _both_ways(*sides: tuple[str, list[Any], bool], notes: list[str] | None = None) -> CallToolResult:
    """Edges both ways from a symbol (callers and callees, bases and subclasses): each side is
    (its name, its edges, whether they go out from the symbol); ``notes`` say what the graph
    could not see (calls on receivers of unknown type)."""
    payload: dict[str, Any] = {name: [edge.to_json() for edge in edges] for name, edges, _outgoing in sides}
    text = "\n".join(f"{name}:\n{graph_render.edges_result(edges, outgoing=outgoing)[1]}" for name, edges, outgoing in sides)
    if notes:
        payload["notes"] = notes
        text += "\n" + "\n".join(f"note: {note}" for note in notes)
    return _result(payload, text)


def _fit(payload: dict[str, Any], text: str) -> tuple[dict[str, Any], str]:
    """Cut lists first, then the diff and the text, until the result fits the budget."""
    omitted: dict[str, int] = {}
    if len(json.dumps(payload, default=str)) > RESULT_BUDGET:
        for key, value in list(payload.items()):
            if isinstance(value, list) and len(value) > _LIST_CUT:
                omitted[key] = len(value) - _LIST_CUT
                payload[key] = value[:_LIST_CUT]
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


def _edit(outcome: EditOutcome, target: str = "", structured: bool = False) -> CallToolResult:
    """The outcome as text (head, diff of a dry run, files, notes); the structured content repeats
    none of it unless asked: what a script branches on (applied, would_refuse). The transaction
    to undo is in the text's head, and in the structured content with structured=true."""
    text, notes = outcome_text(outcome, target=target, apply_hint="pass apply=true to write", option_hint=_option_hint,
                               finish_hint="call check_edit to finish the check")
    full = outcome.to_json()
    payload = full if structured else {key: full[key] for key in ("applied", "would_refuse")
                                       if full[key] is not None}
    verified = full["verified"]
    if not structured and isinstance(verified, dict):
        # What a script decides on (was it all checked, did it break anything); the scope, the
        # files left for later and the fixed errors come with structured=true.
        payload["verified"] = {key: verified[key] for key in _VERIFIED_BRIEFLY}
    return _result(payload, "\n".join(filter(None, [text, notes])))


_VERIFIED_BRIEFLY = ("complete", "confidence", "by", "files_checked", "files_in_scope", "new_errors")
"""The part of an apply's ``verified`` every answer carries (engine.edits.verification.Verification.to_json)."""


def _operation_tool(operation: type[RefactorOperation], tools: GraftTools) -> Callable[..., CallToolResult]:
    """One MCP tool per registered operation: its fields are the tool's parameters (with their
    help as descriptions), plus ``apply``; the engine refuses unknown or missing fields by name."""

    def run(**arguments: Any) -> CallToolResult:
        ctx = arguments.pop("ctx", None)
        apply = bool(arguments.pop("apply", False))
        allow_dirty = bool(arguments.pop("allow_dirty", False))
        structured = bool(arguments.pop("structured", False))
        check = arguments.pop("check", CheckMode.FAST.value)

        def work() -> CallToolResult:
            built = operation.build(arguments)
            options = _options(tools.engine, allow_dirty, check)
            return _edit(tools.client(ctx).run_operation(built, apply=apply, options=options), built.target(), structured)

        return tools.call(work)

    keyword = inspect.Parameter.KEYWORD_ONLY
    parameters = [
        inspect.Parameter(info.name, keyword, default=inspect.Parameter.empty if info.required else info.default,
                          annotation=Annotated[info.python_type, Field(description=info.help)])
        for info in operation.fields()
    ]
    parameters += [
        inspect.Parameter("apply", keyword, default=False,
                          annotation=bool),  # dry run until apply=true: the instructions say it once
        inspect.Parameter("allow_dirty", keyword, default=False, annotation=ALLOW_DIRTY),
        inspect.Parameter("check", keyword, default=CheckMode.FAST.value, annotation=CHECK),
        inspect.Parameter("structured", keyword, default=False, annotation=STRUCTURED),
        inspect.Parameter("ctx", keyword, default=None, annotation=Context | None),
    ]
    returns = Annotated[CallToolResult, EditOutput]
    run.__signature__ = inspect.Signature(parameters, return_annotation=returns)  # type: ignore[attr-defined]  # the SDK reads it
    run.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": returns}
    run.__name__ = operation.mcp_tool
    return run


def _option_hint(option: str | None) -> str:
    return option_hints.MCP(option)


STRUCTURED = bool
"""Also the whole answer as structured data: explained once, in the server's instructions (most tools take it)."""


def _view(view: tuple[dict[str, Any], str]) -> CallToolResult:
    payload, text = view
    return _result(payload, text)


def _kinds(kinds: list[str] | None) -> frozenset[str]:
    """Kind labels, checked: an unknown one is refused with the known ones rather than matching nothing."""
    labels = frozenset(kind.label for kind in SymbolKind)
    unknown = sorted(set(kinds or ()) - labels)
    if unknown:
        raise UsageError(f"unknown kind(s) {', '.join(unknown)}; kinds are {', '.join(sorted(labels))}")
    return frozenset(kinds or ())


def _refused(error: GraftError) -> CallToolResult:
    """The refusal as text, and as data what a program branches on: its code and the option that
    would let it pass, plus any facts beyond the sentence (candidates, suggestions, positions)."""
    hint = _option_hint(error.option)
    data = {key: value for key, value in error.to_json().items() if key != "message"}
    return CallToolResult(
        content=[TextContent(type="text", text=f"{error.code}: {error.message}{hint}")],
        structured_content={"error": data}, is_error=True,
    )


def _options(engine: Engine, allow_dirty: bool, check: str) -> EditOptions:
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
                return _refused(error)

    def show(self, fetch: Callable[[], Any], present: Callable[[Any], CallToolResult]) -> CallToolResult:
        """One facade call, then its rendering; a refusal becomes a tool error."""
        return self.call(lambda: present(fetch()))


def build_server(engine: Engine, *, output_schemas: bool = False) -> GraftMCPServer:
    """``output_schemas``: list each tool's output schema (for clients that use structured output)."""
    server = GraftMCPServer(
        output_schemas=output_schemas,
        name="codegraft",
        instructions=(
            "Semantic code tools. Address symbols by name path (pkg/models.py:Order/total, overloads as name[1]) "
            "or FILE:LINE:COL. Edit tools are dry runs returning a diff until called with apply=true. Read a file "
            "before writing it: writes over unseen or changed content are refused. Edit tools take allow_dirty (write "
            "over uncommitted changes that are not this engine's own writes) and check: how much of the errors check "
            "after an apply to wait for: fast (default: within the diagnostics budget; check_edit finishes what it "
            "leaves), full (the written files and all their importers, however long), none (not verified, never high "
            "confidence). structured=true adds the whole answer as structured data (the rows of a listing, an edit's "
            "transaction, files and diff); by default the text holds them and the structured content says what was "
            "left out. undo_edit and redo_edit work as a stack of this session's edits."
        ),
    )
    tools = GraftTools(engine)

    def _navigation(result: NavigationResult, max_chars: int, structured: bool) -> CallToolResult:
        return _view(located_view(result, located(engine.workspace, engine.graph(), result.locations), max_chars, structured))

    def triple(result: tuple[dict[str, Any], str, str]) -> CallToolResult:
        payload, text, notes = result
        return _result(dict(payload), "\n".join(filter(None, [text, notes])))

    # -- reading code -------------------------------------------------------------------

    @server.tool(annotations=READS, description=("To decide what to read or call in a file: its symbols with signatures, one-line docstrings "
                              "and lines, within max_chars (depth=1: top level only)."))
    def file_outline(path: str, depth: int | None = None, kinds: list[str] | None = None, max_chars: int = DEFAULT_MAX_CHARS,
                     structured: STRUCTURED = False) -> Result:
        return tools.show(lambda: engine.outline(path),
                          lambda listing: _view(outline_view(listing, depth, _kinds(kinds), max_chars, structured,
                                                             engine.workspace.read(listing.file).text)))

    @server.tool(annotations=READS,
                 description=("To find a symbol by name anywhere: exact name path ('Order/total'), else prefix, else "
                              "substring with substring_matching."))
    def workspace_symbols(query: str, substring_matching: bool = False, kinds: list[str] | None = None, max_matches: int = 50,
                          structured: STRUCTURED = False) -> Result:
        return tools.call(lambda: _view(symbols_view(search_symbols(
            engine.graph(), query, substring=substring_matching, kinds=_kinds(kinds), max_matches=max_matches), structured)))

    @server.tool(annotations=READS, description="A symbol's source, decorators to end, by name path.")
    def read_symbol(address: str, structured: STRUCTURED = False) -> Result:
        def present(found: Any) -> CallToolResult:
            payload = render.read_json(found)
            if not structured:
                payload = {key: payload[key] for key in ("start_line", "end_line")}  # the text shows the rest
            return _result(payload, render.read_text(found))
        return tools.show(lambda: engine.read(parse_address(address)), present)

    @server.tool(annotations=READS,
                 description="Before changing a symbol: every reference to it, one line each (where, enclosing symbol, code).")
    def find_references(address: str, max_chars: int = DEFAULT_MAX_CHARS, structured: STRUCTURED = False) -> Result:
        return tools.call(lambda: _navigation(engine.references(address), max_chars, structured))

    @server.tool(annotations=READS, description="Where the name at FILE:LINE:COL (1-based) is defined, as a standalone line.")
    def get_definition(position: str, max_chars: int = DEFAULT_MAX_CHARS, structured: STRUCTURED = False) -> Result:
        return tools.call(lambda: _navigation(engine.definition(position), max_chars, structured))

    @server.tool(annotations=READS, description="What a symbol is: its source, what calls it, what it calls, its base and derived types.")
    def explain_symbol(address: str) -> Result:
        return tools.show(lambda: engine.explain(parse_address(address)), lambda found: _result(render.explain_json(found), render.explain_text(found)))

    @server.tool(annotations=READS, description="Who calls a symbol and what it calls (graph edges, each with source and confidence).")
    def call_hierarchy(address: str) -> Result:
        def work() -> CallToolResult:
            served, target = engine.served_graph(), engine.graph_target(address)
            callers, callees = served.callers(target), served.callees(target)
            return _both_ways(("callers", callers.rows, False), ("callees", callees.rows, True),
                              notes=list(dict.fromkeys([*callers.notes, *callees.notes])))
        return tools.call(work)

    @server.tool(annotations=READS,
                 description="The type, signature and docstring of the name at FILE:LINE:COL (1-based) or of a name path.")
    def hover(target: str) -> Result:
        def present(found: Any) -> CallToolResult:
            where = f" (about {found.about})" if found.about else ""
            notes = "\n".join(f"note: {note}" for note in found.notes)
            text = "\n".join(filter(None, [f"{target}{where} [{found.source.value} · {found.confidence.value}]", found.text, notes]))
            payload = found.to_json()
            del payload["text"], payload["signature"], payload["doc"]  # the text shows them
            return _result(payload, text)
        return tools.show(lambda: hover_answer(engine, target), present)

    @server.tool(annotations=READS,
                 description="The server's quick fixes and source actions for lines of a file, with ids for apply_code_action.")
    def code_actions(path: str, start_line: int, end_line: int | None = None) -> Result:
        def present(actions: Any) -> CallToolResult:
            rows = [f"{a.id}  {a.kind}  {a.title}" + ("" if a.applicable else "  (not applicable: " + "; ".join(a.notes) + ")")
                    + (f"  fixes {'; '.join(a.fixes)}" if a.fixes else "") for a in actions]
            return _result({"total": len(actions)}, "\n".join(rows) or "(no actions offered)")
        return tools.show(lambda: list_code_actions(engine, path, start_line, end_line or start_line), present)

    @server.tool(annotations=EDITS_TEXT,
                 description="Apply an action code_actions listed, by its id (dry run by default).")
    def apply_code_action(path: str, action_id: str, apply: bool = False, allow_dirty: ALLOW_DIRTY = False, check: CHECK = "fast",
                          ctx: Context | None = None) -> Annotated[CallToolResult, EditOutput]:
        return tools.call(lambda: _edit(tools.client(ctx).run_edit(
            "code_action", code_action_edit(engine, path, action_id), apply=apply,
            options=_options(engine, allow_dirty, check))))

    @server.tool(annotations=READS,
                 description="The overrides of an abstract method or protocol member, or a class's subclasses.")
    def implementations(address: str) -> Result:
        def work() -> CallToolResult:
            found = engine.served_graph().implementations(engine.graph_target(address))
            return triple(graph_render.with_notes(*found.rendered(lambda nodes: graph_render.nodes_result("implementations", nodes))))
        return tools.call(work)

    @server.tool(annotations=READS, description="A type's bases and subclasses.")
    def type_hierarchy(address: str) -> Result:
        def work() -> CallToolResult:
            queries, target = engine.graph(), engine.graph_target(address)
            return _both_ways(("supertypes", queries.supertypes(target), True), ("subtypes", queries.subtypes(target), False))
        return tools.call(work)

    @server.tool(annotations=READS, description=(
        "After an apply whose check was cut short: finish it and say what it covered and found."))
    def check_edit() -> Result:
        return tools.call(lambda: triple(last_check(engine.edits().check_last())))

    @server.tool(annotations=READS, description=("A file's errors from its language server; since_last_apply=true: the errors the last apply "
                              "introduced."))
    def diagnostics(path: str = "", since_last_apply: bool = False) -> Result:
        if since_last_apply:
            return tools.call(lambda: triple(render.last_apply_check(engine.edits().finish_diagnostics())))
        return tools.show(lambda: engine.diagnostics(path),
                          lambda found: _result(render.diagnostics_json(found), render.diagnostics_text(found)))

    # -- semantic edits: one tool per registered operation -------------------------------

    for operation in OPERATIONS.values():
        server.add_tool(_operation_tool(operation, tools), name=operation.mcp_tool, description=operation.summary,
                        annotations=operation_hints(operation))

    @server.tool(annotations=BATCH,
                 description=("Several refactorings as one transaction (one undo): steps = [{op: rename, address, new_name}, "
                              "{op: move, ...}] as in `graft batch`; each=true commits step by step."))
    def batch_apply(steps: list[dict[str, Any]], apply: bool = False, each: bool = False, allow_dirty: ALLOW_DIRTY = False,
                    check: CHECK = "fast", structured: STRUCTURED = False,
                    ctx: Context | None = None) -> Annotated[CallToolResult, EditOutput]:
        def work() -> CallToolResult:
            client = tools.client(ctx)
            outcome = run_batch(engine, plan_steps(steps, "the batch"), apply=apply, each=each,
                                options=_options(engine, allow_dirty, check))
            for transaction in dict.fromkeys(s.transaction for s in outcome.steps if s.transaction is not None):
                client.applied.append(transaction)  # the session may undo its own batch
                client.undone.clear()
            return _edit(outcome, structured=structured)
        return tools.call(work)

    # -- files --------------------------------------------------------------------------

    @server.tool(annotations=READS, description="A file with a sha256/mtime header and a line gutter; optionally its symbol outline.")
    def read_file(path: str, start_line: int = 1, end_line: int | None = None, outline: bool = False,
                  ctx: Context | None = None) -> Annotated[CallToolResult, FileOutput]:
        def work() -> CallToolResult:
            view = tools.client(ctx).read_file(path, start=start_line, end=end_line, outline=outline)
            return _result(vars(view) | {}, view.render())
        return tools.call(work)

    @server.tool(annotations=READS, description="Several files at once, each as read_file returns it.")
    def read_multiple_files(paths: list[str], ctx: Context | None = None) -> Result:
        def work() -> CallToolResult:
            views, errors = [], {}
            for path in paths:
                try:
                    views.append(tools.client(ctx).read_file(path))
                except GraftError as error:
                    errors[path] = error.message
            text = "\n\n".join([v.render() for v in views] + [f"{p}: {m}" for p, m in errors.items()])
            return _result({"files": [vars(v) for v in views], "errors": errors}, text)
        return tools.call(work)

    @server.tool(annotations=WRITES_FILE,
                 description="Create or overwrite a file. Refused if this client has not read it, or it changed since.")
    def write_file(path: str, content: str, overwrite_changed: bool = False, apply: bool = False, allow_dirty: ALLOW_DIRTY = False,
                   check: CHECK = "fast", structured: STRUCTURED = False,
                   ctx: Context | None = None) -> Annotated[CallToolResult, EditOutput]:
        return tools.call(lambda: _edit(tools.client(ctx).write_file(path, content, overwrite_changed=overwrite_changed, apply=apply,
                                                                     options=_options(engine, allow_dirty, check)), structured=structured))

    @server.tool(annotations=EDITS_TEXT, description=(
        "Edit part of a file you read: old_string (matching once) → new_string, or between start_anchor/end_anchor "
        "lines, or start_line/end_line."
    ))
    def edit_file(path: str, new_string: str, old_string: str | None = None, start_anchor: str | None = None,
                  end_anchor: str | None = None, start_line: int | None = None, end_line: int | None = None,
                  overwrite_changed: bool = False, apply: bool = False, allow_dirty: ALLOW_DIRTY = False, check: CHECK = "fast",
                  structured: STRUCTURED = False, ctx: Context | None = None) -> Annotated[CallToolResult, EditOutput]:
        request = EditRequest(path, new_string, old_string, start_anchor, end_anchor, start_line, end_line, overwrite_changed)
        return tools.call(lambda: _edit(tools.client(ctx).edit_file(request, apply=apply, options=_options(engine, allow_dirty, check)),
                                        structured=structured))

    @server.tool(annotations=EDITS_TEXT, description="Apply an LSP WorkspaceEdit (JSON object) atomically: all files or none.")
    def transaction_apply(edit: dict[str, Any], apply: bool = False, allow_dirty: ALLOW_DIRTY = False, check: CHECK = "fast",
                          structured: STRUCTURED = False, ctx: Context | None = None) -> Annotated[CallToolResult, EditOutput]:
        from engine.api_surface import from_lsp

        return tools.call(lambda: _edit(tools.client(ctx).run_edit("transaction_apply", from_lsp(edit, engine.workspace), apply=apply,
                                                                   options=_options(engine, allow_dirty, check)), structured=structured))

    @server.tool(annotations=UNDOES, description=("Undo this session's latest edit not yet undone (or the transaction named); "
                                                  "called again, the one before."))
    def undo_edit(transaction: str | None = None, structured: STRUCTURED = False,
                  ctx: Context | None = None) -> Annotated[CallToolResult, EditOutput]:
        return tools.call(lambda: _edit(tools.client(ctx).undo(transaction), structured=structured))

    @server.tool(annotations=UNDOES, description=("Redo: re-apply the edit this session undid last (or the transaction named); "
                                                  "refused if its files changed since the undo."))
    def redo_edit(transaction: str | None = None, structured: STRUCTURED = False,
                  ctx: Context | None = None) -> Annotated[CallToolResult, EditOutput]:
        return tools.call(lambda: _edit(tools.client(ctx).redo(transaction), structured=structured))

    @server.tool(annotations=READS, description="A folder's entries (type, size, name), max_depth levels deep; ignored and hidden files left out.")
    def list_dir(path: str = ".", recursive: bool = False, max_depth: int = 1, show_hidden: bool = False,
                 max_chars: int = DEFAULT_MAX_CHARS, ctx: Context | None = None) -> Result:
        def work() -> CallToolResult:
            entries = files_list_dir(engine.workspace, path, max_depth=1_000 if recursive else max_depth, show_hidden=show_hidden)
            rows = [e.render() for e in entries] or ["(empty)"]
            text, kept = bounded([], rows, lambda left: f"… {left} more entries left out: list a subfolder, lower max_depth, "
                                                        "or raise max_chars", max_chars)
            left = len(entries) - min(kept, len(entries))
            payload: dict[str, Any] = {"total": len(entries)}
            if left:
                payload["omitted"] = {"entries": left}
            return _result(payload, text)
        return tools.call(work)

    @server.tool(annotations=READS, description="Workspace files matching a glob (on the path or the file name), ignored files left out.")
    def find_files(pattern: str, ctx: Context | None = None) -> Annotated[CallToolResult, Listing]:
        return tools.show(lambda: tools.client(ctx).find_files(pattern),
                          lambda found: _result({"items": found, "total": len(found)}, "\n".join(found) or "(none)"))

    @server.tool(annotations=READS, description="Text or regex search; every hit says which symbol encloses it.")
    def search_in_files(query: str, regex: bool = False, glob: str = "*", ctx: Context | None = None) -> Annotated[CallToolResult, Listing]:
        def work() -> CallToolResult:
            hits, total = tools.client(ctx).search(query, regex=regex, glob=glob)
            rows = [f"{h.path}:{h.line}:{h.column}  [{h.symbol or 'module'}]  {h.text}" for h in hits]
            payload = {"items": [vars(h) for h in hits], "total": total}
            if total > len(hits):
                payload["omitted"] = {"items": total - len(hits)}
            return _result(payload, "\n".join(rows) or "(no hits)")
        return tools.call(work)

    @server.tool(annotations=EDITS_TEXT,
                 description="Replace text (or a regex, with \\1 groups) in every matching file; dry run by default.")
    def find_replace(query: str, replacement: str, regex: bool = False, glob: str = "*", apply: bool = False,
                     allow_dirty: ALLOW_DIRTY = False, check: CHECK = "fast",
                     ctx: Context | None = None) -> Annotated[CallToolResult, EditOutput]:
        return tools.call(lambda: _edit(tools.client(ctx).find_replace(query, replacement, regex=regex, glob=glob, apply=apply,
                                                                       options=_options(engine, allow_dirty, check))))

    # -- project ------------------------------------------------------------------------

    @server.tool(annotations=READS,
                 description=("To get your bearings: the project's files and their symbols under a folder, package code "
                              "first, then tests, then docs and examples, within max_chars."))
    def project_overview(under: str = ".", depth: int = 1, kinds: list[str] | None = None, max_chars: int = DEFAULT_MAX_CHARS,
                         structured: STRUCTURED = False) -> Result:
        return tools.call(lambda: _view(overview_view(engine.overview(under, depth), _kinds(kinds), max_chars, structured)))

    @server.tool(annotations=READS, description="What depends on a symbol or file, transitively (callers, importers, subclasses).")
    def impact(address: str, depth: int = 3) -> Result:
        def work() -> CallToolResult:
            found = engine.served_graph().impact(engine.graph_target(address), depth)
            return triple(graph_render.with_notes(*found.rendered(graph_render.reached_result)))
        return tools.call(work)

    @server.tool(annotations=READS, description="The tests that reach any of these symbols or files.")
    def affected_tests(addresses: list[str]) -> Result:
        return tools.call(lambda: triple(graph_render.nodes_result(
            "tests", engine.graph().affected_tests([engine.graph_target(a) for a in addresses]))))

    @server.tool(annotations=READS, description="The language servers: state, pid, memory, and why one is not ready.")
    def server_status() -> Result:
        def work() -> CallToolResult:
            statuses = engine.services.status() if engine.services is not None else []
            return _result(render.servers_json(statuses), render.servers_text(statuses) or "(no language-server support installed)")
        return tools.call(work)

    @server.tool(annotations=READS, description=("When a language's answers look wrong or missing: per language, its server, version and "
                                                 "state (with the install command), and what each operation does there."))
    def doctor(every_language: bool = False) -> Result:
        def work() -> CallToolResult:
            from engine.api_surface import diagnose  # noqa: PLC0415  (this tool only)
            from frontends.render.doctor import doctor_json, doctor_text  # noqa: PLC0415

            report = diagnose(engine.workspace, engine.services, every_family=every_language)
            return _result(doctor_json(report), doctor_text(report))
        return tools.call(work)

    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="graft mcp", description="Serve the engine to MCP clients (stdio by default).")
    parser.add_argument("--root", help="the workspace (default: found from the current folder)")
    parser.add_argument("--source", choices=[s.value for s in SourcePreference], default="auto")
    parser.add_argument("--http", action="store_true", help="streamable HTTP on 127.0.0.1 with a bearer token printed at start")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--structured-output", action="store_true",
                        help="list every tool's output schema, for clients that use structured output (the structured "
                             "content is sent either way)")
    args = parser.parse_args(argv)
    root = Path(args.root).resolve() if args.root else find_root(Path.cwd())
    engine = open_engine(root, SourcePreference(args.source))
    for report in engine.recovered:
        print(f"graft mcp: {report.message()}", file=sys.stderr, flush=True)
    try:
        server = build_server(engine, output_schemas=args.structured_output)
        if not args.http:
            server.run("stdio")
            return 0
        return _serve_http(server, args.port)
    finally:
        engine.close()


def _serve_http(server: MCPServer, port: int) -> int:
    import uvicorn
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
    from starlette.middleware.base import BaseHTTPMiddleware
    from starlette.responses import JSONResponse

    token = secrets.token_urlsafe(32)
    app = server.streamable_http_app()

    async def require_token(request: Any, call_next: Any) -> Any:
        if request.headers.get("authorization") != f"Bearer {token}":
            return JSONResponse({"error": "missing or wrong bearer token"}, status_code=401)
        return await call_next(request)

    async def require_sessions(request: Any, call_next: Any) -> Any:
        # The 2026-07-28 protocol has no sessions, and the read ledger is per session: such a
        # request is refused with a JSON-RPC error, and a client in auto mode falls back to the
        # handshake (sessions).
        version = request.headers.get("mcp-protocol-version")
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            return JSONResponse({"jsonrpc": "2.0", "id": None, "error": {
                "code": -32600, "message": f"protocol {version} has no sessions; codegraft keeps a read ledger per "
                                           "session: connect with the initialize handshake"}}, status_code=400)
        return await call_next(request)

    app.add_middleware(BaseHTTPMiddleware, dispatch=require_sessions)
    app.add_middleware(BaseHTTPMiddleware, dispatch=require_token)
    print(f"codegraft MCP on http://127.0.0.1:{port}/mcp  (Authorization: Bearer {token})", file=sys.stderr, flush=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
    return 0
