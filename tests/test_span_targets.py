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
from engine.errors import AmbiguousAddress, SymbolNotFound
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


def _asked_the_server_saying(root: Path, operation: str, arguments: dict[str, str], note: str) -> None:
    """The step planned under ``auto`` comes from the server, with a warning that says why."""
    engine = open_engine(root, SourcePreference.AUTO, tools=False)
    try:
        plan = engine.plan(build(operation, arguments, where="t"))
    finally:
        engine.close()
    assert plan.source.value == "lsp"
    assert any(note in warning for warning in plan.warnings), plan.warnings


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
    _asked_the_server_saying(root, "insert-after", {"address": "src/lib.ts:/make", "text": "export const TWO = 2;\n"},
                             "the syntax tree alone does not settle src/lib.ts:/make")


# -- C and C++: the tree answers only when nothing else in the file declares the name -------------

_C = """#include <stdio.h>

#define SCALE 2

/* A box with a size. */
struct box {
\tint size;
};

typedef struct point {
\tint x;
\tint y;
} point_t;

static int counter = 0;

/* The area of a box. */
int area(const struct box *b)
{
\treturn b->size * b->size * SCALE;
}
"""

_CPP = """#include <vector>

namespace geo {

enum class Mode { Fast, Slow };

using Sizes = std::vector<int>;

// A counter.
struct Counter {
    int value = 0;
    int get() const { return value; }
};

template <typename T>
T twice(T value) {
    return value * 2;
}

}  // namespace geo
"""

_C_STEPS = [
    ("insert-after", {"address": "src/shapes.c:area", "text": "int one(void)\n{\n\treturn 1;\n}\n"}),
    ("insert-before", {"address": "src/shapes.c:area", "text": "int two(void);\n"}),
    ("insert-after", {"address": "src/shapes.c:box", "text": "struct crate {\n\tint n;\n};\n"}),  # also named in area's parameter
    ("replace", {"address": "src/shapes.c:point_t", "text": "typedef struct point {\n\tlong x;\n\tlong y;\n} point_t;\n"}),
    ("replace", {"address": "src/shapes.c:counter", "text": "static int counter = 1;\n"}),
    ("insert-after", {"address": "src/geo.cpp:geo/Mode", "text": "enum class Speed { Up };\n"}),
    ("replace", {"address": "src/geo.cpp:geo/Sizes", "text": "using Sizes = std::vector<long>;\n"}),
    ("insert-after", {"address": "src/geo.cpp:Counter/get", "text": "    int twice() const { return value * 2; }\n"}),
    ("replace", {"address": "src/geo.cpp:geo/twice", "text": "template <typename T>\nT twice(T value) {\n    return value + value;\n}\n"}),
]


def _c_project(root: Path, extra: str = "") -> Path:
    (root / "src").mkdir()
    (root / "src" / "shapes.c").write_text(_C + extra)
    (root / "src" / "geo.cpp").write_text(_CPP)
    return root


def test_c_and_cpp_span_plans_come_from_the_tree_with_no_server_and_match_clangds(tmp_path: Path) -> None:
    require("clangd")
    _from_tree_and_from_server(_c_project(tmp_path), _C_STEPS)


def test_a_c_function_declared_again_in_the_file_asks_clangd_which_lists_both(tmp_path: Path) -> None:
    """A prototype before the definition: clangd's outline lists both, the tree's rules one."""
    require("clangd")
    root = _c_project(tmp_path)
    shapes = root / "src" / "shapes.c"
    shapes.write_text(shapes.read_text().replace("static int counter", "int area(const struct box *b);\n\nstatic int counter"))
    engine = open_engine(root, SourcePreference.AUTO, tools=False)
    try:
        with pytest.raises(AmbiguousAddress):
            engine.plan(build("insert-after", {"address": "src/shapes.c:area", "text": "int one(void);\n"}, where="t"))
        assert _started(engine)  # the server was asked, and its outline has both
    finally:
        engine.close()


def test_a_macro_clangd_does_not_list_is_not_answered_by_the_tree(tmp_path: Path) -> None:
    """The tree lists ``#define SCALE``; clangd's outline does not, so ``auto`` answers as the
    server does (no such symbol) rather than differently depending on which one answered."""
    require("clangd")
    root = _c_project(tmp_path)
    for preference in (SourcePreference.AUTO, SourcePreference.LSP):
        engine = open_engine(root, preference, tools=False)
        try:
            with pytest.raises(SymbolNotFound, match="SCALE"):
                engine.plan(build("insert-after", {"address": "src/shapes.c:SCALE", "text": "#define TWICE 4\n"}, where="t"))
        finally:
            engine.close()


def test_a_cpp_class_whose_constructor_has_its_name_asks_clangd_and_says_so(tmp_path: Path) -> None:
    """The constructor declares the class's name again; the plan comes from clangd, with the note."""
    require("clangd")
    root = _c_project(tmp_path)
    geo = root / "src" / "geo.cpp"
    geo.write_text(geo.read_text().replace("    int value = 0;\n", "    int value = 0;\n    Counter() = default;\n"))
    _asked_the_server_saying(root, "insert-before", {"address": "src/geo.cpp:geo/Counter", "text": "struct Empty {};\n"},
                             "'Counter' is declared 2 times")
