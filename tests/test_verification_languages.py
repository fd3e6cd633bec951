"""The check after an apply in TypeScript and Go (issue 39): its scope reaches the files that see a
change only through others (a barrel's re-exports, a package importing a package), the real server
checks them, and a break found there rolls the edit back under ``--check full --fail-on-new-errors``.

Each edit renames a definition and none of its uses, as a broken rename would."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from engine.answers import TextEdit
from engine.edits.model import FileChange, WorkspaceEdit
from engine.edits.session import EditOptions, EditSession, NewErrors
from engine.edits.verification import CheckMode
from engine.positions import Position, Range
from engine.symbols import Confidence
from tests.test_lsp_e2e import require, served_engine

pytestmark = pytest.mark.e2e


def _rename_at(root: Path, path: str, before: str, old: str, new: str) -> FileChange:
    """``old`` renamed to ``new`` where it first follows ``before`` in ``path``, and nowhere else."""
    data = (root / path).read_bytes()
    lines = data.decode().splitlines()
    line = next(n for n, row in enumerate(lines) if f"{before}{old}" in row)
    column = lines[line].index(f"{before}{old}") + len(before)
    return FileChange(path, (TextEdit(Range(Position(line, column), Position(line, column + len(old))), new),),
                      hashlib.sha256(data).hexdigest())


# -- TypeScript: a test under its own tsconfig, reaching the library through a barrel ----------


def _barrel_project(root: Path) -> None:
    """src/lib.ts defines f and g; src/index.ts re-exports them (g only through ``export *``);
    tests/lib.test.ts takes g from the barrel, under tests/tsconfig.json (the root's covers src/ only)."""
    (root / "package.json").write_text('{"name": "barrel", "version": "1.0.0", "private": true}\n')
    (root / "tsconfig.json").write_text(
        '{"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs", "moduleResolution": "node"},'
        ' "include": ["src"]}\n')
    (root / "src").mkdir()
    (root / "src" / "lib.ts").write_text(
        "export function f(): number {\n  return 1;\n}\n\nexport function g(): number {\n  return 2;\n}\n")
    (root / "src" / "index.ts").write_text("export * from './lib';\nexport { f } from './lib';\n")
    (root / "tests").mkdir()
    (root / "tests" / "tsconfig.json").write_text('{"extends": "../tsconfig.json", "include": ["./**/*.ts", "../src"]}\n')
    (root / "tests" / "lib.test.ts").write_text(
        "import { f, g } from '../src';\n\nexport function total(): number {\n  return f() + g();\n}\n")


def _rename_g(root: Path) -> WorkspaceEdit:
    return WorkspaceEdit((_rename_at(root, "src/lib.ts", "function ", "g", "renamed"),))


def test_typescript_a_test_reaching_the_library_through_a_barrel_is_in_scope_and_checked(tmp_path: Path) -> None:
    require("typescript-language-server")
    _barrel_project(tmp_path)
    with served_engine(tmp_path, "typescript-language-server") as engine:
        assert engine.graph().importers_by_distance(["src/lib.ts"], 200) == (["src/index.ts", "tests/lib.test.ts"], 0)
        outcome = engine.edits().apply(_rename_g(tmp_path), EditOptions(check=CheckMode.FULL))
    verified = outcome.verification
    assert verified is not None
    assert verified.in_scope == ("src/lib.ts", "src/index.ts", "tests/lib.test.ts")
    assert verified.checked == verified.in_scope and verified.by == ("typescript-language-server",)
    assert {d.file for d in verified.new_errors} == {"tests/lib.test.ts"}
    assert verified.label()[0] is Confidence.LOW


def test_typescript_a_break_in_a_test_behind_a_barrel_rolls_back_under_full_check(tmp_path: Path) -> None:
    require("typescript-language-server")
    _barrel_project(tmp_path)
    before = (tmp_path / "src" / "lib.ts").read_text()
    with served_engine(tmp_path, "typescript-language-server") as engine:
        with pytest.raises(NewErrors, match="tests/lib.test.ts"):
            engine.edits().apply(_rename_g(tmp_path), EditOptions(check=CheckMode.FULL, fail_on_new_errors=True))
    assert (tmp_path / "src" / "lib.ts").read_text() == before


# -- Go: package c uses a method of a's type, reached only through package b -------------------


def _three_packages(root: Path) -> None:
    """a defines T with a method; b hands out an a.T (b itself never calls the method); c and its
    test call the method on b's value: a break in a shows two hops away, in c."""
    (root / "go.mod").write_text("module example.com/m\n\ngo 1.21\n")
    (root / "a").mkdir()
    (root / "a" / "a.go").write_text("package a\n\ntype T struct{}\n\nfunc (T) Value() int {\n\treturn 1\n}\n")
    (root / "b").mkdir()
    (root / "b" / "b.go").write_text('package b\n\nimport "example.com/m/a"\n\n// Make hands out an a.T.\nfunc Make() a.T {\n\treturn a.T{}\n}\n')
    (root / "c").mkdir()
    (root / "c" / "c.go").write_text('package c\n\nimport "example.com/m/b"\n\n// Twice doubles it.\nfunc Twice() int {\n\treturn 2 * b.Make().Value()\n}\n')
    (root / "c" / "c_test.go").write_text(
        'package c\n\nimport (\n\t"testing"\n\n\t"example.com/m/b"\n)\n\nfunc TestTwice(t *testing.T) {\n'
        '\tif Twice() != 2*b.Make().Value() {\n\t\tt.Fatal("twice")\n\t}\n}\n')


def _rename_value(root: Path) -> WorkspaceEdit:
    return WorkspaceEdit((_rename_at(root, "a/a.go", "func (T) ", "Value", "Amount"),))


def test_go_an_importer_package_two_hops_away_is_in_scope_and_its_break_reported(tmp_path: Path) -> None:
    require("gopls")
    _three_packages(tmp_path)
    with served_engine(tmp_path, "gopls") as engine:
        importers, beyond = engine.graph().importers_by_distance(["a/a.go"], 200)
        assert (importers, beyond) == (["b/b.go", "c/c.go", "c/c_test.go"], 0)
        outcome = engine.edits().apply(_rename_value(tmp_path), EditOptions(check=CheckMode.FULL))
    verified = outcome.verification
    assert verified is not None
    assert verified.in_scope == ("a/a.go", "b/b.go", "c/c.go", "c/c_test.go")
    assert verified.checked == verified.in_scope and verified.by == ("gopls",), verified.to_json()
    assert {d.file for d in verified.new_errors} == {"c/c.go", "c/c_test.go"}
    assert verified.label()[0] is Confidence.LOW


def test_go_a_break_two_packages_away_rolls_back_under_full_check(tmp_path: Path) -> None:
    require("gopls")
    _three_packages(tmp_path)
    before = (tmp_path / "a" / "a.go").read_text()
    with served_engine(tmp_path, "gopls") as engine:
        with pytest.raises(NewErrors, match="c/c.go"):
            engine.edits().apply(_rename_value(tmp_path), EditOptions(check=CheckMode.FULL, fail_on_new_errors=True))
    assert (tmp_path / "a" / "a.go").read_text() == before


def test_go_a_file_gopls_gives_no_diagnostics_for_is_unchecked_with_the_reason_never_clean(tmp_path: Path) -> None:
    """gopls leaves node_modules out of its workspace (its default directoryFilters) and refuses a
    diagnostics request for a file there: put in scope, that file is named unchecked, with gopls's
    reason, and the answer is not ``high``."""
    require("gopls")
    _three_packages(tmp_path)
    (tmp_path / "node_modules" / "x").mkdir(parents=True)
    (tmp_path / "node_modules" / "x" / "x.go").write_text('package x\n\nimport "example.com/m/a"\n\nvar _ = a.T{}.Value()\n')
    # A method added to T: every file that names T may see it, and none breaks.
    edit = WorkspaceEdit((_rename_at(tmp_path, "a/a.go", "return ", "1", "1\n}\n\n// Other is two.\nfunc (T) Other() int {\n\treturn 2"),))
    with served_engine(tmp_path, "gopls") as engine:
        graph_dependents = engine.edits().dependents
        assert graph_dependents is not None
        session = EditSession(engine.workspace, engine.transactions, engine.services, engine.tools,
                              dependents=lambda paths: [*graph_dependents(paths), *(["node_modules/x/x.go"] if "a/a.go" in paths else [])],
                              diagnostics_budget=300.0)
        verified = session.apply(edit, EditOptions(check=CheckMode.FULL)).verification
    assert verified is not None and "node_modules/x/x.go" in verified.in_scope
    assert "node_modules/x/x.go" not in verified.checked
    unchecked = {u.path: u.reason for u in verified.unchecked}
    assert "no package metadata" in unchecked["node_modules/x/x.go"], verified.to_json()
    assert set(verified.checked) == {"a/a.go", "b/b.go", "c/c.go", "c/c_test.go"} and verified.new_errors == ()
    confidence, reason = verified.label()
    assert confidence is Confidence.MEDIUM and "node_modules/x/x.go" in reason


def test_go_the_other_files_of_the_package_and_its_tests_are_in_scope_and_their_break_caught(tmp_path: Path) -> None:
    """A Go file sees every other file of its package without an import: a definition renamed in
    a/a.go alone breaks a/use.go and the package's own test, which no import edge reaches."""
    require("gopls")
    _three_packages(tmp_path)
    (tmp_path / "a" / "use.go").write_text("package a\n\n// Twice doubles a T's value.\nfunc Twice() int {\n\treturn 2 * T{}.Value()\n}\n")
    (tmp_path / "a" / "a_test.go").write_text(
        'package a\n\nimport "testing"\n\nfunc TestValue(t *testing.T) {\n\tif (T{}).Value() != 1 {\n\t\tt.Fatal("value")\n\t}\n}\n')
    before = (tmp_path / "a" / "a.go").read_text()
    with served_engine(tmp_path, "gopls") as engine:
        importers, _beyond = engine.graph().importers_by_distance(["a/a.go"], 200)
        assert {"a/use.go", "a/a_test.go"} <= set(importers)
        outcome = engine.edits().apply(_rename_value(tmp_path), EditOptions(check=CheckMode.FULL))
        verified = outcome.verification
        assert verified is not None and {"a/use.go", "a/a_test.go"} <= set(verified.checked)
        assert {"a/use.go", "a/a_test.go", "c/c.go", "c/c_test.go"} <= {d.file for d in verified.new_errors}
        engine.edits().undo()
        with pytest.raises(NewErrors, match="a/use.go"):
            engine.edits().apply(_rename_value(tmp_path), EditOptions(check=CheckMode.FULL, fail_on_new_errors=True))
    assert (tmp_path / "a" / "a.go").read_text() == before


def _c_project(root: Path) -> None:
    (root / "shapes.h").write_text("int area(int side);\n")
    (root / "shapes.c").write_text('#include "shapes.h"\n\nint area(int side) { return side * side; }\n')
    (root / "main.c").write_text('#include "shapes.h"\n\nint main(void) { return area(2); }\n')
    (root / "compile_flags.txt").write_text("-xc\n-std=c11\n")


def test_c_a_new_error_is_found_by_clangd_and_importers_the_graph_cannot_see_are_said(tmp_path: Path) -> None:
    """The graph follows no #include: who reads a C file is not known, so the check says so and is
    never ``high``; the file written is still compared, and clangd's new error reported."""
    require("clangd")
    _c_project(tmp_path)
    edit = WorkspaceEdit((_rename_at(tmp_path, "main.c", "return ", "area", "aera"),))
    with served_engine(tmp_path, "clangd") as engine:
        verified = engine.edits().apply(edit, EditOptions(check=CheckMode.FULL)).verification
    assert verified is not None and verified.by == ("clangd",) and verified.checked == ("main.c",)
    assert [d.file for d in verified.new_errors] == ["main.c"]
    assert "follows no imports in the language of main.c" in verified.scope_unknown
    assert not verified.complete


def test_c_a_clean_edit_of_a_header_is_medium_with_the_reason(tmp_path: Path) -> None:
    require("clangd")
    _c_project(tmp_path)
    edit = WorkspaceEdit((_rename_at(tmp_path, "shapes.h", "(int ", "side", "length"),))
    with served_engine(tmp_path, "clangd") as engine:
        verified = engine.edits().apply(edit, EditOptions(check=CheckMode.FULL)).verification
    assert verified is not None and verified.checked == ("shapes.h",) and verified.new_errors == ()
    confidence, reason = verified.label()
    assert confidence is Confidence.MEDIUM and "what reads it is not known" in reason
