"""Issue 48, item 5, in Go and TypeScript: a span-only plan (``insert-before``, ``insert-after``,
``replace``) under ``--source auto`` takes its target from the syntax tree, starting no server,
and makes the same edit the server's outline would; a name the tree may not list alone still
asks the server, and says so. (Python's cases are in tests/test_fleet_servers.py.)"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from engine.api import Engine
from engine.choices import SourcePreference
from engine.errors import AmbiguousAddress
from engine.opening import open_engine
from engine.refactor.operations import build
from tests.test_lsp_e2e import require

_LIB = """package lib

// Box holds a size.
type Box struct {
	Size int
}

// Area is a box's area.
func (b Box) Area() int {
	return b.Size * b.Size
}

// Make makes a box.
func Make(size int) Box {
	return Box{Size: size}
}
"""

_STEPS = [
    ("insert-after", {"address": "lib/lib.go:Make", "text": "// Twice is two.\nfunc Twice() int {\n\treturn 2\n}\n"}),
    ("insert-before", {"address": "lib/lib.go:Box/Area", "text": "// Half is half a box.\nfunc (b Box) Half() int {\n\treturn b.Size / 2\n}\n"}),
    ("replace", {"address": "lib/lib.go:Make", "text": "// Make makes a box.\nfunc Make(size int) Box {\n\treturn Box{Size: size + 0}\n}\n"}),
]


def _project(root: Path, extra: str = "") -> Path:
    (root / "go.mod").write_text("module example.com/m\n\ngo 1.21\n")
    (root / "lib").mkdir()
    (root / "lib" / "lib.go").write_text(_LIB + extra)
    return root


def _plans(engine: Engine, steps: list[tuple[str, dict[str, str]]]) -> list[tuple[str, str, list[str]]]:
    plans = [engine.plan(build(op, arguments, where="t")) for op, arguments in steps]
    return [(p.source.value, str(p.edit), p.warnings) for p in plans]


def _from_tree_and_from_server(root: Path, steps: list[tuple[str, dict[str, str]]]) -> None:
    """The steps planned under ``auto`` start no server and come from the tree, with the edits
    ``--source lsp`` makes from the server's outline, and no note."""
    auto = open_engine(root, SourcePreference.AUTO, tools=False)
    try:
        from_tree = _plans(auto, steps)
        assert _started(auto) == {}
    finally:
        auto.close()
    served = open_engine(root, SourcePreference.LSP, tools=False)
    try:
        from_server = _plans(served, steps)
    finally:
        served.close()
    assert [source for source, _edit, _notes in from_tree] == ["ast"] * len(steps)
    assert [source for source, _edit, _notes in from_server] == ["lsp"] * len(steps)
    assert [edit for _source, edit, _notes in from_tree] == [edit for _source, edit, _notes in from_server]
    assert all(not notes for _source, _edit, notes in from_tree)


def _started(engine: Engine) -> dict[str, str]:
    pool_loop = getattr(engine.services, "api", None)
    if pool_loop is not None:  # what was handed to the pool's loop before now has had its turn
        pool_loop.run(lambda: asyncio.sleep(1.0), timeout=120)
    assert engine.services is not None
    return {s.id: s.state for s in engine.services.status() if s.state not in ("stopped", "not-found", "too-old")}


def test_go_span_plans_come_from_the_tree_with_no_server_and_match_goplss(tmp_path: Path) -> None:
    require("gopls")
    _from_tree_and_from_server(_project(tmp_path), _STEPS)


@pytest.mark.parametrize("extra", [
    "\n// Crate embeds a box.\ntype Crate struct {\n\tMake\n}\n",  # an embedded field the tree does not list
    "\n// Pair has two.\ntype Pair struct {\n\tSize, Make int\n}\n",  # a field declared with another
])
def test_a_name_a_go_field_the_tree_does_not_list_may_have_asks_gopls_and_says_so(tmp_path: Path, extra: str) -> None:
    """gopls lists the field: the bare name is ambiguous there, which the tree alone would have
    missed; the top-level one (``/Make``) is planned from gopls's answer, with the note."""
    require("gopls")
    root = _project(tmp_path, extra)
    engine = open_engine(root, SourcePreference.AUTO, tools=False)
    try:
        with pytest.raises(AmbiguousAddress, match="field"):
            engine.plan(build("insert-after", {"address": "lib/lib.go:Make", "text": "// X is one.\nvar X = 1\n"}, where="t"))
        plan = engine.plan(build("insert-after", {"address": "lib/lib.go:/Make", "text": "// X is one.\nvar X = 1\n"}, where="t"))
    finally:
        engine.close()
    assert plan.source.value == "lsp"
    assert any("the syntax tree alone does not settle lib/lib.go:/Make" in note for note in plan.warnings), plan.warnings


# -- TypeScript: the tree answers only when nothing else in the file declares the name ------------

_TS = """import { readFileSync } from 'fs';

/** A box. */
export class Box {
  constructor(public size: number) {}

  area(): number {
    return this.size * this.size;
  }
}

/** Makes a box. */
export function make(size: number): Box {
  return new Box(size);
}

export const loaded = (path: string): string => readFileSync(path, 'utf8');
"""

_TS_STEPS = [
    ("insert-after", {"address": "src/lib.ts:make", "text": "export function twice(): number {\n  return 2;\n}\n"}),
    ("insert-before", {"address": "src/lib.ts:make", "text": "export const ONE = 1;\n"}),
    ("replace", {"address": "src/lib.ts:Box/area", "text": "area(): number {\n    return this.size ** 2;\n  }"}),
]


def _ts_project(root: Path, extra: str = "") -> Path:
    (root / "package.json").write_text('{"name": "boxes", "version": "1.0.0", "private": true}\n')
    (root / "tsconfig.json").write_text('{"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs"}, "include": ["src"]}\n')
    (root / "src").mkdir()
    (root / "src" / "lib.ts").write_text(_TS + extra)
    return root


def test_typescript_span_plans_come_from_the_tree_with_no_server_and_match_tsservers(tmp_path: Path) -> None:
    require("typescript-language-server")
    _from_tree_and_from_server(_ts_project(tmp_path), _TS_STEPS)


def test_a_typescript_name_declared_again_in_the_file_asks_the_server_and_says_so(tmp_path: Path) -> None:
    """A local of the same name, which tsserver's outline lists and the tree's rules do not."""
    require("typescript-language-server")
    root = _ts_project(tmp_path, "\nexport function user(): number {\n  const make = 3;\n  return make;\n}\n")
    engine = open_engine(root, SourcePreference.AUTO, tools=False)
    try:
        plan = engine.plan(build("insert-after", {"address": "src/lib.ts:/make", "text": "export const TWO = 2;\n"}, where="t"))
    finally:
        engine.close()
    assert plan.source.value == "lsp"
    assert any("the syntax tree alone does not settle src/lib.ts:/make" in note for note in plan.warnings), plan.warnings
