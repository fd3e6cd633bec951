"""codegraft's TypeScript/JavaScript refactorings on real npm packages (issue 40): the cases of
benchmarks/real_projects_ts.toml marked ``ci = true``, one or more per category (function,
method, class, interface member, property, parameter, type alias, enum member, overloads,
re-exports, move, rename-file, safe delete, name clash), judged as the whole corpus is by
benchmarks/real_projects_ts.py: the project's own tests, ``tsc --noEmit`` over its configs, no
stale reference, only the right files changed, formatting kept; a case marked ``expect`` must
be refused with that code. Each case runs on a fresh copy with a fresh language server, on both
backends (issue 47): tsserver (the projects as published) and TypeScript 7's ``tsc --lsp`` (each
project made a TypeScript 7 project: benchmarks/real_projects_ts7.py; skipped, with the reason,
when the pinned TypeScript 7 is not installed), where a move is done by the pinned TypeScript 6
beside it (lsp_pool.typescript_companion), or, without that one, must be refused as unsupported_by_server.

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
Baselines = dict[str, tuple[Path, int, dict[str, str], dict[str, str]]]


def _baselines(backend: str) -> Baselines:
    """Per project with a CI case, as ``backend`` serves it: its source, its passing test count,
    digests and texts."""
    missing = corpus.tool_missing(backend)
    if missing:
        pytest.skip(missing)
    found = {}
    for project in PROJECTS:
        cases = [case for p, case in CASES if p is project]
        if not cases:
            continue
        if all(corpus.expected_codes(case, backend) for case in cases):
            # A refusal is judged by its code and an untouched tree: the suite need not run.
            source, count = corpus.project_source(project, backend), 0
        else:
            source, count = corpus.green_baseline(project, backend)
        found[str(project["name"])] = (source, count, corpus.digest(source), corpus.texts(source))
    return found


@pytest.fixture(scope="module")
def tsserver_baselines() -> Baselines:
    return _baselines(corpus.TSSERVER)


@pytest.fixture(scope="module")
def typescript7_baselines() -> Baselines:
    return _baselines(corpus.TSC_LSP)


def case_id(project: corpus.Project, case: corpus.Case) -> str:
    return f"{project['name']}-{case['op']}-{case['old']}" + ("-refused" if case.get("expect") else "")


@pytest.mark.parametrize(("project", "case"), CASES, ids=[case_id(p, c) for p, c in CASES])
def test_real_project_case(project: corpus.Project, case: corpus.Case, tsserver_baselines: Baselines,
                           tmp_path: Path) -> None:
    source, count, before, texts = tsserver_baselines[str(project["name"])]
    outcome = corpus.attempt(source, before, project, case, count, texts, tmp_path)
    assert outcome.why == ""


@pytest.mark.parametrize(("project", "case"), CASES, ids=[case_id(p, c) for p, c in CASES])
def test_real_project_case_on_typescript_7(project: corpus.Project, case: corpus.Case, typescript7_baselines: Baselines,
                                           tmp_path: Path) -> None:
    source, count, before, texts = typescript7_baselines[str(project["name"])]
    outcome = corpus.attempt(source, before, project, case, count, texts, tmp_path, corpus.TSC_LSP)
    assert outcome.why == ""
