"""LSP ⇄ engine conversion, without a server: exact columns in both encodings, shapes of answers."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as t

from engine.extract import finalize
from engine.positions import Position, PositionEncoding, Range
from engine.symbols import SymbolKind
from lsp_pool.convert import Converter

LINE = 'x = "😀 漢字"; target = 1\n'


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "m.py"
    path.write_bytes(b"\xef\xbb\xbf" + LINE.encode("utf-8") + b"def f():\r\n    pass\r\n")
    return path


def test_utf16_and_utf8_columns_map_to_the_same_code_point(source: Path, tmp_path: Path) -> None:
    column = LINE.index("target")  # 12 code points
    utf16 = len(LINE[:column].encode("utf-16-le")) // 2  # 13: the emoji is a surrogate pair
    utf8 = len(LINE[:column].encode("utf-8"))  # 19: 4 bytes for the emoji, 3 for each CJK character
    assert (column, utf16, utf8) == (12, 13, 19)
    for encoding, units in ((PositionEncoding.UTF16, utf16), (PositionEncoding.UTF8, utf8)):
        converter = Converter(tmp_path, encoding)
        assert converter.position(source, t.Position(0, units)) == Position(0, column)
        assert converter.to_lsp_position(source, Position(0, column)) == t.Position(0, units)


def test_bom_is_not_part_of_the_document(source: Path, tmp_path: Path) -> None:
    converter = Converter(tmp_path, PositionEncoding.UTF16)
    assert converter.position(source, t.Position(0, 0)) == Position(0, 0)
    assert converter.position(source, t.Position(1, 4)) == Position(1, 4)  # CRLF lines count as one break


def test_locations_and_links_inside_and_outside_the_workspace(source: Path, tmp_path: Path) -> None:
    converter = Converter(tmp_path, PositionEncoding.UTF16)
    span = t.Range(t.Position(1, 4), t.Position(1, 5))
    outside = tmp_path.parent / "elsewhere.py"
    outside.write_text("y = 1\n")
    found = converter.locations(
        [
            t.Location(uri=source.as_uri(), range=span),
            t.LocationLink(target_uri=outside.as_uri(), target_range=span, target_selection_range=t.Range(t.Position(0, 0), t.Position(0, 1))),
        ]
    )
    assert (found[0].file, found[0].inside_workspace, found[0].range.start) == ("m.py", True, Position(1, 4))
    assert (found[1].file, found[1].inside_workspace) == (str(outside), False)


def test_workspace_edit_in_both_shapes(source: Path, tmp_path: Path) -> None:
    converter = Converter(tmp_path, PositionEncoding.UTF16)
    edit = t.TextEdit(range=t.Range(t.Position(0, 13), t.Position(0, 19)), new_text="goal")  # "target", UTF-16
    as_changes = t.WorkspaceEdit(changes={source.as_uri(): [edit]})
    as_document_changes = t.WorkspaceEdit(
        document_changes=[
            t.TextDocumentEdit(
                text_document=t.OptionalVersionedTextDocumentIdentifier(uri=source.as_uri(), version=1), edits=[edit]
            ),
            t.RenameFile(old_uri=source.as_uri(), new_uri=(tmp_path / "n.py").as_uri()),
        ]
    )
    via_changes = converter.workspace_edit(as_changes)
    via_document_changes = converter.workspace_edit(as_document_changes)
    assert via_changes.files == via_document_changes.files
    # Rename answers arrive as the server's JSON (see lsp_pool.connection), annotated edits included.
    span = {"start": {"line": 0, "character": 13}, "end": {"line": 0, "character": 19}}
    as_json = {"documentChanges": [
        {"textDocument": {"uri": source.as_uri(), "version": 1}, "edits": [{"range": span, "newText": "goal", "annotationId": "a"}]},
        {"kind": "rename", "oldUri": source.as_uri(), "newUri": (tmp_path / "n.py").as_uri()},
    ]}
    assert converter.workspace_edit(as_json) == via_document_changes
    [file_edits] = via_changes.files
    assert file_edits.edits[0].range == Range(Position(0, 12), Position(0, 18)) and file_edits.edits[0].new_text == "goal"
    assert via_document_changes.renamed == (("m.py", "n.py"),)


def test_symbols_normalised_across_servers(tmp_path: Path) -> None:
    path = tmp_path / "s.go"
    path.write_text("type Store struct{}\nfunc (s *Store) Add() {}\nfunc (s Store) Len() int { return 0 }\n")
    converter = Converter(tmp_path, PositionEncoding.UTF16)

    def symbol(name: str, kind: t.SymbolKind, line: int, children: list[t.DocumentSymbol] | None = None) -> t.DocumentSymbol:
        span = t.Range(t.Position(line, 0), t.Position(line, 10))
        return t.DocumentSymbol(name=name, kind=kind, range=span, selection_range=span, children=children)

    answer = [
        symbol("(*Store).Add", t.SymbolKind.Method, 1, [symbol("local", t.SymbolKind.Variable, 1)]),
        symbol("Store", t.SymbolKind.Struct, 0),
        symbol("(Store).Len", t.SymbolKind.Method, 2, [symbol("x.map() callback", t.SymbolKind.Function, 2)]),
    ]
    symbols = finalize(converter.symbols(answer, path, complete=False))
    paths = [(s.name_path, s.kind, s.source.value, s.confidence.value) for top in symbols for s in top.walk()]
    assert paths == [
        ("Store", SymbolKind.STRUCT, "lsp", "medium"),
        ("Store/Add", SymbolKind.METHOD, "lsp", "medium"),
        ("Store/Len", SymbolKind.METHOD, "lsp", "medium"),
    ]


def test_flat_symbol_information_is_nested_by_range(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("class A:\n    def m(self):\n        pass\n")
    converter = Converter(tmp_path, PositionEncoding.UTF16)

    def info(name: str, kind: t.SymbolKind, start: int, end: int) -> t.SymbolInformation:
        span = t.Range(t.Position(start, 0), t.Position(end, 12))
        return t.SymbolInformation(name=name, kind=kind, location=t.Location(uri=path.as_uri(), range=span))

    symbols = finalize(converter.symbols([info("m", t.SymbolKind.Method, 1, 2), info("A", t.SymbolKind.Class, 0, 2)], path, complete=True))
    assert [s.name_path for top in symbols for s in top.walk()] == ["A", "A/m"]
