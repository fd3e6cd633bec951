"""A rename's checks of the server's answer, between its arrival and the plan (issue 47): each
edit's range is read once, when its file's change is built, and the checks after it (only the old
name replaced, leftovers, the TypeScript passes' edit starts) compare those plain numbers with where
the leftovers' scan found the old name, made while the server computed; a file whose bytes changed
between that scan and its read is checked against its text, as before; each file's export table is
looked up once per plan; whether each file the answer will edit holds the new name, and where its
words of the old name may declare a member, are worked out while the server computes. Each answers
exactly as the look at every edit it replaces."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

import engine.refactor.rename as rename
from engine.answers import FileEdits, ServerEdit, TextEdit
from engine.edits.model import FileChange, WorkspaceEdit
from engine.ports import Answered
from engine.positions import Position, Range
from engine.refactor.corpus import Corpus
from engine.refactor.kept_by_content import KeptByContent
from engine.refactor.leftovers import Leftovers
from engine.refactor.operations.rename_symbol import Rename
from engine.refactor.typescript import clashes, implementers, met_interfaces
from engine.refactor.typescript.clashes import ParsedFiles
from engine.workspace import SourceFile, Workspace
from tests.test_lsp_e2e import require, served_engine
from tests.test_plan_costs import TS_FILES, AnsweringAfterTheReads, _typescript_project

Span = tuple[int, int, int, int]
_OLD = "scaleBy"
_A = f'import {{ {_OLD} }} from "./b";\nexport const one = {_OLD}(1) + {_OLD}(2);\n'
_B = f"export function {_OLD}(x: number): number {{\n  return x * 2;\n}}\n"


def _words(text: str, old: str = _OLD) -> list[tuple[int, int]]:
    """(line, column) of each word ``old`` of ``text`` (lines split at ``\\n``)."""
    return [(number, match.start()) for number, line in enumerate(text.split("\n"))
            for match in re.finditer(rf"(?<![\w$]){re.escape(old)}(?![\w$])", line)]


class _CountedEdit(TextEdit):
    """A text edit that counts the reads of its range."""

    reads: list[int] = []

    def __getattribute__(self, name: str) -> Any:
        if name == "range":
            _CountedEdit.reads.append(1)
        return super().__getattribute__(name)


def _answer(edits: dict[str, list[TextEdit]]) -> list[Answered[ServerEdit]]:
    return [Answered(ServerEdit(files=tuple(FileEdits(path, tuple(each)) for path, each in sorted(edits.items()))),
                     "fake", True)]


def test_each_edits_range_is_read_once_after_the_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Read through its range and positions by each check in turn, a thousand edits were most of the
    work after the answer."""
    (tmp_path / "a.ts").write_text(_A)
    (tmp_path / "b.ts").write_text(_B)
    corpus = Corpus(Workspace(tmp_path))
    found = Leftovers(corpus, _OLD, "typescript")
    monkeypatch.setattr(_CountedEdit, "reads", [])
    edits: dict[str, list[TextEdit]] = {
        path: [_CountedEdit(Range(Position(line, column), Position(line, column + len(_OLD))), "multiplyBy")
               for line, column in _words(text)]
        for path, text in (("a.ts", _A), ("b.ts", _B))}
    count = sum(len(each) for each in edits.values())
    merged = rename._merged_answers(corpus, _answer(edits))
    assert len(_CountedEdit.reads) == count
    edit, others = rename._only_the_old_name(corpus, merged, _OLD)
    left, warnings = found.found(edit)
    starts = implementers.edit_starts(edit)
    listed = {path: starts.get(path) for path in starts.paths()}
    assert len(_CountedEdit.reads) == count, "a check after the answer read the edits' ranges again"
    assert edit is merged and not others
    assert not left and not warnings
    assert listed == {"a.ts": set(_words(_A)), "b.ts": {(0, 16)}} and len(listed["a.ts"]) == 3


def test_a_file_changed_after_the_scan_is_checked_against_its_text(tmp_path: Path) -> None:
    """The scan's words stand for the file only while its bytes are those the plan reads: a file
    changed in between (here, a line added above) is checked by slicing its text, which finds that
    the server's edits (from the older file) replace something else."""
    (tmp_path / "b.ts").write_text(_B)
    corpus = Corpus(Workspace(tmp_path))
    Leftovers(corpus, _OLD, "typescript")
    (tmp_path / "b.ts").write_text("// moved down\n" + _B)
    edits = {"b.ts": [TextEdit(Range(Position(0, 16), Position(0, 16 + len(_OLD))), "multiplyBy")]}
    source = corpus.source("b.ts")
    assert corpus.words_in(_OLD, source) is None
    edit, others = rename._only_the_old_name(corpus, rename._merged_answers(corpus, _answer(edits)), _OLD)
    assert not edit.operations and [(other.path, other.line, other.column) for other in others] == [("b.ts", 0, 16)]


def test_the_scans_words_stand_for_a_file_with_a_byte_order_mark(tmp_path: Path) -> None:
    (tmp_path / "b.ts").write_bytes(b"\xef\xbb\xbf" + _B.encode())
    corpus = Corpus(Workspace(tmp_path))
    Leftovers(corpus, _OLD, "typescript")
    assert corpus.words_in(_OLD, corpus.source("b.ts")) == {(0, 16, 0, 23)}


def _reference_only_the_old_name(text: str, spans: list[Span], old: str) -> list[bool]:
    """Whether each edit is kept, as the check sliced the text under each edit."""
    starts = [0] + [match.end() for match in re.finditer(r"\r\n|\r|\n", text)]
    return [text[starts[line] + column:starts[end_line] + end_column] == old or starts[line] + column == starts[end_line] + end_column
            for line, column, end_line, end_column in spans]


def _reference_replaces_every_mention(words: set[tuple[int, int]], edits: list[TextEdit], old: str) -> bool:
    """Leftovers' test that nothing of the old name is left, as it looked at each edit."""
    if len(edits) != len(words) or not re.fullmatch(r"[\w$]+", old):
        return False
    for edit in edits:
        start, end = edit.range.start, edit.range.end
        if end.line != start.line or end.column != start.column + len(old) or (start.line, start.column) not in words:
            return False
    return not any(old in edit.new_text or re.search(r"[\r\n]", edit.new_text) for edit in edits)


_PIECES = st.sampled_from(["old", "x", " ", "\n", "\r\n", "\r", "é", "old_", ".", "$old", "😀"])
_PICKS = st.lists(st.tuples(st.integers(0, 9), st.integers(-1, 2), st.integers(0, 2)), max_size=8)


@settings(max_examples=500, deadline=None)
@given(st.lists(_PIECES, max_size=24), _PICKS, st.booleans(), st.sampled_from(["new", "old", "a\nb"]))
def test_the_checks_answer_as_the_look_at_each_edit(pieces: list[str], picks: list[tuple[int, int, int]], every_word: bool,
                                                   new_text: str) -> None:
    """Edits on the words of the old name, or shifted, or wider, or on other lines (and, or not,
    every word besides); each check, given the scan's words, keeps and reports exactly what
    slicing the text under each edit did."""
    text = "".join(pieces)
    lines = re.split(r"\r\n|\r|\n", text)
    words = [(number, match.start()) for number, line in enumerate(lines)
             for match in re.finditer(r"(?<![\w$])old(?![\w$])", line)]
    picked = []
    for pick, shift, wider in picks:
        line, column = words[pick % len(words)] if words else (pick % len(lines), 0)
        picked.append((line, max(0, column + shift), line, max(0, column + shift) + 3 + wider))
    chosen: list[Span] = []
    for span in [*picked, *((line, column, line, column + 3) for line, column in words if every_word)]:
        # Overlapping edits are refused when the change is built: those of the picks kept first.
        if span not in chosen and all(span[2:] <= other[:2] or other[2:] <= span[:2] for other in chosen):
            chosen.append(span)
    ordered = sorted(chosen)
    edits = [TextEdit(Range(Position(line, column), Position(end_line, end_column)), new_text)
             for line, column, end_line, end_column in ordered]
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "a.ts").write_bytes(text.encode())
        corpus = Corpus(Workspace(Path(folder)))
        found = Leftovers(corpus, "old", "typescript")
        expected = frozenset((line, column, line, column + 3) for line, column in words)
        assert corpus.words_in("old", corpus.source("a.ts")) == (expected if "old" in text else None)
        change = FileChange("a.ts", tuple(edits), corpus.source("a.ts").sha256)
        edit, others = rename._only_the_old_name(corpus, WorkspaceEdit((change,)), "old")
        kept = {span for change in edit.operations if isinstance(change, FileChange) for span in change.spans}
        assert [span in kept for span in ordered] == _reference_only_the_old_name(text, ordered, "old")
        assert len(others) == len(ordered) - len(kept)
        if words:
            assert found._replaces_every_mention(change) == _reference_replaces_every_mention(set(words), edits, "old")


def test_each_files_export_table_is_looked_up_once_per_plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The clash check, its re-exporters' walk and the shorthand pass each asked for every edited
    file's table; the kept tables are looked up (a lock, an ordered dict's reordering) only once."""
    (tmp_path / "b.ts").write_text(_B)
    looked: list[tuple[str, str]] = []
    real = clashes.table_of

    def counted(key: tuple[str, str], parse: Any) -> Any:
        looked.append(key)
        return real(key, parse)

    monkeypatch.setattr(clashes, "table_of", counted)
    parsed = ParsedFiles(Workspace(tmp_path))
    parsed.read_ahead("b.ts")
    first = parsed.table("b.ts")
    assert first is not None and _OLD in first.named_exports
    assert parsed.table("b.ts") is first and len(looked) == 1


def test_the_member_declaration_look_reads_no_line_when_every_edit_is_on_a_word(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kept look at the old name's words answers for a rename's edits, which are all on them:
    the line look runs only for an edit elsewhere (it took the file's line starts each time)."""
    (tmp_path / "b.ts").write_text(_B + f"export const other = {{ {_OLD}: 1 }};\n")
    source = Workspace(tmp_path).read("b.ts")
    monkeypatch.setattr(met_interfaces, "_DECLARING_WORDS", KeptByContent(16))
    met_interfaces.read_ahead(source, _OLD)
    looked: list[set[tuple[int, int]]] = []
    real = met_interfaces._may_declare_at

    def counted(source: SourceFile, starts: set[tuple[int, int]], old: str) -> bool:
        looked.append(set(starts))
        return real(source, starts, old)

    monkeypatch.setattr(met_interfaces, "_may_declare_at", counted)
    width = len(_OLD)
    assert not met_interfaces._may_declare_any(source, ((0, 16, 0, 16 + width),), _OLD) and not looked
    assert met_interfaces._may_declare_any(source, ((0, 16, 0, 16 + width), (3, 23, 3, 23 + width)), _OLD) and not looked
    assert not met_interfaces._may_declare_any(source, ((0, 16, 0, 16 + width), (1, 2, 1, 2 + width)), _OLD)
    assert looked == [{(1, 2)}]


def test_the_passes_list_edit_starts_only_for_the_files_they_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither file may declare a member or an interface: the members and implementers checks
    answer from the edits' spans, and list no file's starts (a thousand, on every plan)."""
    (tmp_path / "a.ts").write_text(_A)
    (tmp_path / "b.ts").write_text(_B)
    workspace = Workspace(tmp_path)
    edit = WorkspaceEdit(tuple(
        FileChange(path, tuple(TextEdit(Range(Position(line, column), Position(line, column + len(_OLD))), "multiplyBy")
                               for line, column in _words(text)), workspace.read(path).sha256)
        for path, text in (("a.ts", _A), ("b.ts", _B))))
    listed: list[str] = []
    real = implementers.EditStarts.get

    def get(self: implementers.EditStarts, path: str) -> set[tuple[int, int]]:
        listed.append(path)
        return real(self, path)

    monkeypatch.setattr(implementers.EditStarts, "get", get)
    starts, parsed = implementers.edit_starts(edit), ParsedFiles(workspace)
    assert met_interfaces.renamed_members(edit, _OLD, parsed, starts) == []
    assert not implementers.find(None, edit, _OLD, parsed, starts)  # type: ignore[arg-type]
    assert not listed and starts.paths() == ["a.ts", "b.ts"]


@pytest.mark.e2e
def test_the_typescript_passes_look_for_the_new_name_and_the_old_names_declarations_while_the_server_computes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A name renamed for the first time (nothing kept for it): each file holding it is searched for
    the new name, and its words of the old name looked at, before the answer, and not after it."""
    require("typescript-language-server")
    _typescript_project(tmp_path)
    monkeypatch.setattr(met_interfaces, "_DECLARING_WORDS", KeptByContent(4096))
    with served_engine(tmp_path, "typescript-language-server") as engine:
        waiting = AnsweringAfterTheReads(engine.services, {f"{what} {path}" for path in TS_FILES
                                                           for what in ("new name in", "declarations in")})
        after: list[str] = []
        real_holds, real_words = ParsedFiles.holds, met_interfaces._declaring_words

        def looked(what: str) -> None:
            waiting.read(what) if waiting.asking else after.append(what)

        def holds(self: ParsedFiles, path: str, text: str) -> bool:
            if (path, text) not in self._holding:  # searched now, not answered from the plan's own memo
                looked(f"new name in {path}")
            return real_holds(self, path, text)

        def declaring_words(source: SourceFile, old: str) -> Any:
            looked(f"declarations in {source.path}")
            return real_words(source, old)

        monkeypatch.setattr(ParsedFiles, "holds", holds)
        monkeypatch.setattr(met_interfaces, "_declaring_words", declaring_words)
        engine.services = waiting  # type: ignore[assignment]
        plan = engine.plan(Rename("src/core.ts:scaleBy", "timesBy"))
        assert len(plan.edit.operations) == 5
        assert waiting.read_while_asking >= waiting.expected, "each file the answer edits, looked at before it"
        assert not after, "and not again after it"
