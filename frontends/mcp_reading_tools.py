"""The MCP tools that read: symbols, the servers' answers, the graph and the project (each group
registered by one function, in the listing's order)."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult

from engine.api_surface import code_action_edit, hover as hover_answer, list_code_actions, parse_address, search_symbols
from frontends.mcp_outline import outline_view
from frontends.mcp_views import DEFAULT_MAX_CHARS, overview_view, symbols_view
from frontends.render import graph as graph_render, symbols as render
from frontends.render.edits import last_check
from frontends.mcp_core import (
    ALLOW_DIRTY, both_ways, CHECK, checked_kinds, edit_options, edit_result, EditOutput, EDITS_TEXT, GraftMCPServer,
    GraftTools, navigation_result, READS, Result, STRUCTURED, tool_result, triple, view_result,
)


def register_symbol_reads(server: GraftMCPServer, tools: GraftTools) -> None:
    """Outlines, symbol search, a symbol's source, references, definitions, explanations."""
    engine = tools.engine

    @server.tool(annotations=READS, description=("To decide what to read or call in a file: its top level with lines, signatures and "
                              "docstrings' first sentences as max_chars (1200) allows, members by name; depth=2 lists members too."))
    def file_outline(path: str, depth: int | None = None, kinds: list[str] | None = None, max_chars: int | None = None,
                     structured: STRUCTURED = False) -> Result:
        return tools.show(lambda: engine.outline(path),
                          lambda listing: view_result(outline_view(listing, depth, checked_kinds(kinds), max_chars, structured,
                                                             engine.workspace.read(listing.file).text)))

    @server.tool(annotations=READS,
                 description=("To find a symbol by name anywhere: exact name path ('Order/total'), else prefix, else "
                              "substring with substring_matching."))
    def workspace_symbols(query: str, substring_matching: bool = False, kinds: list[str] | None = None, max_matches: int = 50,
                          structured: STRUCTURED = False) -> Result:
        return tools.call(lambda: view_result(symbols_view(search_symbols(
            engine.graph(), query, substring=substring_matching, kinds=checked_kinds(kinds), max_matches=max_matches), structured)))

    @server.tool(annotations=READS, description="A symbol's source, decorators to end, by name path.")
    def read_symbol(address: str, structured: STRUCTURED = False) -> Result:
        def present(found: Any) -> CallToolResult:
            payload = render.read_json(found)
            if not structured:
                payload = {key: payload[key] for key in ("start_line", "end_line")}  # the text shows the rest
            return tool_result(payload, render.read_text(found, stamped=False))
        return tools.show(lambda: engine.read(parse_address(address)), present)

    @server.tool(annotations=READS,
                 description="Before changing a symbol: every reference to it, one line each (where, enclosing symbol, code).")
    def find_references(address: str, max_chars: int = DEFAULT_MAX_CHARS, structured: STRUCTURED = False) -> Result:
        return tools.call(lambda: navigation_result(engine, engine.references(address), max_chars, structured))

    @server.tool(annotations=READS, description="Where the name at FILE:LINE:COL (1-based) is defined, as a standalone line.")
    def get_definition(position: str, max_chars: int = DEFAULT_MAX_CHARS, structured: STRUCTURED = False) -> Result:
        return tools.call(lambda: navigation_result(engine, engine.definition(position), max_chars, structured))

    @server.tool(annotations=READS, description="What a symbol is: its source, what calls it, what it calls, its base and derived types.")
    def explain_symbol(address: str) -> Result:
        return tools.show(lambda: engine.explain(parse_address(address)), lambda found: tool_result(render.explain_json(found), render.explain_text(found)))


def register_server_answers(server: GraftMCPServer, tools: GraftTools) -> None:
    """Call hierarchy, hover, and the server's code actions (listed and applied)."""
    engine = tools.engine

    @server.tool(annotations=READS, description="Who calls a symbol and what it calls (graph edges, each with source and confidence).")
    def call_hierarchy(address: str) -> Result:
        def work() -> CallToolResult:
            served, target = engine.served_graph(), engine.graph_target(address)
            callers, callees = served.callers(target), served.callees(target)
            return both_ways(("callers", callers.rows, False), ("callees", callees.rows, True),
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
            return tool_result(payload, text)
        return tools.show(lambda: hover_answer(engine, target), present)

    @server.tool(annotations=READS,
                 description="The server's quick fixes and source actions for lines of a file, with ids for apply_code_action.")
    def code_actions(path: str, start_line: int, end_line: int | None = None) -> Result:
        def present(actions: Any) -> CallToolResult:
            rows = [f"{a.id}  {a.kind}  {a.title}" + ("" if a.applicable else "  (not applicable: " + "; ".join(a.notes) + ")")
                    + (f"  fixes {'; '.join(a.fixes)}" if a.fixes else "") for a in actions]
            return tool_result({"total": len(actions)}, "\n".join(rows) or "(no actions offered)")
        return tools.show(lambda: list_code_actions(engine, path, start_line, end_line or start_line), present)

    @server.tool(annotations=EDITS_TEXT,
                 description="Apply an action code_actions listed, by its id (dry run by default).")
    def apply_code_action(path: str, action_id: str, apply: bool = False, allow_dirty: ALLOW_DIRTY = False, check: CHECK = "fast",
                          ctx: Context | None = None) -> Annotated[CallToolResult, EditOutput]:
        return tools.call(lambda: edit_result(tools.client(ctx).run_edit(
            "code_action", code_action_edit(engine, path, action_id), apply=apply,
            options=edit_options(engine, allow_dirty, check))))


def register_graph_and_checks(server: GraftMCPServer, tools: GraftTools) -> None:
    """Implementations, type hierarchy, the check of the last edit, diagnostics."""
    engine = tools.engine

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
            return both_ways(("supertypes", queries.supertypes(target), True), ("subtypes", queries.subtypes(target), False))
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
                          lambda found: tool_result(render.diagnostics_json(found), render.diagnostics_text(found)))


def register_project(server: GraftMCPServer, tools: GraftTools) -> None:
    """The project's overview, impact, affected tests, the servers' status and the doctor."""
    engine = tools.engine

    @server.tool(annotations=READS,
                 description=("To get your bearings: the project's files and their symbols under a folder, package code "
                              "first, then tests, then docs and examples, within max_chars."))
    def project_overview(under: str = ".", depth: int = 1, kinds: list[str] | None = None, max_chars: int = DEFAULT_MAX_CHARS,
                         structured: STRUCTURED = False) -> Result:
        return tools.call(lambda: view_result(overview_view(engine.overview(under, depth), checked_kinds(kinds), max_chars, structured)))

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
            return tool_result(render.servers_json(statuses), render.servers_text(statuses) or "(no language-server support installed)")
        return tools.call(work)

    @server.tool(annotations=READS, description=("When a language's answers look wrong or missing: per language, its server, version and "
                                                 "state (with the install command), and what each operation does there."))
    def doctor(every_language: bool = False) -> Result:
        def work() -> CallToolResult:
            from engine.api_surface import diagnose  # noqa: PLC0415  (this tool only)
            from frontends.render.doctor import doctor_json, doctor_text  # noqa: PLC0415

            report = diagnose(engine.workspace, engine.services, every_family=every_language)
            return tool_result(doctor_json(report), doctor_text(report))
        return tools.call(work)
