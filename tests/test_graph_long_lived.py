"""A long-lived engine (the CLI's daemon) asked to index again: it sweeps the disk instead of
reading the snapshot back, and the graph it already holds is the one it keeps (no second graph
in memory per call)."""

from __future__ import annotations

import shutil
from pathlib import Path

from engine.api import Engine
from engine.workspace import Workspace
from tests.conftest import SAMPLE


def test_indexing_again_sweeps_the_disk_and_keeps_one_graph(tmp_path: Path) -> None:
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".graft"))
    engine = Engine(Workspace(root))
    try:
        first = engine.index()
        held = engine._index.graph if engine._index is not None else None
        again = engine.index()
        assert again.mode == "warm" and again.files == first.files and again.symbols == first.symbols
        assert engine._index is not None and engine._index.graph is held  # the same graph, not a reloaded copy
        util = root / "shop" / "util.py"
        util.write_text(util.read_text() + "\n\ndef added_later():\n    return 1\n")
        swept = engine.index()
        assert swept.mode == "incremental" and swept.swept == ["shop/util.py"] and swept.symbols == first.symbols + 1
        assert [n.address for n in engine.graph().lookup("shop/util.py:added_later")]
    finally:
        engine.close()
