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
from engine.workspace import Workspace
from lsp_pool.tools import ProcessTools
from tests.conftest import REPO, tree_fingerprint

CASES = sorted(p for p in (REPO / "fixtures" / "refactor").iterdir() if (p / "case.toml").is_file())


def plan(engine: Engine, case: dict[str, object]) -> RefactorPlan:
    operation, address = str(case["operation"]), str(case.get("address", ""))
    if operation == "replace":
        return engine.plan_replace(address, str(case["text"]), include_doc_comment=bool(case.get("include_doc_comment")))
    if operation in ("insert-before", "insert-after"):
        return engine.plan_insert(address, str(case["text"]), before=operation == "insert-before")
    if operation == "delete":
        return engine.plan_delete(address)
    if operation == "rename-file":
        return engine.plan_rename_file(str(case["old"]), str(case["new"]))
    if operation == "move":
        return engine.plan_move(address, str(case["dest"]), create=bool(case.get("create")), shim=bool(case.get("shim")))
    if operation == "rename":
        return engine.plan_rename(address, str(case["new_name"]), text=bool(case.get("text")), mirrors=bool(case.get("mirrors", True)))
    raise AssertionError(f"unknown operation {operation}")


@pytest.mark.parametrize("folder", CASES, ids=[c.name for c in CASES])
def test_refactor_case(folder: Path, tmp_path: Path) -> None:
    case = tomllib.loads((folder / "case.toml").read_text(encoding="utf-8"))
    root = tmp_path / "project"
    shutil.copytree(folder / "before", root)
    (root / "pyproject.toml").write_text("")
    before = tree_fingerprint(root)
    workspace = Workspace(root)
    # The real process tools: moves and file renames import the planned modules before they are accepted.
    engine = Engine(workspace, source=SourcePreference.AST, tools=ProcessTools(workspace))
    try:
        if "refusal" in case:
            with pytest.raises(GraftError) as refused:
                plan(engine, case)
            assert str(case["refusal"]) in refused.value.message
            if "code" in case:
                assert refused.value.code == case["code"], refused.value.message
            assert tree_fingerprint(root) == before
            return
        made = plan(engine, case)
        expected_source = "regex" if case.get("text") is True else "ast"
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
