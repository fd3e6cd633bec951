"""Every front end builds its engine through open_engine, so each recovers a transaction a crash
interrupted before it answers anything, and tells its user in its own way."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from pathlib import Path

from lsprotocol import types as t
from pygls.lsp.client import LanguageClient

from tests.apply_worker import make_files
from tests.conftest import REPO

GRAFT = shutil.which("graft", path=str(Path(sys.executable).parent))


def interrupted(tmp_path: Path) -> Path:
    """A workspace whose first file an apply replaced before it was killed."""
    make_files(tmp_path, 3)
    crashed = subprocess.run([sys.executable, "-m", "tests.apply_worker", str(tmp_path), "3", "exit-at", "replaced:1"],
                             cwd=REPO, capture_output=True, text=True, check=False)
    assert crashed.returncode == 9, crashed.stderr
    assert (tmp_path / "f000.txt").read_text().startswith("new")
    return tmp_path


def test_the_mcp_server_recovers_on_start_and_says_so(tmp_path: Path) -> None:
    root = interrupted(tmp_path)
    assert GRAFT is not None
    # No client: the server starts, recovers, reads end of input and stops.
    ran = subprocess.run([GRAFT, "mcp", "--root", str(root), "--source", "ast"], input="", capture_output=True, text=True,
                         timeout=120, check=False)
    assert "graft mcp: rolled back transaction" in ran.stderr, ran.stderr
    assert (root / "f000.txt").read_text().startswith("old")


def test_the_lsp_server_recovers_on_initialize_and_shows_a_message(tmp_path: Path) -> None:
    root = interrupted(tmp_path)
    messages: list[str] = []

    async def run() -> None:
        client = LanguageClient("recovery", "1")

        @client.feature(t.WINDOW_SHOW_MESSAGE)
        def shown(params: t.ShowMessageParams) -> None:
            messages.append(params.message)

        assert GRAFT is not None, "graft is installed with the package"
        await client.start_io(GRAFT, "lsp", "--source", "ast")
        await client.initialize_async(t.InitializeParams(capabilities=t.ClientCapabilities(), root_uri=root.as_uri()))
        client.initialized(t.InitializedParams())
        # Any request after initialized is answered after it: by then the message was sent.
        await client.workspace_execute_command_async(t.ExecuteCommandParams("graft.outline", ["f000.txt"]))
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()

    asyncio.run(run())
    assert any("rolled back transaction" in message for message in messages), messages
    assert (root / "f000.txt").read_text().startswith("old")

