"""Callers, callees, impact and implementations of TypeScript and Go symbols, asked of the real
language server (engine/served_graph.py): the project graph follows no calls in those languages and
knows only the bases a declaration names, so before it answered "(none)" with a note (issue 40, item 4).
Skipped, with the reason, when a server is not installed."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path
from typing import Iterator

import pytest

from engine.api import Engine, SourcePreference
from engine.errors import NotCallable, UnsupportedByServer
from engine.graph import NodeRef
from engine.positions import Position
from engine.refactor.operations.rename_symbol import Rename
from engine.workspace import Workspace
from lsp_pool.adapter import PoolServices
from lsp_pool.config import PoolConfig
from tests.conftest import REPO
from tests.test_lsp_e2e import require, served_engine
from tests.test_typescript7 import require_typescript7

pytestmark = pytest.mark.e2e

GO_SHAPES = """package shapes

// Shape has an area.
type Shape interface {
	Area() float64
}

// Square is a Shape without naming it.
type Square struct{ side float64 }

func (s Square) Area() float64 { return s.side * s.side }

// Circle is a Shape too.
type Circle struct{ r float64 }

func (c Circle) Area() float64 { return 3 * c.r * c.r }

// Total adds the areas.
func Total(shapes []Shape) float64 {
	sum := 0.0
	for _, s := range shapes {
		sum += s.Area()
	}
	return sum
}

// Report totals one square.
func Report() float64 { return Total([]Shape{Square{2}}) }
"""

GO_MAIN = """package main

import (
	"fmt"

	"example.com/shapes"
)

func main() { fmt.Println(shapes.Report()) }
"""

TS_SHAPE = """export interface Shape {
  area(): number;
}

export class Square implements Shape {
  constructor(private side: number) {}
  area(): number {
    return this.side * this.side;
  }
}

export class Circle implements Shape {
  constructor(private r: number) {}
  area(): number {
    return 3 * this.r * this.r;
  }
}
"""

TS_REPORT = """import { Shape, Square } from "./shape";

export function total(shapes: Shape[]): number {
  let sum = 0;
  for (const s of shapes) {
    sum += s.area();
  }
  return sum;
}

export function report(): number {
  return total([new Square(2)]);
}
"""

TS_MAIN = """import { report } from "./report";

export function main(): void {
  console.log(report());
}
"""


def _go_project(root: Path) -> Path:
    (root / "go.mod").write_text("module example.com/shapes\n\ngo 1.22\n")
    (root / "shapes.go").write_text(GO_SHAPES)
    (root / "app").mkdir()
    (root / "app" / "main.go").write_text(GO_MAIN)
    return root


def _ts_project(root: Path) -> Path:
    (root / "tsconfig.json").write_text('{"compilerOptions": {"strict": true, "target": "es2022", "module": "nodenext", '
                                        '"noEmit": true}, "include": ["src"]}\n')
    (root / "src").mkdir()
    for name, text in (("shape.ts", TS_SHAPE), ("report.ts", TS_REPORT), ("main.ts", TS_MAIN)):
        (root / "src" / name).write_text(text)
    return root


@pytest.fixture(scope="module")
def gopls_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    require("gopls")
    with served_engine(_go_project(tmp_path_factory.mktemp("served-go")), "gopls") as engine:
        yield engine


@pytest.fixture(scope="module")
def tsserver_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    require("typescript-language-server")
    with served_engine(_ts_project(tmp_path_factory.mktemp("served-ts")), "typescript-language-server") as engine:
        yield engine


@pytest.fixture(scope="module")
def ts7_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """The same TypeScript project, whose lock file says TypeScript 7: served by ``tsc --lsp``."""
    require_typescript7()
    root = _ts_project(tmp_path_factory.mktemp("served-ts7"))
    for name in ("package.json", "package-lock.json"):
        shutil.copy(REPO / "fixtures" / "typescript7-project" / name, root / name)
    workspace = Workspace(root)
    engine = Engine(workspace, services=PoolServices(workspace, PoolConfig()), source=SourcePreference.AUTO)
    engine.settings = replace(engine.settings, diagnostics_budget=300.0)
    try:
        yield engine
    finally:
        engine.close()


def _rows(rows: list[NodeRef]) -> list[str]:
    return sorted(row.address for row in rows)


# -- Go ---------------------------------------------------------------------------------


def test_go_implementations_of_an_interface_method_are_the_types_that_satisfy_it_without_naming_it(gopls_engine: Engine) -> None:
    answer = gopls_engine.served_graph().implementations("shapes.go:Shape/Area")
    assert sorted(ref.address for ref in answer.rows) == ["shapes.go:Circle/Area", "shapes.go:Square/Area"]
    assert {(ref.source, ref.confidence) for ref in answer.rows} == {("lsp", "high")}
    assert any("gopls" in note and "textDocument/implementation" in note for note in answer.notes), answer.notes


def test_go_callers_callees_and_impact_come_from_goplss_call_hierarchy(gopls_engine: Engine) -> None:
    served = gopls_engine.served_graph()
    callers = served.callers("shapes.go:Total")
    assert [(edge.source.address, edge.target.address, edge.line, edge.origin) for edge in callers.rows] == [
        ("shapes.go:Report", "shapes.go:Total", 28, "lsp")]
    assert any("callHierarchy/incomingCalls" in note for note in callers.notes)
    callees = served.callees("shapes.go:Report")
    assert [(edge.source.address, edge.target.address) for edge in callees.rows] == [("shapes.go:Report", "shapes.go:Total")]
    impact = served.impact("shapes.go:Total")
    assert [(reached.node.address, reached.distance, reached.via) for reached in impact.rows] == [
        ("shapes.go:Report", 1, "calls"), ("app/main.go:main", 2, "calls")]


def test_go_explain_shows_the_servers_callers_and_says_why_a_type_has_none(gopls_engine: Engine) -> None:
    from engine.names import parse_address

    total = gopls_engine.explain(parse_address("shapes.go:Total"))
    assert [edge.source.address for edge in total.callers] == ["shapes.go:Report"]
    assert any("gopls's call hierarchy" in note for note in total.notes), total.notes
    shape = gopls_engine.explain(parse_address("shapes.go:Shape"))
    assert shape.callers == [] and any("not_callable" in note for note in shape.notes), shape.notes


def test_go_impact_cut_short_says_so(gopls_engine: Engine) -> None:
    impact = gopls_engine.served_graph().impact("shapes.go:Total", asked_at_most=1)
    assert [reached.node.address for reached in impact.rows] == ["shapes.go:Report"]
    assert any(note.startswith("cut: 1 caller(s)") for note in impact.notes), impact.notes


def test_go_callers_of_a_type_are_refused_as_not_callable_never_none(gopls_engine: Engine) -> None:
    with pytest.raises(NotCallable, match="Shape") as refused:
        gopls_engine.served_graph().callers("shapes.go:Shape")
    assert refused.value.code == "not_callable"


# -- TypeScript (tsserver) ------------------------------------------------------------------


def test_typescript_implementations_and_calls_come_from_tsserver(tsserver_engine: Engine) -> None:
    served = tsserver_engine.served_graph()
    implementations = served.implementations("src/shape.ts:Shape/area")
    assert _rows(implementations.rows) == ["src/shape.ts:Circle/area", "src/shape.ts:Square/area"]
    assert {ref.source for ref in implementations.rows} == {"lsp"}
    callers = served.callers("src/report.ts:total")
    assert [(edge.source.address, edge.line) for edge in callers.rows] == [("src/report.ts:report", 12)]
    impact = served.impact("src/report.ts:total")
    assert [(reached.node.address, reached.distance) for reached in impact.rows] == [
        ("src/report.ts:report", 1), ("src/main.ts:main", 2)]
    with pytest.raises(NotCallable):
        served.callers("src/shape.ts:Shape")


def test_the_ast_source_keeps_the_graphs_answer_and_its_note(tsserver_engine: Engine) -> None:
    """``--source ast`` asks no server: the graph's answer comes back, with the note that it follows no calls there."""
    tsserver_engine.source = SourcePreference.AST
    try:
        callers = tsserver_engine.served_graph().callers("src/report.ts:total")
    finally:
        tsserver_engine.source = SourcePreference.AUTO
    assert callers.rows == [] and any("follows no calls" in note for note in callers.notes)


def test_a_typescript_interface_member_rename_reaches_the_classes_that_implement_it(tsserver_engine: Engine) -> None:
    """tsserver's own rename renames the methods of the classes that declare ``implements Shape``."""
    plan = tsserver_engine.plan(Rename("src/shape.ts:Shape/area", "size"))
    changed = {state.path: (state.after or b"").decode() for state in tsserver_engine.edits().preview(plan.edit)}
    assert set(changed) == {"src/shape.ts", "src/report.ts"}
    assert changed["src/shape.ts"].count("size(): number") == 3 and "area" not in changed["src/shape.ts"]
    assert "s.size()" in changed["src/report.ts"]


# -- TypeScript 7 (tsc --lsp) ----------------------------------------------------------------


def test_typescript_7_serves_implementations_calls_and_the_interface_member_rename(ts7_engine: Engine) -> None:
    served = ts7_engine.served_graph()
    implementations = served.implementations("src/shape.ts:Shape/area")
    assert _rows(implementations.rows) == ["src/shape.ts:Circle/area", "src/shape.ts:Square/area"]
    assert any("tsc-lsp" in note for note in implementations.notes), implementations.notes
    callers = served.callers("src/report.ts:total")
    assert [edge.source.address for edge in callers.rows] == ["src/report.ts:report"]
    plan = ts7_engine.plan(Rename("src/shape.ts:Shape/area", "size"))
    changed = {state.path: (state.after or b"").decode() for state in ts7_engine.edits().preview(plan.edit)}
    assert changed["src/shape.ts"].count("size(): number") == 3 and "s.size()" in changed["src/report.ts"]


# -- a server without the requests ------------------------------------------------------------


def test_a_server_without_implementation_or_call_hierarchy_refuses_with_a_typed_code(tmp_path: Path) -> None:
    """jedi-language-server offers neither request: the port says so (unsupported_by_server, naming
    the server and the request) instead of answering an empty list."""
    require("jedi-language-server")
    sample = tmp_path / "sample"
    shutil.copytree(REPO / "fixtures" / "sample", sample, ignore=shutil.ignore_patterns(".graft"))
    with served_engine(sample, "jedi-language-server") as engine:
        assert engine.services is not None
        source = engine.workspace.read("shop/util.py")
        with pytest.raises(UnsupportedByServer, match="jedi-language-server .*textDocument/implementation"):
            engine.services.implementations(source, Position(0, 4))
        with pytest.raises(UnsupportedByServer, match="textDocument/prepareCallHierarchy"):
            engine.services.call_hierarchy(source, Position(0, 4))
