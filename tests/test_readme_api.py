"""The README's Python API example runs as written (on a copy of the fixture project)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, SAMPLE, tree_fingerprint

pytestmark = pytest.mark.e2e


def test_readme_python_example_plans_applies_and_undoes(tmp_path: Path) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    code = re.search(r"### Python API.*?```python\n(.*?)```", readme, re.S)
    assert code is not None, "the README lost its Python API example"
    shutil.copytree(SAMPLE, tmp_path / "fixtures" / "sample", ignore=shutil.ignore_patterns(".graft"))
    before = tree_fingerprint(tmp_path / "fixtures" / "sample")
    ran = subprocess.run([sys.executable, "-c", code.group(1)], cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert ran.returncode == 0, ran.stderr
    assert "+def discounted_total" in ran.stdout
    assert tree_fingerprint(tmp_path / "fixtures" / "sample") == before
