"""What a TypeScript rename opens before its request, per backend (issue 40, item 8).

tsserver searches every file of an open file's configured project, opened or not, and the rename
opens its own file: opening the other files of that project beforehand only added a wait for
their check to the first request. So
on tsserver (``ServerSpec.searches_open_projects``) only the files of other projects and loose
files are shown. TypeScript 7's server loads a config's project only for an open file, and missed
the ``.cjs``, ``.mjs`` and ``.jsx`` files of a jsconfig project without them: it is shown them as
before. Both must still find every file (``fixtures/typescript-project``; each test a fresh copy
and a fresh server). Skipped, with the reason, when a server is not installed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from engine.api import Engine, SourcePreference
from engine.refactor.operations.rename_symbol import Rename
from engine.workspace import Workspace
from lsp_pool.adapter import PoolServices
from lsp_pool.config import PoolConfig
from lsp_pool.typescript7 import TSC_LSP
from tests.conftest import REPO
from tests.test_lsp_e2e import require
from tests.test_typescript7 import require_typescript7

pytestmark = pytest.mark.e2e

FIXTURE = REPO / "fixtures" / "typescript-project"
JS_PROJECT = {"js/total.cjs", "js/tools/print.mjs", "js/view.jsx"}
"""The renamed file's own (jsconfig) project's other files that use the renamed member."""


def _renamed(root: Path, backend: str) -> tuple[set[str], set[str]]:
    """The files the rename of ``Square.area`` edits, and the documents open once it is planned."""
    if backend == TSC_LSP:
        require_typescript7()
        (root / "package-lock.json").write_text(
            '{"lockfileVersion": 3, "packages": {"": {}, "node_modules/typescript": {"version": "7.0.2"}}}\n')
    else:
        require("typescript-language-server")
    workspace = Workspace(root)
    services = PoolServices(workspace, PoolConfig())
    # auto: with lsp, a cold index asks the server for every file's outline, which opens them all on tsserver.
    engine = Engine(workspace, services=services, source=SourcePreference.AUTO)
    try:
        plan = engine.plan(Rename("js/shapes.js:Square/area", "surface"))
        assert f"from {backend}" in plan.warnings, plan.warnings
        opened = {path.relative_to(root).as_posix() for server in services.api.pool.running()
                  for path in server.documents.open_documents()}
    finally:
        engine.close()
    return set(plan.files), opened


@pytest.mark.parametrize("backend", ["typescript-language-server", TSC_LSP])
def test_the_renamed_files_own_project_is_shown_only_to_the_server_that_needs_it(tmp_path: Path, backend: str) -> None:
    root = tmp_path / "project"
    shutil.copytree(FIXTURE, root)
    edited, opened = _renamed(root, backend)
    assert edited == {"js/shapes.js", *JS_PROJECT, "scripts/report.js"}, edited
    if backend != TSC_LSP:
        assert not JS_PROJECT & opened, opened  # searched unopened once js/shapes.js is open
    assert "scripts/report.js" in opened, opened  # a loose file: no project of the server's would have it
