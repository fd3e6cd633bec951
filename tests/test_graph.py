"""The project graph: edges on the fixture as data, import resolution cases, cache behaviour, queries."""

from __future__ import annotations

import os
import shutil
import threading
from multiprocessing import get_context
from pathlib import Path
from typing import IO, Any

import pytest

import engine.graph.cache as cache_module
from engine.graph import GraphQueries, ProjectIndex
from engine.graph.facts import FileFacts
from engine.workspace import Workspace
from engine.refactor.operations.rename_symbol import Rename
from tests.conftest import EXPECTED, SAMPLE
from tests.test_outlines import SOURCE_FILES  # every source file of the sample, listed by hand

GOLDEN = EXPECTED / "graph_edges.txt"


def index_of(root: Path, jobs: int = 1) -> ProjectIndex:
    return ProjectIndex(Workspace(root), jobs=jobs)


def edges(index: ProjectIndex) -> list[str]:
    rows = []
    for u, v, kind, data in index.graph.graph.edges(keys=True, data=True):
        if kind != "contains":
            rows.append(f"{kind} {u[2:]} -> {v[2:]} line {data['line']} {data['source']}/{data['confidence']}")
    return sorted(rows)


def make_project(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def sample_copy(tmp_path: Path) -> Path:
    target = tmp_path / "sample"
    shutil.copytree(SAMPLE, target, ignore=shutil.ignore_patterns(".graft"))
    return target


def test_fixture_edges_match_expected(sample_copy: Path) -> None:
    index = index_of(sample_copy)
    try:
        index.load()
        actual = "\n".join(edges(index)) + "\n"
    finally:
        index.close()
    if os.environ.get("GRAFT_UPDATE_GOLDENS"):
        GOLDEN.write_text(actual, encoding="utf-8")
    assert actual == GOLDEN.read_text(encoding="utf-8")


IMPORT_CASES = {
    "relative import of a sibling": (
        {"pkg/__init__.py": "", "pkg/a.py": "from .b import f\n\ndef g():\n    return f()\n", "pkg/b.py": "def f():\n    return 1\n"},
        ["calls pkg/a.py:g -> pkg/b.py:f", "imports pkg/a.py -> pkg/b.py", "imports pkg/a.py -> pkg/b.py:f"],
    ),
    "parent-relative import and a package's own module": (
        {"pkg/__init__.py": "", "pkg/sub/__init__.py": "from .. import core\n", "pkg/core.py": "X = 1\n"},
        # `from .. import core` runs the package's __init__ and takes its submodule.
        ["imports pkg/sub/__init__.py -> pkg/__init__.py", "imports pkg/sub/__init__.py -> pkg/core.py"],
    ),
    "alias and re-export through __init__": (
        {"lib/__init__.py": "from .impl import work as run\n", "lib/impl.py": "def work():\n    pass\n",
         "app.py": "from lib import run as go\n\ngo()\n"},
        ["calls app.py -> lib/impl.py:work", "imports app.py -> lib/__init__.py", "imports app.py -> lib/impl.py:work",
         "imports lib/__init__.py -> lib/impl.py", "imports lib/__init__.py -> lib/impl.py:work"],
    ),
    "star import honours __all__": (
        {"m.py": "__all__ = ['kept']\n\ndef kept():\n    pass\n\ndef hidden():\n    pass\n",
         "use.py": "from m import *\n\nkept()\nhidden()\n"},
        ["calls use.py -> m.py:kept", "imports use.py -> m.py", "imports use.py -> m.py:kept"],
    ),
    "import a.b binds a, and module attribute calls resolve": (
        {"a/__init__.py": "", "a/b.py": "def f():\n    pass\n", "use.py": "import a.b\nimport a.b as ab\n\na.b.f()\nab.f()\n"},
        ["calls use.py -> a/b.py:f", "imports use.py -> a/__init__.py", "imports use.py -> a/b.py"],
    ),
    "namespace package (no __init__) and src layout": (
        {"src/ns/tool.py": "def t():\n    pass\n", "src/ns/user.py": "from ns.tool import t\n\nt()\n"},
        ["calls src/ns/user.py -> src/ns/tool.py:t", "imports src/ns/user.py -> src/ns/tool.py",
         "imports src/ns/user.py -> src/ns/tool.py:t"],
    ),
    "a second package re-exporting the first": (
        {"one/__init__.py": "from .core import Thing\n", "one/core.py": "class Thing:\n    pass\n",
         "two/__init__.py": "from one import Thing\n", "use.py": "from two import Thing\n\nclass Sub(Thing):\n    pass\n"},
        ["imports one/__init__.py -> one/core.py", "imports one/__init__.py -> one/core.py:Thing",
         "imports two/__init__.py -> one/__init__.py", "imports two/__init__.py -> one/core.py:Thing",
         "imports use.py -> one/core.py:Thing", "imports use.py -> two/__init__.py", "inherits use.py:Sub -> one/core.py:Thing"],
    ),
    "self, super and nested helpers": (
        {"k.py": "class Base:\n    def run(self):\n        pass\n\nclass Child(Base):\n    def run(self):\n"
                 "        super().run()\n        self.helper()\n\n    def helper(self):\n        def inner():\n            pass\n        inner()\n"},
        ["calls k.py:Child/helper -> k.py:Child/helper/inner", "calls k.py:Child/run -> k.py:Base/run",
         "calls k.py:Child/run -> k.py:Child/helper", "inherits k.py:Child -> k.py:Base"],
    ),
    "TypeScript relative imports and Go packages": (
        {"web/a.ts": "import { b } from './b';\nexport const a = b;\n", "web/b.ts": "export const b = 1;\n",
         "go.mod": "module example.com/m\n", "cmd/main.go": 'package main\n\nimport "example.com/m/lib"\n\nfunc main() { lib.F() }\n',
         "lib/lib.go": "package lib\n\nfunc F() {}\n"},
        ["imports cmd/main.go -> lib/lib.go", "imports web/a.ts -> web/b.ts"],
    ),
}


@pytest.mark.parametrize("case", IMPORT_CASES, ids=list(IMPORT_CASES))
def test_import_resolution(tmp_path: Path, case: str) -> None:
    files, expected = IMPORT_CASES[case]
    index = index_of(make_project(tmp_path, files))
    try:
        index.load()
        found = sorted(row.split(" line ")[0] for row in edges(index) if not row.startswith("tested_by"))
    finally:
        index.close()
    assert found == sorted(expected)


def test_warm_start_incremental_change_and_schema_bump(sample_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = index_of(sample_copy)
    cold = first.load()
    first.close()
    assert cold.mode == "cold" and cold.extracted == cold.files == len(SOURCE_FILES)

    second = index_of(sample_copy)
    warm = second.load()
    second.close()
    assert (warm.mode, warm.extracted) == ("warm", 0)

    util = sample_copy / "shop/util.py"
    util.write_text(util.read_text() + "\n\ndef added():\n    return money(1, 'EUR')\n")
    third = index_of(sample_copy)
    incremental = third.load()
    queries = GraphQueries(third.graph)
    callers = [e.source.address for e in queries.callers("shop/util.py:money")]
    third.close()
    assert (incremental.mode, incremental.extracted) == ("incremental", 1)
    assert incremental.culled == 1  # the facts of util.py's previous content
    # util.py and the files importing it are re-resolved; nothing else.
    assert incremental.recomputed == 4
    assert "shop/util.py:added" in callers

    monkeypatch.setattr(cache_module, "SCHEMA_VERSION", 10_000)
    fourth = index_of(sample_copy)
    bumped = fourth.load()
    fourth.close()
    assert (bumped.mode, bumped.extracted) == ("cold", len(SOURCE_FILES))


def test_only_files_whose_size_or_mtime_moved_are_read_again(sample_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import engine.graph.index as index_module

    first = index_of(sample_copy)
    first.load()
    first.close()
    opened: list[str] = []

    def counting_open(file: str, *args: Any, **kwargs: Any) -> IO[Any]:
        opened.append(os.path.relpath(file, sample_copy))
        return open(file, *args, **kwargs)  # noqa: SIM115

    monkeypatch.setattr(index_module, "open", counting_open, raising=False)
    os.utime(sample_copy / "web/cart.ts")  # same content, new mtime: hashed again, found unchanged
    index = index_of(sample_copy)
    stats = index.load()
    index.close()
    assert opened == ["web/cart.ts"] and stats.mode == "warm"


def test_refresh_after_an_edit_updates_edges(sample_copy: Path) -> None:
    index = index_of(sample_copy)
    index.load()
    pricing = sample_copy / "shop/pricing.py"
    pricing.write_text(pricing.read_text().replace("util.round_cents(amount * (1 + VAT_RATE))", "amount"))
    recomputed = index.refresh(["shop/pricing.py"])
    callers = [e.source.address for e in GraphQueries(index.graph).callers("shop/util.py:round_cents")]
    index.close()
    assert "shop/pricing.py:with_vat" not in callers and "shop/pricing.py:apply_discount" in callers
    assert "shop/pricing.py" in recomputed



def test_the_engine_graph_sees_what_an_apply_wrote(sample_copy: Path) -> None:
    """An apply only tells the engine which files it wrote; the graph re-reads them when next asked."""
    from engine.api import Engine

    engine = Engine(Workspace(sample_copy))
    try:
        engine.index()
        before = engine.graph().lookup("round_cents")
        engine.edits().apply(engine.plan(Rename("shop/util.py:round_cents", "round_to_cents")).edit)
        renamed = [n.address for n in engine.graph().lookup("round_to_cents")]
        gone = engine.graph().lookup("round_cents")
        callers = [e.source.address for e in engine.graph().callers("shop/util.py:round_to_cents")]
        engine.edits().undo()
        restored = [n.address for n in engine.graph().lookup("round_cents")]
    finally:
        engine.close()
    assert [n.address for n in before] == ["shop/util.py:round_cents"] == restored
    assert renamed == ["shop/util.py:round_to_cents"] and gone == []
    assert "shop/pricing.py:with_vat" in callers

def test_a_refresh_is_persisted_on_close_and_safe_without_it(sample_copy: Path) -> None:
    """The snapshot and stat table are written back on close, not per refresh; a process
    that never closes (a crash) leaves them stale, which the next load notices."""
    pricing = sample_copy / "shop/pricing.py"
    index = index_of(sample_copy)
    index.load()
    pricing.write_text(pricing.read_text().replace("util.round_cents(amount * (1 + VAT_RATE))", "amount"))
    index.refresh(["shop/pricing.py"])
    index._wait_for_snapshot()  # a child writing the load's snapshot finishes whatever happens to this process
    index.cache.close()  # gone without close(): nothing of the refresh written back
    after_crash = index_of(sample_copy)
    stats = after_crash.load()
    callers = [e.source.address for e in GraphQueries(after_crash.graph).callers("shop/util.py:round_cents")]
    assert stats.mode == "incremental" and "shop/pricing.py:with_vat" not in callers
    pricing.write_text(pricing.read_text() + "\n")
    after_crash.refresh(["shop/pricing.py"])
    after_crash.close()
    reopened = index_of(sample_copy)
    assert reopened.load().mode == "warm"
    reopened.close()


def _index_in_process(root: str) -> int:
    index = ProjectIndex(Workspace(Path(root)), jobs=1)
    try:
        return index.load().files
    finally:
        index.close()


def test_concurrent_indexers_share_the_cache(sample_copy: Path) -> None:
    context = get_context("spawn")
    with context.Pool(4) as pool:
        counts = pool.map(_index_in_process, [str(sample_copy)] * 8)
    assert counts == [len(SOURCE_FILES)] * 8
    index = index_of(sample_copy)
    stats = index.load()
    index.close()
    assert stats.mode == "warm" and stats.files == len(SOURCE_FILES)


def test_parallel_cold_index_equals_serial(tmp_path: Path) -> None:
    files = {f"pkg/m{n:03}.py": f"from .m{(n + 1) % 80:03} import f{(n + 1) % 80}\n\ndef f{n}():\n    return f{(n + 1) % 80}()\n" for n in range(80)}
    files["pkg/__init__.py"] = ""
    serial_root = make_project(tmp_path / "serial", files)
    parallel_root = make_project(tmp_path / "parallel", files)
    serial, parallel = index_of(serial_root, jobs=1), index_of(parallel_root, jobs=2)
    try:
        serial.load(), parallel.load()
        assert edges(serial) == edges(parallel) and len(edges(serial)) == 80 * 3
        [cycle] = GraphQueries(parallel.graph).cycles()
        assert len(cycle.files) == 80
    finally:
        serial.close()
        parallel.close()


def test_entry_points_dead_code_and_affected_tests(tmp_path: Path) -> None:
    root = make_project(tmp_path, {
        "pyproject.toml": '[project]\nname = "x"\n[project.scripts]\nx-tool = "app.cli:main"\n',
        "app/__init__.py": "",
        "app/cli.py": "import argparse\n\ndef main():\n    parser = argparse.ArgumentParser()\n    return helper()\n\n"
                      "def helper():\n    return 1\n\ndef unused():\n    return 2\n\nif __name__ == '__main__':\n    main()\n",
        "app/web.py": "from flask import Flask\nimport click\napp = Flask(__name__)\n\n@app.route('/')\ndef home():\n    return 'x'\n\n"
                      "@click.command()\ndef hello():\n    pass\n",
        "tests/test_cli.py": "from app.cli import helper\n\ndef test_helper():\n    assert helper() == 1\n",
    })
    index = index_of(root)
    index.load()
    queries = GraphQueries(index.graph)
    pyproject = (root / "pyproject.toml").read_text()
    entry = {(f.node.address, f.reason) for f in queries.entry_points(pyproject)}
    dead = [f.node.address for f in queries.dead_code(pyproject)]
    tests = [t.address for t in queries.affected_tests(["app/cli.py:helper"])]
    index.close()
    assert entry == {
        ("app/cli.py", 'runs as a script (if __name__ == "__main__")'),
        ("app/cli.py:main", "builds an argparse command line"),
        ("app/cli.py:main", "console script `x-tool`"),
        ("app/web.py:home", "decorated @app.route('/')"),
        ("app/web.py:hello", "decorated @click.command()"),
    }
    assert dead == ["app/cli.py:unused"]
    assert tests == ["tests/test_cli.py", "tests/test_cli.py:test_helper"]


def test_answers_do_not_depend_on_resolution_order(tmp_path: Path) -> None:
    """Star imports that loop, and re-export chains: an update must give what a fresh build gives."""
    root = make_project(tmp_path, {
        "p/__init__.py": "from .a import *\nfrom .b import *\n",
        "p/a.py": "from .b import *\n\ndef fa():\n    return fb()\n",
        "p/b.py": "from .a import *\n\ndef fb():\n    return fa()\n",
        "p/c.py": "from p import fa, fb\n\ndef fc():\n    return fa() + fb()\n",
    })
    fresh = index_of(root)
    fresh.load()
    expected = edges(fresh)
    fresh.close()
    (root / "p/a.py").write_text((root / "p/a.py").read_text() + "\n")
    updated = index_of(root)
    stats = updated.load()
    actual = edges(updated)
    updated.close()
    assert stats.mode == "incremental" and actual == expected
    assert "calls p/c.py:fc -> p/a.py:fa" in [row.split(" line ")[0] for row in actual]
    assert "calls p/a.py:fa -> p/b.py:fb" in [row.split(" line ")[0] for row in actual]


def test_bases_and_decorators_stay_with_their_own_definitions(tmp_path: Path) -> None:
    from engine.extract import SymbolExtractor
    from engine.graph.facts import file_facts

    classes = "".join(
        f"@decorate_{n}\n@other_{n}\nclass C{n}({'Base' if n % 2 else 'Exception'}, Mixin{n}):\n    pass\n\n" for n in range(30)
    )
    source = Workspace(make_project(tmp_path, {"many.py": classes})).read("many.py")
    facts = file_facts(source, SymbolExtractor())
    assert [(b.cls, b.base) for b in facts.bases] == [
        (f"C{n}", base) for n in range(30) for base in (("Base" if n % 2 else "Exception"), f"Mixin{n}")
    ]
    assert [s.decorators for s in facts.symbols] == [(f"decorate_{n}", f"other_{n}") for n in range(30)]


def test_graph_references_definition_and_implementations(sample_copy: Path) -> None:
    from engine.api import Engine, SourcePreference

    engine = Engine(Workspace(sample_copy), source=SourcePreference.AST)
    try:
        refs = engine.references("shop/util.py:round_cents")
        definition = engine.definition("shop/pricing.py:17:22")  # on `round_cents` in util.round_cents(...)
        overrides = [r.address for r in engine.graph().implementations("PriceRule/apply")]
        subclasses = [r.address for r in engine.graph().implementations("PriceRule")]
    finally:
        engine.close()
    assert (refs.source.value, refs.confidence.value) == ("ast", "medium")
    assert [(loc.file, loc.range.start.line + 1, loc.range.start.column + 1) for loc in refs.locations] == [
        ("shop/util.py", 8, 5),  # the declaration first
        ("shop/pricing.py", 17, 17), ("shop/pricing.py", 21, 17), ("shop/pricing.py", 36, 21), ("shop/util.py", 13, 48),
    ]
    assert [(loc.file, loc.range.start.line + 1) for loc in definition.locations] == [("shop/util.py", 8)]
    assert overrides == ["shop/pricing.py:HalfPrice/apply"] and subclasses == ["shop/pricing.py:HalfPrice"]


def test_an_edit_inside_a_body_redoes_only_that_files_edges(sample_copy: Path) -> None:
    index = index_of(sample_copy)
    index.load()
    fresh_edges = edges(index)
    pricing = sample_copy / "shop/pricing.py"
    original = pricing.read_text()
    pricing.write_text(original.replace("    return util.round_cents(amount * (1 + VAT_RATE))", "    total = amount * (1 + VAT_RATE)\n    return util.round_cents(total)"))
    body_only = index.refresh(["shop/pricing.py"])
    after_body_edit = edges(index)
    pricing.write_text(pricing.read_text() + "\n\ndef brand_new():\n    return with_vat(1)\n")
    structural = index.refresh(["shop/pricing.py"])
    index.close()
    assert body_only == {"shop/pricing.py"}
    # Edges of other files are untouched; pricing.py's own are redone (with_vat now calls on line 22).
    unchanged = [e for e in fresh_edges if "shop/pricing.py" not in e]
    assert [e for e in after_body_edit if "shop/pricing.py" not in e] == unchanged
    assert "calls shop/pricing.py:with_vat -> shop/util.py:round_cents line 22 ast/medium" in after_body_edit
    assert structural >= {"shop/pricing.py", "shop/__init__.py", "tests/test_shop.py"}


def test_dead_code_spares_stubs_used_overload_stacks_and_classes_read_by_attribute(tmp_path: Path) -> None:
    """Seen on a real project: 206 of 216 candidates were stub declarations, the @overload
    declarations of a heavily used function, and a class used through Unit.X."""
    root = make_project(tmp_path, {
        "pyproject.toml": '[project]\nname = "x"\n',
        "lib/__init__.py": "",
        "lib/conv.py": "from typing import overload\n\n@overload\ndef conv(x: int) -> str: ...\n@overload\ndef conv(x: str) -> str: ...\n"
                       "def conv(x):\n    return str(x)\n\n@overload\ndef gone(x: int) -> int: ...\ndef gone(x):\n    return x\n",
        "lib/conv.pyi": "def conv(x: int) -> str: ...\ndef never_called() -> None: ...\n",
        "lib/units.py": "class Unit:\n    METRE = 1\n\n\ndef truly_unused():\n    return 0\n",
        "lib/use.py": "from lib.conv import conv\nfrom lib import units\n\nVALUE = conv(1)\nSIZE = units.Unit.METRE\n",
    })
    index = index_of(root)
    index.load()
    queries = GraphQueries(index.graph)
    dead = sorted(f.node.address for f in queries.dead_code(None, read=lambda path: (root / path).read_text()))
    index.close()
    assert dead == ["lib/conv.py:gone[1]", "lib/units.py:truly_unused"]


def test_a_submodule_bound_by_its_package_resolves_through_attribute_chains(tmp_path: Path) -> None:
    """cachetools' tests write ``cachetools.keys.typedkey`` after ``import cachetools.keys``, and
    its ``__init__`` binds the submodule (``from . import keys``): the chain reaches typedkey
    (it stopped at the module, so a rename the server missed there went unseen)."""
    root = make_project(tmp_path, {
        "src/pkg/__init__.py": "from . import keys\n",
        "src/pkg/keys.py": "class Key:\n    def part(self):\n        return 1\n\n\ndef typedkey():\n    return Key()\n",
        "tests/test_keys.py": "import pkg.keys\nimport pkg\n\n\ndef test_it(key=pkg.keys.typedkey):\n    assert pkg.keys.Key.part\n",
    })
    index = index_of(root)
    index.load()
    graph = index.graph
    assert graph.resolve_expression("tests/test_keys.py", "pkg.keys.typedkey", 5) == "s:src/pkg/keys.py:typedkey"
    assert graph.resolve_expression("tests/test_keys.py", "pkg.keys.Key.part", 6) == "s:src/pkg/keys.py:Key/part"
    assert graph.resolve_in_module("src/pkg/__init__.py", "keys.typedkey") == "s:src/pkg/keys.py:typedkey"
    assert graph.resolve_in_module("src/pkg/__init__.py", "keys") is None  # a module is not a symbol node
    index.close()


def test_a_generic_base_is_inherited_from_and_a_mixin_override_joins_the_family(tmp_path: Path) -> None:
    """itsdangerous: ``class URLSafeSerializer(URLSafeSerializerMixin, Serializer[str])``. The
    subscripted base was not read as a base, so the mixin's load_payload override was not in
    Serializer.load_payload's family, and a rename left it (64 red tests)."""
    from engine.graph import GraphQueries

    root = make_project(tmp_path, {
        "pkg/serializer.py": "import typing as t\n_T = t.TypeVar('_T')\n\n\nclass Serializer(t.Generic[_T]):\n"
                             "    def load_payload(self, payload):\n        return payload\n",
        "pkg/url_safe.py": "from .serializer import Serializer\n\n\nclass URLSafeSerializerMixin(Serializer[str]):\n"
                           "    def load_payload(self, payload):\n        return super().load_payload(payload)\n\n\n"
                           "class URLSafeSerializer(URLSafeSerializerMixin, Serializer[str]):\n    pass\n",
    })
    index = index_of(root)
    index.load()
    family = GraphQueries(index.graph).hierarchy_methods("pkg/serializer.py:Serializer/load_payload")
    assert sorted(f"{ref.path}:{ref.name_path}" for ref in family) == [
        "pkg/serializer.py:Serializer/load_payload", "pkg/url_safe.py:URLSafeSerializerMixin/load_payload"]
    assert "inherits url_safe.py:URLSafeSerializer -> pkg/serializer.py:Serializer" in [
        row.split(" line ")[0].replace("pkg/url_safe.py", "url_safe.py", 1) for row in edges(index)]
    index.close()


def test_siblings_sharing_a_base_without_the_method_are_not_one_family(tmp_path: Path) -> None:
    """tomlkit: Item._getstate and Container._getstate are unrelated (their common base has no
    _getstate); renaming one renamed both. With the method on the base, they are one slot."""
    from engine.graph import GraphQueries

    files = {
        "m.py": "class Base:\n    pass\n\n\nclass Item(Base):\n    def _getstate(self):\n        return 1\n\n\n"
                "class Container(Base):\n    def _getstate(self):\n        return 2\n\n\nclass Leaf(Item):\n"
                "    def _getstate(self):\n        return 3\n",
    }
    index = index_of(make_project(tmp_path / "apart", files))
    index.load()
    family = GraphQueries(index.graph).hierarchy_methods("m.py:Item/_getstate")
    assert sorted(ref.name_path or "" for ref in family) == ["Item/_getstate", "Leaf/_getstate"]
    index.close()
    files["m.py"] = files["m.py"].replace("class Base:\n    pass\n", "class Base:\n    def _getstate(self):\n        return 0\n")
    index = index_of(make_project(tmp_path / "joined", files))
    index.load()
    family = GraphQueries(index.graph).hierarchy_methods("m.py:Leaf/_getstate")
    assert sorted(ref.name_path or "" for ref in family) == ["Base/_getstate", "Container/_getstate", "Item/_getstate", "Leaf/_getstate"]
    index.close()


def test_a_changed_base_redoes_the_calls_other_files_make_through_the_class(tmp_path: Path) -> None:
    """A class's bases are part of what other files see of it: a method inherited from another
    base is another method, though no name in the file changed."""
    make_project(tmp_path, {
        "shapes.py": "class Base:\n    def area(self):\n        return 0\n\n\nclass Other:\n    def area(self):\n        return 1\n\n\n"
                     "class Square(Base):\n    pass\n",
        "use.py": "from shapes import Square\n\n\ndef measure(s: Square):\n    return s.area()\n",
    })
    index = index_of(tmp_path)
    index.load()
    before = [e for e in edges(index) if e.startswith("calls use.py")]
    shapes = tmp_path / "shapes.py"
    shapes.write_text(shapes.read_text().replace("class Square(Base):", "class Square(Other):"))
    index.refresh(["shapes.py"])
    after = [e for e in edges(index) if e.startswith("calls use.py")]
    index.close()
    assert before == ["calls use.py:measure -> shapes.py:Base/area line 5 ast/medium"]
    assert after == ["calls use.py:measure -> shapes.py:Other/area line 5 ast/medium"]


def test_the_index_skips_signatures_without_changing_any_fact() -> None:
    """The index extracts without signatures and documentation ranges: every file's facts are the
    ones a full extraction gives."""
    from engine.extract import SymbolExtractor
    from engine.graph.facts import file_facts

    extractor = SymbolExtractor()
    workspace = Workspace(SAMPLE)
    compared = 0
    for path in workspace.scan().files:
        source = workspace.read(path)
        if source.language is None:
            continue
        lean = file_facts(source, extractor, None, extractor.extract_with_tree(source, details=False))
        assert lean == file_facts(source, extractor), path
        compared += 1
    assert compared >= 10


def _drop_snapshots(root: Path) -> None:
    cache = cache_module.FactsCache(root / ".graft" / "cache")
    for key in list(cache._cache.iterkeys()):
        if isinstance(key, str) and key.startswith("snapshot"):
            cache._cache.delete(key)
    cache.close()


@pytest.mark.parametrize("writer", ["forked", "fails", "this process"])
def test_a_cold_index_leaves_every_file_s_facts_in_the_cache(sample_copy: Path, monkeypatch: pytest.MonkeyPatch,
                                                             writer: str) -> None:
    """The facts extracted by a load are stored with its snapshot: by a forked writer where one
    can be (without the snapshot, the next load extracts nothing); by this process when the
    forked writer fails, every fact of the graph; and by this process where forking is unsafe
    (another thread runs, as a language-server pool's does)."""
    if writer == "fails":
        parent, original = os.getpid(), cache_module.FactsCache.store_many

        def fails_in_a_child(self: cache_module.FactsCache, many: list[tuple[FileFacts, bytes | None]]) -> None:
            if os.getpid() != parent:
                raise OSError("disk full")
            original(self, many)

        monkeypatch.setattr(cache_module.FactsCache, "store_many", fails_in_a_child)
    running = threading.Event()
    if writer == "this process":
        threading.Thread(target=running.wait, daemon=True).start()
    index = index_of(sample_copy)
    cold = index.load()
    index.close()
    running.set()
    monkeypatch.undo()
    _drop_snapshots(sample_copy)
    again = index_of(sample_copy)
    stats = again.load()
    again.close()
    assert cold.extracted == cold.files > 0
    assert stats.extracted == 0 and stats.cache_hits == cold.files


def test_a_call_resolved_again_after_its_file_changed_follows_the_new_receiver(tmp_path: Path) -> None:
    """A file's calls are looked up by line from an index built per version of its facts
    (ProjectGraph._lines_of): a long-lived graph that re-read the file answers from the new
    calls, never from the index of the old ones. The kept indexes are not written to a snapshot."""
    import pickle

    use = "from pkg.shapes import Circle, Square\n\n\ndef total():\n    return {}().area()\n"
    root = make_project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/shapes.py": "class Square:\n    def area(self):\n        return 1\n\n\nclass Circle:\n    def area(self):\n        return 2\n",
        "pkg/use.py": use.format("Square"),
    })
    index = index_of(root)
    index.load()
    graph = index.graph
    assert graph.resolve_expression("pkg/use.py", "?.area", 5) == "s:pkg/shapes.py:Square/area"
    assert "_lines" not in graph.__getstate__()
    (root / "pkg/use.py").write_text(use.format("Circle"), encoding="utf-8")
    assert index.catch_up()[0] == ["pkg/use.py"]
    assert graph.resolve_expression("pkg/use.py", "?.area", 5) == "s:pkg/shapes.py:Circle/area"
    copy = pickle.loads(pickle.dumps(graph))  # a snapshot read back: its indexes are made again on use
    assert copy.resolve_expression("pkg/use.py", "?.area", 5) == "s:pkg/shapes.py:Circle/area"
    copy.release()  # a released graph keeps no file's facts through its indexes
    assert "_lines" not in copy.__dict__
    index.close()
