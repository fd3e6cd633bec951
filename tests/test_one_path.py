"""One path for every front end (issue 42): the same refusal, with the same code, through the CLI,
MCP (the official SDK's stdio client), LSP (a pygls client) and the Python API, and nothing written.

The request replaces a function's body with one that leaves an unclosed parenthesis: an apply's
syntax check refuses it (``syntax_errors``). The LSP server hands its edits to the editor to write,
so the guard has to hold before the edit is sent, as it does before the CLI and MCP write."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from pygls.lsp.client import LanguageClient

from engine.api import Engine, SourcePreference
from engine.client import EngineClient
from engine.errors import GraftError
from engine.refactor.operations.replace_symbol import Replace
from engine.workspace import Workspace
from frontends.cli.main import main
from tests.conftest import SAMPLE

GRAFT = shutil.which("graft", path=str(Path(sys.executable).parent))
ADDRESS = "shop/pricing.py:with_vat"
BROKEN = "def with_vat(amount: Decimal) -> Decimal:\n    return (amount\n"
EXPECTED = "syntax_errors"


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".graft"))
    return root


def _cli(project: Path, capsys: pytest.CaptureFixture[str]) -> str:
    body = project.parent / "body.py"
    body.write_text(BROKEN)
    code = main(["--source", "ast", "--json", "--root", str(project), "replace", ADDRESS, "--body-file", str(body), "--apply"])
    answer = json.loads(capsys.readouterr().out)
    assert code == 1, answer
    return str(answer["error"]["code"])


def _mcp(project: Path) -> str:
    assert GRAFT is not None, "graft is installed with the package"
    params = StdioServerParameters(command=GRAFT, args=["mcp", "--root", str(project), "--source", "ast"])

    async def run() -> Any:
        async with Client(params) as client:
            return await client.call_tool("replace_symbol_body", {"address": ADDRESS, "text": BROKEN, "apply": True})

    answer = asyncio.run(run())
    assert answer.is_error, answer
    return str(answer.structured_content["error"]["code"])


def _lsp(project: Path) -> tuple[str, list[t.ApplyWorkspaceEditParams]]:
    assert GRAFT is not None, "graft is installed with the package"
    sent: list[t.ApplyWorkspaceEditParams] = []

    async def run() -> Any:
        client = LanguageClient("graft-test", "1")

        @client.feature(t.WORKSPACE_APPLY_EDIT)
        def apply_edit(params: t.ApplyWorkspaceEditParams) -> t.ApplyWorkspaceEditResult:
            sent.append(params)  # an editor would write it: the test only records that it was sent
            return t.ApplyWorkspaceEditResult(applied=True)

        await client.start_io(GRAFT, "lsp", "--source", "ast")
        await client.initialize_async(t.InitializeParams(
            capabilities=t.ClientCapabilities(workspace=t.WorkspaceClientCapabilities(
                apply_edit=True, workspace_edit=t.WorkspaceEditClientCapabilities(document_changes=True))),
            root_uri=project.as_uri()))
        client.initialized(t.InitializedParams())
        try:
            return await client.workspace_execute_command_async(t.ExecuteCommandParams(
                command=Replace.lsp_command, arguments=[{"address": ADDRESS, "text": BROKEN}]))
        finally:
            await client.shutdown_async(None)
            client.exit(None)
            await client.stop()

    answer = asyncio.run(run())
    assert answer["applied"] is False, answer
    return str(answer["error"]["code"]), sent


def _api(project: Path) -> str:
    engine = Engine(Workspace(project), source=SourcePreference.AST)
    try:
        EngineClient(engine).run_operation(Replace(ADDRESS, BROKEN), apply=True)
    except GraftError as refusal:
        return refusal.code
    finally:
        engine.close()
    raise AssertionError("the API applied an edit that leaves a syntax error")


def test_the_same_refusal_through_cli_mcp_lsp_and_the_api(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = (project / "shop" / "pricing.py").read_bytes()
    lsp_code, sent_to_editor = _lsp(project)
    codes = {"cli": _cli(project, capsys), "mcp": _mcp(project), "lsp": lsp_code, "api": _api(project)}
    assert codes == dict.fromkeys(codes, EXPECTED)
    assert sent_to_editor == [], "the LSP server sent the editor an edit its guards refuse"
    assert (project / "shop" / "pricing.py").read_bytes() == before
