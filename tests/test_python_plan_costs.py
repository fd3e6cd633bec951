"""Python extract and inline resolve a file's LibCST metadata (scopes above all: most of a plan's
time) once per content, however many plans of an unchanged file a long-lived engine makes, and
once per plan where the policy and the pass both read the tree (issue 44). Counted, never timed."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import ScopeProvider

from engine.api import Engine, SourcePreference
from engine.refactor.operations import build
from engine.workspace import Workspace

CALC = '''def report(orders):
    count = len(orders)
    return count


def label(first: str):
    title = first.strip()
    return title
'''


@pytest.fixture
def scope_resolutions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The code of every module LibCST resolves scopes for, in order."""
    resolved: list[str] = []
    original = ScopeProvider.visit_Module

    def counting(self: ScopeProvider, node: cst.Module) -> object:
        resolved.append(node.code)
        return original(self, node)

    counting.__name__ = "visit_Module"  # LibCST's batched visit finds its methods by their names
    monkeypatch.setattr(ScopeProvider, "visit_Module", counting)
    return resolved


def test_a_files_scopes_are_resolved_once_per_content_across_plans(tmp_path: Path, scope_resolutions: list[str]) -> None:
    (tmp_path / "calc.py").write_text(CALC, encoding="utf-8")
    engine = Engine(Workspace(tmp_path), source=SourcePreference.AST)
    try:
        first = engine.plan(build("inline", {"address": "calc.py:report", "match": "count ="}))
        second = engine.plan(build("inline", {"address": "calc.py:label", "match": "title ="}))
        assert first.files == second.files == ["calc.py"]
        assert scope_resolutions == [CALC]  # two plans, each reading the tree twice: one resolution

        changed = CALC.replace("orders", "items")
        (tmp_path / "calc.py").write_text(changed, encoding="utf-8")
        engine.refresh_from_disk()
        engine.plan(build("inline", {"address": "calc.py:report", "match": "count ="}))
        assert scope_resolutions == [CALC, changed]  # another content: resolved afresh, not the kept tree's answer
    finally:
        engine.close()
