"""The check after an apply for Go files gopls does not answer for (issue 39): a file behind a
custom build tag is compiled by the go command under a configuration that includes it, and
counted as checked only when the go command's own listing builds it.

Each edit renames a method's definition and none of its uses, as a broken rename would."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path
from typing import Iterator

import pytest

from engine.api import Engine
from engine.edits.session import EditOptions, NewErrors
from engine.edits.verification import CheckMode, Verification
from engine.symbols import Confidence
from engine.workspace import Workspace
from lsp_pool.adapter import PoolServices
from process_tools.adapter import ProcessTools
from tests.test_lsp_e2e import only, require
from tests.test_verification_languages import _rename_value, _three_packages

pytestmark = pytest.mark.e2e

_TAGGED = "//go:build integration\n\npackage a\n\nfunc tagged() int {\n\treturn T{}.Value()\n}\n"


def _require_go() -> None:
    if shutil.which("go") is None:
        pytest.skip("go is not installed (https://go.dev/dl)")


def _engine(root: Path, with_server: bool = True) -> Iterator[Engine]:
    workspace = Workspace(root)
    engine = Engine(workspace, services=PoolServices(workspace, only("gopls")) if with_server else None, tools=ProcessTools(workspace))
    engine.settings = replace(engine.settings, diagnostics_budget=300.0)  # a loaded machine must not cut the check short
    try:
        yield engine
    finally:
        engine.close()


def _checked(root: Path, *, with_server: bool = True, fail_on_new_errors: bool = False) -> Verification:
    for engine in _engine(root, with_server):
        outcome = engine.edits().apply(_rename_value(root), EditOptions(check=CheckMode.FULL, fail_on_new_errors=fail_on_new_errors))
        assert outcome.verification is not None
        return outcome.verification
    raise AssertionError("unreachable")


@pytest.fixture
def tagged_project(tmp_path: Path) -> Path:
    require("gopls")
    _require_go()
    _three_packages(tmp_path)
    (tmp_path / "a" / "tagged.go").write_text(_TAGGED)
    return tmp_path


def test_a_break_in_a_file_behind_a_custom_tag_is_found_by_compiling_it_with_that_tag(tagged_project: Path) -> None:
    verified = _checked(tagged_project)
    assert "a/tagged.go" in verified.checked and verified.unchecked == (), verified.to_json()
    assert {d.file for d in verified.new_errors} == {"a/tagged.go", "c/c.go", "c/c_test.go"}
    assert "go build (GOOS=" in ", ".join(verified.by) and "-tags integration" in ", ".join(verified.by)
    assert verified.label()[0] is Confidence.LOW


def test_the_break_behind_the_tag_alone_rolls_the_edit_back_under_full_check(tagged_project: Path) -> None:
    """Only the tagged file uses the method: gopls sees no break at all, the compile does."""
    for name in ("c/c.go", "c/c_test.go"):
        (tagged_project / name).unlink()
    before = (tagged_project / "a" / "a.go").read_text()
    with pytest.raises(NewErrors, match="a/tagged.go"):
        _checked(tagged_project, fail_on_new_errors=True)
    assert (tagged_project / "a" / "a.go").read_text() == before


def test_an_error_the_tagged_file_had_before_is_not_new(tagged_project: Path) -> None:
    (tagged_project / "a" / "tagged.go").write_text(_TAGGED + "\nfunc broken() int {\n\treturn undefinedName\n}\n")
    for name in ("c/c.go", "c/c_test.go"):
        (tagged_project / name).unlink()
    verified = _checked(tagged_project)
    assert "a/tagged.go" in verified.checked
    assert [d.message for d in verified.new_errors] == ["T{}.Value undefined (type T has no field or method Value)"]


def test_a_file_the_go_command_does_not_build_stays_unchecked_never_clean(tagged_project: Path) -> None:
    """go ignores a file whose name starts with an underscore, whatever its tags: the compile
    cannot have covered it, so it is named unchecked, with both reasons."""
    (tagged_project / "a" / "_old.go").write_text(_TAGGED.replace("tagged()", "old()"))
    verified = _checked(tagged_project)
    reasons = {u.path: u.reason for u in verified.unchecked}
    assert "a/_old.go" not in verified.checked and "does not build it" in reasons["a/_old.go"], verified.to_json()
    assert "no package metadata" in reasons["a/_old.go"]
    assert verified.label()[0] is not Confidence.HIGH


def test_a_file_only_a_build_ignore_line_names_stays_unchecked_with_the_reason(tagged_project: Path) -> None:
    """``//go:build ignore`` files are built by no configuration a check would set; without a
    server to answer for them, they are named unchecked."""
    (tagged_project / "a" / "gen.go").write_text("//go:build ignore\n\npackage main\n\n// main prints T's values.\nfunc main() {}\n")
    verified = _checked(tagged_project, with_server=False)
    reasons = {u.path: u.reason for u in verified.unchecked}
    assert "no build configuration" in reasons["a/gen.go"], verified.to_json()


def test_without_gopls_every_go_file_in_scope_is_compiled(tagged_project: Path) -> None:
    verified = _checked(tagged_project, with_server=False)
    assert set(verified.checked) == {"a/a.go", "a/tagged.go", "b/b.go", "c/c.go", "c/c_test.go"}, verified.to_json()
    assert {d.file for d in verified.new_errors} == {"a/tagged.go", "c/c.go", "c/c_test.go"}
    assert all(name.startswith("go build (") for name in verified.by)
