"""What a rename leaves of the old name, classified honestly (issue 39): a use in code the rename
did not change is called code and lowers the plan's confidence; mentions in strings, comments and
docstrings are called what they are."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.answers import TextEdit
from engine.api import Engine, SourcePreference
from engine.edits.model import FileChange, WorkspaceEdit
from engine.positions import Position, Range
from engine.refactor.mention_kinds import MentionKind, mention_kinds
from engine.refactor.python.builtin_names import builtin_lines
from engine.refactor.operations.rename_symbol import Rename
from engine.symbols import Confidence
from engine.workspace import Workspace
from tests.test_lsp_e2e import require, served_engine

MODULE = '''"""The old module: old things."""


def old():
    """Return what old returns."""
    return 1


def other():
    old = 2  # a local named old
    return old + len("old") + len(f"{old}") + len(f"old{{x}}")


VALUE = old()  # old is called here
'''

ONLY_TEXT = '''def old():
    """Return what old returns."""
    return 1


VALUE = old()  # old is called here
'''


def _kinds_by_line(text: str, word: str, language: str, family: str) -> list[tuple[int, MentionKind]]:
    from engine.edits.text import word_offsets

    offsets = word_offsets(text, word)
    return [(text.count("\n", 0, offset) + 1, kind) for offset, kind in zip(offsets, mention_kinds(text, offsets, language, family))]


def test_python_mentions_are_code_string_comment_or_docstring() -> None:
    after = MODULE.replace("def old():", "def new():").replace("VALUE = old()", "VALUE = new()")
    assert _kinds_by_line(after, "old", "python", "python") == [
        (1, MentionKind.DOCSTRING), (1, MentionKind.DOCSTRING), (5, MentionKind.DOCSTRING),
        (10, MentionKind.CODE), (10, MentionKind.COMMENT),
        (11, MentionKind.CODE), (11, MentionKind.STRING), (11, MentionKind.CODE), (11, MentionKind.STRING),
        (14, MentionKind.COMMENT),
    ]


def test_c_like_mentions_with_doc_comments_and_template_literals() -> None:
    script = ('/** Builds an old value. */\nexport function make() {\n  // old style\n  const s = `${old()} and old`;\n'
              "  return old + 'old' + \"old\";\n}\n")
    assert _kinds_by_line(script, "old", "typescript", "typescript") == [
        (1, MentionKind.DOCSTRING), (3, MentionKind.COMMENT), (4, MentionKind.CODE), (4, MentionKind.STRING),
        (5, MentionKind.CODE), (5, MentionKind.STRING), (5, MentionKind.STRING),
    ]
    # Rust: a lifetime is no character literal, /// is documentation.
    rust = "/// Returns old.\nfn f<'a>(x: &'a str) -> usize { old(x) + 'o' as usize }\n"
    assert _kinds_by_line(rust, "old", "rust", "rust") == [(1, MentionKind.DOCSTRING), (2, MentionKind.CODE)]
    assert mention_kinds("old", [0], "ruby", "ruby") == [MentionKind.UNCLASSIFIED]


def _plan(engine: Engine, address: str) -> tuple[Confidence, list[str]]:
    made = engine.plan(Rename(address, "new"))
    return made.confidence, made.warnings


def test_a_rename_says_what_each_leftover_is(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "m.py").write_text(MODULE)
    engine = Engine(Workspace(tmp_path), source=SourcePreference.AST)
    try:
        warnings = engine.plan(Rename("m.py:old", "new")).warnings
    finally:
        engine.close()
    assert not any("strings, comments, other scopes" in warning for warning in warnings), warnings
    assert ("2 use(s) of 'old' in code not renamed (another symbol of that name, or a reference the rename missed: "
            "check them): m.py:10, m.py:11") in warnings
    assert ("5 mention(s) of 'old' in text left as they are (comment: m.py:10, m.py:14; string: m.py:11; "
            "docstring: m.py:1, m.py:5)") in warnings


def test_a_code_leftover_lowers_a_servers_rename_and_text_leftovers_do_not(tmp_path: Path) -> None:
    """basedpyright renames the function and rightly leaves another function's local of that name:
    which of the two a leftover use is cannot be told from the text, so the plan says medium."""
    require("basedpyright")
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "a.py").write_text(ONLY_TEXT.replace("old", "former"))
    (tmp_path / "b.py").write_text(MODULE)
    with served_engine(tmp_path, "basedpyright") as engine:
        engine.source = SourcePreference.LSP
        text_only = _plan(engine, "a.py:former")
        with_code = _plan(engine, "b.py:old")
    assert text_only[0] is Confidence.HIGH, text_only[1]
    assert with_code[0] is Confidence.MEDIUM, with_code[1]
    assert any(warning.startswith("2 use(s) of 'old' in code not renamed") and "b.py:10, b.py:11" in warning
               for warning in with_code[1]), with_code[1]


@pytest.mark.parametrize("text, kind", [
    ("x = 1  # old\n", MentionKind.COMMENT),
    ("x = rb'old'\n", MentionKind.STRING),
    ("def f():\n    r'''old'''\n", MentionKind.DOCSTRING),
    ("x = f'{old!r}'\n", MentionKind.CODE),
    ("x = f'{{old}}'\n", MentionKind.STRING),
    ("if'old':\n    pass\n", MentionKind.STRING),
])
def test_python_edge_cases(text: str, kind: MentionKind) -> None:
    offset = text.index("old")
    assert mention_kinds(text, [offset], "python", "python") == [kind]


def test_uses_of_a_builtin_or_standard_library_name_are_summarised_apart_from_code(tmp_path: Path) -> None:
    """Renaming a parameter called ``html`` leaves the ``html`` module's uses: they are counted as
    builtin or standard-library uses, not listed as code to check (the trial's "179 other
    occurrences of 'html'", issue 41). A use in a function that binds the name itself stays code."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "render.py").write_text(
        'import html\n\n\ndef page(title, html):\n    return title + html\n\n\n'
        'def escaped(text):\n    return html.escape(text)\n\n\ndef local(html):\n    return html\n')
    (tmp_path / "views.py").write_text("import html\n\n\ndef show(text):\n    return html.escape(text)\n")
    engine = Engine(Workspace(tmp_path), source=SourcePreference.AST)
    try:
        warnings = engine.plan(Rename("render.py:page/html", "body")).warnings
    finally:
        engine.close()
    assert ("2 use(s) of 'html' in code not renamed (another symbol of that name, or a reference the rename missed: "
            "check them): render.py:12, render.py:13") in warnings, warnings
    assert ("4 use(s) of the builtin or standard-library 'html' left as they are (in files that bind the name no "
            "other way): render.py:1, render.py:9, views.py:1 and 1 more") in warnings, warnings


@pytest.mark.parametrize("before, name, lines, builtin", [
    ("import html\nhtml.escape('x')\n", "html", {2}, {2}),
    ("def format(x):\n    return x\nformat(1)\n", "format", {3}, set()),  # the renamed symbol's own file, judged as it was
    ("from fmt import *\nformat(1)\n", "format", {2}, set()),  # a star import may bring the renamed name
    ("from fmt import format\nformat(1)\n", "format", {2}, set()),
    ("import html\ndef f(html):\n    return html\nhtml.escape('x')\n", "html", {3, 4}, {4}),  # a parameter binds it in its function only
    ("import mypkg\nmypkg.run()\n", "mypkg", {2}, set()),  # neither a builtin nor the standard library
    ("def f(:\n    format(1)\n", "format", {2}, set()),  # does not parse: code
])
def test_which_lines_can_only_mean_a_builtin(before: str, name: str, lines: set[int], builtin: set[int]) -> None:
    assert builtin_lines(before, name, lines) == builtin


def _replacing(workspace: Workspace, path: str, spots: list[tuple[int, int]], old: str, new: str) -> WorkspaceEdit:
    edits = tuple(TextEdit(Range(Position(line, column), Position(line, column + len(old))), new) for line, column in spots)
    return WorkspaceEdit((FileChange(path, edits, workspace.read(path).sha256),))


def test_a_rename_that_replaces_every_word_of_the_name_splices_no_line_to_find_none_left(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.refactor import leftovers
    from engine.refactor.corpus import Corpus

    (tmp_path / "core.ts").write_text("export function scaleBy(a: number) { return a; }\nconst x = scaleBy(1) + scaleBy(2);\n")
    workspace = Workspace(tmp_path)
    spliced: list[int] = []
    real = leftovers.splice_line

    def counted(line: str, edits: object) -> str:
        spliced.append(1)
        return real(line, edits)  # type: ignore[arg-type]

    monkeypatch.setattr(leftovers, "splice_line", counted)
    found = leftovers.Leftovers(Corpus(workspace, ["core.ts"]), "scaleBy", "typescript")
    edit = _replacing(workspace, "core.ts", [(0, 16), (1, 10), (1, 23)], "scaleBy", "timesBy")
    assert found.found(edit) == ([], [])
    assert spliced == [], "three edits on the three words of scaleBy: none can be left"


def test_as_many_edits_as_words_of_the_name_but_one_inside_another_word_still_finds_the_word_left(tmp_path: Path) -> None:
    from engine.refactor.corpus import Corpus
    from engine.refactor.leftovers import Leftovers

    (tmp_path / "core.ts").write_text("export const scaleBy = 1;\nexport const y = scaleByX + scaleBy;\n")
    workspace = Workspace(tmp_path)
    edit = _replacing(workspace, "core.ts", [(0, 13), (1, 17)], "scaleBy", "timesBy")  # the second: scaleByX's start
    left, warnings = Leftovers(Corpus(workspace, ["core.ts"]), "scaleBy", "typescript").found(edit)
    assert [(leftover.where, leftover.kind) for leftover in left] == [("core.ts:2", MentionKind.CODE)], warnings
