"""ruff's stated rules (pyproject.toml, [tool.ruff.lint]) pass on all the code, inside the suite:
CI runs only the README's pytest command."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

LINTED = ("engine", "lsp_pool", "frontends", "process_tools", "tests", "benchmarks")

needs_ruff = pytest.mark.skipif(importlib.util.find_spec("ruff") is None,
                                reason="ruff is not installed: pip install -e '.[test]'")


def ruff(*arguments: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format=concise", *arguments],
                          cwd=cwd, capture_output=True, text=True, timeout=240)


@needs_ruff
def test_ruff_finds_nothing() -> None:
    result = ruff(*LINTED)
    assert result.returncode == 0, result.stdout + result.stderr


@needs_ruff
def test_ruff_reads_the_projects_rules(tmp_path: Path) -> None:
    """Guard against a lint that passes because it checks nothing: with the project's settings,
    an unused import in a linted folder is a finding."""
    probe = tmp_path / "probe.py"
    probe.write_text("import os\n", encoding="utf-8")
    result = ruff("--config", str(REPO / "pyproject.toml"), str(probe))
    assert result.returncode == 1 and "F401" in result.stdout, result.stdout + result.stderr
