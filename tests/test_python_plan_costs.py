"""Python extract and inline resolve a file's LibCST metadata (scopes above all: most of a plan's
time) once per content, however many plans of an unchanged file a long-lived engine makes, and
once per plan where the policy and the pass both read the tree (issue 44). Counted, never timed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import libcst as cst
import pytest
from libcst.metadata import ScopeProvider

from engine.api import Engine, SourcePreference
from engine.refactor.operations import build
from engine.workspace import Workspace

CALC = '''def report(orders):
    count = len(orders)
    return count


def label(first: str):
    title = first.strip()
    return title
'''


@pytest.fixture
def scope_resolutions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The code of every module LibCST resolves scopes for, in order, starting with no tree kept:
    a test before it in the same worker may have planned the same content at the same path (the
    fixture 'python-inline-function-removes-the-imports-only-it-used' has this file's TOOL)."""
    from engine.refactor.python import span_nodes

    span_nodes._KEPT.clear()
    resolved: list[str] = []
    original = ScopeProvider.visit_Module

    def counting(self: ScopeProvider, node: cst.Module) -> object:
        resolved.append(node.code)
        return original(self, node)

    counting.__name__ = "visit_Module"  # LibCST's batched visit finds its methods by their names
    monkeypatch.setattr(ScopeProvider, "visit_Module", counting)
    return resolved


def test_a_files_scopes_are_resolved_once_per_content_across_plans(tmp_path: Path, scope_resolutions: list[str]) -> None:
    (tmp_path / "calc.py").write_text(CALC, encoding="utf-8")
    engine = Engine(Workspace(tmp_path), source=SourcePreference.AST)
    try:
        first = engine.plan(build("inline", {"address": "calc.py:report", "match": "count ="}))
        second = engine.plan(build("inline", {"address": "calc.py:label", "match": "title ="}))
        assert first.files == second.files == ["calc.py"]
        assert scope_resolutions == [CALC]  # two plans, each reading the tree twice: one resolution

        changed = CALC.replace("orders", "items")
        (tmp_path / "calc.py").write_text(changed, encoding="utf-8")
        engine.refresh_from_disk()
        engine.plan(build("inline", {"address": "calc.py:report", "match": "count ="}))
        assert scope_resolutions == [CALC, changed]  # another content: resolved afresh, not the kept tree's answer
    finally:
        engine.close()


VARIED = '''import os as _os, sys
from . import x as y


@decorator(arg=1)
class Shape(Base, metaclass=Meta):
    """Doc."""
    size: int = 3

    async def area(self, *args: int, key=None, **rest) -> "float":
        async with lock as held, other:
            async for item in self.items():
                yield (n := item ** 2) if n else -n
        return await f"{self.size!r:>{width}}" + "raw" "concat"

    def pick(self, value):
        match value:
            case [1, *others] | {"k": _} if others:
                pass
            case Point(x=0, y=yy) as pt:
                del pt
        try:
            raise ValueError from None
        except* (TypeError, KeyError) as errors:
            global sys
        finally:
            lambda a, /, b=2, *, c: a[1:2, ::3]
        return {k: v for k, v in rest.items() if k} | {*s} , [x async for x in y]
'''


def test_parents_read_off_fields_are_libcsts(tmp_path: Path) -> None:
    from libcst.metadata import MetadataWrapper, ParentNodeProvider

    from engine.refactor.python.span_nodes import parents_of

    for code in (VARIED, (Path(__file__).parents[1] / "engine/refactor/python/pure_values.py").read_text(encoding="utf-8")):
        wrapper = MetadataWrapper(cst.parse_module(code), unsafe_skip_copy=True)
        expected = wrapper.resolve(ParentNodeProvider)
        found = parents_of(wrapper.module)
        assert found.keys() == expected.keys()
        assert all(found[node] is parent for node, parent in expected.items())


def test_a_trees_parents_are_read_on_the_walk_that_lists_its_nodes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk that lists the nodes in source order gives their parents too (LibCST's own), and
    no second walk reads them off every field (issue 44)."""
    from libcst.metadata import MetadataWrapper, ParentNodeProvider

    from engine.refactor.python import span_nodes

    for number, code in enumerate((VARIED, (Path(__file__).parents[1] / "engine/refactor/python/pure_values.py").read_text(encoding="utf-8"))):
        (tmp_path / f"m{number}.py").write_text(code, encoding="utf-8")
        walks: list[int] = []
        original = span_nodes.parents_of

        def counted(module: Any) -> Any:
            walks.append(1)
            return original(module)

        monkeypatch.setattr(span_nodes, "parents_of", counted)
        tree = span_nodes._resolved_tree(Workspace(tmp_path).read(f"m{number}.py"))
        monkeypatch.undo()
        assert walks == []
        expected = MetadataWrapper(tree.module, unsafe_skip_copy=True).resolve(ParentNodeProvider)
        assert tree.parents.keys() == expected.keys()
        assert all(tree.parents[node] is parent for node, parent in expected.items())
        assert tree.source_order is not None and list(tree.source_order) == list(span_nodes.nodes_within(tree.module))


def test_kept_trees_are_bounded_by_their_sources_size() -> None:
    from engine.refactor.python.kept_trees import KeptTrees

    built: list[str] = []
    kept: KeptTrees[str] = KeptTrees(limit_chars=25)

    def get(name: str, chars: int) -> str:
        def build() -> str:
            built.append(name)
            return name
        return kept.get((name, "sha"), chars, build)

    get("a", 10), get("b", 10), get("a", 10)  # a is used again: b is now the least recently used
    get("c", 10)  # 30 characters: b goes
    get("a", 10), get("c", 10), get("b", 10)
    assert built == ["a", "b", "c", "b"]
    get("huge", 100)  # over the limit alone: kept (the latest), everything else goes
    get("huge", 100), get("a", 10)
    assert built == ["a", "b", "c", "b", "huge", "a"]


CONTINUED = (
    "# a header comment\n\n"
    "import os, \\\n    sys\n\n"
    "x = 1 + \\\n    2\n"
    'TEXT = """two\n\nlines"""\n'
    "\x0c\n"
    "def f(a,\n      b):\n    return (a +\n            b)  # trailing\n"
    "# a footer comment\n"
)


@pytest.mark.parametrize("code", [VARIED, VARIED.replace("\n", "\r\n"), "# header\n\n" + VARIED.rstrip("\n"), CONTINUED,
                                  CONTINUED.replace("\n", "\r")])
def test_positions_worked_out_per_statement_are_libcsts_in_any_order(code: str) -> None:
    import random

    from libcst.metadata import MetadataWrapper, PositionProvider

    from engine.refactor.python.span_nodes import nodes_within, parents_of
    from engine.refactor.python.statement_positions import StatementPositions

    whole = cst.parse_module(code)
    expected = MetadataWrapper(whole, unsafe_skip_copy=True).resolve(PositionProvider)
    module = cst.parse_module(code)
    positions = StatementPositions(module, parents_of(module))
    pairs = list(zip(nodes_within(whole), nodes_within(module), strict=True))
    random.Random(44).shuffle(pairs)  # statements worked out one by one, in no order
    for theirs, ours in pairs:
        assert (theirs in expected) == (ours in positions)
        assert expected.get(theirs) == positions.get(ours), type(ours).__name__
    assert len(positions) == len(expected)


@pytest.mark.parametrize("operation, fields", [
    ("inline", {"address": "calc.py:report", "match": "count ="}),
    # The statements a span holds are looked for in the top-level statements on its lines only.
    ("extract-function", {"address": "calc.py:2:5-2:24", "new_name": "counted"}),
])
def test_a_plan_works_out_positions_of_the_statements_it_reads_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    operation: str, fields: dict[str, str]) -> None:
    from libcst.metadata import PositionProvider

    from engine.refactor.python import span_nodes

    span_nodes._KEPT.clear()  # the other case (or another test in this worker) planned the same content
    written: list[str] = []
    original = PositionProvider._gen_impl

    def recording(self: PositionProvider, module: cst.Module) -> None:
        written.append(module.code)
        original(self, module)

    monkeypatch.setattr(PositionProvider, "_gen_impl", recording)
    others = "".join(f"\n\ndef other_{number}(x):\n    return x + {number}\n" for number in range(5))
    (tmp_path / "calc.py").write_text(CALC + others, encoding="utf-8")
    engine = Engine(Workspace(tmp_path), source=SourcePreference.AST)
    try:
        engine.plan(build(operation, fields))
    finally:
        engine.close()
    assert written and all("def report" in code and "other_" not in code for code in written)


@pytest.fixture
def batched_walks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per batched walk of a tree that LibCST's metadata wrapper makes."""
    import libcst.metadata.wrapper as wrapper_module

    walks: list[int] = []
    original = wrapper_module.visit_batched

    def counting(*args: object, **kwargs: object) -> object:
        walks.append(1)
        return original(*args, **kwargs)  # type: ignore[arg-type, type-var]

    monkeypatch.setattr(wrapper_module, "visit_batched", counting)
    return walks


def test_scopes_contexts_and_the_order_of_nodes_take_no_batched_walk(tmp_path: Path, batched_walks: list[int]) -> None:
    from engine.refactor.python.span_nodes import _resolved_tree, nodes_within

    (tmp_path / "shapes.py").write_text(VARIED, encoding="utf-8")
    tree = _resolved_tree(Workspace(tmp_path).read("shapes.py"))
    assert batched_walks == []  # LibCST's own resolve_many: a batched walk per round, two here, each doing nothing
    assert tree.source_order is not None  # the nodes' order read off their fields, not walked through children
    assert tree.all_nodes == list(nodes_within(tree.module))
    assert tree.scopes.get(tree.module) is not None and tree.contexts


TOOL = '''import os
from markup import Markup


def _md(text: str) -> Markup:
    return text.upper()


def run(text):
    return _md(text) + os.sep.replace(os.sep, "!")
'''


def test_an_inline_that_prunes_imports_reads_the_files_scopes_once(tmp_path: Path, scope_resolutions: list[str],
                                                                     batched_walks: list[int]) -> None:
    """The imports an inline leaves unused are counted from the kept tree's scopes, not from the
    file parsed and resolved again, and no scope resolution walks the tree idly (issue 44)."""
    (tmp_path / "markup.py").write_text("class Markup:\n    pass\n", encoding="utf-8")
    (tmp_path / "tool.py").write_text(TOOL, encoding="utf-8")
    engine = Engine(Workspace(tmp_path), source=SourcePreference.AST)
    try:
        plan = engine.plan(build("inline", {"address": "tool.py:_md"}))
    finally:
        engine.close()
    assert any("Markup" in warning for warning in plan.warnings)  # the import only _md used goes
    assert scope_resolutions.count(TOOL) == 1
    assert batched_walks == []


HELPER = '''def helper(x):
    y = x + 1
    return y


def first():
    return helper(1) + 1
''' + "".join(f"\n\ndef user_{number}(y):\n    z = helper({number})\n    return z + y\n" for number in range(40))


def test_inlining_at_every_call_judges_the_calls_in_source_order(tmp_path: Path) -> None:
    """The first call in the file is judged first, every time: the refusal said used to depend on
    the order of a set (cachetools' _cache was refused four ways over six runs; issue 44)."""
    from engine.errors import Refused

    (tmp_path / "calc.py").write_text(HELPER, encoding="utf-8")
    engine = Engine(Workspace(tmp_path), source=SourcePreference.AST)
    try:
        with pytest.raises(Refused) as refused:
            engine.plan(build("inline", {"address": "calc.py:helper"}))
    finally:
        engine.close()
    assert refused.value.code == "not_inlinable" and "line 7" in str(refused.value)
