"""A server older than codegraft supports is found but never started: refused, with the command
that installs a supported one (issue 40, item 1). Debian's gopls, 0.5 from 2020, prints "master"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_pool.pool import too_old
from lsp_pool.registry import SPECS_BY_ID, version_numbers
from tests.conftest import REPO


@pytest.mark.parametrize("printed, numbers", [
    ("golang.org/x/tools/gopls v0.23.0", (0, 23, 0)),
    ("golang.org/x/tools/gopls master", None),
    ("5.3.0", (5, 3, 0)),
    ("clangd version 22.1.1 (https://github.com/llvm/llvm-project 1234)", (22, 1, 1)),
    ("", None),
])
def test_versions_are_read_from_what_servers_print(printed: str, numbers: tuple[int, ...] | None) -> None:
    assert version_numbers(printed) == numbers


@pytest.mark.parametrize("printed, refused", [
    ("golang.org/x/tools/gopls v0.23.0", False),
    ("golang.org/x/tools/gopls v0.20.0", False),
    ("golang.org/x/tools/gopls v0.19.2", True),
    ("golang.org/x/tools/gopls master", True),  # Debian's 0.5
    (None, True),
])
def test_an_older_gopls_is_refused_with_the_command_that_installs_a_supported_one(printed: str | None, refused: bool) -> None:
    reason = too_old(SPECS_BY_ID["gopls"], printed)
    assert bool(reason) is refused
    if refused:
        assert "needs 0.20 or newer" in reason and "go install golang.org/x/tools/gopls@v0.23.0" in reason


def _fake_gopls(folder: Path) -> None:
    folder.mkdir()
    fake = folder / "gopls"
    fake.write_text("#!/bin/sh\necho 'golang.org/x/tools/gopls master'\necho '    golang.org/x/tools/gopls@(devel)'\n")
    fake.chmod(0o755)


def test_the_cli_refuses_debians_gopls_and_servers_says_why(tmp_path: Path) -> None:
    _fake_gopls(tmp_path / "bin")
    root = tmp_path / "mod"
    root.mkdir()
    (root / "go.mod").write_text("module example.com/m\n\ngo 1.21\n")
    (root / "m.go").write_text("package m\n\nfunc F() int { return 1 }\n")
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"}
    graft = [sys.executable, "-m", "frontends.cli.main", "--root", str(root), "--no-daemon", "--json"]
    outline = subprocess.run([*graft, "--source", "lsp", "outline", "m.go"], cwd=REPO, env=env, capture_output=True,
                             text=True, check=False, timeout=120)
    error = json.loads(outline.stdout)["error"]
    assert outline.returncode == 1 and error["code"] == "server_too_old"
    assert "gopls names no version (golang.org/x/tools/gopls master)" in error["message"]
    assert "go install golang.org/x/tools/gopls@v0.23.0" in error["message"]
    servers = subprocess.run([*graft, "servers"], cwd=REPO, env=env, capture_output=True, text=True, check=False, timeout=120)
    [gopls] = [s for s in json.loads(servers.stdout)["servers"] if s["id"] == "gopls"]
    assert gopls["state"] == "too-old" and "needs 0.20 or newer" in gopls["detail"]
