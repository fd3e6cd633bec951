"""The import check runs the project's modules with the project's own Python, found as its
language server finds it: a pyright config's ``venvPath``/``venv`` (issue 41: test modules were
skipped with "No module named pytest" under codegraft's interpreter)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from engine.workspace import Workspace, WorkspaceConfig
from process_tools.adapter import ProcessTools

_PROBE = "import sys\nassert sys.prefix.endswith('proj'), 'ran by ' + sys.prefix\n"


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text('[tool.pyright]\nvenvPath = "envs"\nvenv = "proj"\n')
    (root / "probe.py").write_text(_PROBE)
    # A real environment, outside the places codegraft looked before (.venv, venv).
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "envs" / "proj")], check=True, timeout=120)
    return root


def test_a_trusted_workspace_imports_with_the_environment_its_pyright_config_names(tmp_path: Path) -> None:
    root = _project(tmp_path)
    tools = ProcessTools(Workspace(root, WorkspaceConfig(trust_workspace_python=True)))
    ok, output = tools.import_module(root, ["."], "probe")
    assert ok, output


def test_an_untrusted_workspace_never_runs_the_environment_its_config_names(tmp_path: Path) -> None:
    root = _project(tmp_path)
    tools = ProcessTools(Workspace(root, WorkspaceConfig(trust_workspace_python=False)))
    ok, output = tools.import_module(root, ["."], "probe")
    assert not ok and "ran by" in output
