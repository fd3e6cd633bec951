"""An agent's session over MCP (the official SDK's client) on a real project: it looks around,
reads a long function, extracts a helper from it (a dry run first), extracts a variable and
inlines a call elsewhere, then runs the project's own tests, vet and gofmt, and undoes its last
step (issue 44).

The project is hashicorp/go-version v1.7.0 (MPL-2.0, its LICENSE beside it), copied unchanged
into fixtures/go-version from the Go module proxy; its tests need nothing but the Go toolchain.
The refactorings are gopls's, through codegraft (engine/refactor/code_actions.py).
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client

from engine.api import Engine, SourcePreference
from engine.ports import load_tools
from engine.workspace import Workspace
from frontends.mcp_server import build_server
from lsp_pool.adapter import PoolServices
from tests.conftest import REPO
from tests.test_lsp_e2e import only, require

pytestmark = pytest.mark.e2e

FIXTURE = REPO / "fixtures" / "go-version"


def go(root: Path, *command: str) -> str:
    ran = subprocess.run(list(command), cwd=root, capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, f"{' '.join(command)}:\n{ran.stdout}{ran.stderr}"
    return ran.stdout


def healthy(root: Path) -> None:
    """The project's own suite passes, go vet says nothing and gofmt lists no file."""
    go(root, "go", "vet", "./...")
    assert "ok" in go(root, "go", "test", "-count=1", "./...")
    assert go(root, "gofmt", "-l", ".") == ""


def line_of(root: Path, text: str) -> int:
    """The 1-based line where ``text`` first occurs in version.go, as an agent reading the file finds it."""
    return next(n for n, line in enumerate((root / "version.go").read_text().splitlines(), 1) if text in line)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    require("gopls")
    if shutil.which("go") is None or shutil.which("gofmt") is None:
        pytest.skip("the Go toolchain is not installed here")
    root = tmp_path / "go-version"
    shutil.copytree(FIXTURE, root)
    return root


async def session(client: Client, root: Path) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    seen["overview"] = await client.call_tool("project_overview", {})
    seen["outline"] = await client.call_tool("file_outline", {"path": "version.go"})
    seen["compare"] = await client.call_tool("read_symbol", {"address": "version.go:Version/Compare"})
    first, last = line_of(root, "lenSelf := len(segmentsSelf)"), line_of(root, "hS = lenOther") + 1
    helper = {"address": "version.go:Version/Compare", "lines": f"{first}-{last}", "new_name": "highestSpecificity",
              "structured": True}
    seen["dry"] = await client.call_tool("extract_function", helper)
    seen["untouched"] = (root / "version.go").read_text() == (FIXTURE / "version.go").read_text()
    seen["extracted"] = await client.call_tool("extract_function", {**helper, "apply": True})
    seen["variable"] = await client.call_tool("extract_variable", {
        "address": "version.go:newVersion", "match": "matches[1]", "new_name": "core", "apply": True, "structured": True})
    call = line_of(root, "if !allZero(segmentsOther[i:]) {")
    column = (root / "version.go").read_text().splitlines()[call - 1].index("allZero") + 1
    seen["inlined"] = await client.call_tool("inline_symbol", {"address": f"version.go:{call}:{column}", "apply": True,
                                                               "structured": True})
    seen["after_three"] = (root / "version.go").read_text()
    seen["undone"] = await client.call_tool("undo_edit", {})
    return seen


def test_an_agent_extracts_a_helper_from_a_long_go_method_and_the_suite_stays_green(project: Path) -> None:
    healthy(project)
    workspace = Workspace(project)
    engine = Engine(workspace, services=PoolServices(workspace, only("gopls")), tools=load_tools(workspace),
                    source=SourcePreference.AUTO)

    async def run() -> dict[str, Any]:
        async with Client(build_server(engine)) as client:
            return await session(client, project)

    try:
        seen = asyncio.run(run())
    finally:
        engine.close()
    for step in ("overview", "outline", "compare", "dry", "extracted", "variable", "inlined", "undone"):
        assert not seen[step].is_error, (step, seen[step].content[0].text)
    assert "version.go" in seen["overview"].content[0].text and "Compare" in seen["outline"].content[0].text
    dry = seen["dry"].structured_content
    assert dry["applied"] is False and "highestSpecificity(" in dry["diff"] and seen["untouched"]
    assert seen["variable"].structured_content["applied"] is True and seen["inlined"].structured_content["applied"] is True
    after = seen["after_three"]
    assert "highestSpecificity(" in after and "\tcore := matches[1]\n" in after and "newFunction" not in after
    assert after.count("allZero(") == (FIXTURE / "version.go").read_text().count("allZero(") - 1
    # The last step (the inline) is undone; the two extractions stay, and the project is as healthy as it was.
    now = (project / "version.go").read_text()
    assert "highestSpecificity(" in now and "\tcore := matches[1]\n" in now
    assert now.count("allZero(") == (FIXTURE / "version.go").read_text().count("allZero(")
    healthy(project)
