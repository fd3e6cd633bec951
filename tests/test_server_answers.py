"""Hover and code actions (engine/server_answers.py) with real language servers, and hover's
syntax-tree fallback.

Servers are real (basedpyright, typescript-language-server); a test whose server is missing is
skipped with the reason. Each test that edits files has its own copy of the project.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from engine.api import Engine, SourcePreference
from engine.client import EngineClient
from engine.edits.model import FileChange
from engine.errors import ServiceUnavailable, SymbolNotFound
from engine.positions import split_lines
from engine.server_answers import (
    CodeActionNotApplicable, MalformedActionId, StaleCodeAction, UnknownCodeAction, clean_doc, code_action_edit, hover,
    list_code_actions, split_hover,
)
from engine.workspace import Workspace
from lsp_pool.adapter import PoolServices
from lsp_pool.config import PoolConfig
from lsp_pool.registry import ReadinessPolicy
from tests.conftest import REPO
from tests.lsp_helpers import fake_spec
from tests.test_lsp_e2e import require, served_engine

HELPERS = '''\
"""Helpers."""


def total(values: list[int]) -> int:
    """Sum of the values, plus one.

    Used by the user module.
    """
    return sum(values) + 1


class Basket:
    """A basket of things."""

    def size(self) -> int:
        """How many things are in the basket."""
        return 0
'''

USER = '''\
import os
import sys

from pkg.helpers import Basket, total


def main(count: int) -> int:
    basket = Basket()
    return total([1, count]) + basket.size()


def where() -> str:
    return path.join("a", "b")
'''


def make_project(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (root / "pkg" / "helpers.py").write_text(HELPERS, encoding="utf-8")
    (root / "pkg" / "user.py").write_text(USER, encoding="utf-8")
    return root


def at(root: Path, relative: str, needle: str, occurrence: int = 0) -> str:
    """``FILE:LINE:COL`` (1-based) of the ``occurrence``-th ``needle`` in a file."""
    found = [(number, line.index(needle)) for number, line in enumerate(split_lines((root / relative).read_text()))
             if needle in line]
    line, column = found[occurrence]
    return f"{relative}:{line + 1}:{column + 1}"


def line_of(root: Path, relative: str, needle: str) -> int:
    return next(n for n, line in enumerate(split_lines((root / relative).read_text()), 1) if needle in line)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("answers") / "project")


@pytest.fixture(scope="module")
def pyright_engine(project: Path) -> Iterator[Engine]:
    require("basedpyright")
    with served_engine(project, "basedpyright") as engine:
        yield engine


@pytest.fixture
def syntactic_engine(project: Path) -> Iterator[Engine]:
    engine = Engine(Workspace(project), source=SourcePreference.AST)
    try:
        yield engine
    finally:
        engine.close()


# -- hover from the server -------------------------------------------------------


@pytest.mark.e2e
def test_hover_on_a_call_site_is_the_callees_signature_and_doc(pyright_engine: Engine, project: Path) -> None:
    answer = hover(pyright_engine, at(project, "pkg/user.py", "total([1"))
    assert answer.source.value == "lsp" and answer.confidence.value == "high"
    assert answer.about == "pkg/helpers.py:total"
    assert "def total(values: list[int]) -> int" in answer.signature
    assert answer.doc.startswith("Sum of the values, plus one.") and "Used by the user module." in answer.doc
    assert "```" in answer.text and answer.notes[0] == "from basedpyright"
    assert answer.to_json()["source"] == "lsp"


@pytest.mark.e2e
def test_hover_on_a_method_call_through_an_inferred_receiver(pyright_engine: Engine, project: Path) -> None:
    answer = hover(pyright_engine, at(project, "pkg/user.py", "size()"))
    assert answer.about == "pkg/helpers.py:Basket/size"
    assert "def size() -> int" in answer.signature and answer.doc == "How many things are in the basket."  # bound: no self


@pytest.mark.e2e
def test_hover_on_a_name_path(pyright_engine: Engine) -> None:
    answer = hover(pyright_engine, "pkg/helpers.py:Basket")
    assert answer.source.value == "lsp" and answer.about == "pkg/helpers.py:Basket"
    assert "class Basket" in answer.signature and answer.doc == "A basket of things."


@pytest.mark.e2e
def test_hover_on_a_parameter_is_answered_by_the_server_about_no_symbol(pyright_engine: Engine, project: Path) -> None:
    answer = hover(pyright_engine, at(project, "pkg/user.py", "count])"))
    assert answer.source.value == "lsp" and "count: int" in answer.signature
    assert answer.about is None and any("could not be told" in note for note in answer.notes)


# -- hover's syntax-tree fallback ---------------------------------------------------


def test_hover_falls_back_to_the_tree_on_a_call_site(syntactic_engine: Engine, project: Path) -> None:
    answer = hover(syntactic_engine, at(project, "pkg/user.py", "total([1"))
    assert (answer.source.value, answer.confidence.value) == ("ast", "medium")
    assert answer.about == "pkg/helpers.py:total"
    assert answer.signature == "def total(values: list[int]) -> int"
    assert answer.doc == "Sum of the values, plus one.\n\nUsed by the user module."
    assert answer.text == f"```python\n{answer.signature}\n```\n---\n{answer.doc}"
    assert any("resolved by the project graph" in note for note in answer.notes)
    assert any("asks no language server" in note for note in answer.notes)


def test_hover_fallback_by_name_path_and_on_a_declaration(syntactic_engine: Engine, project: Path) -> None:
    by_path = hover(syntactic_engine, "pkg/helpers.py:Basket/size")
    assert (by_path.source.value, by_path.confidence.value, by_path.about) == ("ast", "medium", "pkg/helpers.py:Basket/size")
    assert by_path.signature == "def size(self) -> int" and by_path.doc == "How many things are in the basket."
    on_name = hover(syntactic_engine, at(project, "pkg/helpers.py", "total"))
    assert on_name.about == "pkg/helpers.py:total" and any("declaration's own name" in note for note in on_name.notes)
    around_line = hover(syntactic_engine, f"pkg/helpers.py:{line_of(project, 'pkg/helpers.py', 'return 0')}")
    assert around_line.about == "pkg/helpers.py:Basket/size"


def test_hover_fallback_on_an_unresolved_name_is_the_enclosing_symbol_labelled_low(syntactic_engine: Engine, project: Path) -> None:
    answer = hover(syntactic_engine, at(project, "pkg/user.py", "path.join"))  # a name nothing defines
    assert (answer.source.value, answer.confidence.value) == ("ast", "low")
    assert answer.about == "pkg/user.py:where" and answer.signature == "def where() -> str"
    assert any("could not be resolved to a symbol" in note for note in answer.notes)
    on_space = hover(syntactic_engine, at(project, "pkg/user.py", " basket.size"))
    assert (on_space.confidence.value, on_space.about) == ("low", "pkg/user.py:main")
    assert any("no name at" in note for note in on_space.notes)


def test_hover_at_module_level_on_no_name_is_refused(syntactic_engine: Engine, project: Path) -> None:
    with pytest.raises(SymbolNotFound, match="no hover at"):
        hover(syntactic_engine, "pkg/user.py:4:1")  # `from`, a keyword outside every symbol


def test_hover_without_language_server_support(project: Path) -> None:
    auto = Engine(Workspace(project), services=None, source=SourcePreference.AUTO)
    try:
        answer = hover(auto, at(project, "pkg/user.py", "total([1"))
        assert answer.source.value == "ast" and answer.about == "pkg/helpers.py:total"
        assert any("no language-server support is installed" in note for note in answer.notes)
    finally:
        auto.close()
    required = Engine(Workspace(project), services=None, source=SourcePreference.LSP)
    try:
        with pytest.raises(ServiceUnavailable, match="hover needs a language server"):
            hover(required, at(project, "pkg/user.py", "total([1"))
    finally:
        required.close()


def test_hover_falls_back_when_the_server_is_not_ready(tmp_path: Path) -> None:
    root = make_project(tmp_path / "project")
    workspace = Workspace(root)
    never_ready = fake_spec("never-ready", readiness=ReadinessPolicy(progress_pattern="Indexing", budget=1.0))
    services = PoolServices(workspace, PoolConfig(preference={"python": ("fake",)}), specs=(never_ready,))
    engine = Engine(workspace, services=services, source=SourcePreference.AUTO)
    try:
        answer = hover(engine, at(root, "pkg/user.py", "total([1"))
    finally:
        engine.close()
    assert (answer.source.value, answer.confidence.value, answer.about) == ("ast", "medium", "pkg/helpers.py:total")
    assert answer.notes[0].startswith("language server unavailable: fake is still indexing")
    assert answer.notes[0].endswith("signature and documentation from the syntax tree")


def test_hover_text_is_split_into_signature_and_doc() -> None:
    assert split_hover("```python\n(function) def f() -> int\n```\n---\nDoes f.\n\n---") == ("(function) def f() -> int", "Does f.")
    assert split_hover("\n```typescript\nfunction g(): void\n```\n") == ("function g(): void", "")
    assert split_hover("plain words") == ("", "plain words")
    assert clean_doc('r"""  Raw.\n\n    More.\n    """') == "Raw.\n\nMore."
    assert clean_doc("/**\n * Adds.\n * @param a one\n */") == "Adds.\n@param a one"
    assert clean_doc("// one\n// two") == "one\ntwo"
    assert clean_doc("'''__import__('os')'''") == "__import__('os')"  # read as a literal, never run


def test_server_answers_imports_without_the_api() -> None:
    code = "import sys, engine.server_answers; sys.exit('engine.api' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=REPO, check=False).returncode == 0


# -- code actions ------------------------------------------------------------------


@pytest.fixture
def editable(tmp_path: Path) -> Path:
    return make_project(tmp_path / "project")


@pytest.mark.e2e
def test_basedpyright_quick_fixes_are_listed_and_one_is_applied_through_the_journal(editable: Path) -> None:
    require("basedpyright")
    undefined = line_of(editable, "pkg/user.py", "path.join")
    with served_engine(editable, "basedpyright") as engine:
        actions = list_code_actions(engine, "pkg/user.py", 1, undefined)
        by_title = {a.title: a for a in actions}
        # The unused `sys` import offers an ignore comment, on its line.
        ignore_sys = next(a for a in actions if a.fixes == ['line 2: Import "sys" is not accessed'])
        assert ignore_sys.kind == "quickfix" and ignore_sys.edits == ["pkg/user.py:2"] and ignore_sys.applicable
        # The undefined `path` offers imports; pyright offers them only when asked at the diagnostic.
        fix = by_title["from os import path"]
        assert fix.fixes == [f'line {undefined}: "path" is not defined'] and fix.server == "basedpyright"
        assert fix.to_json()["id"] == fix.id
        # Ids are stable while the file is unchanged.
        assert [a.id for a in list_code_actions(engine, "pkg/user.py", 1, undefined)] == [a.id for a in actions]

        edit = code_action_edit(engine, "pkg/user.py", fix.id)
        lines, _index, digest, file_hash = fix.id.split(".")
        moved = f"{lines}.99.{digest}.{file_hash}"  # the same action at another place of a listing: found by its hash
        assert code_action_edit(engine, "pkg/user.py", moved) == edit
        change = edit.operations[0]
        assert isinstance(change, FileChange) and change.path == "pkg/user.py"
        assert change.expected_sha256 == engine.workspace.read("pkg/user.py").sha256
        assert "path.join" in (editable / "pkg/user.py").read_text()  # a plan: nothing written yet

        outcome = EngineClient(engine).run_edit("code-action", edit, apply=True)
        assert outcome.applied and outcome.transaction is not None
        assert split_lines((editable / "pkg/user.py").read_text())[undefined - 1] == '    return os.path.join("a", "b")'

        with pytest.raises(StaleCodeAction, match="changed since"):
            code_action_edit(engine, "pkg/user.py", ignore_sys.id)
        fresh = list_code_actions(engine, "pkg/user.py", 1, 3)
        assert "from os import path" not in {a.title for a in fresh}
        stale_free = next(a for a in fresh if a.fixes == ['line 2: Import "sys" is not accessed'])
        lines, _index, _digest, file_hash = stale_free.id.split(".")
        with pytest.raises(UnknownCodeAction, match="no longer offers"):
            code_action_edit(engine, "pkg/user.py", f"{lines}.99.{'0' * 8}.{file_hash}")
        with pytest.raises(MalformedActionId):
            code_action_edit(engine, "pkg/user.py", "from os import path")
        ignored = code_action_edit(engine, "pkg/user.py", stale_free.id)
        EngineClient(engine).run_edit("code-action", ignored, apply=True)
        assert (editable / "pkg/user.py").read_text().splitlines()[1] == "import sys  # pyright: ignore[reportUnusedImport]"


def test_code_actions_need_a_language_server(editable: Path) -> None:
    syntactic = Engine(Workspace(editable), source=SourcePreference.AST)
    try:
        with pytest.raises(ServiceUnavailable, match="language server"):
            list_code_actions(syntactic, "pkg/user.py", 1, 3)
        with pytest.raises(ServiceUnavailable, match="language server"):
            code_action_edit(syntactic, "pkg/user.py", "1-3.0.00000000.00000000")
    finally:
        syntactic.close()
    without = Engine(Workspace(editable), services=None, source=SourcePreference.AUTO)
    try:
        with pytest.raises(ServiceUnavailable, match="no language-server support is installed"):
            list_code_actions(without, "pkg/user.py", 1, 3)
    finally:
        without.close()


TS_LIBRARY = "export function helper(): number {\n  return 1;\n}\nexport function other(): number {\n  return 2;\n}\n"
TS_USER = 'import { other, helper } from "./lib";\n\nexport function run(): number {\n  return helper();\n}\n'


@pytest.mark.e2e
def test_typescript_organise_imports_applies_and_a_command_only_refactoring_is_not_applicable(tmp_path: Path) -> None:
    require("typescript-language-server")
    (tmp_path / "tsconfig.json").write_text('{"compilerOptions": {"strict": true, "noUnusedLocals": true}}', encoding="utf-8")
    (tmp_path / "lib.ts").write_text(TS_LIBRARY, encoding="utf-8")
    (tmp_path / "user.ts").write_text(TS_USER, encoding="utf-8")
    with served_engine(tmp_path, "typescript-language-server") as engine:
        actions = list_code_actions(engine, "user.ts", 1, 5)
        by_kind = {a.kind: a for a in actions}
        organise = by_kind["source.organizeImports.ts"]
        assert organise.applicable and organise.edits == ["user.ts:1-2"]
        moving = by_kind["refactor.move.newFile"]  # carried out by a server command only
        assert not moving.applicable and any("does not run it" in note for note in moving.notes)
        with pytest.raises(CodeActionNotApplicable, match="only runs the server command"):
            code_action_edit(engine, "user.ts", moving.id)
        unused = next(a for a in actions if a.kind == "quickfix" and "'other'" in a.title)
        assert unused.fixes and unused.fixes[0].startswith("line 1: 'other' is declared")

        EngineClient(engine).run_edit("code-action", code_action_edit(engine, "user.ts", organise.id), apply=True)
        assert (tmp_path / "user.ts").read_text().splitlines()[0] == 'import { helper, other } from "./lib";'
