"""codegraft's renames and moves on real PyPI projects (benchmarks/real_projects.toml), judged
by each project's own test suite: green with the same count, no stale reference, only the
files that should change. The same cases run against rope and jedi in
benchmarks/bench_real_projects.py; here only codegraft, without a server, must pass them all.

Marked ``realprojects``: the pinned sdists come from PyPI on first use (benchmarks/.corpus/).
"""

from __future__ import annotations

import shutil
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import bench_real_projects as bench  # noqa: E402

pytestmark = pytest.mark.realprojects

PROJECTS = tomllib.loads(bench.DATA.read_text(encoding="utf-8"))["project"]
# CI runs every case of the projects marked ci = "all" and the cases marked ci = true of the
# others (the whole corpus, in benchmarks/bench_real_projects.py, takes longer than CI may).
CASES = [(project, case) for project in PROJECTS for case in project["case"] if project.get("ci") == "all" or case.get("ci")]
PROJECTS = [project for project in PROJECTS if any(p is project for p, _case in CASES)]


@pytest.fixture(scope="module")
def baselines() -> dict[str, tuple[Path, int, dict[str, str], dict[str, str]]]:
    """Per project: the unpacked sdist, its passing test count, file digests and Python texts."""
    found = {}
    for project in PROJECTS:
        source, count = bench.green_baseline(project)  # raises BaselineRed with the suite's tail
        digest = bench.digest(source)
        found[project["name"]] = (source, count, digest, bench.pristine_texts(source, list(digest)))
    return found


@pytest.mark.parametrize(("project", "case"), CASES, ids=[f"{p['name']}-{c['op']}-{c['old']}" for p, c in CASES])
def test_real_project_case(project: dict[str, object], case: dict[str, object], baselines: dict, tmp_path: Path) -> None:
    source, count, before, texts = baselines[str(project["name"])]
    root = tmp_path / "project"
    shutil.copytree(source, root)
    graft, error = None, None
    try:
        graft = bench.codegraft(root, case, server=False)
    except Exception as raised:  # noqa: BLE001 - a refusal may be the expected outcome; the verdict decides
        error = raised
    bench.PRISTINE.clear()
    bench.PRISTINE.update(texts)
    why, _note = bench.codegraft_verdict(root, before, project, case, count, False, graft, error)
    assert why == ""
