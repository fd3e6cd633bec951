"""Issue 48, item 5: what a fleet task costs in language servers. A span-only plan
(``insert-after``, ``replace``) on a Python repository under ``--source auto`` starts no server
when the syntax tree settles its target, in a fleet task and in the engine every front end uses;
a target the tree cannot settle alone still asks the real server, and the plan says so."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest

from engine import fleet
from engine.choices import SourcePreference
from engine.opening import open_engine
from engine.refactor.operations import build
from tests.test_fleet import _repository

INSERT = [{"op": "insert-after", "address": "pkg/core.py:old_api", "text": "def added():\n    return 3\n"}]

needs_basedpyright = pytest.mark.skipif(
    shutil.which("basedpyright-langserver", path=str(Path(sys.executable).parent)) is None,
    reason="basedpyright is not installed: no server start to count or to compare with")


@needs_basedpyright
def test_a_fleet_insert_after_on_a_python_repository_starts_no_language_server(tmp_path: Path) -> None:
    repo = _repository(tmp_path / "repos", "alpha")
    auto = fleet.run(INSERT, [repo], out=tmp_path / "auto", executor="local")[0]
    assert auto.status == "planned", auto.reason
    assert auto.costs["server_start"] == 0.0
    assert (auto.source, auto.confidence) == ("ast", "high")
    # The server's answer is the same patch: the tree's span is the one the server's outline gives.
    served = fleet.run(INSERT, [repo], out=tmp_path / "lsp", executor="local",
                       options=fleet.FleetOptions(source=SourcePreference.LSP))[0]
    assert served.status == "planned" and served.costs["server_start"] > 0 and served.source == "lsp"
    assert Path(str(auto.patch)).read_text() == Path(str(served.patch)).read_text()


@needs_basedpyright
def test_the_engine_plans_insert_after_and_replace_from_the_tree_without_a_server(tmp_path: Path) -> None:
    repo = _repository(tmp_path / "repos", "alpha")
    engine = open_engine(repo, SourcePreference.AUTO, tools=False)
    try:
        inserted = engine.plan(build("insert-after", {"address": "pkg/core.py:old_api", "text": "X = 1\n"}, where="t"))
        replaced = engine.plan(build("replace", {"address": "pkg/core.py:old_api",
                                                 "text": "def old_api():\n    return 2\n"}, where="t"))
        assert engine.services is not None and engine.services.start_seconds() == 0.0
        # Not even started ahead of the plan (a warm-up the close would cut short): the pool has no
        # server at all, once what was handed to its loop before now has had its turn.
        pool_loop = getattr(engine.services, "api", None)
        if pool_loop is not None:
            pool_loop.run(lambda: asyncio.sleep(1.0), timeout=120)
        assert {s.id: s.state for s in engine.services.status() if s.state not in ("stopped", "not-found", "too-old")} == {}
    finally:
        engine.close()
    assert {(p.source.value, p.confidence.value) for p in (inserted, replaced)} == {("ast", "high")}
    assert not inserted.warnings and not replaced.warnings


@needs_basedpyright
def test_a_name_the_tree_sees_bound_twice_asks_the_server_and_says_so(tmp_path: Path) -> None:
    """``Box/size`` is a method, and ``self.size = …`` binds the name again, which a server's
    outline may list instead of the method or beside it; the tree lists only the method. So the
    server answers, and the plan says why; ``Box/__init__``, bound once, is still the tree's."""
    repo = _repository(tmp_path / "repos", "alpha")
    (repo / "pkg" / "box.py").write_text("class Box:\n    def __init__(self):\n        self.size = 1\n\n"
                                         "    def size(self):\n        return 2\n")
    engine = open_engine(repo, SourcePreference.AUTO, tools=False)
    try:
        single = engine.plan(build("insert-after", {"address": "pkg/box.py:Box/__init__", "text": "X = 1\n"}, where="t"))
        assert engine.services is not None and engine.services.start_seconds() == 0.0
        doubled = engine.plan(build("insert-after", {"address": "pkg/box.py:Box/size", "text": "X = 1\n"}, where="t"))
        assert engine.services.start_seconds() > 0
    finally:
        engine.close()
    assert single.source.value == "ast" and not single.warnings
    assert doubled.source.value == "lsp"
    assert doubled.warnings == ["the syntax tree alone does not settle pkg/box.py:Box/size ('size' is bound 2 times where "
                                "the server would list it): the language server was asked"]


@needs_basedpyright
def test_an_overload_stack_is_left_to_the_server_with_a_note(tmp_path: Path) -> None:
    repo = _repository(tmp_path / "repos", "alpha")
    (repo / "pkg" / "ov.py").write_text(
        "from typing import overload\n\n\n@overload\ndef f(x: int) -> int: ...\n@overload\ndef f(x: str) -> str: ...\n"
        "def f(x):\n    return x\n")
    engine = open_engine(repo, SourcePreference.AUTO, tools=False)
    try:
        planned = engine.plan(build("insert-after", {"address": "pkg/ov.py:f[2]", "text": "Y = 2\n"}, where="t"))
        assert engine.services is not None and engine.services.start_seconds() > 0
    finally:
        engine.close()
    assert any("does not settle pkg/ov.py:f[2]" in warning for warning in planned.warnings), planned.warnings
