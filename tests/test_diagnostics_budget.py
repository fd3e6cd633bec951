"""The time budget of an apply's differential diagnostics, with basedpyright: past it the apply is
kept and the check is reported incomplete, naming the files it did not cover; the rest is
finished later (``graft diagnostics --since-last-apply``, or the daemon right after its answer);
``--fail-on-new-errors`` waits for the whole check; and a verify that a crash interrupts rolls
the transaction back (the conditions are settled before the commit)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from engine.answers import Diagnostic, TextEdit
from engine.api import Engine
from engine.batch import run_batch
from engine.choices import SourcePreference
from engine.edits import pending_checks
from engine.edits.apply import Transactions
from engine.edits.model import CreateFile, FileChange, WorkspaceEdit
from engine.edits.session import EditOptions, NewErrors
from engine.positions import Position, Range
from engine.refactor.operations.rename_symbol import Rename
from engine.workspace import SourceFile, Workspace
from lsp_pool.adapter import PoolServices
from frontends.cli.main import main
from frontends.render.edits import notes_text
from tests.test_lsp_e2e import only, require, served_engine

pytestmark = pytest.mark.e2e

IMPORTERS = 6


def _project(root: Path) -> FileChange:
    """m.py defines helper; u0..u5.py import and call it. The change renames the definition
    only, so every importer gets a new error."""
    (root / "pyproject.toml").write_text("")
    (root / "m.py").write_text("def helper() -> int:\n    return 1\n")
    for number in range(IMPORTERS):
        (root / f"u{number}.py").write_text(f"from m import helper\n\nVALUE_{number} = helper()\n")
    data = (root / "m.py").read_bytes()
    return FileChange("m.py", (TextEdit(Range(Position(0, 4), Position(0, 10)), "assist"),), hashlib.sha256(data).hexdigest())


def test_past_the_budget_the_apply_is_kept_and_the_files_left_out_are_named(tmp_path: Path) -> None:
    require("basedpyright")
    change = _project(tmp_path)
    with served_engine(tmp_path, "basedpyright") as engine:
        engine.index()  # the importers come from the graph
        engine.settings = replace(engine.settings, diagnostics_budget=1e-6)  # one file each way, then the budget is spent
        outcome = engine.edits().apply(WorkspaceEdit((change,)))
        assert "def assist()" in (tmp_path / "m.py").read_text()  # kept
        assert not outcome.diagnostics_complete
        assert "not checked" in outcome.diagnostics_note
        verified = outcome.verification
        assert verified is not None and not verified.complete and len(verified.in_scope) == IMPORTERS + 1
        assert len(verified.pending) + len(verified.unchecked) == IMPORTERS + 1 - len(verified.checked)
        assert verified.label()[0].value == "medium"
        # Each front end says how to finish it in its own terms (the CLI's command, MCP's tool).
        assert notes_text(outcome, "HOW TO FINISH").endswith("(HOW TO FINISH)")
        kept = pending_checks.load(tmp_path)
        assert kept is not None and kept.transaction == outcome.transaction
        assert len(kept.before) + len(kept.without_baseline) == IMPORTERS + 1  # every file is accounted for
        assert kept.without_baseline  # the budget left some out before the write
        finished = engine.edits().finish_diagnostics()
    assert finished is not None
    check, _new = finished
    assert check.finished and check.without_baseline == kept.without_baseline


def test_files_with_a_baseline_are_compared_later_and_their_new_errors_found(tmp_path: Path) -> None:
    """The after half cut short: what the later check compares is the files kept with a baseline."""
    require("basedpyright")
    change = _project(tmp_path)
    with served_engine(tmp_path, "basedpyright") as engine:
        engine.index()
        outcome = engine.edits().apply(WorkspaceEdit((change,)))  # the whole check (a large budget): the baseline
        assert outcome.diagnostics_complete and len(outcome.new_diagnostics) == IMPORTERS
        # As an apply whose after pass the budget stopped after m.py would have kept it:
        whole = {d.file for d in outcome.new_diagnostics}
        baseline: dict[str, list[Diagnostic]] = {path: [] for path in ["m.py", *sorted(whole)]}
        pending_checks.save(tmp_path, pending_checks.PendingCheck(
            str(outcome.transaction), dict(baseline), {"m.py": []}, sorted(whole), [], {}))
        finished = engine.edits().finish_diagnostics()
    assert finished is not None
    check, new = finished
    assert check.finished and sorted({d.file for d in new}) == sorted(whole)
    assert all("helper" in d.message for d in new)


def test_the_cli_shows_the_check_the_last_apply_left(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    require("basedpyright")
    change = _project(tmp_path)
    with served_engine(tmp_path, "basedpyright") as engine:
        engine.index()
        engine.settings = replace(engine.settings, diagnostics_budget=1e-6)
        outcome = engine.edits().apply(WorkspaceEdit((change,)))
    assert main(["--root", str(tmp_path), "--json", "diagnostics", "--since-last-apply"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["transaction"] == outcome.transaction and shown["complete"] is False
    assert shown["without_baseline"] and not shown["still_to_compare"]
    assert main(["--root", str(tmp_path), "diagnostics", "--since-last-apply", "m.py"]) == 2  # one or the other


def test_fail_on_new_errors_waits_for_the_whole_check(tmp_path: Path) -> None:
    require("basedpyright")
    change = _project(tmp_path)
    data = (tmp_path / "m.py").read_bytes()
    with served_engine(tmp_path, "basedpyright") as engine:
        engine.index()
        engine.settings = replace(engine.settings, diagnostics_budget=1e-6)  # ignored: the condition needs every file
        with pytest.raises(NewErrors) as refused:
            engine.edits().apply(WorkspaceEdit((change,)), EditOptions(fail_on_new_errors=True))
    assert all(f"u{n}.py" in refused.value.message for n in range(IMPORTERS))
    assert (tmp_path / "m.py").read_bytes() == data


def test_a_crash_while_the_conditions_are_settled_rolls_the_transaction_back(tmp_path: Path) -> None:
    """The commit marker is written after the verify: a process killed during it (simulated by
    the hook raising SystemExit, which no handler catches) leaves the journal uncommitted, and
    the next start puts the old files back."""
    (tmp_path / "m.py").write_text("A = 1\n")
    data = (tmp_path / "m.py").read_bytes()
    change = FileChange("m.py", (TextEdit(Range(Position(0, 4), Position(0, 5)), "2"),), hashlib.sha256(data).hexdigest())

    def crash(step: str) -> None:
        if step == "settling":
            raise SystemExit("killed while the verify ran")

    transactions = Transactions(Workspace(tmp_path), hook=crash)
    with pytest.raises(SystemExit):
        transactions.apply(WorkspaceEdit((change,)), settle=lambda files: None)
    # An exception (not a real crash) rolls back at once; either way the old text is back.
    assert (tmp_path / "m.py").read_bytes() == data
    assert Transactions(Workspace(tmp_path)).recover() == []


def test_a_file_the_edit_creates_is_counted_once_in_the_note(tmp_path: Path) -> None:
    """Compared after the write only, a created file is one of the files checked, not one more
    than were wanted ("checked 4 of 3 file(s)" was printed for a move into a new file)."""
    require("basedpyright")
    change = _project(tmp_path)
    with served_engine(tmp_path, "basedpyright") as engine:
        engine.index()
        outcome = engine.edits().apply(WorkspaceEdit((change, CreateFile("extra.py", "X = 1\n"))))
    assert outcome.diagnostics_complete
    assert f"checked {IMPORTERS + 2} of {IMPORTERS + 2} file(s)" in outcome.diagnostics_note


def test_a_batch_compares_errors_where_it_applies_and_not_in_its_scratch_copy(tmp_path: Path) -> None:
    """Each step is written in a scratch copy for the next to plan on; that copy's errors are
    nobody's answer, so its writes ask the server for none. The batch's net effect, written in
    the workspace, is compared as any apply is."""
    require("basedpyright")
    _project(tmp_path)
    asked_in_copy: list[str] = []

    def scratch(copy: Path) -> Engine:
        workspace = Workspace(copy)
        made = Engine(workspace, services=PoolServices(workspace, only("basedpyright")), source=SourcePreference.AUTO)
        services = made.services
        assert isinstance(services, PoolServices)
        diagnostics = services.diagnostics

        def counted(source: SourceFile, **options: Any) -> Any:
            asked_in_copy.append(source.path)
            return diagnostics(source, **options)

        services.diagnostics = counted  # type: ignore[method-assign]
        return made

    with served_engine(tmp_path, "basedpyright") as engine:
        engine.index()
        outcome = run_batch(engine, [Rename("m.py:helper", "assist"), Rename("u0.py:VALUE_0", "FIRST")], apply=True,
                            scratch_engine=scratch)
    assert "def assist()" in (tmp_path / "m.py").read_text() and "FIRST = assist()" in (tmp_path / "u0.py").read_text()
    assert asked_in_copy == []
    assert outcome.diagnostics_checked and outcome.new_diagnostics == []
