"""mypy over the library packages, in CI: the code is type-checked, not only type-annotated."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO

PACKAGES = ("engine", "lsp_pool", "frontends", "process_tools")


def test_mypy_finds_no_errors() -> None:
    # mypy is in the test extra; its settings are pyproject.toml's [tool.mypy].
    ran = subprocess.run([sys.executable, "-m", "mypy", *PACKAGES], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stdout[-6000:] + ran.stderr[-2000:]
    assert "Success: no issues found" in ran.stdout
