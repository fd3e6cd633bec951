"""The avoidable costs a profile of the first rename plans found (issue 40, item 8): work a plan did
for every file or use it touched where only a few could need it. Counted, never timed.

- TypeScript: the clash check and the shorthand pass walked the scopes of every edited file; now
  only of a file that holds the new name (a clash needs it there) or an edited shorthand. They
  also parsed every edited file on every plan and asked the graph for the importers of all of
  them; now a file's exports and shorthands are kept by content (a later plan parses only the
  files that hold its new name or an edited shorthand), and only the files whose exports the
  rename changes are followed to their re-exporters.
- TypeScript: the check for classes an interface member's rename leaves behind parsed and walked
  every edited file for the interface; now only a file with the word ``interface`` or ``type``,
  and the word pattern runs only on a file that holds either as a substring (session 26).
- TypeScript: the clash check listed every edited file's exports, and every importer's, twice
  (before and after); now only of a file that exports the old name or has an ``export *``
  (session 26: together a third of the passes' processor time on a 1,052-edit warm rename).
- A server rename (session 26): the files its answer will edit (those holding the old name) are
  read while the server computes, and the TypeScript passes read their files and export tables
  then too (engine.refactor.language_passes.BegunRename); showing tsserver a file's importers
  chooses the server once per folder, not twice per importer.
- tsserver: a prepareRename went out beside every rename, and tsserver answers one request at a
  time: a third of the rename's time again. typescript-language-server's rename answers nothing
  where its prepareRename refuses (both read tsserver's canRename), so it is asked no prepareRename,
  and a position with nothing to rename is still refused.
- Go: the check for implementations left behind blanked the comments and strings of every edited
  file to look for the renamed method's interface; now only of a file that declares an interface.
- Go: every renamed ``x.Name`` was asked of gopls (one definition request each) to find a use of
  another module's method; a package-level declaration has no such use (its selectors are all
  ``pkg.Name``), so its rename asks none, and a method's rename still asks.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Callable

import pytest

from engine.answers import Location, TextEdit
from engine.edits.model import FileChange, WorkspaceEdit
from engine.extract.treesitter import TreeSitterExtractor
from engine.ports import Answered
from engine.positions import Position, Range
from engine.refactor.corpus import Corpus
from engine.refactor.go import implementations
from engine.refactor.operations.rename_symbol import Rename
from engine.api import Engine, SourcePreference
from engine.errors import ServiceUnavailable
from engine.refactor.typescript import clashes, implementers
from engine.refactor.typescript import passes as typescript_passes
from engine.refactor.typescript.clashes import ParsedFiles, rename_clashes
from engine.refactor.typescript.shorthands import keep_shorthand_keys
from engine.workspace import SourceFile, Workspace
from lsp_pool.adapter import PoolServices
from lsp_pool.features import LanguageApi
from lsp_pool.pool import Pool
from tests.test_lsp_e2e import require, served_engine

TS_FILES = {
    "src/core.ts": "export function scaleBy(value: number, factor: number): number {\n  return value * factor;\n}\n",
    "src/a.ts": 'import { scaleBy } from "./core";\nexport const a = scaleBy(1, 2);\n',
    "src/b.ts": 'import { scaleBy } from "./core";\nexport const b = scaleBy(3, 4);\n',
    "src/c.ts": 'import { scaleBy } from "./core";\nconst multiplyBy = 2;\nexport const c = scaleBy(multiplyBy, 4);\n',
    "src/d.ts": 'import { scaleBy } from "./core";\nexport const d = { scaleBy };\n',
}


def _renaming(workspace: Workspace, old: str, new: str) -> WorkspaceEdit:
    """Every whole-word ``old`` of the workspace's files renamed to ``new`` (what tsserver's rename gives here)."""
    changes = []
    for path in sorted(TS_FILES):
        source = workspace.read(path)
        edits = tuple(TextEdit(Range(Position(number, m.start()), Position(number, m.end())), new)
                      for number, line in enumerate(source.text.splitlines()) for m in re.finditer(rf"\b{old}\b", line))
        changes.append(FileChange(path, edits, source.sha256))
    return WorkspaceEdit(tuple(changes))


def test_typescript_rename_passes_walk_scopes_only_where_the_new_name_or_a_shorthand_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for path, text in TS_FILES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    workspace = Workspace(tmp_path)
    walked: list[int] = []
    real = clashes.file_scopes

    def counted(root: object) -> object:
        walked.append(1)
        return real(root)  # type: ignore[arg-type]

    monkeypatch.setattr(clashes, "file_scopes", counted)
    edit = _renaming(workspace, "scaleBy", "multiplyBy")
    parsed = ParsedFiles(workspace)
    found = rename_clashes(workspace, edit, "scaleBy", "multiplyBy", lambda files: [], parsed)
    assert {clash.file for clash in found} == {"src/c.ts"}  # the import would now clash with c.ts's own multiplyBy
    assert len(walked) == 1, "only src/c.ts holds multiplyBy"
    kept, notes = keep_shorthand_keys(workspace, edit, "scaleBy", "multiplyBy", parsed)
    assert len(walked) == 2, "then src/d.ts, for its shorthand { scaleBy }"
    assert any("src/d.ts:2" in note for note in notes), notes
    assert kept is not edit


def test_a_later_typescript_rename_parses_only_files_holding_its_new_name_or_an_edited_shorthand(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for path, text in TS_FILES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    workspace = Workspace(tmp_path)
    first = _renaming(workspace, "scaleBy", "multiplyBy")
    parsed = ParsedFiles(workspace)
    rename_clashes(workspace, first, "scaleBy", "multiplyBy", lambda files: [], parsed)
    keep_shorthand_keys(workspace, first, "scaleBy", "multiplyBy", parsed)
    parses: list[int] = []
    real = TreeSitterExtractor.parse

    def counted(self: TreeSitterExtractor, language: str, text: bytes) -> object:
        parses.append(1)
        return real(self, language, text)

    monkeypatch.setattr(TreeSitterExtractor, "parse", counted)
    asked: list[list[str]] = []

    def re_exporters(files: list[str]) -> list[str]:
        asked.append(sorted(files))
        return []

    later = _renaming(workspace, "scaleBy", "timesBy")  # another plan: a new ParsedFiles, the files unchanged
    parsed = ParsedFiles(workspace)
    assert rename_clashes(workspace, later, "scaleBy", "timesBy", re_exporters, parsed) == []
    assert parses == [], "no file holds timesBy: the exports are known by content"
    assert asked == [["src/core.ts"]], "only core.ts's exports change: only its re-exporters can gain a name"
    assert not implementers.find(Engine(workspace, source=SourcePreference.AST), later, "scaleBy", parsed)
    assert parses == [], "no file has the word interface or type: none declares an interface whose member is renamed"
    kept, notes = keep_shorthand_keys(workspace, later, "scaleBy", "timesBy", parsed)
    assert len(parses) == 1, "src/d.ts alone, for its edited shorthand { scaleBy }"
    assert any("src/d.ts:2" in note for note in notes), notes


class CountingDefinitions:
    """A real server's services, counting the definition requests a plan makes."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.asked = 0

    def definition(self, source: SourceFile, position: Position) -> Answered[list[Location]]:
        self.asked += 1
        answer: Answered[list[Location]] = self.inner.definition(source, position)  # type: ignore[attr-defined]
        return answer

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


GO_CORE = "package core\n\n// Scale multiplies.\nfunc Scale(v int) int { return v * 2 }\n\n// Box holds a value.\ntype Box struct{ V int }\n\n// Get reads it.\nfunc (b Box) Get() int { return b.V }\n"
GO_USER = 'package {name}\n\nimport "example.com/costs/core"\n\n// Use calls it.\nfunc Use() int {{ return core.Scale(1) + core.Box{{V: 2}}.Get() }}\n'


def test_a_go_rename_looks_for_its_interface_only_in_files_that_declare_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "core.go").write_text(GO_CORE)
    users = ["one", "two", "three"]
    for name in users:
        (tmp_path / name).mkdir()
        (tmp_path / name / f"{name}.go").write_text(GO_USER.format(name=name))
    (tmp_path / "core" / "shape.go").write_text("package core\n\n// Shape scales.\ntype Shape interface {\n\tScale(v int) int\n}\n")
    workspace = Workspace(tmp_path)
    paths = ["core/core.go", "core/shape.go", *(f"{name}/{name}.go" for name in users)]
    blanked: list[int] = []
    real = implementations._code

    def counted(text: str) -> str:
        blanked.append(1)
        return real(text)

    monkeypatch.setattr(implementations, "_code", counted)

    def renaming(path: str) -> FileChange:
        source = workspace.read(path)
        edits = tuple(TextEdit(Range(Position(number, m.start()), Position(number, m.end())), "Double")
                      for number, line in enumerate(source.text.splitlines()) for m in re.finditer(r"\bScale\b", line))
        return FileChange(path, edits, source.sha256)

    function = WorkspaceEdit(tuple(renaming(path) for path in paths if path != "core/shape.go"))
    implementations.check(function, Corpus(workspace, paths), "Scale", "Double")
    assert blanked == [], "no edited file declares an interface"
    implementations.check(WorkspaceEdit((renaming("core/shape.go"),)), Corpus(workspace, paths), "Scale", "Double")
    assert blanked, "an interface's method renamed: its file, then the files of the packages it may reach, read as code"


@pytest.mark.e2e
def test_a_go_package_level_rename_asks_no_definition_per_use_and_a_method_rename_still_does(tmp_path: Path) -> None:
    require("gopls")
    (tmp_path / "go.mod").write_text("module example.com/costs\n\ngo 1.22\n")
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "core.go").write_text(GO_CORE)
    for name in ("one", "two", "three"):
        (tmp_path / name).mkdir()
        (tmp_path / name / f"{name}.go").write_text(GO_USER.format(name=name))
    with served_engine(tmp_path, "gopls") as engine:
        counting = CountingDefinitions(engine.services)
        engine.services = counting  # type: ignore[assignment]
        function = engine.plan(Rename("core/core.go:Scale", "Double"))
        assert len(function.edit.operations) == 4
        assert counting.asked == 0
        method = engine.plan(Rename("core/core.go:Box/Get", "Read"))
        assert len(method.edit.operations) == 4
        assert counting.asked == 3, "each renamed .Get() is still followed to its declaration"


@pytest.mark.e2e
def test_a_tsserver_rename_asks_no_prepare_rename_and_a_position_with_nothing_to_rename_is_still_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require("typescript-language-server")
    (tmp_path / "tsconfig.json").write_text('{"compilerOptions": {"strict": true, "noEmit": true}, "include": ["src"]}\n')
    for path, text in TS_FILES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    asked: list[int] = []
    real = LanguageApi.prepare_rename

    async def counted(self: LanguageApi, path: Path, position: Position) -> object:
        asked.append(1)
        return await real(self, path, position)

    monkeypatch.setattr(LanguageApi, "prepare_rename", counted)
    with served_engine(tmp_path, "typescript-language-server") as engine:
        engine.source = SourcePreference.LSP  # the server's answer or its refusal, no fallback
        plan = engine.plan(Rename("src/core.ts:scaleBy", "timesBy"))
        assert len(plan.edit.operations) == 5
        assert asked == []
        with pytest.raises(ServiceUnavailable):
            engine.plan(Rename("src/core.ts:1:37", "Zed"))  # the type keyword number


def test_the_clash_check_lists_exports_only_of_files_whose_exports_the_rename_may_change(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file that does not export the old name (nor re-export with ``export *``) exports the same
    before and after: it is not listed twice to find that out, and a file without the new name has
    no scopes to check either, so its renamed spans are not worked out at all."""
    for path, text in TS_FILES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    (tmp_path / "src" / "barrel.ts").write_text('export * from "./core";\n')
    workspace = Workspace(tmp_path)
    listed: list[str] = []
    spanned: list[int] = []
    real_exports, real_starts = clashes._exports, clashes._renamed_starts

    def counted_exports(parsed: ParsedFiles, path: str, *args: object, **kwargs: object) -> object:
        listed.append(path)
        return real_exports(parsed, path, *args, **kwargs)  # type: ignore[arg-type]

    def counted_starts(*args: object) -> object:
        spanned.append(1)
        return real_starts(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(clashes, "_exports", counted_exports)
    monkeypatch.setattr(clashes, "_renamed_starts", counted_starts)
    edit = _renaming(workspace, "scaleBy", "timesBy")
    re_exporters = {"src/core.ts": ["src/barrel.ts", "src/a.ts"]}
    found = rename_clashes(workspace, edit, "scaleBy", "timesBy",
                           lambda files: [r for f in files for r in re_exporters.get(f, [])], ParsedFiles(workspace))
    assert found == []
    assert set(listed) == {"src/core.ts", "src/barrel.ts"}, "core.ts exports scaleBy; the barrel re-exports core.ts"
    assert len(spanned) == 1, "only core.ts: no edited file holds timesBy, and only core.ts exports scaleBy"


def test_the_implementers_check_runs_its_word_pattern_only_on_files_holding_interface_or_type(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for path, text in TS_FILES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    (tmp_path / "src" / "a.ts").write_text(TS_FILES["src/a.ts"] + "// its prototype is typed\n")
    workspace = Workspace(tmp_path)
    searched: list[int] = []
    real = implementers._MAY_DECLARE_AN_INTERFACE

    class Counted:
        def search(self, text: str) -> object:
            searched.append(1)
            return real.search(text)

    monkeypatch.setattr(implementers, "_MAY_DECLARE_AN_INTERFACE", Counted())
    edit = _renaming(workspace, "scaleBy", "timesBy")
    assert not implementers.find(Engine(workspace, source=SourcePreference.AST), edit, "scaleBy", ParsedFiles(workspace))
    assert len(searched) == 1, "a.ts alone spells `type` (inside words: it declares nothing); the other files need no pattern"


def _typescript_project(root: Path) -> None:
    (root / "tsconfig.json").write_text('{"compilerOptions": {"strict": true, "noEmit": true}, "include": ["src"]}\n')
    for path, text in TS_FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


class AnsweringAfterTheReads:
    """A real server's services whose rename answers only once the plan has read ``expected``
    while it waited (or a generous bound has passed, which the test then reports)."""

    def __init__(self, inner: object, expected: set[str]) -> None:
        self.inner, self.expected = inner, expected
        self.read_while_asking: set[str] = set()
        self.asking = False
        self.all_read = threading.Event()

    def read(self, path: str) -> None:
        if self.asking:
            self.read_while_asking.add(path)
            if self.expected <= self.read_while_asking:
                self.all_read.set()

    def rename(self, source: SourceFile, position: Position, new_name: str,
               sent: Callable[[], None] | None = None) -> object:
        self.asking = True
        try:
            answer = self.inner.rename(source, position, new_name, sent=sent)  # type: ignore[attr-defined]
            self.all_read.wait(30)  # a bound, not a budget: the reads start as soon as the request is out
            return answer
        finally:
            self.asking = False

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


@pytest.mark.e2e
def test_a_server_rename_reads_the_files_its_answer_will_edit_while_the_server_computes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require("typescript-language-server")
    _typescript_project(tmp_path)
    with served_engine(tmp_path, "typescript-language-server") as engine:
        others = set(TS_FILES) - {"src/core.ts"}  # the declaration's own file is read to ask
        waiting = AnsweringAfterTheReads(engine.services, others)
        real = Workspace.read

        def read(self: Workspace, path: str) -> SourceFile:
            waiting.read(path)
            return real(self, path)

        monkeypatch.setattr(Workspace, "read", read)
        engine.services = waiting  # type: ignore[assignment]
        plan = engine.plan(Rename("src/core.ts:scaleBy", "timesBy"))
        assert len(plan.edit.operations) == 5
        assert waiting.read_while_asking >= others, "every other file that holds scaleBy, read before the answer"


@pytest.mark.e2e
def test_showing_tsserver_a_files_importers_chooses_the_server_once_per_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require("typescript-language-server")
    _typescript_project(tmp_path)
    chosen: list[str] = []
    showing = threading.Event()
    real_choice, real_show = Pool.server_for, PoolServices.show_importers

    def server_for(self: Pool, language: str, root: Path, path: Path | None = None) -> object:
        if showing.is_set():
            chosen.append(str(path))
        return real_choice(self, language, root, path)

    def show_importers(self: PoolServices, *args: object, **kwargs: object) -> None:
        showing.set()
        try:
            real_show(self, *args, **kwargs)  # type: ignore[arg-type]
        finally:
            showing.clear()

    monkeypatch.setattr(Pool, "server_for", server_for)
    monkeypatch.setattr(PoolServices, "show_importers", show_importers)
    with served_engine(tmp_path, "typescript-language-server") as engine:
        plan = engine.plan(Rename("src/core.ts:scaleBy", "timesBy"))
        assert len(plan.edit.operations) == 5
    assert len(chosen) == 1, f"src/ and its five files: one choice, not one or two per importer ({chosen})"


@pytest.mark.e2e
def test_the_typescript_passes_read_the_files_their_export_tables_and_unseen_mentions_while_the_server_computes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require("typescript-language-server")
    _typescript_project(tmp_path)
    with served_engine(tmp_path, "typescript-language-server") as engine:
        waiting = AnsweringAfterTheReads(engine.services, {*(f"table of {path}" for path in TS_FILES), "unseen mentions"})
        real_table, real_unseen = ParsedFiles.table, typescript_passes.unseen_mentions
        unseen_asked: list[int] = []

        def table(self: ParsedFiles, path: str) -> object:
            waiting.read(f"table of {path}")
            return real_table(self, path)

        def unseen_mentions(*args: object) -> object:
            unseen_asked.append(1)
            waiting.read("unseen mentions")
            return real_unseen(*args)  # type: ignore[arg-type]

        monkeypatch.setattr(ParsedFiles, "table", table)
        monkeypatch.setattr(typescript_passes, "unseen_mentions", unseen_mentions)
        engine.services = waiting  # type: ignore[assignment]
        plan = engine.plan(Rename("src/core.ts:scaleBy", "timesBy"))
        assert len(plan.edit.operations) == 5
        assert waiting.read_while_asking >= waiting.expected, \
            "each file holding scaleBy, its exports and whether tsserver may miss it, known before the answer"
        assert len(unseen_asked) == 1, "and not looked for again after it"
