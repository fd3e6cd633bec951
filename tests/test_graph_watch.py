"""A long-lived engine's graph follows the disk through inotify (engine/graph/watch.py): after
the first sweep, a call stats only what the kernel saw touched, and anything the watcher cannot
vouch for (a new file, a new or moved folder, an ignore file, a full event queue) sweeps the
whole workspace again. Real inotify, real files; skipped where the kernel offers none."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Iterator

import pytest

from engine.api import Engine
from engine.client import EngineClient
from engine.graph.watch import ChangeWatcher
from engine.refactor.operations.move_file import FileRename
from engine.workspace import ScanResult, Workspace
from tests.conftest import SAMPLE

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


class CountingWorkspace(Workspace):
    """Counts whole-workspace walks: the sweep a watcher saves."""

    walks = 0

    def scan(self, under: str = ".") -> ScanResult:
        if under == ".":
            self.walks += 1
        return super().scan(under)


@pytest.fixture()
def engine(tmp_path: Path) -> Iterator[Engine]:
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".graft"))
    opened = Engine(CountingWorkspace(root))
    opened.index()
    opened.index()  # the first re-ask: a whole sweep that starts the watcher
    opened.index()  # the watcher could not vouch for files created before it: one more sweep
    try:
        yield opened
    finally:
        opened.close()


def walks(engine: Engine) -> int:
    workspace = engine.workspace
    assert isinstance(workspace, CountingWorkspace)
    return workspace.walks


def names(engine: Engine, path: str) -> set[str]:
    return {fact.name_path for fact in engine.graph().project.facts[path].symbols}


def test_nothing_changed_costs_no_walk(engine: Engine) -> None:
    assert engine.disk_changes.startswith("watching ") and engine.disk_changes.endswith(" folders")
    before = walks(engine)
    again = engine.index()
    assert again.mode == "warm" and again.swept == [] and walks(engine) == before


def test_an_edit_is_seen_without_a_walk(engine: Engine) -> None:
    before = walks(engine)
    util = engine.workspace.root / "shop" / "util.py"
    util.write_text(util.read_text() + "\n\ndef added_later():\n    return 1\n")
    swept = engine.index()
    assert swept.swept == ["shop/util.py"] and "added_later" in names(engine, "shop/util.py")
    assert walks(engine) == before


def test_a_removed_file_leaves_the_graph_without_a_walk(engine: Engine) -> None:
    before = walks(engine)
    (engine.workspace.root / "shop" / "util.py").unlink()
    swept = engine.index()
    assert swept.swept == ["shop/util.py"] and "shop/util.py" not in engine.graph().project.facts
    assert walks(engine) == before


def test_a_new_file_and_a_new_folder_are_found_by_a_walk(engine: Engine) -> None:
    root = engine.workspace.root
    (root / "shop" / "extra.py").write_text("def extra():\n    return 2\n")
    engine.index()
    assert names(engine, "shop/extra.py") == {"extra"}
    (root / "shop" / "deeper").mkdir()
    (root / "shop" / "deeper" / "inner.py").write_text("class Inner:\n    pass\n")
    engine.index()
    assert names(engine, "shop/deeper/inner.py") == {"Inner"}
    # Watched from then on: an edit inside the new folder needs no walk.
    engine.index()
    before = walks(engine)
    (root / "shop" / "deeper" / "inner.py").write_text("class Inner:\n    pass\n\n\nclass Outer:\n    pass\n")
    swept = engine.index()
    assert swept.swept == ["shop/deeper/inner.py"] and walks(engine) == before


def test_a_moved_folder_is_followed(engine: Engine) -> None:
    root = engine.workspace.root
    facts = engine.graph().project.facts
    moved = sorted(path for path in facts if path.startswith("shop/"))
    os.rename(root / "shop", root / "store")
    engine.index()
    facts = engine.graph().project.facts
    assert not any(path.startswith("shop/") for path in facts)
    assert sorted(path for path in facts if path.startswith("store/")) == ["store/" + path[len("shop/"):] for path in moved]
    engine.index()  # the new watcher's one unsure sweep
    (root / "store" / "util.py").write_text("def only():\n    return 3\n")
    swept = engine.index()
    assert swept.swept == ["store/util.py"] and names(engine, "store/util.py") == {"only"}


def test_an_ignore_file_changes_what_is_indexed(engine: Engine) -> None:
    root = engine.workspace.root
    assert "shop/util.py" in engine.graph().project.facts
    (root / ".gitignore").write_text("shop/util.py\n")
    engine.index()
    assert "shop/util.py" not in engine.graph().project.facts


def test_a_full_event_queue_falls_back_to_a_walk(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("")
    (tmp_path / "b.py").write_text("")
    watcher = ChangeWatcher.start(str(tmp_path), [""])
    if isinstance(watcher, str):
        pytest.skip(f"no inotify watcher here: {watcher}")
    try:
        assert watcher.changes() is None  # new watchers are unsure once
        assert watcher.changes() == set()
        (tmp_path / "a.py").write_text("x = 1\n")
        assert watcher.changes() == {"a.py"}
        limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
        if limit > 100_000:
            pytest.skip(f"max_queued_events is {limit}: too many writes to overflow it here")
        # Alternating files: the kernel merges only identical consecutive events.
        with open(tmp_path / "a.py", "ab") as first, open(tmp_path / "b.py", "ab") as second:
            for _ in range(limit // 2 + 10):
                first.write(b"#")
                first.flush()
                second.write(b"#")
                second.flush()
        assert watcher.changes() is None
        assert watcher.changes() == set()
    finally:
        watcher.close()


def test_without_a_watcher_every_call_walks_and_still_sees_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ChangeWatcher, "start", classmethod(lambda cls, root, folders: "no inotify here"))
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".graft"))
    engine = Engine(CountingWorkspace(root))
    try:
        engine.index()
        engine.index()
        before = walks(engine)
        assert engine.index().mode == "warm" and walks(engine) == before + 1
        util = root / "shop" / "util.py"
        util.write_text(util.read_text() + "\n\ndef added_later():\n    return 1\n")
        swept = engine.index()
        assert swept.swept == ["shop/util.py"] and walks(engine) == before + 2
        assert "added_later" in names(engine, "shop/util.py")
        assert engine.disk_changes == "a whole sweep before each call (no inotify here)"  # said, not silent
    finally:
        engine.close()


# -- the workspace listing (every file, not only sources) kept between calls -------------------


def scanned(engine: Engine) -> list[str]:
    return Workspace(engine.workspace.root).scan().files


def test_the_listing_is_kept_between_calls_while_no_file_appears_or_goes(engine: Engine) -> None:
    engine.refresh_from_disk()
    before = walks(engine)
    assert engine.workspace_files() == scanned(engine)
    util = engine.workspace.root / "shop" / "util.py"
    util.write_text(util.read_text() + "\n# edited\n")  # an edit: the same files
    engine.refresh_from_disk()
    assert engine.workspace_files() == scanned(engine) and walks(engine) == before


def test_a_text_file_that_appears_or_goes_is_in_the_next_listing(engine: Engine) -> None:
    """Not a source file, so the graph never looks at it; the doctest pass needs it listed."""
    root = engine.workspace.root
    engine.refresh_from_disk()
    (root / "shop" / "usage.txt").write_text(">>> from shop.util import slugify\n")
    engine.refresh_from_disk()
    assert "shop/usage.txt" in engine.workspace_files()
    (root / "shop" / "usage.txt").unlink()
    engine.refresh_from_disk()
    assert "shop/usage.txt" not in engine.workspace_files()
    assert engine.workspace_files() == scanned(engine)


def test_a_file_the_engine_creates_is_in_the_next_listing(engine: Engine) -> None:
    """The engine's own edit, before the watcher's events are read: refresh notices it."""
    engine.refresh_from_disk()
    assert "shop/helpers.py" not in engine.workspace_files()
    EngineClient(engine).run(engine.plan(FileRename("shop/util.py", "shop/helpers.py")), apply=True)
    assert "shop/helpers.py" in engine.workspace_files() and "shop/util.py" not in engine.workspace_files()
    engine.graph()  # the edited files refreshed into the graph
    assert engine.workspace_files() == scanned(engine)
