"""The trust model: a read runs nothing the workspace chose, unless the workspace is trusted.

Each workspace here ships programs that leave a mark outside it when run: a ``.venv/bin/python``
(a shell script that appends a line to a marker file, then runs the real Python), or a
``node_modules/typescript`` whose ``tsserver.js`` does the same. Real servers and the real CLI;
each case is checked both ways, so that it can fail: untrusted, nothing is run; with ``--trust``
(or ``trust_workspace_python``), the workspace's interpreter is what runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_pool.registry import SPECS_BY_ID, locate

GRAFT = [sys.executable, "-m", "frontends.cli.entry"]
REPO = Path(__file__).resolve().parent.parent


def _workspace(tmp_path: Path) -> tuple[Path, Path]:
    root, marker = tmp_path / "ws", tmp_path / "ran.txt"
    python = root / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\nexec {sys.executable} "$@"\n')
    python.chmod(0o755)
    (root / "a.py").write_text("def f():\n    return 1\n\n\nVALUE = f()\n")
    (root / "b.py").write_text("from a import f\n\n\ndef g():\n    return f()\n")
    return root, marker


def _graft(root: Path, *argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run([*GRAFT, "--no-daemon", *argv], cwd=root, env=environment, capture_output=True, text=True,
                          timeout=240, check=False)


def _ran(marker: Path) -> str:
    return marker.read_text() if marker.exists() else ""


needs_basedpyright = pytest.mark.skipif(locate(SPECS_BY_ID["basedpyright"]) is None, reason="basedpyright is not installed")
needs_jedi_server = pytest.mark.skipif(locate(SPECS_BY_ID["jedi-language-server"]) is None,
                                       reason="jedi-language-server is not installed")


@needs_basedpyright
@pytest.mark.parametrize("command", [("find", "a.py:f"), ("outline", "a.py")])
def test_a_read_through_basedpyright_runs_the_workspace_python_only_when_trusted(tmp_path: Path, command: tuple[str, ...]) -> None:
    root, marker = _workspace(tmp_path)
    untrusted = _graft(root, "--json", "--source", "lsp", *command)
    assert untrusted.returncode == 0, untrusted.stderr
    assert _ran(marker) == "", "an untrusted read ran the workspace's .venv/bin/python"
    trusted = _graft(root, "--trust", "--json", "--source", "lsp", *command)
    assert trusted.returncode == 0, trusted.stderr
    assert str(root / ".venv" / "bin" / "python") in _ran(marker), "with --trust basedpyright runs the workspace's Python"


@needs_basedpyright
def test_only_the_users_own_config_trusts_a_workspace_never_the_checkouts(tmp_path: Path) -> None:
    root, marker = _workspace(tmp_path)
    user_config = tmp_path / "config"
    env = {"XDG_CONFIG_HOME": str(user_config)}
    # A project's own pyright config naming an interpreter is overridden unless trusted.
    (root / "pyrightconfig.json").write_text('{"pythonPath": ".venv/bin/python"}')
    assert _graft(root, "--source", "lsp", "find", "a.py:f", env=env).returncode == 0
    assert _ran(marker) == ""
    # The checkout granting itself trust is the attack, not a grant: noted, and nothing runs.
    (root / ".graft.toml").write_text("trust_workspace_python = true\n")
    shipped = _graft(root, "--source", "lsp", "find", "a.py:f", env=env)
    assert shipped.returncode == 0, shipped.stderr
    assert _ran(marker) == "" and "cannot grant itself" in shipped.stderr
    # The user's own config, outside the workspace, does grant it: for this folder...
    (user_config / "codegraft").mkdir(parents=True)
    (user_config / "codegraft" / "config.toml").write_text(f'[trust]\nworkspaces = ["{root}"]\n')
    assert _graft(root, "--source", "lsp", "find", "a.py:f", env=env).returncode == 0
    assert str(root / ".venv" / "bin" / "python") in _ran(marker)
    # ...or for every workspace.
    marker.unlink()
    (user_config / "codegraft" / "config.toml").write_text("[tool.graft]\ntrust_workspace_python = true\n")
    assert _graft(root, "--source", "lsp", "find", "a.py:f", env=env).returncode == 0
    assert str(root / ".venv" / "bin" / "python") in _ran(marker)


@needs_jedi_server
def test_a_read_through_jedi_language_server_runs_the_workspace_python_only_when_trusted(tmp_path: Path) -> None:
    root, marker = _workspace(tmp_path)
    (root / ".graft.toml").write_text('[servers]\npython = "jedi-language-server"\n')
    # $VIRTUAL_ENV naming the workspace's .venv is what jedi would follow on its own.
    env = {"VIRTUAL_ENV": str(root / ".venv")}
    untrusted = _graft(root, "--source", "lsp", "outline", "a.py", env=env)
    assert untrusted.returncode == 0, untrusted.stderr
    assert _ran(marker) == ""
    trusted = _graft(root, "--trust", "--source", "lsp", "outline", "a.py", env=env)
    assert trusted.returncode == 0, trusted.stderr
    assert str(root / ".venv" / "bin" / "python") in _ran(marker)


def test_the_engine_jedi_runs_the_workspace_python_only_when_trusted(tmp_path: Path) -> None:
    root, marker = _workspace(tmp_path)
    env = {"VIRTUAL_ENV": str(root / ".venv")}
    untrusted = _graft(root, "--json", "--source", "ast", "rename", "a.py:f", "h", env=env)
    assert untrusted.returncode == 0, untrusted.stderr
    assert _ran(marker) == ""
    trusted = _graft(root, "--trust", "--json", "--source", "ast", "rename", "a.py:f", "h", env=env)
    assert trusted.returncode == 0, trusted.stderr
    assert str(root / ".venv" / "bin" / "python") in _ran(marker)


def test_a_move_imports_the_project_only_when_trusted_and_says_so(tmp_path: Path) -> None:
    root, marker = _workspace(tmp_path)
    (root / "c.py").write_text("")
    untrusted = _graft(root, "--source", "ast", "move", "a.py:f", "c.py")
    assert untrusted.returncode == 0, untrusted.stderr
    assert _ran(marker) == ""
    assert "import check skipped: it would run the project's own code" in untrusted.stdout + untrusted.stderr
    trusted = _graft(root, "--trust", "--source", "ast", "move", "a.py:f", "c.py")
    assert trusted.returncode == 0, trusted.stderr
    assert str(root / ".venv" / "bin" / "python") in _ran(marker)


@pytest.mark.skipif(locate(SPECS_BY_ID["typescript-language-server"]) is None, reason="typescript-language-server is not installed")
def test_typescript_language_server_loads_the_workspace_typescript_only_when_trusted(tmp_path: Path) -> None:
    root, marker = tmp_path / "ws", tmp_path / "ran.txt"
    lib = root / "node_modules" / "typescript" / "lib"
    lib.mkdir(parents=True)
    installed = Path(shutil.which("typescript-language-server") or "")
    (lib.parent / "package.json").write_text('{"name": "typescript", "version": "5.9.2"}')
    (lib / "tsserver.js").write_text(f"require('fs').appendFileSync({str(marker)!r}, 'tsserver ran\\n');\n")
    (root / "a.ts").write_text("export function f(): number {\n  return 1;\n}\n")
    (root / "tsconfig.json").write_text('{"compilerOptions": {"strict": true}}')
    assert installed.name
    untrusted = _graft(root, "--source", "lsp", "outline", "a.ts")
    assert untrusted.returncode == 0, untrusted.stderr
    assert _ran(marker) == ""
    _graft(root, "--trust", "--source", "lsp", "outline", "a.ts")  # the planted tsserver answers nothing
    assert "tsserver ran" in _ran(marker)


@pytest.mark.skipif(locate(SPECS_BY_ID["gopls"]) is None, reason="gopls is not installed")
def test_gopls_runs_with_the_local_toolchain_unless_trusted(tmp_path: Path) -> None:
    from engine.workspace import Workspace, WorkspaceConfig
    from lsp_pool.adapter import PoolServices

    root = tmp_path / "ws"
    root.mkdir()
    (root / "go.mod").write_text("module example.com/m\n\ngo 1.21\n")
    (root / "m.go").write_text("package m\n\nfunc F() int { return 1 }\n")
    environment = {key: value for key, value in os.environ.items() if key != "GOTOOLCHAIN"}
    seen = {}
    for trust in (False, True):
        services = PoolServices(Workspace(root, WorkspaceConfig(trust_workspace_python=trust)))
        try:
            original = dict(os.environ)
            os.environ.clear()
            os.environ.update(environment)
            try:
                services.start_for_workspace()
            finally:
                os.environ.clear()
                os.environ.update(original)
            pid = next(s.pid for s in services.status() if s.id == "gopls")
            assert pid is not None
            variables = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            seen[trust] = b"GOTOOLCHAIN=local" in variables
        finally:
            services.close()
    assert seen == {False: True, True: False}
