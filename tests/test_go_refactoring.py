"""Go's hazards with the real gopls, beyond the fixture cases of fixtures/refactor/go-*: the check
after an apply catches a build that gopls's own rename breaks, and the plan sees build constraints."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.edits.model import FileChange, WorkspaceEdit
from engine.edits.session import EditOptions, NewErrors
from engine.positions import Position
from tests.test_lsp_e2e import require, served_engine

pytestmark = pytest.mark.e2e

_STRINGER = """package named

import "fmt"

// Named has a name.
type Named interface {
	String() string
}

// Dog is a Named, and a fmt.Stringer too.
type Dog struct{}

func (Dog) String() string { return "dog" }

// Describe names anything Named.
func Describe(n Named) string { return n.String() }

// Print formats any Stringer.
func Print(s fmt.Stringer) string { return s.String() }

// Both passes a Dog as a fmt.Stringer too.
func Both(d Dog) string { return Print(d) }

var _ Named = Dog{}
"""


def test_the_check_after_an_apply_reports_the_break_of_goplss_own_rename_through_a_standard_interface(tmp_path: Path) -> None:
    """gopls's rename of Named.String also renames the call through fmt.Stringer: applied as gopls
    gives it (the plan refuses it: fixtures/refactor/go-rename-refused-when-it-would-rename-calls-
    through-a-standard-interface), the check after the write names the break, and with
    --fail-on-new-errors the write is rolled back."""
    require("gopls")
    (tmp_path / "go.mod").write_text("module example.com/named\n\ngo 1.22\n")
    module = tmp_path / "named.go"
    module.write_text(_STRINGER)
    data = module.read_bytes()
    with served_engine(tmp_path, "gopls") as engine:
        assert engine.services is not None
        source = engine.workspace.read("named.go")
        line = _STRINGER.splitlines().index("\tString() string")
        answer = engine.services.rename(source, Position(line, 1), "Label")
        edit = WorkspaceEdit(tuple(FileChange(f.file, f.edits, engine.workspace.read(f.file).sha256) for f in answer.value.files))
        assert any("s.Label()" in row for row in _applied(source.text, edit).splitlines()), "gopls no longer renames the call"
        with pytest.raises(NewErrors, match="fmt.Stringer"):
            engine.edits().apply(edit, EditOptions(fail_on_new_errors=True))
        assert module.read_bytes() == data
        outcome = engine.edits().apply(edit)
    messages = [d.message for d in outcome.new_diagnostics]
    assert any("type fmt.Stringer has no field or method Label" in m for m in messages), messages
    assert outcome.verification is not None and outcome.verification.by == ("gopls",)


def _applied(text: str, edit: WorkspaceEdit) -> str:
    from engine.edits.text import apply_text_edits

    (change,) = edit.operations
    assert isinstance(change, FileChange)
    return apply_text_edits(text, change.edits, "\n")
