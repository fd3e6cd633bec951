"""codegraft's TypeScript/JavaScript refactorings on real npm packages (issue 40): the cases of
benchmarks/real_projects_ts.toml marked ``ci = true``, one or more per category (function,
method, class, interface member, property, parameter, type alias, enum member, overloads,
re-exports, move, rename-file, safe delete, name clash), judged as the whole corpus is by
benchmarks/real_projects_ts.py: the project's own tests, ``tsc --noEmit`` over its configs, no
stale reference, only the right files changed, formatting kept; a case marked ``expect`` must
be refused with that code. Each case runs on a fresh copy with a fresh language server.

Marked ``realprojects``: the pinned tarballs and the packages their tests need come from the
npm registry on first use (benchmarks/.corpus/npm/).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import real_projects_ts as corpus

TIMEOUT = 240
"""Seconds one case may take: a cold server's plan, tsc and the project's suite, on a loaded host."""
SETUP_BUDGET = 1800
"""Seconds the module's set-up may take: the tarballs fetched and unpacked once, their test and
type dependencies installed from the npm registry, and each project's judges run as it is.
pytest-timeout charges a module fixture to the first test that asks for it, so every test has
this budget on top of its own; bounded, so that a download that hangs still fails."""
pytestmark = [pytest.mark.realprojects, pytest.mark.timeout(SETUP_BUDGET + TIMEOUT)]

PROJECTS = corpus.load()
CASES = [(project, case) for project in PROJECTS for case in project["case"]  # type: ignore[attr-defined]
         if case.get("ci")]
MISSING = corpus.tool_missing()


@pytest.fixture(scope="module")
def baselines() -> dict[str, tuple[Path, int, dict[str, str], dict[str, str]]]:
    """Per project with a CI case: its unpacked source, its passing test count, digests and texts."""
    if MISSING:
        pytest.skip(MISSING)
    found = {}
    for project in PROJECTS:
        cases = [case for p, case in CASES if p is project]
        if not cases:
            continue
        if all(case.get("expect") for case in cases):
            # A refusal is judged by its code and an untouched tree: the suite need not run.
            source, count = corpus.unpacked(project), 0
        else:
            source, count = corpus.green_baseline(project)
        found[str(project["name"])] = (source, count, corpus.digest(source), corpus.texts(source))
    return found


def case_id(project: corpus.Project, case: corpus.Case) -> str:
    return f"{project['name']}-{case['op']}-{case['old']}" + ("-refused" if case.get("expect") else "")


@pytest.mark.parametrize(("project", "case"), CASES, ids=[case_id(p, c) for p, c in CASES])
def test_real_project_case(project: corpus.Project, case: corpus.Case, baselines: dict, tmp_path: Path) -> None:
    source, count, before, texts = baselines[str(project["name"])]
    outcome = corpus.attempt(source, before, project, case, count, texts, tmp_path)
    assert outcome.why == ""
