"""The diagnostics budget bounds each wait inside it, not only the time between files: a server
that never publishes for a file (or is slow to get ready) used to hold an apply for up to 10 s
per file past a 3 s budget. The pool drops a question past its timeout and stays usable; the
edit session leaves the file, and those after it, out of the comparison and says so."""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
from collections.abc import Collection
from pathlib import Path

import pytest

from engine.answers import Diagnostic, TextEdit
from engine.edits.apply import Transactions
from engine.edits.model import FileChange, WorkspaceEdit
from engine.edits.outcome import EditOutcome
from engine.edits.session import EditSession
from engine.ports import Answered
from engine.positions import Position, Range
from engine.workspace import SourceFile, Workspace
from lsp_pool.sync import SyncLanguageApi


def test_the_pool_drops_a_question_past_its_timeout_and_answers_the_next(tmp_path: Path) -> None:
    api = SyncLanguageApi(tmp_path)
    cancelled = threading.Event()

    async def never_answered() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    try:
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            api.call(lambda _api: never_answered(), timeout=0.3)
        assert time.monotonic() - started < 30  # not the 60 s the question would take
        assert cancelled.wait(10)  # dropped on the loop too, not left waiting there
        assert api.call(lambda _api: asyncio.sleep(0, result="next"), timeout=10) == "next"
    finally:
        api.close()


class SilentForOneFile:
    """A server that answers every file's diagnostics at once, but never for ``silent``: it
    waits as long as it is allowed to, then the question is dropped, as the pool does."""

    def __init__(self, silent: str) -> None:
        self.silent = silent
        self.asked: list[tuple[str, float | None]] = []

    def diagnostics(self, source: SourceFile, *, when_ready: bool = False, recheck: bool = False,
                    timeout: float | None = None) -> Answered[list[Diagnostic]]:
        self.asked.append((source.path, timeout))
        if source.path == self.silent:
            assert timeout is not None, "a budgeted check must bound every wait"
            time.sleep(timeout)
            raise TimeoutError
        return Answered([], "fake-server", True)

    def files_changed(self, paths: list[str], rewritten: object = ()) -> None:
        pass


def test_a_file_the_server_never_answers_is_left_out_within_the_budget(tmp_path: Path) -> None:
    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text("VALUE = 1\n")
    workspace = Workspace(tmp_path)
    server = SilentForOneFile("b.py")
    session = EditSession(workspace, Transactions(workspace), server, None,  # type: ignore[arg-type]
                          importers=lambda paths, limit: (["b.py", "c.py"], 0), diagnostics_budget=1.0)
    data = (tmp_path / "a.py").read_bytes()
    edit = WorkspaceEdit((FileChange("a.py", (TextEdit(Range(Position(0, 0), Position(0, 5)), "TOTAL"),),
                                     hashlib.sha256(data).hexdigest()),))
    started = time.monotonic()
    outcome = session.apply(edit)
    elapsed = time.monotonic() - started
    assert (tmp_path / "a.py").read_text() == "TOTAL = 1\n"  # the apply is kept
    assert elapsed < 8, elapsed  # about the 1 s budget, never the server's silence
    assert not outcome.diagnostics_complete and "b.py" in outcome.diagnostics_note
    assert all(timeout is not None and timeout <= 1.0 for _path, timeout in server.asked)


class Recording:
    """A server that answers at once and records what it is told about the files written."""

    def __init__(self) -> None:
        self.told: list[tuple[list[str], set[str]]] = []

    def diagnostics(self, source: SourceFile, *, when_ready: bool = False, recheck: bool = False,
                    timeout: float | None = None) -> Answered[list[Diagnostic]]:
        return Answered([], "fake-server", True)

    def files_changed(self, paths: list[str], rewritten: Collection[str] = ()) -> None:
        self.told.append((list(paths), set(rewritten)))


def test_the_servers_are_told_which_written_files_existed_before_on_apply_and_undo(tmp_path: Path) -> None:
    """Rewritten files are told as such, created ones not: basedpyright rebuilds its whole program
    for a file it takes for new (lsp_pool/documents.py)."""
    from engine.edits.model import CreateFile

    (tmp_path / "a.py").write_text("VALUE = 1\n")
    workspace = Workspace(tmp_path)
    server = Recording()
    session = EditSession(workspace, Transactions(workspace), server, None)  # type: ignore[arg-type]
    data = (tmp_path / "a.py").read_bytes()
    edit = WorkspaceEdit((FileChange("a.py", (TextEdit(Range(Position(0, 0), Position(0, 5)), "TOTAL"),),
                                     hashlib.sha256(data).hexdigest()), CreateFile("b.py", "NEW = 2\n")))
    outcome = session.apply(edit)
    assert server.told == [(["a.py", "b.py"], {"a.py"})]
    session.undo(outcome.transaction)
    assert not (tmp_path / "b.py").exists()
    assert server.told[-1] == (["a.py", "b.py"], {"a.py"})  # b.py deleted by the undo: not rewritten either


class TimedAnswers:
    """A server whose answers take fixed times: ``first`` for the first file asked before the
    write, ``before`` for the others, ``after`` for each file the first time it is asked after
    the write (again, at once: it has been checked). Past the timeout it is given, the question
    is dropped, as the pool drops it."""

    def __init__(self, first: float, before: float, after: float) -> None:
        self.first, self.before, self.after = first, before, after
        self.asked = 0
        self.written = False
        self.checked_after: set[str] = set()

    def diagnostics(self, source: SourceFile, *, when_ready: bool = False, recheck: bool = False,
                    timeout: float | None = None) -> Answered[list[Diagnostic]]:
        self.asked += 1
        if self.written:
            takes = 0.01 if source.path in self.checked_after else self.after
        else:
            takes = self.first if self.asked == 1 else self.before
        if timeout is not None and timeout < takes:
            time.sleep(timeout)
            raise TimeoutError
        time.sleep(takes)
        if self.written:
            self.checked_after.add(source.path)
        return Answered([], "fake-server", True)

    def files_changed(self, paths: list[str], rewritten: object = ()) -> None:
        self.written = True


def _apply_to_a_with_importers(tmp_path: Path, server: TimedAnswers, budget: float) -> tuple[EditOutcome, float]:
    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text("VALUE = 1\n")
    workspace = Workspace(tmp_path)
    session = EditSession(workspace, Transactions(workspace), server, None,  # type: ignore[arg-type]
                          importers=lambda paths, limit: (["b.py", "c.py"], 0), diagnostics_budget=budget)
    data = (tmp_path / "a.py").read_bytes()
    edit = WorkspaceEdit((FileChange("a.py", (TextEdit(Range(Position(0, 0), Position(0, 5)), "TOTAL"),),
                                     hashlib.sha256(data).hexdigest()),))
    started = time.monotonic()
    outcome = session.apply(edit)
    return outcome, time.monotonic() - started


def _own_seconds(tmp_path: Path) -> float:
    """The same apply against a server that answers at once: what the write and the bookkeeping
    take on this machine now, so that the budget tests below allow for a loaded machine."""
    (tmp_path / "calibration").mkdir()
    _outcome, elapsed = _apply_to_a_with_importers(tmp_path / "calibration", TimedAnswers(first=0.0, before=0.0, after=0.0), budget=60.0)
    return elapsed


def test_a_cold_servers_first_answer_is_waited_for_past_half_the_budget(tmp_path: Path) -> None:
    """A cold server's first check carries the type evaluation of all the file imports: cut at
    half the budget, it was thrown away and nothing was compared ("checked 0 of 30 file(s)" on
    parso's first rename). It may take three quarters; the after pass has what is left."""
    server = TimedAnswers(first=1.2, before=0.01, after=0.01)  # half of 2 s is 1 s; three quarters 1.5 s
    outcome, elapsed = _apply_to_a_with_importers(tmp_path, server, budget=2.0)
    assert outcome.diagnostics_checked
    assert outcome.diagnostics_note.startswith("checked 1 of 3 file(s)"), outcome.diagnostics_note
    assert elapsed < 2.0 + 0.5 + 3 * _own_seconds(tmp_path)  # within the budget (the write and the bookkeeping beside)


def test_the_after_pass_has_what_the_before_pass_left_of_the_budget(tmp_path: Path) -> None:
    """On a warm server the files before the write are answered at once and those after it are
    checked again: the after pass used to stop at half the budget with the rest of it unused."""
    server = TimedAnswers(first=0.01, before=0.01, after=1.0)  # three files after: 3 s of a 4 s budget
    outcome, elapsed = _apply_to_a_with_importers(tmp_path, server, budget=4.0)
    assert outcome.diagnostics_complete, outcome.diagnostics_note
    assert outcome.diagnostics_note.startswith("checked 3 of 3 file(s)"), outcome.diagnostics_note
    assert elapsed < 4.0 + 0.5 + 3 * _own_seconds(tmp_path)
