"""Extract and inline in TypeScript and Go through the servers' own refactorings
(engine/refactor/code_actions.py): tsserver's extract to function and constant and inline
variable, gopls's extract function and variable and inline call, each as a plan applied
through the journal, with the name asked for, the file's formatting kept (indent, quotes,
gofmt), and the refusals by their codes.

Servers are real (typescript-language-server with TypeScript 5.9, gopls); a test whose server is
missing is skipped with the reason. Each test has its own copy of the project.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Iterator

import pytest

from engine.api import Engine, SourcePreference
from engine.client import EngineClient
from engine.errors import GraftError
from engine.ports import load_tools
from engine.refactor.operations.base import RefactorOperation
from engine.refactor.operations.extract_function import ExtractFunction
from engine.refactor.operations.extract_variable import ExtractVariable
from engine.refactor.operations.inline_symbol import Inline
from engine.workspace import Workspace
from lsp_pool.adapter import PoolServices
from tests.test_lsp_e2e import only, require

pytestmark = pytest.mark.e2e

TS_SOURCE = """\
export function area(width: number, height: number): number {
  const margin = 2;
  const inner = (width - margin) * (height - margin);
  console.log('inner', inner);
  return inner + width * height;
}

export function useDouble(): number {
  const value = 21;
  return double(value) + value;
}

function double(x: number): number {
  return x * 2;
}
"""

GO_SOURCE = """\
package shapes

import "fmt"

func Area(width, height int) int {
\tmargin := 2
\tinner := (width - margin) * (height - margin)
\tfmt.Println("inner", inner)
\treturn inner + width*height
}

func double(x int) int {
\treturn x * 2
}

func UseDouble() int {
\tvalue := 21
\treturn double(value) + value
}
"""

GO_TEST = """\
package shapes

import "testing"

func TestArea(t *testing.T) {
\tif got := Area(4, 5); got != 26 {
\t\tt.Fatalf("Area(4, 5) = %d", got)
\t}
\tif got := UseDouble(); got != 63 {
\t\tt.Fatalf("UseDouble() = %d", got)
\t}
}
"""


def engine_on(root: Path, server_id: str) -> Engine:
    workspace = Workspace(root)
    engine = Engine(workspace, services=PoolServices(workspace, only(server_id)), tools=load_tools(workspace),
                    source=SourcePreference.AUTO)
    # The differential check after the apply is asserted: a loaded machine must not cut it short.
    engine.settings = replace(engine.settings, diagnostics_budget=300.0)
    return engine


@pytest.fixture
def typescript(tmp_path: Path) -> Iterator[tuple[Path, Engine]]:
    require("typescript-language-server")
    (tmp_path / "tsconfig.json").write_text('{"compilerOptions": {"strict": true, "target": "es2020", "noEmit": true}}')
    (tmp_path / "lib.ts").write_text(TS_SOURCE)
    engine = engine_on(tmp_path, "typescript-language-server")
    yield tmp_path, engine
    engine.close()


@pytest.fixture
def go(tmp_path: Path) -> Iterator[tuple[Path, Engine]]:
    require("gopls")
    if shutil.which("go") is None:
        pytest.skip("go is not installed here")
    (tmp_path / "go.mod").write_text("module example.com/shapes\n\ngo 1.21\n")
    (tmp_path / "shapes.go").write_text(GO_SOURCE)
    (tmp_path / "shapes_test.go").write_text(GO_TEST)
    engine = engine_on(tmp_path, "gopls")
    yield tmp_path, engine
    engine.close()


def apply(engine: Engine, operation: RefactorOperation) -> None:
    outcome = EngineClient(engine).run_operation(operation, apply=True)
    assert outcome.applied, outcome


def refused(engine: Engine, operation: RefactorOperation) -> GraftError:
    with pytest.raises(GraftError) as caught:
        engine.plan(operation)
    return caught.value


def type_checks(root: Path) -> None:
    tsc = shutil.which("tsc")
    if tsc is None:
        pytest.skip("tsc is not installed here: the type check after the refactoring cannot run")
    checked = subprocess.run([tsc, "--noEmit", "-p", "."], cwd=root, capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def go_checks(root: Path) -> None:
    """gofmt lists nothing, go vet and the package's test pass."""
    listed = subprocess.run(["gofmt", "-l", "."], cwd=root, capture_output=True, text=True, timeout=120)
    assert listed.stdout == "" and listed.returncode == 0, listed.stdout + listed.stderr
    for command in (["go", "vet", "./..."], ["go", "test", "./..."]):
        ran = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=300)
        assert ran.returncode == 0, ran.stdout + ran.stderr


# -- TypeScript ---------------------------------------------------------------------------


def test_typescript_extract_function_named_at_module_level_in_the_files_style(typescript: tuple[Path, Engine]) -> None:
    root, engine = typescript
    apply(engine, ExtractFunction("lib.ts:3:3-4:31", "innerArea"))
    text = (root / "lib.ts").read_text()
    assert "  const inner = innerArea(width, margin, height);\n  return inner + width * height;\n}\n" in text
    assert "\nfunction innerArea(width: number, margin: number, height: number) {\n" in text
    assert "  console.log('inner', inner);\n  return inner;\n}\n" in text  # two spaces, single quotes kept
    assert "newFunction" not in text
    type_checks(root)


TS_CLASS = """\
export class Basket {
  private items: number[] = [];

  total(discount: number): number {
    let sum = 0;
    for (const item of this.items) {
      sum += item;
    }
    return sum - discount;
  }
}
"""


def test_typescript_extract_function_in_a_method_is_a_method_not_an_inner_function(typescript: tuple[Path, Engine]) -> None:
    """tsserver also offers "Extract to inner function in method 'total'", where ``this`` would be lost."""
    root, engine = typescript
    (root / "basket.ts").write_text(TS_CLASS)
    apply(engine, ExtractFunction("basket.ts:5:5-8:6", "itemsSum"))
    text = (root / "basket.ts").read_text()
    assert "    let sum = this.itemsSum();\n    return sum - discount;\n  }\n\n  private itemsSum() {\n" in text
    type_checks(root)


def test_typescript_extract_variable_and_module_constant(typescript: tuple[Path, Engine]) -> None:
    root, engine = typescript
    apply(engine, ExtractVariable("lib.ts:3:18-3:32", "narrow"))
    apply(engine, ExtractVariable("lib.ts:2:18-2:19", "MARGIN", constant=True))
    text = (root / "lib.ts").read_text()
    assert text.startswith("const MARGIN = 2;\nexport function area(")
    assert "  const margin = MARGIN;\n  const narrow = width - margin;\n  const inner = (narrow) * (height - margin);\n" in text
    type_checks(root)


def test_allow_reordering_on_a_servers_refactoring_is_said_to_have_no_effect(typescript: tuple[Path, Engine]) -> None:
    _root, engine = typescript
    asked = engine.plan(ExtractVariable("lib.ts:3:18-3:32", "narrow", allow_reordering=True))
    plain = engine.plan(ExtractVariable("lib.ts:3:18-3:32", "narrow"))
    assert [w for w in asked.warnings if w.startswith("allow_reordering has no effect here")], asked.warnings
    assert not [w for w in plain.warnings if "allow_reordering" in w], plain.warnings


def test_typescript_inline_variable(typescript: tuple[Path, Engine]) -> None:
    root, engine = typescript
    apply(engine, Inline("lib.ts:9:9"))
    assert "export function useDouble(): number {\n  return double(21) + 21;\n}\n" in (root / "lib.ts").read_text()
    type_checks(root)


def test_typescript_refusals_by_code_change_nothing(typescript: tuple[Path, Engine]) -> None:
    root, engine = typescript
    cases = [
        (ExtractFunction("lib.ts:3:3-4:31", "width"), "name_clash"),  # a parameter of the enclosing function
        (ExtractVariable("lib.ts:3:18-3:32", "narrow", constant=True), "not_offered"),  # reads locals
        (Inline("lib.ts:10:10"), "not_offered"),  # a call: tsserver inlines variables only
        (ExtractFunction("lib.ts:3:3-4:31", "not a name"), "invalid_name"),
    ]
    for operation, code in cases:
        assert refused(engine, operation).code == code, operation
    assert (root / "lib.ts").read_text() == TS_SOURCE


# -- Go -----------------------------------------------------------------------------------


def test_go_extract_function_named_gofmt_clean_and_tests_pass(go: tuple[Path, Engine]) -> None:
    root, engine = go
    apply(engine, ExtractFunction("shapes.go:6:2-8:29", "innerArea"))
    text = (root / "shapes.go").read_text()
    assert "\tinner := innerArea(width, height)\n\treturn inner + width*height\n}\n" in text
    assert "\nfunc innerArea(width int, height int) int {\n\tmargin := 2\n" in text and "newFunction" not in text
    go_checks(root)


def test_go_extract_variable_and_constant(go: tuple[Path, Engine]) -> None:
    root, engine = go
    apply(engine, ExtractVariable("shapes.go:7:12-7:26", "narrow"))
    apply(engine, ExtractVariable("shapes.go:6:12-6:13", "two", constant=True))
    text = (root / "shapes.go").read_text()
    assert "\tconst two = 2\n\tmargin := two\n\tnarrow := width - margin\n\tinner := (narrow) * (height - margin)\n" in text
    go_checks(root)


def test_go_inline_call_is_gofmt_formatted(go: tuple[Path, Engine]) -> None:
    """gopls writes ``value * 2 + value``; gofmt prints ``value*2 + value``, and the file was clean."""
    root, engine = go
    apply(engine, Inline("shapes.go:18:9"))
    assert "\tvalue := 21\n\treturn value*2 + value\n}\n" in (root / "shapes.go").read_text()
    go_checks(root)


def test_go_refusals_by_code_change_nothing(go: tuple[Path, Engine]) -> None:
    root, engine = go
    cases = [
        (ExtractFunction("shapes.go:6:2-8:29", "height"), "name_clash"),
        (Inline("shapes.go:17:2"), "not_offered"),  # the variable's declaration, not a call
        (ExtractFunction("shapes.go:5:1-5:5", "f"), "not_offered"),  # the keyword func
        (Inline("shapes.go:Area"), "usage"),  # a name path: the server inlines one call
    ]
    for operation, code in cases:
        assert refused(engine, operation).code == code, operation
    assert (root / "shapes.go").read_text() == GO_SOURCE


GO_ARRAY = """\
package shapes

type Grid [4]int

type Counts map[string]int

// Fill sets every cell; "filled" is said in a comment only.
func Fill(value int) Grid {
\tvar grid Grid
\tfor i := range grid {
\t\tgrid[i] = value
\t}
\treturn grid
}

func Tally(words []string) Counts {
\tcounts := Counts{}
\tfor _, word := range words {
\t\tcounts[word]++
\t}
\treturn counts
}
"""


def test_go_extract_function_refused_when_gopls_would_change_a_copied_array(go: tuple[Path, Engine]) -> None:
    """gopls passes ``grid`` (an array) by value and does not return it: the cells the loop sets
    would be lost, and the code would still compile (found on google/uuid's Parse). A map type
    (a reference) is extracted; a name found only in a comment is no clash."""
    root, engine = go
    (root / "grid.go").write_text(GO_ARRAY)
    error = refused(engine, ExtractFunction("grid.go:10:2-12:3", "filled"))
    assert error.code == "copies_a_value" and "grid (Grid, an array)" in error.message, error.message
    assert (root / "grid.go").read_text() == GO_ARRAY
    apply(engine, ExtractFunction("grid.go:18:2-20:3", "countWords"))
    assert "\tcountWords(words, counts)\n\treturn counts\n" in (root / "grid.go").read_text()
    go_checks(root)


def test_go_inline_call_names_the_callee_comments_gopls_leaves_out(go: tuple[Path, Engine]) -> None:
    """gopls copies ``double``'s statements without their comments; the plan says which, by line."""
    root, engine = go
    commented = GO_SOURCE.replace("func double(x int) int {\n\treturn x * 2\n",
                                  "func double(x int) int {\n\t// twice the value\n\treturn x * 2 /* no overflow here */\n")
    (root / "shapes.go").write_text(commented)
    plan = engine.plan(Inline("shapes.go:19:9"))
    noted = [w for w in plan.warnings if "comment(s) of double's body" in w]
    assert noted == ["the inlined code leaves out 2 comment(s) of double's body in shapes.go (line 13 '// twice the value', "
                     "line 14 '/* no overflow here */'): the server does not copy them; add back those that still apply"], plan.warnings
