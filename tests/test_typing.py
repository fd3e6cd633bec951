"""mypy over the library packages, the tests and the benchmarks, in CI: the code is type-checked,
not only type-annotated."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO

PACKAGES = ("engine", "lsp_pool", "frontends", "process_tools")
CHECKED = (*PACKAGES, "tests", "benchmarks")
"""One mypy run over all of it: a module the tests import is then read once, and .mypy_cache serves the next run."""


def test_mypy_finds_no_errors() -> None:
    # mypy is in the test extra; its settings are pyproject.toml's [tool.mypy].
    ran = subprocess.run([sys.executable, "-m", "mypy", *CHECKED], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stdout[-6000:] + ran.stderr[-2000:]
    assert "Success: no issues found" in ran.stdout
