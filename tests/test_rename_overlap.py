"""A rename's passes run beside the server's request, and start once that request is out: begun
at once, they shared the interpreter lock with the thread sending it, and the server got the
request later, so every warm rename answered later (benchmarks/RESULTS.md)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest

import engine.refactor.rename as rename
from engine.answers import FileEdits, ServerEdit, TextEdit
from engine.ports import Answered
from engine.positions import Position, Range
from engine.workspace import SourceFile, Workspace

SENDING = 0.05
"""How long the fake port takes to send its request."""
PASSES_BEGUN = threading.Event()
"""Set when a rename's passes start: the fake server answers only then (or after 10 s), so that
the order of events does not hang on timing."""


class Port:
    """A language-services port whose rename records when it sends and answers; ``signals``:
    whether it tells the caller that its request is out (the pool's port does)."""

    def __init__(self, events: list[str], *, signals: bool) -> None:
        self.events = events
        self.signals = signals

    def rename(self, source: SourceFile, position: Position, new_name: str,
               sent: Callable[[], None] | None = None) -> Answered[ServerEdit]:
        self.events.append("sending")
        time.sleep(SENDING)
        if self.signals and sent is not None:
            self.events.append("sent")
            sent()
        PASSES_BEGUN.wait(10.0)
        self.events.append("answered")
        edit = TextEdit(Range(Position(0, 6), Position(0, 9)), new_name)
        return Answered(ServerEdit(files=(FileEdits(source.path, (edit,)),)), "fake", True)


@pytest.fixture
def passes_started(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    events: list[str] = []
    original = rename._Passes.__init__
    PASSES_BEGUN.clear()

    def recording(self: Any, *args: Any, **kwargs: Any) -> None:
        events.append("passes")
        PASSES_BEGUN.set()
        original(self, *args, **kwargs)

    monkeypatch.setattr(rename._Passes, "__init__", recording)
    return events


def _plan(tmp_path: Path, port: Port) -> rename.RefactorPlan:
    (tmp_path / "mod.py").write_text("class Old:\n    pass\n\n\nvalue = Old()\n")
    targets = [rename.RenameTarget("mod.py", Position(0, 6))]
    request = rename.RenameRequest(Workspace(tmp_path), port, tuple(targets), "Old", "New", dotted="mod.Old")  # type: ignore[arg-type]
    return rename.plan_rename(request)


def test_the_passes_start_once_the_request_is_sent(tmp_path: Path, passes_started: list[str]) -> None:
    plan = _plan(tmp_path, Port(passes_started, signals=True))
    assert passes_started == ["sending", "sent", "passes", "answered"]
    assert plan.edit.edit_count == 1


def test_a_port_that_does_not_say_when_it_sent_holds_the_passes_only_for_a_bound(
    tmp_path: Path, passes_started: list[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rename, "_SENDING_SECONDS", 0.5)
    started: list[float] = []
    original = rename._Passes.__init__

    def timed(self: Any, *args: Any, **kwargs: Any) -> None:
        started.append(time.monotonic())
        original(self, *args, **kwargs)

    monkeypatch.setattr(rename._Passes, "__init__", timed)
    begun = time.monotonic()
    _plan(tmp_path, Port(passes_started, signals=False))
    # The passes still run beside the server's request (which answers once they start), after
    # the bound: a lower bound only, which no load on the machine can make fail.
    assert passes_started == ["sending", "passes", "answered"]
    assert started[0] - begun >= 0.5


def test_a_port_that_fails_releases_the_passes_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rename, "_SENDING_SECONDS", 30.0)
    failed = threading.Event()

    class Failing(Port):
        def rename(self, source: SourceFile, position: Position, new_name: str,
                   sent: Callable[[], None] | None = None) -> Answered[ServerEdit]:
            failed.set()
            raise rename.ServiceUnavailable("the server is gone")

    begun = time.monotonic()
    plan = _plan(tmp_path, Failing([], signals=False))
    assert failed.is_set()
    assert time.monotonic() - begun < 10.0, "the passes waited out the bound for a request that had failed"
    assert "language server unavailable: the server is gone" in plan.warnings
