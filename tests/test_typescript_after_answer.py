"""The TypeScript passes' work after a rename's answer (issue 40, the warm rename's last
milliseconds): what a file's content alone decides is kept by content (whether it may declare an
interface; where its words of the old name may declare a member), read again once the file
changes, and answers exactly as the look it replaces; the clash check compiles no pattern for a new
name no file holds; the leftover check looks at a replacement text once, not once per edit."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from engine.answers import TextEdit
from engine.edits.model import FileChange, WorkspaceEdit
from engine.positions import Position, Range
from engine.refactor import leftovers
from engine.refactor.corpus import Corpus
from engine.refactor.leftovers import Leftovers
from engine.refactor.typescript import clashes, implementers, met_interfaces
from engine.refactor.typescript.clashes import ParsedFiles
from engine.workspace import SourceFile, Workspace

_PLAIN = "type Size = number;\nexport function scale(x: Size): Size { return x; }\nscale(2);\n"
_DECLARED = "type Size = number;\nexport class Box {\n  scale(x: Size): Size { return x; }\n}\nnew Box().scale(2);\n"


def _edit_of_words(workspace: Workspace, path: str, old: str, new: str) -> WorkspaceEdit:
    """A rename's edit of every word ``old`` of ``path``, as a server's answer reads."""
    source = workspace.read(path)
    edits = []
    for number, line in enumerate(source.text.splitlines()):
        edits += [TextEdit(Range(Position(number, m.start()), Position(number, m.end())), new)
                  for m in re.finditer(rf"(?<![\w$]){old}(?![\w$])", line)]
    return WorkspaceEdit((FileChange(path, tuple(edits), source.sha256),))


class _Counted:
    """A pattern whose searches are counted."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.searches = pattern, 0

    def search(self, text: str) -> Any:
        self.searches += 1
        return self.pattern.search(text)


def test_whether_a_file_may_declare_an_interface_is_kept_by_its_content(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    counted = _Counted(implementers._MAY_DECLARE_AN_INTERFACE)
    monkeypatch.setattr(implementers, "_MAY_DECLARE_AN_INTERFACE", counted)
    (tmp_path / "a.ts").write_text(_PLAIN)
    workspace = Workspace(tmp_path)
    edit = _edit_of_words(workspace, "a.ts", "scale", "grow")
    # No interface declares the member: found nothing, before the project is asked (no context).
    assert not implementers.find(None, edit, "scale", ParsedFiles(workspace))  # type: ignore[arg-type]
    first = counted.searches
    assert first == 1
    assert not implementers.find(None, edit, "scale", ParsedFiles(workspace))  # type: ignore[arg-type]
    assert counted.searches == first  # the same content: its answer kept
    (tmp_path / "a.ts").write_text(_PLAIN.replace("type Size = number;", "interface Sized { size(): number }"))
    changed = Workspace(tmp_path)
    edit = _edit_of_words(changed, "a.ts", "scale", "grow")
    assert not implementers.find(None, edit, "scale", ParsedFiles(changed))  # type: ignore[arg-type]
    assert counted.searches == first + 1  # a new content: looked at again
    source = changed.read("a.ts")
    assert implementers.may_declare_an_interface(source.text, source.sha256)
    (tmp_path / "a.ts").write_text(_PLAIN.replace("type Size = number;", "let Size = 1;").replace(": Size", ""))
    source = Workspace(tmp_path).read("a.ts")
    assert not implementers.may_declare_an_interface(source.text, source.sha256)


def test_where_the_old_names_words_may_declare_a_member_is_kept_by_content(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    looked_at: list[set[tuple[int, int]]] = []
    original = met_interfaces._may_declare_at

    def counted(source: SourceFile, starts: set[tuple[int, int]], old: str) -> bool:
        looked_at.append(set(starts))
        return original(source, starts, old)

    monkeypatch.setattr(met_interfaces, "_may_declare_at", counted)
    (tmp_path / "a.ts").write_text(_PLAIN)
    workspace = Workspace(tmp_path)
    edit = _edit_of_words(workspace, "a.ts", "scale", "grow")
    assert met_interfaces.renamed_members(edit, "scale", ParsedFiles(workspace)) == []
    looked_at.clear()
    assert met_interfaces.renamed_members(edit, "scale", ParsedFiles(workspace)) == []
    assert all(not starts for starts in looked_at)  # every edit on a word of the name: nothing looked at again
    (tmp_path / "a.ts").write_text(_DECLARED)
    changed = Workspace(tmp_path)
    members = met_interfaces.renamed_members(_edit_of_words(changed, "a.ts", "scale", "grow"), "scale", ParsedFiles(changed))
    assert [(member.class_name, member.line) for member in members] == [("Box", 2)]


_LINE = st.lists(st.sampled_from([*"ab{},(*:=;?! \tx.$", "ab", "static ", "get ", "é", "\r"]), max_size=14).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, min_size=1, max_size=8),
       st.lists(st.tuples(st.integers(0, 9), st.integers(-1, 40)), max_size=6))
def test_the_kept_look_answers_as_the_look_at_each_edit(lines: list[str], starts: list[tuple[int, int]]) -> None:
    text = "\n".join(lines)
    source = SourceFile("a.ts", text.encode("utf-8"), text, False, "\n", f"sha-{hash(text)}-{len(text)}", 0.0, len(text),
                        "typescript")
    # Each edit as wide as the name (on a word, or not) or wider (starting at a word, ending elsewhere).
    for width in (2, 3):
        for line, column in {*starts, *(word[:2] for word in met_interfaces._declaring_words(source, "ab")[0])}:
            assert (met_interfaces._may_declare_any(source, ((line, column, line, column + width),), "ab")
                    == met_interfaces._may_declare_at(source, {(line, column)}, "ab"))
        spans = tuple((line, column, line, column + width) for line, column in starts)
        assert met_interfaces._may_declare_any(source, spans, "ab") == met_interfaces._may_declare_at(source, set(starts), "ab")


def test_the_clash_check_compiles_no_pattern_for_a_new_name_no_file_holds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.ts").write_text(_PLAIN)
    workspace = Workspace(tmp_path)
    compiled: list[str] = []
    original = re.compile

    def counted(pattern: Any, flags: int = 0) -> Any:
        compiled.append(str(pattern))
        return original(pattern, flags)

    monkeypatch.setattr(clashes.re, "compile", counted)
    edit = _edit_of_words(workspace, "a.ts", "scale", "growNowhere")
    assert clashes.rename_clashes(workspace, edit, "scale", "growNowhere", lambda files: []) == []
    assert not [pattern for pattern in compiled if "growNowhere" in pattern]
    (tmp_path / "a.ts").write_text(_PLAIN + "const growNowhere = 1;\n")
    held = Workspace(tmp_path)
    found = clashes.rename_clashes(held, _edit_of_words(held, "a.ts", "scale", "growNowhere"), "scale", "growNowhere",
                                   lambda files: [])
    assert [pattern for pattern in compiled if "growNowhere" in pattern]
    assert [clash.line for clash in found] == [2]  # the renamed function beside the constant: still a clash


def test_the_leftover_check_looks_at_each_replacement_text_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    counted = _Counted(leftovers._BREAKS)
    monkeypatch.setattr(leftovers, "_BREAKS", counted)
    (tmp_path / "a.ts").write_text(_PLAIN)
    workspace = Workspace(tmp_path)
    found = Leftovers(Corpus(workspace), "scale", "typescript")
    edit = _edit_of_words(workspace, "a.ts", "scale", "grow")
    assert len(edit.operations[0].edits) == 2  # type: ignore[union-attr]
    assert found.found(edit) == ([], [])  # every word renamed: nothing left
    assert counted.searches == 1
    assert found.found(_edit_of_words(workspace, "a.ts", "scale", "gr\now")) == ([], [])
    assert counted.searches >= 2  # a text that breaks the line: looked at, the lines read the general way
    assert [left.line for left in found.found(_edit_of_words(workspace, "a.ts", "scale", "grow.scale"))[0]] == [2, 3]
