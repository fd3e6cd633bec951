"""Undo and redo as a stack per workspace (issue 43): five edits, three undone, one redone, the
files checked byte for byte after each step, through the Python API, the CLI and a real MCP
client session against `graft mcp` over stdio."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from engine.api import Engine, SourcePreference
from engine.client import EngineClient
from engine.workspace import Workspace
from frontends.cli.main import main
from tests.conftest import SAMPLE

FILES = ("shop/pricing.py", "shop/models.py", "shop/util.py")
EDITED = ("shop/pricing.py", "shop/models.py", "shop/pricing.py", "shop/util.py", "shop/models.py")
"""The file the n-th edit changes: two files edited twice, so an undo must restore the right layer."""


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".graft"))
    for number, path in enumerate(EDITED, start=1):
        with (root / path).open("a") as handle:
            handle.write(f"# slot-{number}\n")
    return root


def snapshot(project: Path) -> dict[str, bytes]:
    return {path: (project / path).read_bytes() for path in FILES}


Edit = Callable[[int], str]
"""Makes the n-th edit (slot-n → done-n in its file); returns its transaction."""
Step = Callable[[], tuple[str, str | None]]
"""An undo or a redo; returns (its transaction, the transaction it undid or redid)."""


def five_edits_undo_three_redo_one(project: Path, edit: Edit, undo: Step, redo: Step) -> None:
    states = [snapshot(project)]
    applied = []
    for number in range(1, 6):
        applied.append(edit(number))
        states.append(snapshot(project))
        assert states[-1] != states[-2]
    for undone_count in range(1, 4):
        _transaction, reverted = undo()
        assert reverted == applied[-undone_count], "each undo names the edit it undid, newest first"
        assert snapshot(project) == states[5 - undone_count]
    redo_transaction, redone = redo()
    assert redone == applied[2], "the redo re-applies the latest undone edit (the third)"
    assert snapshot(project) == states[3]
    # The redo is itself on the stack: undone again, then redone again.
    _transaction, reverted = undo()
    assert reverted == redo_transaction and snapshot(project) == states[2]
    redo()
    assert snapshot(project) == states[3]
    # The rest of the stack, newest undo first: the fourth edit, then the fifth.
    for number in (4, 5):
        _transaction, redone = redo()
        assert redone == applied[number - 1] and snapshot(project) == states[number]


def test_python_api(project: Path) -> None:
    engine = Engine(Workspace(project), source=SourcePreference.AST)
    client = EngineClient(engine, own_undo_only=True)  # the MCP sessions' rule: a stack of its own edits

    def edit(number: int) -> str:
        outcome = client.find_replace(f"slot-{number}", f"done-{number}", glob=EDITED[number - 1], apply=True)
        assert outcome.transaction is not None
        return outcome.transaction

    def undo() -> tuple[str, str | None]:
        outcome = client.undo()
        return outcome.transaction or "", outcome.reverted

    def redo() -> tuple[str, str | None]:
        outcome = client.redo()
        return outcome.transaction or "", outcome.reverted

    try:
        five_edits_undo_three_redo_one(project, edit, undo, redo)
        with pytest.raises(Exception) as nothing:
            client.redo()  # the session's redo stack is empty again
        assert getattr(nothing.value, "code", "") == "not_yours"
    finally:
        engine.close()


def test_cli(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def graft(*argv: str) -> dict[str, Any]:
        code = main(["--root", str(project), "--source", "ast", "--json", *argv])
        out = capsys.readouterr().out
        assert code == 0, out
        return json.loads(out)

    def edit(number: int) -> str:
        return str(graft("find-replace", f"slot-{number}", f"done-{number}", "--glob", EDITED[number - 1], "--apply")["transaction"])

    def undo() -> tuple[str, str | None]:
        answer = graft("undo")
        return answer["transaction"], answer["reverted"]

    def redo() -> tuple[str, str | None]:
        answer = graft("redo")
        return answer["transaction"], answer["reverted"]

    five_edits_undo_three_redo_one(project, edit, undo, redo)
    # A new edit empties the redo stack.
    undo()
    edit(5)
    code = main(["--root", str(project), "--source", "ast", "--json", "redo"])
    capsys.readouterr()
    assert code != 0


def test_mcp_session_over_stdio(project: Path) -> None:
    graft = shutil.which("graft", path=str(Path(sys.executable).parent))
    assert graft is not None
    params = StdioServerParameters(command=graft, args=["mcp", "--root", str(project), "--source", "ast"])

    async def run() -> None:
        async with Client(params) as client:
            loop = asyncio.get_running_loop()

            async def call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
                result = await client.call_tool(tool, {**arguments, "structured": True})
                assert not result.is_error, getattr(result.content[0], "text", "")
                return dict(result.structured_content or {})

            def sync(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
                return asyncio.run_coroutine_threadsafe(call(tool, arguments), loop).result()

            def edit(number: int) -> str:
                answer = sync("edit_file", {"path": EDITED[number - 1], "old_string": f"slot-{number}",
                                            "new_string": f"done-{number}", "apply": True})
                return str(answer["transaction"])

            def undo() -> tuple[str, str | None]:
                answer = sync("undo_edit", {})
                return answer["transaction"], answer["reverted"]

            def redo() -> tuple[str, str | None]:
                answer = sync("redo_edit", {})
                return answer["transaction"], answer["reverted"]

            for path in FILES:
                await client.call_tool("read_file", {"path": path})  # edit_file writes over what the session read
            await loop.run_in_executor(None, five_edits_undo_three_redo_one, project, edit, undo, redo)
            text = getattr((await client.call_tool("undo_edit", {})).content[0], "text", "")
            assert "undid" in text  # the answer's text names what it undid

    asyncio.run(run())


def test_redo_is_refused_when_the_files_changed_since_the_undo(project: Path) -> None:
    """The stack is the workspace's: the CLI's client (every transaction) redoes what another
    client undid, unless a file changed since; then nothing is written."""
    engine = Engine(Workspace(project), source=SourcePreference.AST)
    try:
        session_client, cli_client = EngineClient(engine, own_undo_only=True), EngineClient(engine)
        done = session_client.find_replace("slot-1", "done-1", glob=EDITED[0], apply=True)
        undone = session_client.undo()
        assert undone.reverted == done.transaction
        target = project / EDITED[0]
        target.write_bytes(target.read_bytes() + b"# changed by hand\n")
        changed = target.read_bytes()
        with pytest.raises(Exception) as refused:
            cli_client.redo()
        assert getattr(refused.value, "code", "") == "undo_refused" and "changed after transaction" in str(refused.value)
        assert target.read_bytes() == changed
        target.write_bytes(changed.replace(b"# changed by hand\n", b""))
        redone = cli_client.redo()
        assert redone.reverted == done.transaction and b"done-1" in target.read_bytes()
    finally:
        engine.close()
