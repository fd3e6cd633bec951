"""This call's reads (engine.read_memo): a file read again unchanged within one call is not
read again, and a file changed in any way, or too recently changed to tell, is."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from engine import read_memo, workspace as workspace_module
from engine.choices import SourcePreference
from engine.client import EngineClient
from engine.edits import materialize as materialize_module
from engine.edits.materialize import StalePlan

from engine.opening import open_engine
from engine.refactor.operations.rename_symbol import Rename
from engine.workspace import Workspace
from tests.conftest import SAMPLE


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files just written count as settled: a test cannot wait for their change time to age."""
    monkeypatch.setattr(read_memo, "RACY_SECONDS", 0.0)


def _reads_counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    counted: list[str] = []
    original = workspace_module.read_bytes

    def counting(path: str) -> bytes:
        counted.append(path)
        return original(path)

    monkeypatch.setattr(workspace_module, "read_bytes", counting)
    monkeypatch.setattr(materialize_module, "read_bytes", counting)
    return counted


def test_a_file_read_again_unchanged_in_the_block_is_the_first_read(tmp_path: Path, settled: None,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    workspace = Workspace(tmp_path)
    reads = _reads_counted(monkeypatch)
    with workspace.remembering_reads():
        first = workspace.read("a.py")
        assert workspace.read("a.py") is first
    assert len(reads) == 1
    assert workspace.read("a.py") is not first and len(reads) == 2  # outside the block: the disk


@pytest.mark.parametrize("change", ["same size in place, times put back", "replaced by another file", "grown"])
def test_a_file_changed_in_any_way_is_read_again(tmp_path: Path, settled: None, change: str) -> None:
    path = tmp_path / "a.py"
    path.write_text("x = 1\n")
    workspace = Workspace(tmp_path)
    with workspace.remembering_reads():
        assert workspace.read("a.py").text == "x = 1\n"
        before = os.stat(path)
        if change == "same size in place, times put back":
            with open(path, "r+b") as handle:
                handle.write(b"y = 2\n")
            os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # the change time still moves
        elif change == "replaced by another file":
            (tmp_path / "b.py").write_text("y = 2\n")
            os.replace(tmp_path / "b.py", path)
        else:
            path.write_text("y = 22\n")
        assert workspace.read("a.py").text != "x = 1\n"


def test_a_file_changed_too_recently_to_tell_is_not_remembered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")  # its times are now: a second write in the same tick would keep them
    workspace = Workspace(tmp_path)
    reads = _reads_counted(monkeypatch)
    with workspace.remembering_reads():
        workspace.read("a.py")
        workspace.read("a.py")
    assert len(reads) == 2


def test_a_long_lived_engine_keeps_its_reads_for_the_next_call_checked_as_within_one(
        tmp_path: Path, settled: None, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text(f"{name[0]} = 1\n")
    workspace = Workspace(tmp_path)
    workspace.keep_reads_between_calls(limit_bytes=2 * 2 * len("a = 1\n"))  # two decoded files
    reads = _reads_counted(monkeypatch)
    with workspace.remembering_reads():
        first = workspace.read("a.py")
    with workspace.remembering_reads():  # the next call
        assert workspace.read("a.py") is first
    assert len(reads) == 1
    assert workspace.read("a.py") is not first and len(reads) == 2  # outside a call: the disk
    path = tmp_path / "a.py"
    before = os.stat(path)
    with open(path, "r+b") as handle:
        handle.write(b"y = 2\n")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # same size and times, a newer change time
    with workspace.remembering_reads():
        assert workspace.read("a.py").text == "y = 2\n"
        workspace.read("b.py")
        workspace.read("c.py")  # over the limit: the least recently used, a.py, goes
    del reads[:]
    with workspace.remembering_reads():
        workspace.read("c.py")
        workspace.read("b.py")
        assert reads == []
        workspace.read("a.py")
        assert len(reads) == 1
    workspace.forget_kept_reads()
    with workspace.remembering_reads():
        workspace.read("b.py")
    assert len(reads) == 2


def test_the_daemons_engines_keep_their_reads_until_the_daemon_lets_them_go(
        tmp_path: Path, settled: None, monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.choices import DEFAULT_MAX_FILE_BYTES
    from frontends.cli.daemon_server import WarmEngines

    (tmp_path / "a.py").write_text("x = 1\n")
    engines = WarmEngines(tmp_path.resolve())
    engine = engines.acquire(tmp_path, SourcePreference.AST, servers=False, tools=False, max_file_bytes=DEFAULT_MAX_FILE_BYTES)
    reads = _reads_counted(monkeypatch)
    for _ in range(2):  # two calls
        with engine.workspace.remembering_reads():
            engine.workspace.read("a.py")
    assert len(reads) == 1
    engines.forget_kept_reads()  # the daemon at rest (frontends.cli.daemon_housekeeping)
    with engine.workspace.remembering_reads():
        engine.workspace.read("a.py")
    assert len(reads) == 2
    engine.close()


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".graft"))
    return root


def test_a_preview_reads_the_files_its_plan_read_once(tmp_path: Path, settled: None, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _copy(tmp_path)
    engine = open_engine(root, SourcePreference.AST, servers=False, tools=False)
    try:
        client = EngineClient(engine)
        engine.graph()
        reads = _reads_counted(monkeypatch)
        outcome = client.run_operation(Rename(address="shop/util.py:round_cents", new_name="round_to_cents"))
        changed = {f.path for f in outcome.files}
        assert changed and len(outcome.diff) > 0
        read_twice = {path for path in reads if reads.count(path) > 1}
        assert not read_twice, read_twice
        assert all(any(path.endswith(name) for path in reads) for name in changed)
    finally:
        engine.close()


def test_a_file_changed_between_the_plan_and_its_preview_makes_the_preview_stale(tmp_path: Path, settled: None) -> None:
    root = _copy(tmp_path)
    engine = open_engine(root, SourcePreference.AST, servers=False, tools=False)
    try:
        with engine.workspace.remembering_reads():
            plan = engine.plan(Rename(address="shop/util.py:round_cents", new_name="round_to_cents"))
            path = root / "shop" / "util.py"
            before = os.stat(path)
            data = path.read_bytes()
            with open(path, "r+b") as handle:  # the same size, the same modification time: only the change time tells
                handle.write(data.replace(b"round_cents", b"rounD_cents", 1))
            os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
            with pytest.raises(StalePlan):
                EngineClient(engine).run(plan)
    finally:
        engine.close()
