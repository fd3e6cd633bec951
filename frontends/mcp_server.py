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
import secrets
import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer

from engine.api_surface import Engine, SourcePreference, find_root, open_engine
from frontends.mcp_core import GraftMCPServer, GraftTools
from frontends.mcp_core import fit as _fit  # noqa: F401  (tests cut results with it directly)
from frontends.mcp_edit_tools import register_refactorings
from frontends.mcp_file_tools import register_file_reads, register_file_writes, register_find_replace, register_listing, register_undo
from frontends.mcp_warm_up import warm_up_in_background
from frontends.mcp_reading_tools import register_graph_and_checks, register_project, register_server_answers, register_symbol_reads



def build_server(engine: Engine, *, output_schemas: bool = False, warm_up: bool = False) -> GraftMCPServer:
    """``output_schemas``: list each tool's output schema (for clients that use structured output);
    ``warm_up``: start the main languages' servers now, in the background (frontends.mcp_warm_up)."""
    server = GraftMCPServer(
        output_schemas=output_schemas,
        name="codegraft",
        # The SDK sets the root logger to its level: at INFO, pygls logged every message to a
        # language server (a file's whole text on each open and change) to stderr.
        log_level="WARNING",
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
    if warm_up:
        warm_up_in_background(engine, tools.lock)

    register_symbol_reads(server, tools)
    register_server_answers(server, tools)
    register_graph_and_checks(server, tools)
    register_refactorings(server, tools)
    register_file_reads(server, tools)
    register_file_writes(server, tools)
    register_undo(server, tools)
    register_listing(server, tools)
    register_find_replace(server, tools)
    register_project(server, tools)
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
    engine.baseline_fill.enabled = True  # an agent's dry run is usually followed by its apply
    for report in engine.recovered:
        print(f"graft mcp: {report.message()}", file=sys.stderr, flush=True)
    try:
        server = build_server(engine, output_schemas=args.structured_output, warm_up=True)
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
