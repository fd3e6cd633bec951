"""Symbol edits as data: fixtures/refactor/<case>/ holds the files before, the operation
(case.toml), and the files expected after, or the refusal expected."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from engine.api import Engine, SourcePreference
from engine.errors import GraftError
from engine.refactor.plan import RefactorPlan
from engine.workspace import Workspace, WorkspaceConfig
from engine.refactor.operations import build
from lsp_pool.adapter import PoolServices
from lsp_pool.config import PoolConfig
from lsp_pool.registry import DEFAULT_PREFERENCE, SPECS_BY_ID, locate
from process_tools.adapter import ProcessTools
from tests.conftest import REPO, tree_fingerprint

CASES = sorted(p for p in (REPO / "fixtures" / "refactor").iterdir() if (p / "case.toml").is_file())


def _served(folder: Path) -> str | None:
    """The language server a case is planned with (``server = "gopls"``), or None: planned without one."""
    server = tomllib.loads((folder / "case.toml").read_text(encoding="utf-8")).get("server")
    return str(server) if server is not None else None


CASE_PARAMS = [pytest.param(folder, id=folder.name, marks=[pytest.mark.e2e] if _served(folder) else []) for folder in CASES]

CASE_KEYS = frozenset({"operation", "refusal", "code", "warning", "check", "tool_check", "removed", "server"})
"""What a case.toml says about the case; every other key is a field of its operation. ``server``:
the case is planned with that real language server only (``--source lsp``), skipped where it is
not installed."""


def _engine(workspace: Workspace, server: str | None) -> Engine:
    # The real process tools: moves and file renames import the planned modules before they are
    # accepted, and Go's plans are run through gofmt.
    if server is None:
        return Engine(workspace, source=SourcePreference.AST, tools=ProcessTools(workspace))
    spec = SPECS_BY_ID[server]
    if locate(spec) is None:
        pytest.skip(f"{server} is not installed here ({spec.install_hint})")
    preference = dict(DEFAULT_PREFERENCE)
    for language in spec.languages:
        preference[language] = (server,)
    services = PoolServices(workspace, PoolConfig(preference=preference))
    return Engine(workspace, services=services, source=SourcePreference.LSP, tools=ProcessTools(workspace))


def plan(engine: Engine, case: dict[str, object]) -> RefactorPlan:
    """The case's operation from the registry, as batch builds it: an unknown field is refused."""
    fields = {key: value for key, value in case.items() if key not in CASE_KEYS}
    return engine.plan(build(case["operation"], fields))


@pytest.mark.parametrize("folder", CASE_PARAMS)
def test_refactor_case(folder: Path, tmp_path: Path) -> None:
    case = tomllib.loads((folder / "case.toml").read_text(encoding="utf-8"))
    root = tmp_path / "project"
    shutil.copytree(folder / "before", root)
    if not (root / "pyproject.toml").exists():  # a case's own (entry points, tool settings) is part of it
        (root / "pyproject.toml").write_text("")
    before = tree_fingerprint(root)
    # The cases are this repository's own code, trusted: the import check runs (it imports the project).
    workspace = Workspace(root, WorkspaceConfig(trust_workspace_python=True))
    server = _served(folder)
    engine = _engine(workspace, server)
    try:
        if "refusal" in case:
            with pytest.raises(GraftError) as refused:
                plan(engine, case)
            # The code is the contract front ends and scripts act on; `refusal` says in words what
            # the case is about (the message's wording may change).
            assert refused.value.code == case["code"], refused.value.message
            assert tree_fingerprint(root) == before
            return
        made = plan(engine, case)
        expected_source = "lsp" if server is not None else "regex" if case.get("text") is True else "ast"
        assert made.source.value == expected_source and made.files
        if "warning" in case:
            assert any(str(case["warning"]) in warning for warning in made.warnings), made.warnings
        engine.edits().apply(made.edit)
    finally:
        engine.close()
    if "check" in case:
        # The moved or renamed code must still run: the case's own check, in the project.
        ran = subprocess.run([sys.executable, "-c", str(case["check"])], cwd=root, capture_output=True, text=True, timeout=60)
        assert ran.returncode == 0, ran.stderr
    expected_dir = folder / "after"
    for expected in expected_dir.rglob("*"):
        if expected.is_file():
            relative = expected.relative_to(expected_dir)
            assert (root / relative).read_bytes() == expected.read_bytes(), relative  # encodings and line endings too
    for original in (folder / "before").rglob("*"):
        relative = original.relative_to(folder / "before")
        if str(relative) in case.get("removed", []):
            assert not (root / relative).exists(), f"{relative} should be gone"
        elif original.is_file() and not (expected_dir / relative).exists():
            assert (root / relative).read_bytes() == original.read_bytes(), f"{relative} should not change"
    if "tool_check" in case:
        # The language's own checker over the result (go vet): a case whose checker is missing is
        # skipped with the reason, never passed unchecked.
        command = [str(part) for part in case["tool_check"]]
        program = shutil.which(command[0])
        if program is None:
            pytest.skip(f"{command[0]} is not installed: the edit matched the expected files, but `{' '.join(command)}` did not run")
        ran = subprocess.run([program, *command[1:]], cwd=root, capture_output=True, text=True, timeout=120)
        assert ran.returncode == 0, ran.stdout + ran.stderr
