"""codegraft's renames and moves on real PyPI projects (benchmarks/real_projects.toml), judged
by each project's own test suite: green with the same count, no stale reference, only the
files that should change. The same cases run against rope and jedi in
benchmarks/bench_real_projects.py; here only codegraft, without a server, must pass them all.

Marked ``realprojects``: the pinned sdists come from PyPI on first use (benchmarks/.corpus/).
"""

from __future__ import annotations

import multiprocessing
import sys
import tomllib
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

import pytest

from tests.conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
if TYPE_CHECKING:  # mypy knows benchmarks/ as the package it is; pytest imports the module from sys.path, as before
    from benchmarks import bench_real_projects as bench
else:
    import bench_real_projects as bench

from tests.real_project_worker import judge_case  # noqa: E402

TIMEOUT = 280
"""Seconds a test waits for its case, so that a case that hangs fails as itself. The slowest
(parso's, most of it its own suite) takes far less on an idle host."""
SETUP_BUDGET = 1800
"""Seconds the module's set-up may take: the pinned sdists downloaded and unpacked (once, into
benchmarks/.corpus/), the projects' test dependencies installed, and each project's own suite
run as it is (``baselines``). pytest-timeout charges a module fixture to the test that first
asks for it, whichever that is (``-k`` picks), so every test here has this budget on top of its
own wait: under the suite-wide 300 s, a set-up slowed by a loaded host errored every case.
Bounded, so that a set-up that hangs (a download, an install) still fails."""
pytestmark = [pytest.mark.realprojects, pytest.mark.timeout(SETUP_BUDGET + TIMEOUT + 20)]

PROJECTS = tomllib.loads(bench.DATA.read_text(encoding="utf-8"))["project"]
# CI runs every case of the projects marked ci = "all" and the cases marked ci = true of the
# others (the whole corpus, in benchmarks/bench_real_projects.py, takes longer than CI may).
CASES = [(project, case) for project in PROJECTS for case in project["case"] if project.get("ci") == "all" or case.get("ci")]
PROJECTS = [project for project in PROJECTS if any(p is project for p, _case in CASES)]


WORKERS = 2
"""Cases judged at once, each in a process of its own (tests/real_project_worker.py): a case is
mostly its project's suite, another process, so one case at a time left a core idle (CI spent
about ten of its twenty minutes here)."""


@pytest.fixture(scope="module")
def baselines() -> dict[str, tuple[Path, int, dict[str, str], dict[str, str]]]:
    """Per project: the unpacked sdist, its passing test count, file digests and Python texts."""
    for project in PROJECTS:  # downloads and installs one after another: pip is not run twice at once
        bench.unpacked(project)
        bench.install_test_deps(project)
    with ThreadPoolExecutor(WORKERS) as pool:  # then the suites, each a process of its own
        greens = list(pool.map(bench.green_baseline, PROJECTS))  # raises BaselineRed with the suite's tail
    found = {}
    for project, (source, count) in zip(PROJECTS, greens):
        digest = bench.digest(source)
        found[project["name"]] = (source, count, digest, bench.pristine_texts(source, list(digest)))
    return found


@pytest.fixture(scope="module")
def verdicts(baselines: dict, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Future[str]]]:
    """Every case submitted at once to the workers, in order; each test waits for its own."""
    context = multiprocessing.get_context("spawn")  # the parent may hold threads: no fork
    with ProcessPoolExecutor(WORKERS, mp_context=context) as pool:
        futures = {}
        for project, case in CASES:
            source, count, before, texts = baselines[str(project["name"])]
            root = tmp_path_factory.mktemp("case") / "project"
            futures[case_id(project, case)] = pool.submit(judge_case, project, case, source, count, before, texts, root)
        yield futures
        for future in futures.values():
            future.cancel()  # those not started, when the run stops early


def case_id(project: dict[str, object], case: dict[str, object]) -> str:
    return f"{project['name']}-{case['op']}-{case['old']}"


@pytest.mark.parametrize(("project", "case"), CASES, ids=[case_id(p, c) for p, c in CASES])
def test_real_project_case(project: dict[str, object], case: dict[str, object], verdicts: dict[str, Future[str]]) -> None:
    assert verdicts[case_id(project, case)].result(timeout=TIMEOUT) == ""
