"""The MCP front end: tools over the official SDK's client, in process and over stdio / HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import TextContent

from engine.api import Engine, SourcePreference
from engine.workspace import Workspace
from frontends.mcp_server import _fit, build_server
from tests.conftest import SAMPLE

EXPECTED_TOOLS = {
    "file_outline", "workspace_symbols", "read_symbol", "find_references", "get_definition", "explain_symbol",
    "call_hierarchy", "type_hierarchy", "diagnostics", "rename_symbol", "replace_symbol_body", "insert_before_symbol",
    "insert_after_symbol", "safe_delete_symbol", "move_symbol", "rename_file", "delete_file", "batch_apply", "list_dir", "implementations", "hover", "code_actions",
    "apply_code_action", "read_file", "read_multiple_files", "write_file",
    "edit_file", "transaction_apply", "undo_edit", "redo_edit", "find_files", "search_in_files", "find_replace",
    "project_overview", "impact", "affected_tests", "server_status", "check_edit", "doctor",
    "extract_variable", "extract_function", "inline_symbol", "introduce_parameter",
}


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".graft"))
    return root


def session(project: Path, steps: Any, *, output_schemas: bool = False) -> Any:
    """Run ``steps(client)`` against an in-process server on an AST-only engine."""
    engine = Engine(Workspace(project), source=SourcePreference.AST)

    async def run() -> Any:
        async with Client(build_server(engine, output_schemas=output_schemas)) as client:
            return await steps(client)

    try:
        return asyncio.run(run())
    finally:
        engine.close()


def test_every_tool_is_listed_with_an_output_schema_when_asked(project: Path) -> None:
    """`graft mcp --structured-output`: for clients that use structured output."""
    async def steps(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools = session(project, steps, output_schemas=True)
    assert {t.name for t in tools} == EXPECTED_TOOLS
    assert all(t.output_schema and t.output_schema.get("type") == "object" for t in tools)
    edit_schema = next(t for t in tools if t.name == "rename_symbol").output_schema
    assert {"diff", "applied", "files", "source", "confidence"} <= set(edit_schema["properties"])


LISTING_BUDGET = 25_000
"""Characters of the default tool listing (issue 43: it was 67,979, two thirds output schemas;
every session pays for it before it does anything). Issue 44's four tools took it to 27,562 and the
budget had been raised to match; it is back at issue 43's 25,000, with every tool kept: hints at
the specification's defaults are left out, and the longest option texts were cut."""


def test_the_default_tool_listing_fits_its_budget(project: Path) -> None:
    """The whole listing as the client receives it from `graft mcp` over stdio: names,
    descriptions, input schemas, annotations (and output schemas, none by default)."""
    async def run() -> Any:
        async with Client(_stdio_params(project)) as client:
            return (await client.list_tools()).tools

    tools = asyncio.run(run())
    assert {t.name for t in tools} == EXPECTED_TOOLS
    sizes = {t.name: len(json.dumps(t.model_dump(by_alias=True, exclude_none=True, mode="json"))) for t in tools}
    assert sum(sizes.values()) <= LISTING_BUDGET, sorted(sizes.items(), key=lambda item: -item[1])[:8]
    assert all(t.output_schema is None for t in tools)
    for tool in tools:  # what pydantic generates and an agent never reads
        assert all("title" not in schema for schema in tool.input_schema["properties"].values()), tool.name
    # The structured content still comes, without a schema.
    async def outline() -> Any:
        async with Client(_stdio_params(project)) as client:
            return await client.call_tool("file_outline", {"path": "shop/pricing.py"})
    assert asyncio.run(outline()).structured_content is not None


def test_rename_is_a_dry_run_until_applied_and_undo_restores(project: Path) -> None:
    before = (project / "shop" / "pricing.py").read_text()

    async def steps(client: Client) -> Any:
        dry = await client.call_tool("rename_symbol", {"address": "shop/pricing.py:apply_discount", "new_name": "discounted",
                                                       "structured": True})
        unchanged = (project / "shop" / "pricing.py").read_text()
        done = await client.call_tool("rename_symbol", {"address": "shop/pricing.py:apply_discount", "new_name": "discounted", "apply": True})
        changed = (project / "shop" / "pricing.py").read_text()
        undone = await client.call_tool("undo_edit", {})
        return dry, unchanged, done, changed, undone

    dry, unchanged, done, changed, undone = session(project, steps)
    assert dry.structured_content["applied"] is False and "+def discounted" in dry.structured_content["diff"]
    assert unchanged == before
    assert done.structured_content["applied"] is True and "transaction" not in done.structured_content
    assert re.search(r"applied as transaction \S+", done.content[0].text)  # the undo handle, in the text
    assert len(json.dumps(done.structured_content)) <= len(done.content[0].text)  # no larger than the text
    assert "def discounted" in changed
    assert not undone.is_error and (project / "shop" / "pricing.py").read_text() == before
    assert "dry run" in dry.content[0].text


def test_writes_need_a_fresh_read(project: Path) -> None:
    target = project / "shop" / "pricing.py"

    async def steps(client: Client) -> Any:
        blind = await client.call_tool("edit_file", {"path": "shop/pricing.py", "old_string": "def ", "new_string": "def "})
        read = await client.call_tool("read_file", {"path": "shop/pricing.py", "outline": True})
        target.write_text(target.read_text() + "\n# changed behind the client's back\n")
        stale = await client.call_tool("write_file", {"path": "shop/pricing.py", "content": "x = 1\n"})
        await client.call_tool("read_file", {"path": "shop/pricing.py"})
        # A block pasted from read_file's output, gutter and all, still matches.
        outline = read.content[0]
        assert isinstance(outline, TextContent), outline
        gutter_line = next(line for line in outline.text.splitlines() if "def apply_discount" in line)
        pasted = await client.call_tool("edit_file", {
            "path": "shop/pricing.py", "old_string": gutter_line, "new_string": gutter_line.replace("apply_discount", "apply_discount_v2"),
            "apply": True,
        })
        return blind, read, stale, pasted

    blind, read, stale, pasted = session(project, steps)
    assert blind.is_error and blind.structured_content["error"]["code"] == "not_read"
    assert read.structured_content["sha256"] and read.structured_content["outline"]
    assert "│ " in read.content[0].text
    assert stale.is_error and stale.structured_content["error"]["code"] == "changed_since_read"
    assert not pasted.is_error, pasted.content[0].text
    assert "def apply_discount_v2" in target.read_text()


def test_the_file_tools_give_their_whole_outcome_as_data_when_asked(project: Path) -> None:
    """edit_file, write_file and undo_edit take structured=true as the refactoring tools do: a
    script gets the transaction to undo by id and the diff as data, not only in the text."""

    async def steps(client: Client) -> Any:
        await client.call_tool("read_file", {"path": "shop/pricing.py"})
        dry = await client.call_tool("edit_file", {"path": "shop/pricing.py", "old_string": "def apply_discount",
                                                   "new_string": "def apply_discount_v2", "structured": True})
        done = await client.call_tool("edit_file", {"path": "shop/pricing.py", "old_string": "def apply_discount",
                                                    "new_string": "def apply_discount_v2", "apply": True, "structured": True})
        transaction = done.structured_content.get("transaction")
        undone = await client.call_tool("undo_edit", {"transaction": transaction, "structured": True})
        await client.call_tool("read_file", {"path": "shop/util.py"})
        written = await client.call_tool("write_file", {"path": "shop/util.py", "content": "X = 1\n", "structured": True})
        return dry, done, undone, written

    dry, done, undone, written = session(project, steps)
    assert not dry.is_error and "+def apply_discount_v2" in dry.structured_content["diff"]
    assert done.structured_content["applied"] is True and done.structured_content["transaction"]
    assert undone.structured_content["applied"] is True and undone.structured_content["files"]
    assert "def apply_discount_v2" not in (project / "shop" / "pricing.py").read_text()
    assert written.structured_content["applied"] is False and "+X = 1" in written.structured_content["diff"]


def test_edit_file_refuses_an_ambiguous_old_string_and_changes_nothing(project: Path) -> None:
    before = (project / "shop" / "pricing.py").read_bytes()

    async def steps(client: Client) -> Any:
        await client.call_tool("read_file", {"path": "shop/pricing.py"})
        return await client.call_tool("edit_file", {"path": "shop/pricing.py", "old_string": "return", "new_string": "yield", "apply": True})

    result = session(project, steps)
    assert result.is_error and result.structured_content["error"]["code"] == "no_unique_match"
    assert (project / "shop" / "pricing.py").read_bytes() == before


def test_search_hits_name_their_enclosing_symbol(project: Path) -> None:
    async def steps(client: Client) -> Any:
        return await client.call_tool("search_in_files", {"query": "apply_discount", "glob": "*.py"})

    result = session(project, steps)
    hits = result.structured_content["items"]
    assert any(h["path"] == "shop/pricing.py" and h["symbol"] for h in hits)
    assert all(h["line"] >= 1 for h in hits)


def test_hierarchy_tools_give_both_directions(project: Path) -> None:
    async def steps(client: Client) -> Any:
        calls = await client.call_tool("call_hierarchy", {"address": "shop/pricing.py:with_vat"})
        types = await client.call_tool("type_hierarchy", {"address": "shop/pricing.py:PriceRule"})
        return calls, types

    calls, types = session(project, steps)
    assert [e["to"] for e in calls.structured_content["callees"]] == ["shop/util.py:round_cents"]
    assert "callers:" in calls.content[0].text and "callees:" in calls.content[0].text
    assert [e["from"] for e in types.structured_content["subtypes"]] == ["shop/pricing.py:HalfPrice"]
    assert types.structured_content["supertypes"] == []


def test_paths_outside_the_workspace_are_refused(project: Path) -> None:
    async def steps(client: Client) -> Any:
        return await client.call_tool("read_file", {"path": "../outside.txt"})

    result = session(project, steps)
    assert result.is_error and result.structured_content["error"]["code"] == "unsafe_path"


def test_long_results_are_cut_in_stages_and_say_so() -> None:
    payload = {"items": [{"n": i, "pad": "x" * 400} for i in range(1000)], "diff": "d" * 100_000}
    fitted, text = _fit(dict(payload), "t" * 100_000)
    assert len(fitted["items"]) == 200 and fitted["omitted"]["items"] == 800
    assert fitted["omitted"]["diff"] == 100_000 - len(fitted["diff"])
    assert "cut to fit" in text and fitted["omitted"]["text"] > 0


def test_stdio_server_from_the_command_line(project: Path) -> None:
    graft = shutil.which("graft", path=str(Path(sys.executable).parent))
    assert graft is not None
    params = StdioServerParameters(command=graft, args=["mcp", "--root", str(project), "--source", "ast"])

    async def run() -> Any:
        async with Client(params) as client:
            tools = (await client.list_tools()).tools
            outline = await client.call_tool("file_outline", {"path": "shop/pricing.py"})
            return tools, outline

    tools, outline = asyncio.run(run())
    assert {t.name for t in tools} == EXPECTED_TOOLS
    assert "def apply_discount(" in outline.content[0].text and outline.structured_content["total"] >= 1


def _http_server(project: Path) -> tuple[subprocess.Popen[str], int, str]:
    """``graft mcp --http`` on a free port: the process, the port and its bearer token."""
    graft = shutil.which("graft", path=str(Path(sys.executable).parent))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([str(graft), "mcp", "--root", str(project), "--source", "ast", "--http", "--port", str(port)],
                              stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert server.stderr is not None
    banner = server.stderr.readline()
    assert f"127.0.0.1:{port}" in banner and "Bearer " in banner, banner
    return server, port, banner.rsplit("Bearer ", 1)[1].strip(" )\n")


def test_http_needs_the_bearer_token(project: Path) -> None:
    server, port, token = _http_server(project)
    try:
        request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "token-test", "version": "1"}}}).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        deadline = time.monotonic() + 30
        status: int | None = None
        while True:
            try:
                urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/mcp", request, headers), timeout=5)
                status = 200
            except urllib.error.HTTPError as error:
                status = error.code
            except urllib.error.URLError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
                continue
            break
        assert status == 401
        authorised = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", request, {**headers, "Authorization": f"Bearer {token}"})
        try:
            status = urllib.request.urlopen(authorised, timeout=10).status
        except urllib.error.HTTPError as error:
            status = error.code
        assert status == 200  # the same handshake with the token is served (a 400, 404 or 500 fails here)
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_http_sessions_keep_their_own_read_ledger_and_undo_only_their_own_edits(project: Path) -> None:
    """The soak benchmark's probes: SDK clients in their default mode spoke the sessionless
    protocol, every one of them shared one read ledger, and B's edit passed on A's read; a bare
    undo from B reverted A's edit. Sessionless requests are refused (the client falls back to
    sessions); each session's ledger and undo are its own."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    server, port, token = _http_server(project)
    url = f"http://127.0.0.1:{port}/mcp"
    edit = {"path": "shop/util.py", "old_string": "Small helpers.", "new_string": "Small helpers!", "apply": True}

    async def run() -> tuple[Any, Any, Any, Any, str]:
        for _ in range(150):  # the server is up when it answers
            try:
                async with httpx2.AsyncClient() as probe:
                    await probe.get(url)
                break
            except httpx2.HTTPError:
                await asyncio.sleep(0.2)
        auth = {"Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient(headers=auth) as http_a, httpx2.AsyncClient(headers=auth) as http_b:
            async with Client(streamable_http_client(url, http_client=http_a)) as a, \
                    Client(streamable_http_client(url, http_client=http_b)) as b:
                await a.call_tool("read_file", {"path": "shop/util.py"})
                b_without_read = await b.call_tool("edit_file", edit)
                a_applied = await a.call_tool("edit_file", edit)
                b_undo = await b.call_tool("undo_edit", {})
                after_b_undo = (project / "shop" / "util.py").read_text()
                a_undo = await a.call_tool("undo_edit", {})
                return b_without_read, a_applied, b_undo, a_undo, after_b_undo

    original = (project / "shop" / "util.py").read_text()
    try:
        b_without_read, a_applied, b_undo, a_undo, after_b_undo = asyncio.run(run())
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert b_without_read.is_error and "not_read" in b_without_read.content[0].text
    assert not a_applied.is_error
    assert b_undo.is_error and "not_yours" in b_undo.content[0].text
    assert after_b_undo != original  # A's edit survived B's undo
    assert not a_undo.is_error and (project / "shop" / "util.py").read_text() == original


def _committed(project: Path) -> None:
    for command in (["git", "init", "-q"], ["git", "add", "-A"],
                    ["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "start"]):
        subprocess.run(command, cwd=project, check=True)


def test_a_session_edits_one_file_twice_in_a_repository_and_hand_edits_stay_guarded(project: Path) -> None:
    """Issue 16, bug 1: the engine's own journaled writes are not the user's uncommitted work;
    a change made by hand since still is, and the refusal names this front end's option."""
    from engine.opening import open_engine

    _committed(project)
    pricing = project / "shop" / "pricing.py"
    engine = open_engine(project, SourcePreference.AST)  # with the process tools: the dirty guard asks git
    first = {"address": "shop/pricing.py:with_vat", "text": "def with_vat(amount: Decimal) -> Decimal:\n    return amount\n", "apply": True}
    second = {"address": "shop/pricing.py:apply_discount",
              "text": "def apply_discount(order: Order, percent: int) -> Decimal:\n    return order.total\n", "apply": True}

    async def run() -> Any:
        async with Client(build_server(engine)) as client:
            one = await client.call_tool("replace_symbol_body", first)
            two = await client.call_tool("replace_symbol_body", second)
            pricing.write_text(pricing.read_text() + "# typed by hand\n")
            guarded = await client.call_tool("insert_after_symbol", {"address": "shop/pricing.py:with_vat", "text": "X = 1\n",
                                                                      "apply": True})
            allowed = await client.call_tool("insert_after_symbol", {"address": "shop/pricing.py:with_vat", "text": "X = 1\n",
                                                                      "apply": True, "allow_dirty": True})
            return one, two, guarded, allowed

    try:
        one, two, guarded, allowed = asyncio.run(run())
    finally:
        engine.close()
    assert not one.is_error and not two.is_error, (one.content, two.content)
    assert guarded.is_error and guarded.structured_content["error"]["code"] == "dirty_files"
    assert "allow_dirty=true" in guarded.content[0].text and "--allow-dirty" not in guarded.content[0].text
    assert not allowed.is_error, allowed.content
    text = pricing.read_text()
    assert "    return amount\n" in text and "    return order.total\n" in text and "X = 1" in text and "# typed by hand" in text


def test_a_dry_run_reports_what_an_apply_would_refuse(project: Path) -> None:
    """Issue 16, bug 3: an unclosed parenthesis previews with the refusal an apply would meet."""
    before = (project / "shop" / "pricing.py").read_bytes()

    async def steps(client: Client) -> Any:
        broken = await client.call_tool("replace_symbol_body", {
            "address": "shop/pricing.py:with_vat", "text": "def with_vat(amount: Decimal) -> Decimal:\n    return (amount\n"})
        fine = await client.call_tool("replace_symbol_body", {
            "address": "shop/pricing.py:with_vat", "text": "def with_vat(amount: Decimal) -> Decimal:\n    return amount\n"})
        return broken, fine

    broken, fine = session(project, steps)
    assert broken.structured_content["applied"] is False
    assert broken.structured_content["would_refuse"]["code"] == "syntax_errors"
    assert "an apply would be refused" in broken.content[0].text
    assert "would_refuse" not in fine.structured_content  # the compact answer names only what is there
    assert (project / "shop" / "pricing.py").read_bytes() == before


def test_answers_fit_their_budget_and_say_what_they_left_out(project: Path) -> None:
    """Issue 16: outlines and overviews take depth, kinds and max_chars; the structured content is
    no larger than the text unless asked for the rows."""
    big = "".join(f"class C{i}:\n" + "".join(f"    def m{j}(self):\n        return {j}\n" for j in range(20)) for i in range(60))
    (project / "shop" / "big.py").write_text(big)

    async def steps(client: Client) -> Any:
        whole = await client.call_tool("file_outline", {"path": "shop/big.py", "depth": 2, "max_chars": 4000})
        top = await client.call_tool("file_outline", {"path": "shop/big.py", "depth": 1})
        classes = await client.call_tool("file_outline", {"path": "shop/big.py", "kinds": ["class"], "structured": True})
        wrong = await client.call_tool("file_outline", {"path": "shop/big.py", "kinds": ["klass"]})
        overview = await client.call_tool("project_overview", {"under": "shop", "max_chars": 600})
        return whole, top, classes, wrong, overview

    whole, top, classes, wrong, overview = session(project, steps)
    text = whole.content[0].text
    assert len(text) <= 4000 + 200  # the rows within max_chars, plus the head and the tail saying what was cut
    assert whole.structured_content["total"] == 60 * 21 and whole.structured_content["omitted"]["symbols"] > 0
    assert "left out to fit max_chars: narrow with depth=1" in text
    assert len(json.dumps(whole.structured_content)) <= len(text)
    assert top.structured_content["total"] == 60 and "omitted" not in top.structured_content
    assert [s["kind"] for s in classes.structured_content["symbols"]] == ["class"] * 60
    assert wrong.is_error and "unknown kind(s) klass" in wrong.content[0].text
    assert overview.structured_content["omitted"]["rows"] > 0 and len(overview.content[0].text) <= 600 + 200


def test_workspace_symbols_match_exactly_by_prefix_or_substring(project: Path) -> None:
    async def steps(client: Client) -> Any:
        calls: list[tuple[str, dict[str, object]]] = [("Order/total", {}), ("apply_dis", {}), ("discount", {}), ("discount", {"substring_matching": True}),
                 ("Order", {"kinds": ["class"], "structured": True}), ("", {"substring_matching": True, "max_matches": 3})]
        return [await client.call_tool("workspace_symbols", {"query": query, **extra}) for query, extra in calls]

    exact, prefix, nothing, substring, classes, capped = session(project, steps)
    assert exact.structured_content["how"] == "exact" and "shop/models.py:Order/total" in exact.content[0].text
    assert prefix.structured_content["how"] == "prefix" and "shop/pricing.py:apply_discount" in prefix.content[0].text
    assert nothing.structured_content["total"] == 0
    assert substring.structured_content["how"] == "substring" and "apply_discount" in substring.content[0].text
    assert {m["kind"] for m in classes.structured_content["matches"]} == {"class"}
    assert capped.structured_content["omitted"]["matches"] > 0 and "raise max_matches" in capped.content[0].text


def test_files_an_agent_changes_with_its_own_tools_are_seen_by_the_next_call(project: Path) -> None:
    pricing = project / "shop" / "pricing.py"

    async def steps(client: Client) -> Any:
        before = await client.call_tool("workspace_symbols", {"query": "apply_surcharge"})
        pricing.write_text(pricing.read_text() + "\n\ndef apply_surcharge(total):\n    return total\n")
        added = await client.call_tool("workspace_symbols", {"query": "apply_surcharge"})
        (project / "shop" / "extra.py").write_text("def apply_surcharge_twice(total):\n    return total\n")
        created = await client.call_tool("workspace_symbols", {"query": "apply_surcharge_twice"})
        pricing.write_text(pricing.read_text().replace("def apply_surcharge(", "def apply_fee("))
        renamed = await client.call_tool("workspace_symbols", {"query": "apply_surcharge"})
        return before, added, created, renamed

    before, added, created, renamed = session(project, steps)
    assert before.structured_content["total"] == 0
    assert "shop/pricing.py:apply_surcharge" in added.content[0].text
    assert "shop/extra.py:apply_surcharge_twice" in created.content[0].text
    assert "shop/pricing.py:apply_surcharge" not in renamed.content[0].text and "shop/extra.py" in renamed.content[0].text


def test_each_reference_line_stands_alone(project: Path) -> None:
    async def steps(client: Client) -> Any:
        return await client.call_tool("find_references", {"address": "shop/util.py:round_cents", "structured": True})

    found = session(project, steps)
    rows = [row for row in found.content[0].text.splitlines() if row.startswith("shop/")]
    assert rows, found.content[0].text
    for row, data in zip(rows, found.structured_content["locations"]):
        assert row.startswith(f"{data['file']}:{data['line']}:{data['column']}")
        assert "round_cents" in data["text"] and data["text"] in row
    # The enclosing symbol by its name path in the row's file; at module level, nothing.
    assert any(re.fullmatch(r"shop/pricing\.py:\d+:\d+  \[apply_discount\]  .*round_cents.*", row) for row in rows), rows
    assert all("[module]" not in row and " · " not in row for row in rows)


def test_list_dir_batch_apply_and_delete_file(project: Path) -> None:
    (project / "shop" / ".hidden.py").write_text("x = 1\n")
    (project / "shop" / "unused.py").write_text("Y = 2\n")
    before = (project / "shop" / "pricing.py").read_text()

    async def steps(client: Client) -> Any:
        listing = await client.call_tool("list_dir", {"path": "shop"})
        hidden = await client.call_tool("list_dir", {"path": "shop", "show_hidden": True})
        deep = await client.call_tool("list_dir", {"path": ".", "recursive": True, "max_chars": 300})
        plan = [{"op": "rename", "address": "shop/pricing.py:apply_discount", "new_name": "discounted"},
                {"op": "move", "address": "shop/pricing.py:with_vat", "dest": "shop/tax.py", "create": True}]
        dry = await client.call_tool("batch_apply", {"steps": plan, "structured": True})
        typo = await client.call_tool("batch_apply", {"steps": [{"op": "rename", "address": "shop/pricing.py:x", "nwe_name": "y"}]})
        done = await client.call_tool("batch_apply", {"steps": plan, "apply": True})
        undone = await client.call_tool("undo_edit", {})
        refused = await client.call_tool("delete_file", {"path": "shop/util.py", "apply": True})
        deleted = await client.call_tool("delete_file", {"path": "shop/unused.py", "apply": True})
        return listing, hidden, deep, dry, typo, done, undone, refused, deleted

    listing, hidden, deep, dry, typo, done, undone, refused, deleted = session(project, steps)
    rows = listing.content[0].text.splitlines()
    assert any(row.startswith("file") and row.endswith("shop/pricing.py") for row in rows)
    assert not any(".hidden.py" in row for row in rows) and any(".hidden.py" in row for row in hidden.content[0].text.splitlines())
    assert deep.structured_content["omitted"]["entries"] > 0 and "left out" in deep.content[0].text
    assert dry.structured_content["applied"] is False and "+++ b/shop/tax.py" in dry.structured_content["diff"]
    assert [s["op"] for s in dry.structured_content["steps"]] == ["rename", "move"]
    assert typo.is_error and typo.structured_content["error"]["code"] == "unknown_field" and "nwe_name" in typo.content[0].text
    assert done.structured_content["applied"] is True and not undone.is_error
    assert (project / "shop" / "pricing.py").read_text() == before and not (project / "shop" / "tax.py").exists()
    assert refused.is_error and refused.structured_content["error"]["code"] == "imports_remain"
    assert "even_if_imported=true" in refused.content[0].text and (project / "shop" / "util.py").exists()
    assert not deleted.is_error and not (project / "shop" / "unused.py").exists()


def test_hover_answers_from_the_tree_without_a_server_and_code_actions_say_they_need_one(project: Path) -> None:
    line = next(n for n, text in enumerate((project / "shop/pricing.py").read_text().splitlines(), 1) if "util.round_cents(amount" in text)
    column = (project / "shop/pricing.py").read_text().splitlines()[line - 1].index("round_cents") + 1

    async def steps(client: Client) -> Any:
        at_call = await client.call_tool("hover", {"target": f"shop/pricing.py:{line}:{column}"})
        actions = await client.call_tool("code_actions", {"path": "shop/pricing.py", "start_line": 1})
        return at_call, actions

    at_call, actions = session(project, steps)
    assert at_call.structured_content["about"] == "shop/util.py:round_cents" and at_call.structured_content["source"] == "ast"
    assert "def round_cents" in at_call.content[0].text
    assert actions.is_error and actions.structured_content["error"]["code"] == "service_unavailable"


def test_call_hierarchy_and_impact_name_the_calls_they_cannot_type(project: Path) -> None:
    (project / "shop" / "ledger.py").write_text(
        "class Ledger:\n    def balance(self) -> int:\n        return 0\n\n\n"
        "def typed(ledger: Ledger) -> int:\n    return ledger.balance()\n\n\n"
        "def untyped(thing):\n    return thing.balance()\n")

    async def steps(client: Client) -> Any:
        hierarchy = await client.call_tool("call_hierarchy", {"address": "shop/ledger.py:Ledger/balance"})
        reach = await client.call_tool("impact", {"address": "shop/ledger.py:Ledger/balance"})
        # A position on the call in typed() names the method called there, not typed() around it.
        at_call = await client.call_tool("call_hierarchy", {"address": "shop/ledger.py:7:19"})
        return hierarchy, reach, at_call

    hierarchy, reach, at_call = session(project, steps)
    assert at_call.structured_content["callers"] == hierarchy.structured_content["callers"], at_call.content
    callers = [edge["from"] for edge in hierarchy.structured_content["callers"]]
    assert callers == ["shop/ledger.py:typed"]  # through the annotated parameter
    assert any("unknown type" in note and "shop/ledger.py:11" in note for note in hierarchy.structured_content["notes"])
    assert "shop/ledger.py:typed" in reach.content[0].text and "unknown type" in reach.content[0].text


def _stdio_params(project: Path) -> StdioServerParameters:
    graft = shutil.which("graft", path=str(Path(sys.executable).parent))
    assert graft is not None
    return StdioServerParameters(command=graft, args=["mcp", "--root", str(project), "--source", "ast"])


READ_ONLY = (True, False, True)
"""(readOnlyHint, destructiveHint, idempotentHint) of a tool that only reads."""
EXPECTED_HINTS: dict[str, tuple[bool, bool, bool]] = {
    **{name: READ_ONLY for name in (
        "file_outline", "workspace_symbols", "read_symbol", "find_references", "get_definition", "explain_symbol",
        "call_hierarchy", "type_hierarchy", "implementations", "hover", "code_actions", "diagnostics", "read_file",
        "read_multiple_files", "list_dir", "find_files", "search_in_files", "project_overview", "impact",
        "affected_tests", "server_status", "check_edit", "doctor")},
    # Refactorings write (apply=true), a dry run by default or not. Destructive: content is lost
    # (a deletion, a declaration replaced). Idempotent: the same call again changes nothing more
    # (a second rename or delete finds nothing to act on); an insertion inserts again.
    "rename_symbol": (False, False, True), "move_symbol": (False, False, True), "rename_file": (False, False, True),
    "safe_delete_symbol": (False, True, True), "delete_file": (False, True, True), "replace_symbol_body": (False, True, True),
    "insert_before_symbol": (False, False, False), "insert_after_symbol": (False, False, False),
    "batch_apply": (False, True, False), "apply_code_action": (False, True, False),
    "write_file": (False, True, True), "edit_file": (False, True, False), "find_replace": (False, True, False),
    "transaction_apply": (False, True, False), "undo_edit": (False, True, False), "redo_edit": (False, True, False),
    "extract_variable": (False, False, False), "extract_function": (False, False, False),
    "inline_symbol": (False, True, False),  # it deletes the definition it inlines
    "introduce_parameter": (False, False, False),
}


def test_every_tool_says_whether_it_reads_destroys_or_repeats_safely(project: Path) -> None:
    """Issue 45: every tool's annotations arrived empty; agents decide from readOnlyHint,
    destructiveHint and idempotentHint what needs the user's approval. Listed through the
    official client from `graft mcp` itself; a tool without annotations fails here."""
    async def run() -> Any:
        async with Client(_stdio_params(project)) as client:
            return (await client.list_tools()).tools

    tools = asyncio.run(run())
    assert set(EXPECTED_HINTS) == EXPECTED_TOOLS == {tool.name for tool in tools}
    for tool in tools:
        hints = tool.annotations
        assert hints is not None, f"{tool.name} has no annotations"
        said = _as_a_client_reads(hints)
        assert said == EXPECTED_HINTS[tool.name], (tool.name, said)
        assert hints.open_world_hint is False, tool.name  # the workspace only, never the outside world


def _as_a_client_reads(hints: Any) -> tuple[bool, bool, bool]:
    """(readOnly, destructive, idempotent) with the specification's defaults for hints left out
    (false, true, false); for a read-only tool the other two mean nothing, read as READ_ONLY's."""
    read_only = bool(hints.read_only_hint)
    if read_only:
        assert hints.destructive_hint in (None, False) and hints.idempotent_hint in (None, True), hints
        return READ_ONLY
    return (False, True if hints.destructive_hint is None else hints.destructive_hint, bool(hints.idempotent_hint))


def test_unknown_arguments_are_refused_by_name_with_the_accepted_ones(project: Path) -> None:
    """Issue 38: an argument a tool does not take (a typo: `newname`) was dropped silently and
    the call ran without it. It is refused, naming it and the arguments the tool takes, and
    nothing is written."""
    before = (project / "shop" / "pricing.py").read_text()

    async def run() -> Any:
        async with Client(_stdio_params(project)) as client:
            typo = await client.call_tool("rename_symbol", {"address": "shop/pricing.py:apply_discount", "new_name": "discounted",
                                                            "aply": True})
            reading = await client.call_tool("file_outline", {"path": "shop/pricing.py", "depht": 1, "verbose": True})
            fine = await client.call_tool("file_outline", {"path": "shop/pricing.py", "depth": 1})
            return typo, reading, fine

    typo, reading, fine = asyncio.run(run())
    assert typo.is_error and typo.structured_content["error"]["code"] == "unknown_argument"
    assert "aply" in typo.content[0].text and "apply" in typo.content[0].text and "new_name" in typo.content[0].text
    assert typo.structured_content["error"]["unknown"] == ["aply"]
    assert "apply" in typo.structured_content["error"]["accepted"]
    assert reading.is_error and reading.structured_content["error"]["unknown"] == ["depht", "verbose"]
    assert "ctx" not in reading.structured_content["error"]["accepted"]
    assert not fine.is_error
    assert (project / "shop" / "pricing.py").read_text() == before


class RawMcp:
    """``graft mcp`` over raw stdio: JSON lines written as they are (broken ones too), its
    lines read back by a thread, so a missing answer fails after a generous budget."""

    BUDGET = 120.0

    def __init__(self, project: Path) -> None:
        import queue
        import threading

        graft = shutil.which("graft", path=str(Path(sys.executable).parent))
        self.process = subprocess.Popen([str(graft), "mcp", "--root", str(project), "--source", "ast"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        def pump() -> None:
            for line in self.process.stdout or ():
                self.lines.put(line)

        threading.Thread(target=pump, daemon=True).start()
        self.write(json.dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}))
        assert "result" in self.until("init")[-1]
        self.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def write(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def until(self, request_id: str) -> list[dict[str, Any]]:
        """Every message the server sends up to and with its answer to ``request_id``."""
        import queue

        seen: list[dict[str, Any]] = []
        while not seen or seen[-1].get("id") != request_id or "method" in seen[-1]:
            try:
                seen.append(json.loads(self.lines.get(timeout=self.BUDGET)))
            except queue.Empty:
                raise AssertionError(f"no answer to {request_id!r} within {self.BUDGET:.0f} s; before it: {seen}") from None
        return seen

    def answers(self, line: str, probe: int) -> list[dict[str, Any]]:
        """What the server answers to ``line``: everything before its answer to a ping sent after it."""
        self.write(line)
        self.write(json.dumps({"jsonrpc": "2.0", "id": f"ping-{probe}", "method": "ping"}))
        return [message for message in self.until(f"ping-{probe}")[:-1] if "method" not in message]

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=self.BUDGET)


def test_malformed_messages_get_json_rpc_errors_and_notifications_get_none(project: Path) -> None:
    """Issue 38: eight malformed messages got no reply at all. Each request gets the error JSON-RPC
    2.0 names, to its id when it can be read, else to null; a well-formed notification gets none,
    even when its method is unknown. A ping after each shows the server still serves."""
    request = {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}
    expected: list[tuple[str, int | None, Any]] = [
        ("{not json", -32700, None),
        (json.dumps([request]), -32600, None),
        (json.dumps([]), -32600, None),
        ("42", -32600, None),
        (json.dumps({"id": 7, "method": "tools/list"}), -32600, 7),
        (json.dumps({**request, "jsonrpc": "1.0"}), -32600, 7),
        (json.dumps({**request, "id": {"n": 7}}), -32600, None),
        (json.dumps({**request, "id": None}), -32600, None),
        (json.dumps({**request, "method": 5}), -32600, 7),
        (json.dumps({"jsonrpc": "2.0", "method": 5}), -32600, None),  # not a notification: it is malformed
        (json.dumps({**request, "params": "all"}), -32600, 7),
        (json.dumps({**request, "params": [1]}), -32602, 7),
        (json.dumps({"jsonrpc": "2.0", "id": 7}), -32600, 7),
        (json.dumps({**request, "method": "no/such"}), -32601, 7),
        (json.dumps({**request, "method": "tools/call", "params": {"name": "no_such_tool", "arguments": {}}}), -32602, 7),
        (json.dumps({**request, "method": "tools/call", "params": {"name": "file_outline", "arguments": [1]}}), -32602, 7),
        # Well-formed notifications: never answered, whatever they ask.
        (json.dumps({"jsonrpc": "2.0", "method": "no/such"}), None, None),
        (json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": [1]}), None, None),
        (json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "never-sent"}}), None, None),
    ]
    server = RawMcp(project)
    try:
        answered = [server.answers(line, probe) for probe, (line, _code, _id) in enumerate(expected)]
        server.write(json.dumps({"jsonrpc": "2.0", "id": "last", "method": "tools/call",
                                 "params": {"name": "file_outline", "arguments": {"path": "shop/util.py"}}}))
        last = server.until("last")[-1]
    finally:
        server.close()
    for (line, code, reply_to), replies in zip(expected, answered):
        if code is None:
            assert replies == [], (line, replies)
            continue
        assert len(replies) == 1 and "error" in replies[0], (line, replies)
        assert (replies[0]["error"]["code"], replies[0]["id"]) == (code, reply_to), (line, replies[0])
        assert replies[0]["error"]["message"], line
    unknown_tool = answered[14][0]["error"]["message"]
    assert "no_such_tool" in unknown_tool and "file_outline" in unknown_tool  # the tools it has
    assert "def money(" in last["result"]["content"][0]["text"]


EDIT_TOOLS = {"rename_symbol", "replace_symbol_body", "insert_before_symbol", "insert_after_symbol", "safe_delete_symbol",
              "move_symbol", "rename_file", "delete_file", "batch_apply", "apply_code_action", "write_file", "edit_file",
              "transaction_apply", "find_replace", "extract_variable", "extract_function", "inline_symbol",
              "introduce_parameter"}


def test_every_edit_tool_takes_check_and_says_what_its_check_covered(project: Path) -> None:
    """Issue 39: the check after an apply is the caller's choice in MCP as on the command line
    (none, fast, full), and every edit answer's schema has the check as data (``verified``)."""
    async def steps(client: Client) -> Any:
        tools = (await client.list_tools()).tools
        bad = await client.call_tool("rename_symbol", {"address": "shop/pricing.py:apply_discount", "new_name": "d",
                                                       "check": "slow"})
        off = await client.call_tool("rename_symbol", {"address": "shop/pricing.py:apply_discount", "new_name": "discounted",
                                                       "apply": True, "check": "none"})
        return tools, bad, off

    tools, bad, off = session(project, steps, output_schemas=True)
    for tool in tools:
        assert ("check" in tool.input_schema["properties"]) is (tool.name in EDIT_TOOLS), tool.name
        if tool.name in EDIT_TOOLS:
            assert "verified" in tool.output_schema["properties"], tool.name
    assert bad.is_error and "check" in bad.content[0].text  # not a mode: refused, never taken as fast
    assert not off.is_error and "not verified (--check none)" in off.content[0].text
    assert off.structured_content["verified"]["complete"] is False
    assert off.structured_content["verified"]["confidence"] == "medium"


def _server_session(root: Path, steps: Any) -> Any:
    """``steps(client, engine)`` against an in-process server on an engine whose Python server is basedpyright."""
    from tests.test_lsp_e2e import served_engine

    async def run(engine: Engine) -> Any:
        async with Client(build_server(engine)) as client:
            return await steps(client, engine)

    with served_engine(root, "basedpyright") as engine:
        return asyncio.run(run(engine))


def test_an_apply_reports_its_check_and_check_edit_finishes_what_the_budget_left(tmp_path: Path) -> None:
    """A rename of a definition alone breaks c.py, two imports away: the apply's answer says so (one
    line in the text, the errors as data, low confidence); a check the budget cut short is finished
    by check_edit, as `graft check --last` finishes it."""
    from engine.edits import pending_checks
    from engine.edits.verification import CheckMode, Verification
    from tests.test_lsp_e2e import require
    from tests.test_verification import _two_hops

    require("basedpyright")
    _two_hops(tmp_path)

    async def steps(client: Client, engine: Engine) -> Any:
        nothing = await client.call_tool("check_edit", {})
        await client.call_tool("read_file", {"path": "a.py"})
        applied = await client.call_tool("edit_file", {"path": "a.py", "old_string": "def f(", "new_string": "def renamed(",
                                                       "apply": True, "check": "full"})
        whole = await client.call_tool("check_edit", {})
        transaction = applied.structured_content and whole.structured_content["transaction"]
        # As a spent budget leaves it: a.py compared, the rest still to compare.
        scope = whole.structured_content["verified"]["scope"]
        pending_checks.save_last(tmp_path, transaction, Verification(CheckMode.FAST, tuple(scope), ("a.py",),
                                                                     pending=tuple(scope[1:]), by=("basedpyright",)))
        pending_checks.save(tmp_path, pending_checks.PendingCheck(transaction, {p: [] for p in scope}, {"a.py": []},
                                                                  scope[1:], [], {}))
        finished = await client.call_tool("check_edit", {})
        return nothing, applied, whole, finished

    nothing, applied, whole, finished = _server_session(tmp_path, steps)
    assert not nothing.is_error and nothing.structured_content == {"transaction": None, "verified": None}
    assert not applied.is_error, applied.content[0].text
    assert "checked 4 of 4 file(s): 1 new error(s)" in applied.content[0].text
    assert "(low)" in applied.content[0].text.splitlines()[0]
    verified = applied.structured_content["verified"]
    assert [e["file"] for e in verified["new_errors"]] == ["c.py"] and verified["confidence"] == "low"
    # The checker and the counts are the text's ("checked 4 of 4 file(s)"), not repeated as data.
    assert set(verified) == {"complete", "confidence", "new_errors"} and "(basedpyright, " in applied.content[0].text
    assert whole.structured_content["verified"]["checked"] == ["a.py", "b.py", "c.py", "tests/test_c.py"]
    done = finished.structured_content["verified"]
    assert done["pending"] == [] and set(done["checked"]) == {"a.py", "b.py", "c.py", "tests/test_c.py"}
    assert [e["file"] for e in done["new_errors"]] == ["c.py"]
    assert "checked 4 of 4 file(s): 1 new error(s)" in finished.content[0].text


def test_a_refused_edit_asks_no_server_for_errors(tmp_path: Path) -> None:
    """A replace that would break the syntax is refused before the check's errors-before pass: on
    werkzeug each such refusal waited 1.5 s for basedpyright's diagnostics of the files in scope.
    The server's diagnostics are counted as asked (the real server still answers them)."""
    from tests.test_lsp_e2e import require
    from tests.test_verification import _two_hops

    require("basedpyright")
    _two_hops(tmp_path)
    asked: list[str] = []

    async def steps(client: Client, engine: Engine) -> Any:
        _count_diagnostics(engine, asked)
        await client.call_tool("read_symbol", {"address": "a.py:f"})
        broken = await client.call_tool("replace_symbol_body", {"address": "a.py:f", "text": "def f() -> int:\n    return (1\n",
                                                                 "apply": True})
        refused_asked = list(asked)
        fine = await client.call_tool("replace_symbol_body", {"address": "a.py:f", "text": "def f() -> int:\n    return 2\n",
                                                               "apply": True})
        return broken, refused_asked, fine

    broken, refused_asked, fine = _server_session(tmp_path, steps)
    assert broken.is_error and broken.structured_content["error"]["code"] == "syntax_errors"
    assert refused_asked == []
    assert not fine.is_error, fine.content[0].text
    assert "a.py" in asked  # the same check, on an edit that is written, does ask
    assert (tmp_path / "a.py").read_text() == "def f() -> int:\n    return 2\n"


def test_read_symbol_leaves_the_file_stamp_to_structured_content(project: Path) -> None:
    """The text is the symbol's lines under a short header; the file's sha256 and mtime (what a
    script compares) come with structured=true: the session's read ledger, not the agent, keeps
    what was read, so a write after it needs no hash from the agent."""
    async def steps(client: Client) -> Any:
        return (await client.call_tool("read_symbol", {"address": "shop/pricing.py:apply_discount"}),
                await client.call_tool("read_symbol", {"address": "shop/pricing.py:apply_discount", "structured": True}))

    plain, data = session(project, steps)
    head = plain.content[0].text.splitlines()[0]
    assert head.startswith("# shop/pricing.py:apply_discount  function  lines ") and "sha256=" not in head and "mtime=" not in head
    assert re.fullmatch(r"[0-9a-f]{64}", data.structured_content["sha256"]) and data.structured_content["mtime"]


def test_the_stdio_server_does_not_log_the_language_servers_traffic(tmp_path: Path) -> None:
    """Each message to a language server (a file's whole text on every open and change) went to
    stderr, 1.4 MB over six calls on pflag: a client that does not drain stderr would block the
    server on a full pipe. The server logs warnings and errors only."""
    from mcp.client.stdio import stdio_client

    from tests.test_lsp_e2e import require
    from tests.test_verification import _two_hops

    require("basedpyright")
    _two_hops(tmp_path)
    graft = shutil.which("graft", path=str(Path(sys.executable).parent))
    assert graft is not None
    params = StdioServerParameters(command=graft, args=["mcp", "--root", str(tmp_path)])
    log_path = tmp_path.parent / "mcp-stderr.log"

    async def run() -> Any:
        with log_path.open("w") as log:
            async with Client(stdio_client(params, errlog=log)) as client:
                return await client.call_tool("find_references", {"address": "a.py:f"})

    found = asyncio.run(run())
    assert not found.is_error and "from basedpyright" in found.content[0].text, found.content[0].text
    logged = log_path.read_text()
    assert "Sending data" not in logged and "def f() -> int" not in logged, logged[:500]


def test_the_stdio_server_starts_the_main_languages_server_while_the_client_connects(tmp_path: Path) -> None:
    """An agent's first question waited for its server's start (gopls, basedpyright: about a
    second; tsserver: several): ``graft mcp`` starts the servers of the workspace's main languages
    in the background once it is up, so server_status shows basedpyright without any call having
    asked it anything. A language with a few files among many (one .js here) starts nothing."""
    from frontends.mcp_warm_up import main_languages
    from tests.test_lsp_e2e import require
    from tests.test_verification import _two_hops

    require("basedpyright")
    _two_hops(tmp_path)
    graft = shutil.which("graft", path=str(Path(sys.executable).parent))
    assert graft is not None
    params = StdioServerParameters(command=graft, args=["mcp", "--root", str(tmp_path)])

    async def run() -> list[str]:
        seen = []
        async with Client(params) as client:
            deadline = time.monotonic() + 90  # generous: the start runs beside other helpers' servers
            while time.monotonic() < deadline:
                status = await client.call_tool("server_status", {})
                first = status.content[0]
                assert isinstance(first, TextContent), first
                seen.append(first.text)
                if re.search(r"^basedpyright +(starting|ready) ", seen[-1], re.MULTILINE):
                    break
                await asyncio.sleep(0.5)
        return seen

    seen = asyncio.run(run())
    assert re.search(r"^basedpyright +(starting|ready) ", seen[-1], re.MULTILINE), seen[-1]
    assert re.search(r"^gopls +stopped ", seen[-1], re.MULTILINE)  # no Go here: not started
    assert main_languages(["a.py", "b.py", "c.py", "d.py", "tests/test_c.py", "web/app.js"]) == {"python": "a.py"}
    assert main_languages(["a.py", "b.go", "README.md"]) == {"python": "a.py", "go": "b.go"}


def test_an_edit_back_to_a_checked_state_takes_its_kept_errors(tmp_path: Path) -> None:
    """A rename and the rename back: the second write returns the workspace to the state the first
    one's check had before it, so its check takes those errors (the server's answers for exactly
    that content) on both sides and asks the server nothing; the error the first edit made is
    found fixed, and the check is as whole as before."""
    from tests.test_lsp_e2e import require
    from tests.test_verification import _two_hops

    require("basedpyright")
    _two_hops(tmp_path)
    asked: list[str] = []

    async def steps(client: Client, engine: Engine) -> Any:
        _count_diagnostics(engine, asked)
        await client.call_tool("read_file", {"path": "a.py"})
        there = await client.call_tool("edit_file", {"path": "a.py", "old_string": "def f(", "new_string": "def renamed(",
                                                     "apply": True, "check": "full"})
        asked_there = list(asked)
        asked.clear()
        back = await client.call_tool("edit_file", {"path": "a.py", "old_string": "def renamed(", "new_string": "def f(",
                                                    "apply": True, "check": "full", "structured": True})
        return there, asked_there, back

    there, asked_there, back = _server_session(tmp_path, steps)
    assert "checked 4 of 4 file(s): 1 new error(s)" in there.content[0].text and "c.py" in asked_there
    assert not back.is_error and "checked 4 of 4 file(s): no new errors" in back.content[0].text, back.content[0].text
    verified = back.structured_content["verified"]
    assert verified["complete"] and verified["new_errors"] == [] and [e["file"] for e in verified["fixed_errors"]] == ["c.py"]
    assert asked == []


def _count_diagnostics(engine: Engine, asked: list[str]) -> None:
    """The engine's real server still answers; each diagnostics request's file is noted in ``asked``."""
    services = engine.services
    assert services is not None
    answer = services.diagnostics

    def counted(source: Any, *args: Any, **kwargs: Any) -> Any:
        asked.append(source.path)
        return answer(source, *args, **kwargs)

    services.diagnostics = counted  # type: ignore[method-assign]
