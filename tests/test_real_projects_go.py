"""codegraft with gopls on real Go modules (benchmarks/real_projects_go.toml), judged as
benchmarks/real_projects_go.py judges them: the module's own tests green with the same count,
go build and go vet clean, no stale identifier, only the right files changed, gofmt kept; a case
whose correct outcome is a refusal is refused with its code and writes nothing. Here the cases
marked ``ci = true`` (one or more of every category); ``bench_real_projects.py --language go``
runs them all.

Marked ``realprojects``: the pinned modules come from the Go module proxy on first use
(benchmarks/.corpus/go/, every later run offline).
"""

from __future__ import annotations

import shutil
import sys
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
if TYPE_CHECKING:  # mypy knows benchmarks/ as the package it is; pytest imports the module from sys.path
    from benchmarks import real_projects_go as corpus
else:
    import real_projects_go as corpus

CASE_BUDGET = 200
"""Seconds one case may take on a loaded host: gopls started on a fresh copy, the plan applied,
then go build, go vet and the module's tests (a few seconds each when the machine is idle)."""
SETUP_BUDGET = 900
"""Seconds the module's set-up may take: the pinned modules downloaded (once) and each one's
build, vet and tests run as it is. pytest-timeout charges a module fixture to the first test that
asks for it, so every test has this budget on top of its own."""
pytestmark = [pytest.mark.realprojects, pytest.mark.timeout(SETUP_BUDGET + CASE_BUDGET)]

PROJECTS = tomllib.loads(corpus.DATA.read_text(encoding="utf-8"))["project"]
CASES = [(project, case) for project in PROJECTS for case in project["case"] if case.get("ci")]
PROJECTS = [project for project in PROJECTS if any(p is project for p, _case in CASES)]


def _missing_tools() -> str | None:
    missing = [tool for tool in ("go", "gopls", "gofmt") if shutil.which(tool) is None]
    return f"{', '.join(missing)} not installed (.ci/install-servers installs them)" if missing else None


@pytest.fixture(scope="module")
def baselines() -> dict[str, corpus.Baseline]:
    missing = _missing_tools()
    if missing:
        pytest.skip(missing)
    return {str(project["name"]): corpus.green_baseline(project) for project in PROJECTS}  # BaselineRed names the failure


def case_id(project: dict[str, object], case: dict[str, object]) -> str:
    return f"{project['name']}-{case['op']}-{case['old']}" + (f"-{case['expect']}" if "expect" in case else "")


def test_every_category_is_in_the_ci_subset() -> None:
    kinds = {(str(case["op"]), str(case.get("expect", "applied"))) for _project, case in CASES}
    assert {"rename", "move", "rename-file", "delete"} <= {op for op, _expect in kinds}
    assert {"rename_conflict", "other_build_configurations", "warning", "build_constraints_change"} <= {e for _op, e in kinds}


@pytest.mark.parametrize(("project", "case"), CASES, ids=[case_id(p, c) for p, c in CASES])
def test_real_go_module_case(project: dict[str, object], case: dict[str, object], baselines: dict[str, corpus.Baseline],
                             tmp_path: Path) -> None:
    outcome = corpus.attempt(baselines[str(project["name"])], str(project["module"]), case, tmp_path)
    assert outcome.why == ""
