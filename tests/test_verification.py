"""The check after an apply, with a known scope and honest labels (issue 39).

Its scope is the files written and every file that imports them, transitively, tests included;
what it covered is data (``verified``), and the answer's confidence follows that coverage. The
servers are real (basedpyright); the label rules are a table."""

from __future__ import annotations

import hashlib
import json
from typing import Any
from pathlib import Path

import pytest

from engine.answers import Diagnostic, TextEdit
from engine.edits import pending_checks
from engine.edits.model import FileChange, WorkspaceEdit
from engine.edits.session import EditOptions, NewErrors
from engine.edits.verification import SCOPE_LIMIT, CheckMode, Unchecked, Verification
from engine.positions import Position, Range
from engine.symbols import Confidence
from frontends.cli.main import main
from tests.test_lsp_e2e import require, served_engine

_ERROR = Diagnostic("c.py", Range(Position(0, 0), Position(0, 1)), "error", '"f" is unknown import symbol', "basedpyright", "x")


# -- the label rules ---------------------------------------------------------------------------


@pytest.mark.parametrize("verification, confidence, reason", [
    (Verification(CheckMode.FAST, ("a.py", "b.py"), ("a.py", "b.py"), by=("basedpyright",)), Confidence.HIGH, ""),
    (Verification(CheckMode.FULL, ("a.py",), ("a.py",), fixed_errors=(_ERROR,), by=("basedpyright",)), Confidence.HIGH, ""),
    (Verification(CheckMode.NONE, ("a.py",), ()), Confidence.MEDIUM, "turned off"),
    (Verification(CheckMode.FAST, ("a.py",), (), unchecked=(Unchecked("a.py", "no checking server: none for rust"),)),
     Confidence.MEDIUM, "syntax only"),
    (Verification(CheckMode.FAST, ("a.py", "c.py"), ("a.py", "c.py"), new_errors=(_ERROR,), by=("basedpyright",)),
     Confidence.LOW, "1 new error(s) in c.py"),
    (Verification(CheckMode.FAST, ("a.py", "b.py", "c.py", "d.py"), ("a.py",), pending=("b.py", "c.py", "d.py"),
                  by=("basedpyright",)), Confidence.MEDIUM, "3 file(s) not checked yet: budget"),
    (Verification(CheckMode.FAST, ("a.py", "tests/t.py"), ("a.py",),
                  unchecked=(Unchecked("tests/t.py", "basedpyright had not finished analysing it"),), by=("basedpyright",)),
     Confidence.MEDIUM, "had not finished analysing it (tests/t.py)"),
    (Verification(CheckMode.FULL, ("a.py",), ("a.py",), beyond_scope=4, by=("basedpyright",)),
     Confidence.MEDIUM, f"4 importer(s) past the {SCOPE_LIMIT}-file scope"),
    (Verification(CheckMode.FAST, ("a.py", "b.py"), ("a.py",), by=("basedpyright",)), Confidence.MEDIUM,
     "no diagnostics were had for them (b.py)"),
])
def test_confidence_follows_coverage(verification: Verification, confidence: Confidence, reason: str) -> None:
    got, why = verification.label()
    assert got is confidence
    assert (reason in why) if reason else why == ""
    # Complete is about coverage: a fully covered check that found errors is complete, and low.
    assert verification.complete is (confidence is Confidence.HIGH or bool(verification.new_errors))


def test_the_summary_is_one_line_with_the_counts_and_the_checker() -> None:
    checked = Verification(CheckMode.FAST, tuple(f"m{n}.py" for n in range(14)), tuple(f"m{n}.py" for n in range(14)),
                           by=("basedpyright",), seconds=0.62)
    assert checked.summary() == "checked 14 of 14 file(s): no new errors (basedpyright, 0.6 s)"
    syntax = Verification(CheckMode.FAST, ("a.rs",), (), unchecked=(Unchecked("a.rs", "no checking server: rust"),))
    assert "(syntax only," in syntax.summary() and "\n" not in syntax.summary()


def test_a_kept_check_reads_back_as_it_was_written() -> None:
    written = Verification(CheckMode.FAST, ("a.py", "c.py"), ("a.py",), (_ERROR,), (), ("c.py",), (Unchecked("x.py", "why"),),
                           3, ("basedpyright",), 1.5)
    assert Verification.from_json(json.loads(json.dumps(written.to_json()))).to_json() == written.to_json()


# -- real checks on a real server --------------------------------------------------------------


def _rename_def_only(root: Path, path: str, old: str, new: str) -> FileChange:
    """An edit that renames a definition and none of its uses: what a missed reference looks like."""
    data = (root / path).read_bytes()
    text = data.decode()
    line = next(n for n, row in enumerate(text.splitlines()) if row.startswith(f"def {old}("))
    return FileChange(path, (TextEdit(Range(Position(line, 4), Position(line, 4 + len(old))), new),),
                      hashlib.sha256(data).hexdigest())


def _two_hops(root: Path) -> None:
    """a.py defines f; b.py re-exports everything of a.py; c.py takes f from b.py; a test takes
    c.py's h, whose type is inferred from f (so a change of f may change it: engine.edits.check_scope)."""
    (root / "pyproject.toml").write_text("")
    (root / "a.py").write_text("def f() -> int:\n    return 1\n")
    (root / "b.py").write_text("from a import *  # noqa: F403\n")
    (root / "c.py").write_text("from b import f\n\n\ndef g() -> int:\n    return f()\n\n\ndef h():\n    return f()\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_c.py").write_text("from c import h\n\n\ndef test_h() -> None:\n    assert h() == 1\n")


def test_an_importer_two_hops_away_is_in_scope_and_its_new_error_is_reported(tmp_path: Path) -> None:
    require("basedpyright")
    _two_hops(tmp_path)
    with served_engine(tmp_path, "basedpyright") as engine:
        outcome = engine.edits().apply(WorkspaceEdit((_rename_def_only(tmp_path, "a.py", "f", "renamed"),)),
                                       EditOptions(check=CheckMode.FULL))
    verified = outcome.verification
    assert verified is not None
    assert verified.in_scope == ("a.py", "b.py", "c.py", "tests/test_c.py")
    assert verified.checked == verified.in_scope and verified.by == ("basedpyright",)
    assert {d.file for d in verified.new_errors} == {"c.py"}
    assert verified.label()[0] is Confidence.LOW
    assert "1 new error(s)" in outcome.diagnostics_note


def test_full_with_fail_on_new_errors_rolls_back_a_break_two_hops_away(tmp_path: Path) -> None:
    require("basedpyright")
    _two_hops(tmp_path)
    before = (tmp_path / "a.py").read_text()
    with served_engine(tmp_path, "basedpyright") as engine:
        with pytest.raises(NewErrors, match="c.py"):
            engine.edits().apply(WorkspaceEdit((_rename_def_only(tmp_path, "a.py", "f", "renamed"),)),
                                 EditOptions(check=CheckMode.FULL, fail_on_new_errors=True))
    assert (tmp_path / "a.py").read_text() == before


def _tests_outside_the_include(root: Path) -> None:
    """A project whose type-checking config covers src/ only: its tests import the package from outside it."""
    (root / "pyproject.toml").write_text('[tool.pyright]\ninclude = ["src"]\n')
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "__init__.py").write_text("")
    (root / "src" / "pkg" / "m.py").write_text("def helper() -> int:\n    return 1\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_m.py").write_text("from pkg.m import helper\n\n\ndef test_helper() -> None:\n    assert helper() == 1\n")


def test_a_test_file_outside_the_checked_include_is_checked_and_its_break_rolls_back(tmp_path: Path) -> None:
    require("basedpyright")
    _tests_outside_the_include(tmp_path)
    before = (tmp_path / "src" / "pkg" / "m.py").read_text()
    change = _rename_def_only(tmp_path, "src/pkg/m.py", "helper", "assist")
    with served_engine(tmp_path, "basedpyright") as engine:
        outcome = engine.edits().apply(WorkspaceEdit((change,)), EditOptions(check=CheckMode.FULL))
        assert outcome.verification is not None and "tests/test_m.py" in outcome.verification.checked
        assert {d.file for d in outcome.verification.new_errors} == {"tests/test_m.py"}
        engine.edits().undo()
        with pytest.raises(NewErrors, match="tests/test_m.py"):
            engine.edits().apply(WorkspaceEdit((_rename_def_only(tmp_path, "src/pkg/m.py", "helper", "assist"),)),
                                 EditOptions(check=CheckMode.FULL, fail_on_new_errors=True))
    assert (tmp_path / "src" / "pkg" / "m.py").read_text() == before


def test_check_none_compares_nothing_and_says_so(tmp_path: Path) -> None:
    require("basedpyright")
    _two_hops(tmp_path)
    with served_engine(tmp_path, "basedpyright") as engine:
        outcome = engine.edits().apply(WorkspaceEdit((_rename_def_only(tmp_path, "a.py", "f", "renamed"),)),
                                       EditOptions(check=CheckMode.NONE))
    assert outcome.verification is not None and outcome.verification.checked == () and outcome.verification.pending == ()
    assert outcome.verification.label() == (Confidence.MEDIUM, "not verified: the check was turned off (--check none)")
    assert outcome.new_diagnostics == []


def test_a_check_the_budget_left_pending_is_completed_by_check_last(tmp_path: Path) -> None:
    """The after pass cut short after a.py (as a spent budget leaves it): `check --last` compares the rest."""
    require("basedpyright")
    _two_hops(tmp_path)
    with served_engine(tmp_path, "basedpyright") as engine:
        outcome = engine.edits().apply(WorkspaceEdit((_rename_def_only(tmp_path, "a.py", "f", "renamed"),)),
                                       EditOptions(check=CheckMode.FULL))
        assert outcome.transaction is not None and outcome.verification is not None
        scope = list(outcome.verification.in_scope)
        cut = Verification(CheckMode.FAST, tuple(scope), ("a.py",), pending=tuple(scope[1:]), by=("basedpyright",))
        pending_checks.save_last(tmp_path, outcome.transaction, cut)
        pending_checks.save(tmp_path, pending_checks.PendingCheck(outcome.transaction, {p: [] for p in scope}, {"a.py": []},
                                                                  scope[1:], [], {}))
        assert cut.label()[0] is Confidence.MEDIUM
        finished = engine.edits().check_last()
    assert finished is not None
    transaction, verified = finished
    assert transaction == outcome.transaction and verified.pending == () and set(verified.checked) == set(scope)
    assert {d.file for d in verified.new_errors} == {"c.py"}


def test_the_cli_reports_the_check_as_data_and_check_last_shows_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    require("basedpyright")
    _two_hops(tmp_path)
    assert main(["--root", str(tmp_path), "--json", "rename", "a.py:f", "first", "--apply", "--check", "full"]) == 0
    applied = json.loads(capsys.readouterr().out)
    verified = applied["verified"]
    assert (verified["files_in_scope"], verified["files_checked"], verified["new_errors"]) == (4, 4, [])
    assert verified["by"] == "basedpyright" and verified["complete"] is True and applied["confidence"] == "high"
    assert main(["--root", str(tmp_path), "--json", "check", "--last"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["transaction"] == applied["transaction"] and shown["verified"]["files_checked"] == 4
    assert main(["--root", str(tmp_path), "check", "--last"]) == 0
    assert "checked 4 of 4 file(s): no new errors (basedpyright" in capsys.readouterr().out


class _Recorded:
    """The engine's own language services, with each diagnostics request's file and whether it was a recheck."""

    def __init__(self, inner: object) -> None:
        self._inner = inner
        self.asked: list[tuple[str, bool]] = []

    def diagnostics(self, source: Any, **kwargs: Any) -> Any:
        self.asked.append((source.path, bool(kwargs.get("recheck"))))
        return getattr(self._inner, "diagnostics")(source, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def test_pulled_diagnostics_are_not_asked_again_after_the_write_and_the_break_is_still_found(tmp_path: Path) -> None:
    """basedpyright answers a pull for the changes sent before it: the importers' first answers
    after the write are already current, so there is no second round (a push server gets one)."""
    require("basedpyright")
    _two_hops(tmp_path)
    with served_engine(tmp_path, "basedpyright") as engine:
        recorded = _Recorded(engine.services)
        engine.services = recorded  # the real server behind it
        verified = engine.edits().apply(WorkspaceEdit((_rename_def_only(tmp_path, "a.py", "f", "renamed"),)),
                                        EditOptions(check=CheckMode.FULL)).verification
    assert verified is not None and {d.file for d in verified.new_errors} == {"c.py"}
    assert not any(recheck for _path, recheck in recorded.asked)
    assert sorted(path for path, _recheck in recorded.asked) == sorted(2 * ["a.py", "b.py", "c.py", "tests/test_c.py"])


def test_files_past_the_budget_are_one_short_clause_with_what_to_run() -> None:
    """An apply that outruns its budget says so on every apply: a count and the command that shows
    the finished check, not a list of names trailing "and 32 more" (issue 41)."""
    scope = tuple(f"m{n}.py" for n in range(36))
    late = Verification(CheckMode.FAST, scope, scope[:1], pending=scope[1:], by=("basedpyright",))
    _confidence, why = late.label()
    assert why == "35 file(s) not checked yet: budget (`graft check --last` when done)"
