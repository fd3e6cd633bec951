"""A long-lived engine keeps the errors its checks had, and the next check of the same files in
the same workspace state takes them from there instead of asking the server again (issue 39).

On a real server (basedpyright): an apply, its undo, and an apply again; the third asks nothing
before its write, and still reports the break it makes. Any change in between (an edit the
engine learnt of from the disk, a configuration file) and the server is asked again."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Any

from engine.answers import Diagnostic, TextEdit
from engine.api import Engine
from engine.client import EngineClient
from engine.edits.kept_baseline import KeptBaseline, workspace_state
from engine.edits.model import FileChange, WorkspaceEdit
from engine.edits.session import EditOptions
from engine.edits.verification import CheckMode
from engine.positions import Position, Range
from tests.test_lsp_e2e import require, served_engine

_ERROR = Diagnostic("a.py", Range(Position(0, 0), Position(0, 1)), "error", "bad", "basedpyright", "x")


def test_kept_errors_are_found_by_file_and_state_only() -> None:
    kept = KeptBaseline()
    kept.put("a.py", "h1", "s1", [_ERROR], "basedpyright")
    found = kept.get("a.py", "h1", "s1")
    assert found is not None and found.errors == (_ERROR,) and found.server == "basedpyright"
    assert kept.get("a.py", "h1", "s2") is None and kept.get("a.py", "h2", "s1") is None and kept.get("b.py", "h1", "s1") is None
    for state in ("s2", "s3", "s4", "s5"):
        kept.put("a.py", "h1", state, [], "basedpyright")
    assert kept.get("a.py", "h1", "s1") is None and kept.get("a.py", "h1", "s5") is not None


def test_the_state_changes_with_any_file_and_with_a_configuration_file(tmp_path: Path) -> None:
    hashes = {"a.py": "h1", "b.py": "h2"}
    state = workspace_state(tmp_path, hashes)
    assert workspace_state(tmp_path, dict(hashes)) == state
    assert workspace_state(tmp_path, {**hashes, "b.py": "h3"}) != state
    assert workspace_state(tmp_path, {"a.py": "h1"}) != state
    (tmp_path / "pyrightconfig.json").write_text("{}")
    assert workspace_state(tmp_path, hashes) != state


class _Counted:
    """The engine's own language services, with the files each diagnostics request asked about."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.asked: list[str] = []

    def diagnostics(self, source: Any, **kwargs: Any) -> Any:
        self.asked.append(source.path)
        return self._inner.diagnostics(source, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _project(root: Path) -> None:
    (root / "pyproject.toml").write_text("")
    (root / "a.py").write_text("def f() -> int:\n    return 1\n")
    (root / "c.py").write_text("from a import f\n\n\ndef g() -> int:\n    return f()\n")


def _rename_def(root: Path) -> WorkspaceEdit:
    """f's definition renamed and none of its uses: c.py breaks."""
    data = (root / "a.py").read_bytes()
    return WorkspaceEdit((FileChange("a.py", (TextEdit(Range(Position(0, 4), Position(0, 5)), "renamed"),),
                                     hashlib.sha256(data).hexdigest()),))


def _apply(engine: Engine, counted: _Counted, edit: WorkspaceEdit) -> tuple[Any, list[str]]:
    counted.asked.clear()
    with engine.workspace.remembering_reads():  # as a call through EngineClient runs: the written files read again
        outcome = engine.edits().apply(edit, EditOptions(check=CheckMode.FULL))
    return outcome, list(counted.asked)


def test_an_apply_after_an_undo_takes_the_errors_before_from_the_earlier_check_and_still_finds_the_break(tmp_path: Path) -> None:
    require("basedpyright")
    _project(tmp_path)
    with served_engine(tmp_path, "basedpyright") as engine:
        counted = _Counted(engine.services)
        engine.services = counted  # the real server behind it
        before = hashlib.sha256((tmp_path / "a.py").read_bytes()).hexdigest()
        first, asked_first = _apply(engine, counted, _rename_def(tmp_path))
        after = hashlib.sha256((tmp_path / "a.py").read_bytes()).hexdigest()
        assert first.verification is not None and {d.file for d in first.verification.new_errors} == {"c.py"}
        # Kept twice: as it was before the write, and as the write left it (under the new state).
        assert {file_hash for file_hash, _state in engine.kept_errors.states_of("a.py")} == {before, after}
        engine.edits().undo(first.transaction)
        again, asked_again = _apply(engine, counted, _rename_def(tmp_path))
    # The first apply asked about a.py and c.py, before and after the write; the second asked
    # nothing: the workspace is as it was before the first write, and then as it was after it,
    # and the errors of both states are kept (issue 43: the after pass takes them too).
    assert asked_first.count("a.py") == 2 and asked_first.count("c.py") >= 2
    assert asked_again == []
    verified = again.verification
    assert verified is not None and verified.checked == ("a.py", "c.py")
    assert [(d.file, d.message) for d in verified.new_errors] == [(d.file, d.message) for d in first.verification.new_errors]


def test_a_change_the_engine_learns_of_from_the_disk_makes_it_ask_again(tmp_path: Path) -> None:
    require("basedpyright")
    _project(tmp_path)
    (tmp_path / "b.py").write_text("X = 1\n")
    with served_engine(tmp_path, "basedpyright") as engine:
        counted = _Counted(engine.services)
        engine.services = counted
        first, _asked = _apply(engine, counted, _rename_def(tmp_path))
        engine.edits().undo(first.transaction)
        (tmp_path / "b.py").write_text("X = 2\n")  # behind the engine's back: its disk check finds it
        assert "b.py" in engine.refresh_from_disk()
        _again, asked_again = _apply(engine, counted, _rename_def(tmp_path))
    assert asked_again.count("a.py") == 2


def test_a_preview_in_a_long_lived_engine_fills_the_errors_before_so_its_apply_asks_only_after(tmp_path: Path) -> None:
    """The fill starts as the preview is answered (engine.edits.baseline_fill); the apply waits
    for it, finds every file's errors before kept under the same state, and still finds the break."""
    require("basedpyright")
    _project(tmp_path)
    with served_engine(tmp_path, "basedpyright") as engine:
        counted = _Counted(engine.services)
        engine.services = counted
        engine.baseline_fill.enabled = True
        client = EngineClient(engine)
        preview = client.run_edit("apply", _rename_def(tmp_path))
        assert not preview.applied
        engine.baseline_fill.settle(300)
        asked_by_preview = list(counted.asked)
        outcome, asked_by_apply = _apply(engine, counted, _rename_def(tmp_path))
    assert sorted(asked_by_preview) == ["a.py", "c.py"]
    assert asked_by_apply.count("a.py") == 1, asked_by_apply  # after the write only
    verified = outcome.verification
    assert verified is not None and verified.checked == ("a.py", "c.py") and {d.file for d in verified.new_errors} == {"c.py"}


def test_a_file_changed_while_its_errors_were_asked_for_is_not_kept(tmp_path: Path) -> None:
    require("basedpyright")
    _project(tmp_path)
    with served_engine(tmp_path, "basedpyright") as engine:
        engine.baseline_fill.enabled = True
        session = engine.edits()

        class _ChangingAfterTheAnswer(_Counted):
            def diagnostics(self, source: Any, **kwargs: Any) -> Any:
                answer = super().diagnostics(source, **kwargs)
                if source.path == "c.py":
                    (tmp_path / "c.py").write_text("from a import f\n\n\ndef g() -> int:\n    return f() + 1\n")
                return answer

        session.services = _ChangingAfterTheAnswer(engine.services)
        assert session.fill_baseline(_rename_def(tmp_path))
        engine.baseline_fill.settle(300)
        assert engine.kept_errors.states_of("a.py") and not engine.kept_errors.states_of("c.py")


def test_a_one_shot_engine_fills_nothing(tmp_path: Path) -> None:
    require("basedpyright")
    _project(tmp_path)
    with served_engine(tmp_path, "basedpyright") as engine:
        assert not engine.edits().fill_baseline(_rename_def(tmp_path))


def test_an_apply_right_after_its_preview_waits_for_the_fill_instead_of_asking_twice(tmp_path: Path) -> None:
    """The fill's first answer is held back a moment, so the apply starts while the fill runs."""
    require("basedpyright")
    _project(tmp_path)
    with served_engine(tmp_path, "basedpyright") as engine:
        released = threading.Event()

        class _HeldBack(_Counted):
            def diagnostics(self, source: Any, **kwargs: Any) -> Any:
                if threading.current_thread().name == "graft-baseline-fill":
                    released.wait(300)
                return super().diagnostics(source, **kwargs)

        counted = _HeldBack(engine.services)
        engine.services = counted
        engine.baseline_fill.enabled = True
        EngineClient(engine).run_edit("apply", _rename_def(tmp_path))
        threading.Timer(1.0, released.set).start()
        outcome, _asked = _apply(engine, counted, _rename_def(tmp_path))  # _apply clears what the preview asked
        released.set()
    # The fill's answer (held back past the apply's start) and the apply's after the write: never a third.
    assert counted.asked.count("a.py") == 2, counted.asked
    assert outcome.verification is not None and {d.file for d in outcome.verification.new_errors} == {"c.py"}
