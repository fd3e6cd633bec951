"""A graph query about a language whose uses the graph does not follow says so; it never answers
"(none)" with nothing beside it (issue 40, item 4)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from frontends.cli.main import main
from tests.conftest import SAMPLE


@pytest.fixture
def project(tmp_path: Path) -> Path:
    copy = tmp_path / "sample"
    shutil.copytree(SAMPLE, copy, ignore=shutil.ignore_patterns(".graft"))
    return copy


def _graph(project: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["--root", str(project), "--json", "--source", "ast", "graph", *argv]) == 0
    answer: dict[str, Any] = json.loads(capsys.readouterr().out)
    return answer


@pytest.mark.parametrize("query", ["callers", "callees", "impact"])
def test_calls_in_go_are_said_to_be_unseen(project: Path, capsys: pytest.CaptureFixture[str], query: str) -> None:
    answer = _graph(project, capsys, query, "go/inventory/inventory.go:Store")
    [note] = answer["notes"]
    assert "follows no calls or uses in go files" in note and "graft graph refs" in note


def test_go_implementations_say_what_the_graph_cannot_know(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    answer = _graph(project, capsys, "implementations", "go/inventory/inventory.go:Counter")
    assert any("satisfies an interface without naming it" in note for note in answer["notes"])


def test_dead_code_names_the_files_it_did_not_examine(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    answer = _graph(project, capsys, "dead-code")
    [note] = answer["notes"]
    assert "go" in note and "typescript" in note and "python" not in note


def test_python_answers_carry_no_such_note(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    answer = _graph(project, capsys, "callers", "shop/pricing.py:with_vat")
    assert "notes" not in answer and answer["edges"]
