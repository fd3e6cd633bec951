"""Extract and inline through the front ends: the CLI (`graft extract-function`, `graft inline`)
and MCP (`extract_function`, `inline_symbol`, over the official SDK's client); a dry run until
applied, applied through the journal, undone, and refused with the engine's code."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client

from engine.api import Engine, SourcePreference
from engine.workspace import Workspace
from frontends.cli.main import main
from frontends.mcp_server import build_server

SOURCE = '''\
def report(orders, limit):
    header = "Orders"
    # count what is big
    big = 0
    for order in orders:
        if order > limit:
            big += 1
    return f"{header}: {big}"


def bump(count):
    count += 1
    return count
'''

EXTRACTED = '''\
def report(orders, limit):
    header = "Orders"
    big = count_big(orders, limit)
    return f"{header}: {big}"


def count_big(orders, limit):
    # count what is big
    big = 0
    for order in orders:
        if order > limit:
            big += 1
    return big


def bump(count):
    count += 1
    return count
'''


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "orders.py").write_text(SOURCE)
    return tmp_path


def graft(project: Path, *argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main(["--root", str(project), "--source", "ast", "--json", *argv])
    return code, json.loads(capsys.readouterr().out)


def test_the_cli_previews_then_applies_an_extracted_function_and_refuses_inlining_a_reassigned_variable(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, dry = graft(project, "extract-function", "orders.py:report", "count_big", "--lines", "3-7", capsys=capsys)
    assert code == 0 and dry["applied"] is False and "+def count_big(orders, limit):" in dry["diff"]
    assert (project / "orders.py").read_text() == SOURCE
    code, done = graft(project, "extract-function", "orders.py:3:5-7:21", "count_big", "--apply", "--allow-dirty", capsys=capsys)
    assert code == 0 and done["applied"] is True
    assert (project / "orders.py").read_text() == EXTRACTED
    code, refused = graft(project, "inline", "orders.py:bump", "--match", "count +=", capsys=capsys)
    assert code == 1 and refused["error"]["code"] == "reassigned"
    assert (project / "orders.py").read_text() == EXTRACTED


def test_mcp_extracts_a_function_as_a_dry_run_until_applied_undoes_it_and_refuses_with_the_code(project: Path) -> None:
    engine = Engine(Workspace(project), source=SourcePreference.AST)

    async def steps(client: Client) -> Any:
        arguments = {"address": "orders.py:report", "lines": "3-7", "new_name": "count_big", "structured": True}
        dry = await client.call_tool("extract_function", arguments)
        unchanged = (project / "orders.py").read_text()
        done = await client.call_tool("extract_function", {**arguments, "apply": True, "allow_dirty": True})
        changed = (project / "orders.py").read_text()
        undone = await client.call_tool("undo_edit", {})
        refused = await client.call_tool("inline_symbol", {"address": "orders.py:12:5"})
        return dry, unchanged, done, changed, undone, refused

    async def run() -> Any:
        async with Client(build_server(engine)) as client:
            return await steps(client)

    try:
        dry, unchanged, done, changed, undone, refused = asyncio.run(run())
    finally:
        engine.close()
    assert not dry.is_error and dry.structured_content["applied"] is False, dry.content[0].text
    assert "+def count_big(orders, limit):" in dry.structured_content["diff"] and unchanged == SOURCE
    assert not done.is_error and changed == EXTRACTED, done.content[0].text
    assert not undone.is_error and (project / "orders.py").read_text() == SOURCE
    assert refused.is_error and refused.structured_content["error"]["code"] == "reassigned"


def test_introduce_parameter_through_the_cli_and_mcp_with_its_refusal_codes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`graft introduce-parameter` and MCP `introduce_parameter`: the header's text becomes a
    default, applied; reading a local is refused with the engine's code, nothing written."""
    code, dry = graft(project, "introduce-parameter", "orders.py:report", "title", "--match", '"Orders"', capsys=capsys)
    assert code == 0 and dry["applied"] is False and '+def report(orders, limit, title="Orders"):' in dry["diff"]
    code, refused = graft(project, "introduce-parameter", "orders.py:report", "bound", "--match", "order > limit",
                          capsys=capsys)
    assert code == 1 and refused["error"]["code"] == "reads_local"
    assert (project / "orders.py").read_text() == SOURCE
    engine = Engine(Workspace(project), source=SourcePreference.AST)

    async def run() -> Any:
        async with Client(build_server(engine)) as client:
            done = await client.call_tool("introduce_parameter", {"address": "orders.py:report", "match": '"Orders"',
                                                                  "new_name": "title", "apply": True, "allow_dirty": True})
            passed = await client.call_tool("introduce_parameter", {"address": "orders.py:bump", "match": "1",
                                                                    "new_name": "step", "pass_at_calls": True})
            return done, passed

    try:
        done, passed = asyncio.run(run())
    finally:
        engine.close()
    assert not done.is_error, done.content[0].text
    assert '    header = title\n' in (project / "orders.py").read_text()
    # Nothing in the workspace calls bump: no call to change, and a warning for the callers outside it.
    assert not passed.is_error and "calls outside this workspace do not pass step" in passed.content[0].text, passed.content[0].text
