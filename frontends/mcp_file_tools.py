"""The MCP file tools: reading and writing files through the session's client (its read ledger),
undo and redo of this session's edits, listing and search (each group registered by one function,
in the listing's order)."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult

from engine.api_surface import EditRequest, GraftError, list_dir as files_list_dir
from frontends.mcp_views import DEFAULT_MAX_CHARS, bounded
from frontends.mcp_core import (
    ALLOW_DIRTY, CHECK, edit_options, edit_result, EditOutput, EDITS_TEXT, FileOutput, GraftMCPServer, GraftTools,
    Listing, READS, Result, STRUCTURED, tool_result, UNDOES, WRITES_FILE,
)


def register_file_reads(server: GraftMCPServer, tools: GraftTools) -> None:
    """read_file and read_multiple_files: each read is recorded in the session's read ledger."""
    @server.tool(annotations=READS, description="A file with a sha256/mtime header and a line gutter; optionally its symbol outline.")
    def read_file(path: str, start_line: int = 1, end_line: int | None = None, outline: bool = False,
                  ctx: Context | None = None) -> Annotated[CallToolResult, FileOutput]:
        def work() -> CallToolResult:
            view = tools.client(ctx).read_file(path, start=start_line, end=end_line, outline=outline)
            return tool_result(vars(view) | {}, view.render())
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
            return tool_result({"files": [vars(v) for v in views], "errors": errors}, text)
        return tools.call(work)


def register_file_writes(server: GraftMCPServer, tools: GraftTools) -> None:
    """write_file, edit_file and transaction_apply: dry runs until apply=true."""
    engine = tools.engine

    @server.tool(annotations=WRITES_FILE,
                 description="Create or overwrite a file. Refused if this client has not read it, or it changed since.")
    def write_file(path: str, content: str, overwrite_changed: bool = False, apply: bool = False, allow_dirty: ALLOW_DIRTY = False,
                   check: CHECK = "fast", structured: STRUCTURED = False,
                   ctx: Context | None = None) -> Annotated[CallToolResult, EditOutput]:
        return tools.call(lambda: edit_result(tools.client(ctx).write_file(path, content, overwrite_changed=overwrite_changed, apply=apply,
                                                                     options=edit_options(engine, allow_dirty, check)), structured=structured))

    @server.tool(annotations=EDITS_TEXT, description=(
        "Edit part of a file you read: old_string (matching once) → new_string, or between start_anchor/end_anchor "
        "lines, or start_line/end_line."
    ))
    def edit_file(path: str, new_string: str, old_string: str | None = None, start_anchor: str | None = None,
                  end_anchor: str | None = None, start_line: int | None = None, end_line: int | None = None,
                  overwrite_changed: bool = False, apply: bool = False, allow_dirty: ALLOW_DIRTY = False, check: CHECK = "fast",
                  structured: STRUCTURED = False, ctx: Context | None = None) -> Annotated[CallToolResult, EditOutput]:
        request = EditRequest(path, new_string, old_string, start_anchor, end_anchor, start_line, end_line, overwrite_changed)
        return tools.call(lambda: edit_result(tools.client(ctx).edit_file(request, apply=apply, options=edit_options(engine, allow_dirty, check)),
                                        structured=structured))

    @server.tool(annotations=EDITS_TEXT, description="Apply an LSP WorkspaceEdit (JSON object) atomically: all files or none.")
    def transaction_apply(edit: dict[str, Any], apply: bool = False, allow_dirty: ALLOW_DIRTY = False, check: CHECK = "fast",
                          structured: STRUCTURED = False, ctx: Context | None = None) -> Annotated[CallToolResult, EditOutput]:
        from engine.api_surface import from_lsp

        return tools.call(lambda: edit_result(tools.client(ctx).run_edit("transaction_apply", from_lsp(edit, engine.workspace), apply=apply,
                                                                   options=edit_options(engine, allow_dirty, check)), structured=structured))


def register_undo(server: GraftMCPServer, tools: GraftTools) -> None:
    """undo_edit and redo_edit: a stack of this session's own edits."""
    @server.tool(annotations=UNDOES, description=("Undo this session's latest edit not yet undone (or the transaction named); "
                                                  "called again, the one before."))
    def undo_edit(transaction: str | None = None, structured: STRUCTURED = False,
                  ctx: Context | None = None) -> Annotated[CallToolResult, EditOutput]:
        return tools.call(lambda: edit_result(tools.client(ctx).undo(transaction), structured=structured))

    @server.tool(annotations=UNDOES, description=("Redo: re-apply the edit this session undid last (or the transaction named); "
                                                  "refused if its files changed since the undo."))
    def redo_edit(transaction: str | None = None, structured: STRUCTURED = False,
                  ctx: Context | None = None) -> Annotated[CallToolResult, EditOutput]:
        return tools.call(lambda: edit_result(tools.client(ctx).redo(transaction), structured=structured))


def register_listing(server: GraftMCPServer, tools: GraftTools) -> None:
    """list_dir, find_files and search_in_files."""
    engine = tools.engine

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
            return tool_result(payload, text)
        return tools.call(work)

    @server.tool(annotations=READS, description="Workspace files matching a glob (on the path or the file name), ignored files left out.")
    def find_files(pattern: str, ctx: Context | None = None) -> Annotated[CallToolResult, Listing]:
        return tools.show(lambda: tools.client(ctx).find_files(pattern),
                          lambda found: tool_result({"items": found, "total": len(found)}, "\n".join(found) or "(none)"))

    @server.tool(annotations=READS, description="Text or regex search; every hit says which symbol encloses it.")
    def search_in_files(query: str, regex: bool = False, glob: str = "*", ctx: Context | None = None) -> Annotated[CallToolResult, Listing]:
        def work() -> CallToolResult:
            hits, total = tools.client(ctx).search(query, regex=regex, glob=glob)
            rows = [f"{h.path}:{h.line}:{h.column}  [{h.symbol or 'module'}]  {h.text}" for h in hits]
            payload = {"items": [vars(h) for h in hits], "total": total}
            if total > len(hits):
                payload["omitted"] = {"items": total - len(hits)}
            return tool_result(payload, "\n".join(rows) or "(no hits)")
        return tools.call(work)


def register_find_replace(server: GraftMCPServer, tools: GraftTools) -> None:
    """find_replace: text or a regex replaced in every matching file."""
    engine = tools.engine

    @server.tool(annotations=EDITS_TEXT,
                 description="Replace text (or a regex, with \\1 groups) in every matching file; dry run by default.")
    def find_replace(query: str, replacement: str, regex: bool = False, glob: str = "*", apply: bool = False,
                     allow_dirty: ALLOW_DIRTY = False, check: CHECK = "fast",
                     ctx: Context | None = None) -> Annotated[CallToolResult, EditOutput]:
        return tools.call(lambda: edit_result(tools.client(ctx).find_replace(query, replacement, regex=regex, glob=glob, apply=apply,
                                                                       options=edit_options(engine, allow_dirty, check))))
