"""The project's own test suite for bench_agent.py's Python tasks: run once on the untouched copy
(the baseline), then in the state each editing task leaves; a test that passed before and fails
after is a broken test, counted against the tool whose edit it was.

werkzeug's suite runs in a virtual environment of its own under benchmarks/.corpus, made from the
sdist's pinned ``requirements/tests.txt``. Its live-server tests (``test_serving.py``,
``test_debug.py`` and the ``dev_server`` mark) start servers in other processes and are left out:
they test werkzeug's serving, which no task edits, and they hang without a free port.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.MULTILINE)
_SUMMARY = re.compile(r"\b\d+ (?:passed|failed|errors?)\b")


@dataclass
class Suite:
    """A project's test command, and what failed on the untouched copy."""

    command: list[str]
    environment: dict[str, str]
    baseline: frozenset[str] = frozenset()

    def failing(self, root: Path) -> frozenset[str]:
        """The tests that fail (or error) in ``root`` as it is; refused when pytest gives no summary."""
        ran = subprocess.run(self.command, cwd=root, env=self.environment, capture_output=True, text=True, timeout=900)
        if not _SUMMARY.search(ran.stdout):
            raise RuntimeError(f"the suite gave no summary in {root} (exit {ran.returncode}): {ran.stdout[-400:]}{ran.stderr[-400:]}")
        return frozenset(_FAILED.findall(ran.stdout))

    def broken(self, root: Path) -> list[str]:
        """Tests that passed on the untouched copy and fail now."""
        return sorted(self.failing(root) - self.baseline)


def werkzeug_suite(source: Path, corpus: Path, copy: Path) -> Suite:
    """werkzeug's suite in its own environment, its baseline taken on ``copy`` (untouched)."""
    venv = corpus / "werkzeug-tests-venv"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "-r", str(source / "requirements" / "tests.txt"),
                        "markupsafe"], check=True)
    environment = {**os.environ, "PYTHONPATH": "src", "PYTHONDONTWRITEBYTECODE": "1"}
    command = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE", "tests", "--ignore=tests/test_serving.py",
               "--ignore=tests/test_debug.py", "-m", "not dev_server", "--timeout", "60"]
    suite = Suite(command, environment)
    suite.baseline = suite.failing(copy)
    return suite
