"""A rename answered from a server's older view of a file changed on disk (issue 40).

tsserver (through typescript-language-server) reads a file it has not opened again only once its
own file watcher reports the change, in its own time; TypeScript 7's ``tsc --lsp`` answers an open
file from the text it was last sent. A rename sent right after a file changed could then be
answered from the old file: its edits land where the old file had the name. The races are made
certain here rather than left to a loaded machine: tsserver's watcher polls (``TSC_WATCHFILE``) and
the rewrite keeps the file's modification time, so it never sees the change by itself; and the
file is rewritten right before the rename request, after everything the plan showed the server.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable, Iterator

import pytest

import engine.refactor.rename as rename
from engine.answers import FileEdits, ServerEdit, TextEdit
from engine.api import Engine, SourcePreference
from engine.edits.model import FileChange
from engine.ports import Answered
from engine.positions import Position, Range
from engine.refactor.operations.rename_symbol import Rename
from engine.refactor.plan import RefactorPlan
from engine.workspace import SourceFile, Workspace
from lsp_pool.adapter import PoolServices
from lsp_pool.config import PoolConfig
from tests.test_lsp_e2e import only, require
from tests.test_typescript7 import FIXTURE as TYPESCRIPT7_FIXTURE, require_typescript7

CORE = "export function scaleBy(value: number, factor: number): number {\n  return value * factor;\n}\n"
USER = 'import { scaleBy } from "./core";\nexport const a = scaleBy(1, 2);\n'
MOVED = ('import { scaleBy } from "./core";\n// é moves nothing\nexport const a = scaleBy(1, 2);\n'
         "export const éb = scaleBy(3, 4);\n")
"""The old second line's use moves down a line: the old answer's edit there lands on other text."""
APPENDED = USER + "export const b = scaleBy(3, 4);\n"
"""Every old use stays where it was: only the new one at the end tells the answers apart."""


def _project(root: Path, backend: str) -> Path:
    (root / "tsconfig.json").write_text('{"compilerOptions": {"strict": true, "noEmit": true}, "include": ["src"]}\n')
    if backend == "tsc-lsp":
        for name in ("package.json", "package-lock.json"):  # its TypeScript 7 makes the pool pick tsc --lsp
            shutil.copy(TYPESCRIPT7_FIXTURE / name, root / name)
    (root / "src").mkdir()
    (root / "src" / "core.ts").write_text(CORE)
    (root / "src" / "a.ts").write_text(USER)
    return root / "src" / "a.ts"


@pytest.fixture(params=["typescript-language-server", "tsc-lsp"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "tsc-lsp":
        require_typescript7()
    else:
        require("typescript-language-server")
    # tsserver's watcher of a file it has not opened polls its modification time instead of
    # taking the kernel's events, so a rewrite that keeps that time goes unseen by it.
    monkeypatch.setenv("TSC_WATCHFILE", "PriorityPollingInterval")
    return str(request.param)


@pytest.fixture
def served(tmp_path: Path, backend: str) -> Iterator[Engine]:
    _project(tmp_path, backend)
    workspace = Workspace(tmp_path)
    config = only(backend) if backend == "typescript-language-server" else PoolConfig()
    engine = Engine(workspace, services=PoolServices(workspace, config), source=SourcePreference.AUTO)
    try:
        yield engine
    finally:
        engine.close()


def _rewrite_keeping_its_time(path: Path, text: str) -> None:
    before = path.stat()
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def _starts(plan: RefactorPlan, path: str) -> list[tuple[int, int]]:
    change = next(op for op in plan.edit.operations if isinstance(op, FileChange) and op.path == path)
    return [(e.range.start.line, e.range.start.column) for e in change.edits]


def _rename(engine: Engine) -> RefactorPlan:
    return engine.plan(Rename("src/core.ts:scaleBy", "timesBy"))


@pytest.mark.e2e
def test_a_file_rewritten_right_before_the_request_is_not_planned_from_the_servers_old_view(
        served: Engine, backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The old answer's edit on the old second line lands on a comment now: it was dropped as
    "another name", and the moved and the new use were left unrenamed. The server is shown the
    file and asked again."""
    assert _starts(_rename(served), "src/a.ts") == [(0, 9), (1, 17)]
    services = served.services
    assert services is not None
    asking = services.rename

    def rewriting_first(source: SourceFile, position: Position, new_name: str,
                        sent: Callable[[], None] | None = None) -> Answered[ServerEdit]:
        monkeypatch.setattr(services, "rename", asking)
        _rewrite_keeping_its_time(served.workspace.root / "src" / "a.ts", MOVED)
        return asking(source, position, new_name, sent)

    monkeypatch.setattr(services, "rename", rewriting_first)
    plan = _rename(served)
    assert _starts(plan, "src/a.ts") == [(0, 9), (2, 17), (3, 18)]
    assert any(w.startswith(f"{backend} first answered from an older version of src/a.ts") for w in plan.warnings), plan.warnings
    assert not any("other names" in w for w in plan.warnings), plan.warnings


@pytest.mark.e2e
def test_a_file_changed_behind_a_long_lived_engines_back_is_shown_to_the_server_before_the_rename(
        served: Engine) -> None:
    """What a daemon does before each call: the file it finds changed is shown to the server, so
    the rename answers from it, the use added at the end included (no old edit lands elsewhere,
    so nothing in the answer would tell)."""
    assert _starts(_rename(served), "src/a.ts") == [(0, 9), (1, 17)]
    _rewrite_keeping_its_time(served.workspace.root / "src" / "a.ts", APPENDED)
    assert served.refresh_from_disk() == ["src/a.ts"]
    plan = _rename(served)
    assert _starts(plan, "src/a.ts") == [(0, 9), (1, 17), (2, 17)]
    assert not any("older version" in w for w in plan.warnings), plan.warnings


# -- what the second answer says ------------------------------------------------------------------

class Port:
    """A server whose rename answers each time the next of ``answers`` (edits of mod.py's line 0,
    by start and end column), and records the files it is told changed."""

    def __init__(self, answers: list[list[tuple[int, int]]]) -> None:
        self.answers = answers
        self.asked = 0
        self.told: list[list[str]] = []

    def rename(self, source: SourceFile, position: Position, new_name: str,
               sent: Callable[[], None] | None = None) -> Answered[ServerEdit]:
        spans = self.answers[min(self.asked, len(self.answers) - 1)]
        self.asked += 1
        if sent is not None:
            sent()
        edits = tuple(TextEdit(Range(Position(0, start), Position(0, end)), new_name) for start, end in spans)
        return Answered(ServerEdit(files=(FileEdits(source.path, edits),)), "fake", True)

    def files_changed(self, paths: list[str], rewritten: list[str] = []) -> None:  # noqa: B006 (read only)
        self.told.append(list(paths))


def _plan(tmp_path: Path, port: Port) -> RefactorPlan:
    (tmp_path / "mod.py").write_text("Old = other = 1\n")
    request = rename.RenameRequest(Workspace(tmp_path), port, (rename.RenameTarget("mod.py", Position(0, 0)),),  # type: ignore[arg-type]
                                   "Old", "New", dotted="mod.Old")
    return rename.plan_rename(request)


def test_another_name_renamed_again_once_the_server_is_shown_the_file_is_left_with_a_note(tmp_path: Path) -> None:
    """basedpyright renaming an alias's other name does so on purpose, every time."""
    port = Port([[(0, 3), (6, 11)]])
    plan = _plan(tmp_path, port)
    assert port.asked == 2 and port.told == [["mod.py"]]
    assert [(e.range.start.column, e.range.end.column) for e in plan.edit.operations[0].edits] == [(0, 3)]  # type: ignore[union-attr]
    assert any("the server also renamed other names" in w and "'other'" in w for w in plan.warnings), plan.warnings


def test_an_answer_that_lands_elsewhere_again_once_shown_the_file_is_refused(tmp_path: Path) -> None:
    """A second answer with new misplaced edits: the file is still changing under the plan."""
    port = Port([[(0, 3), (6, 11)], [(0, 3), (3, 6)]])
    with pytest.raises(rename.StaleServerAnswer) as refused:
        _plan(tmp_path, port)
    assert refused.value.code == "stale_server_answer" and "mod.py:1" in refused.value.message
