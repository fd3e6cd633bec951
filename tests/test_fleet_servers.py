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
from engine.fleet import kept_scratch
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


RENAME = [{"op": "rename", "address": "pkg/core.py:old_api", "new_name": "new_api"}]


@needs_basedpyright
def test_one_worker_keeps_its_server_between_repositories_and_answers_about_each_repository(tmp_path: Path) -> None:
    """In one process, one after another: a repository with one more module that uses the name,
    one without the symbol, one without that module, and one whose pyproject.toml differs. The
    server started for the first answers for the next three... except the last, whose setup
    differs: each row's status and files are its own repository's, never the one before's."""
    from tests.test_fleet import _git

    root = tmp_path / "repos"
    extra = _repository(root, "alpha-extra")
    (extra / "pkg" / "extra.py").write_text("from pkg.core import old_api\n\n\ndef thrice():\n    return 3 * old_api()\n")
    _git(extra, "add", ".")
    _git(extra, "commit", "-qm", "extra")
    missing, plain, other = (_repository(root, "bravo-no-symbol", symbol=False), _repository(root, "charlie"),
                             _repository(root, "delta-other-setup"))
    (other / "pyproject.toml").write_text("[project]\nname = 'delta'\n\n[tool.basedpyright]\ntypeCheckingMode = 'basic'\n")
    _git(other, "commit", "-qam", "setup")
    kept = kept_scratch.for_this_thread()  # the copy the run's tasks, in this thread, will use
    rows = {Path(row.repo).name: row for row in fleet.run(RENAME, [extra, missing, plain, other], out=tmp_path / "out",
                                                            executor="local")}
    assert {name: row.status for name, row in rows.items()} == {
        "alpha-extra": "planned", "bravo-no-symbol": "refused", "charlie": "planned", "delta-other-setup": "planned"}
    assert rows["alpha-extra"].files == ["pkg/core.py", "pkg/extra.py", "pkg/use.py"]
    assert rows["charlie"].files == rows["delta-other-setup"].files == ["pkg/core.py", "pkg/use.py"]
    assert all(rows[name].source == "lsp" for name in ("alpha-extra", "charlie", "delta-other-setup"))
    assert rows["alpha-extra"].costs["server_start"] > 0
    assert rows["bravo-no-symbol"].costs["server_start"] == rows["charlie"].costs["server_start"] == 0.0
    assert rows["delta-other-setup"].costs["server_start"] > 0  # a new server for another setup
    patch = Path(str(rows["charlie"].patch)).read_text()
    assert "new_api" in patch and "extra.py" not in patch
    # The run is over: nothing is kept, in this process or on disk.
    assert kept.closed and not kept.copy.exists()


def test_a_copy_left_by_a_killed_worker_is_removed_by_the_next_one(tmp_path: Path) -> None:
    import subprocess
    import tempfile

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    left = Path(tempfile.mkdtemp(prefix=f"graft-fleet-kept-{gone.pid}-"))
    (left / "repo").mkdir()
    kept = kept_scratch.KeptScratch()
    try:
        assert not left.exists()
        assert kept.copy.exists()  # its own, named by this living process, stays
        kept_scratch.KeptScratch().close()
        assert kept.copy.exists()
    finally:
        kept.close()
        shutil.rmtree(left, ignore_errors=True)
