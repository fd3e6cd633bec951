"""A rename whose edit reaches a file outside the workspace (issue 41): the package resolved to a
copy installed elsewhere, not to the workspace's sources. It used to crash with a traceback
(``ValueError: … is not in the subpath of …``) in jedi's rename; now jedi's and a server's rename
both refuse with ``outside_workspace``, naming the files, and write nothing anywhere. References
outside the root are left out of an answer, with a note naming them."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.answers import FileEdits, Location, ServerEdit, TextEdit
from engine.api import Engine, SourcePreference
from engine.errors import EditsOutsideWorkspace
from engine.ports import Answered
from engine.positions import Position, Range
from engine.refactor.operations.rename_symbol import Rename
from engine.refactor.python import jedi_rename as jedi_module
from engine.workspace import SourceFile, Workspace
from tests.lsp_helpers import OutlineOnlyServices

_INSTALLED = "def shout(text):\n    return text.upper()\n"
_USE = "from extpkg import shout\n\nVALUE = shout('hi')\n"


def _workspace_and_installed_copy(tmp_path: Path) -> tuple[Path, Path]:
    root, installed = tmp_path / "project", tmp_path / "site-packages"
    root.mkdir()
    installed.mkdir()
    (installed / "extpkg.py").write_text(_INSTALLED)
    (root / "use.py").write_text(_USE)
    return root, installed


def test_jedi_rename_that_reaches_an_installed_copy_is_refused_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    root, installed = _workspace_and_installed_copy(tmp_path)
    # The installed copy on jedi's path, as a package in codegraft's own environment would be.
    monkeypatch.setattr(jedi_module, "source_roots", lambda _root: [installed])
    with pytest.raises(EditsOutsideWorkspace) as refusal:
        jedi_module.jedi_rename(Workspace(root), "use.py", Position(2, 8), "yell")
    assert refusal.value.code == "outside_workspace"
    assert refusal.value.paths == [str(installed / "extpkg.py")]
    assert refusal.value.to_json()["paths"] == [str(installed / "extpkg.py")]
    assert (installed / "extpkg.py").read_text() == _INSTALLED
    assert (root / "use.py").read_text() == _USE


class _ServerThatRenamesAnInstalledCopy(OutlineOnlyServices):
    """The port as a server answers when it resolved the import to a copy outside the root: the
    converter keeps such a file absolute."""

    def __init__(self, installed: Path) -> None:
        self.installed = installed

    def rename(self, source: SourceFile, position: Position, new_name: str, sent: object = None) -> Answered[ServerEdit]:
        def word(line: int, column: int) -> TextEdit:
            return TextEdit(Range(Position(line, column), Position(line, column + len("shout"))), new_name)

        return Answered(ServerEdit(files=(
            FileEdits(str(self.installed / "extpkg.py"), (word(0, 4),)),
            FileEdits("use.py", (word(0, 19), word(2, 8))),
        )), "fake", True)

    def references(self, source: SourceFile, position: Position) -> Answered[list[Location]]:
        def at(file: str, line: int, column: int, inside: bool = True) -> Location:
            return Location(file, Range(Position(line, column), Position(line, column + len("shout"))), inside)

        return Answered([at("local.py", 0, 4), at(str(self.installed / "extpkg.py"), 0, 4, inside=False)], "fake", True)


def test_a_servers_rename_that_reaches_an_installed_copy_is_refused_with_the_paths(tmp_path: Path) -> None:
    root, installed = _workspace_and_installed_copy(tmp_path)
    (root / "local.py").write_text("def shout(text):\n    return text\n")
    engine = Engine(Workspace(root), services=_ServerThatRenamesAnInstalledCopy(installed), source=SourcePreference.LSP)
    try:
        with pytest.raises(EditsOutsideWorkspace) as refusal:
            engine.plan(Rename("local.py:shout", "yell"))
    finally:
        engine.close()
    assert refusal.value.code == "outside_workspace"
    assert refusal.value.paths == [str(installed / "extpkg.py")]
    assert (installed / "extpkg.py").read_text() == _INSTALLED
    assert (root / "use.py").read_text() == _USE


def test_references_outside_the_workspace_are_left_out_with_a_note_naming_them(tmp_path: Path) -> None:
    root, installed = _workspace_and_installed_copy(tmp_path)
    (root / "local.py").write_text("def shout(text):\n    return text\n")
    engine = Engine(Workspace(root), services=_ServerThatRenamesAnInstalledCopy(installed), source=SourcePreference.LSP)
    try:
        answer = engine.references("local.py:shout")
    finally:
        engine.close()
    assert [(location.file, location.range.start.line) for location in answer.locations] == [("local.py", 0)]
    assert any("outside the workspace left out" in note and f"{installed / 'extpkg.py'}:1" in note for note in answer.notes), answer.notes


def test_the_converter_keeps_a_file_outside_the_root_absolute_so_the_rename_can_refuse_it(tmp_path: Path) -> None:
    from lsp_pool.convert import Converter
    from engine.positions import PositionEncoding

    root, installed = _workspace_and_installed_copy(tmp_path)
    word = {"range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 9}}, "newText": "yell"}
    edit = Converter(root, PositionEncoding.UTF16).workspace_edit({"changes": {
        (installed / "extpkg.py").as_uri(): [word], (root / "use.py").as_uri(): [dict(word, range={
            "start": {"line": 2, "character": 8}, "end": {"line": 2, "character": 13}})],
    }})
    assert sorted(files.file for files in edit.files) == sorted([str(installed / "extpkg.py"), "use.py"])
