"""Edges share their attribute and kind dicts (engine/graph/edges.py): equal edges take one dict,
and a change to one node pair never shows on another, in memory or after a snapshot; and the
file-level importers are read off that adjacency."""

from __future__ import annotations

import pickle
from pathlib import Path

import networkx as nx
import pytest

from engine.api import Engine
from engine.graph import GraphQueries, ProjectIndex
from engine.graph.edges import SharedEdges
from engine.graph.safe_pickle import safe_loads
from engine.workspace import Workspace
from tests.test_graph import make_project


def test_equal_edges_share_their_dicts_and_changes_stay_on_their_pair() -> None:
    graph = nx.MultiDiGraph()
    edges = SharedEdges(graph)
    edges.link("a", "f", "calls", "ast", "medium", 3)
    edges.link("b", "f", "calls", "ast", "medium", 3)
    assert graph._adj["a"]["f"] is graph._adj["b"]["f"] is graph._pred["f"]["a"]
    edges.link("a", "f", "imports", "ast", "high", 1)  # a second kind on one pair: a new dict for it alone
    assert set(graph._adj["a"]["f"]) == {"calls", "imports"} and set(graph._adj["b"]["f"]) == {"calls"}
    assert graph._pred["f"]["a"] is graph._adj["a"]["f"]
    edges.unlink([("a", "f", "calls"), ("a", "f", "absent"), ("x", "y", "calls")])
    assert set(graph["a"]["f"]) == {"imports"} and graph["b"]["f"]["calls"] == {"source": "ast", "confidence": "medium", "line": 3}
    edges.unlink([("a", "f", "imports")])
    assert not graph.has_edge("a", "f") and "a" not in graph._pred["f"] and graph.has_edge("b", "f", key="calls")


def test_sharing_survives_a_snapshot_and_so_does_the_isolation() -> None:
    graph = nx.MultiDiGraph()
    edges = SharedEdges(graph)
    for source in ("a", "b", "c"):
        edges.link(source, "f", "calls", "ast", "medium", 7)
    copy: SharedEdges = pickle.loads(pickle.dumps(edges))
    restored = copy.graph
    assert restored._adj["a"]["f"] is restored._adj["b"]["f"] is restored._adj["c"]["f"]
    copy.unlink([("b", "f", "calls")])
    copy.link("c", "f", "references", "lsp", "high", 7)
    assert restored.has_edge("a", "f", key="calls") and not restored.has_edge("b", "f")
    assert set(restored["c"]["f"]) == {"calls", "references"} and set(restored["a"]["f"]) == {"calls"}


def test_re_indexing_one_file_leaves_the_equal_edges_of_another(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("def f():\n    return 1\n")
    caller = "from m import f\n\n\ndef g():\n    return f()\n"
    (tmp_path / "a.py").write_text(caller)
    (tmp_path / "b.py").write_text(caller)
    engine = Engine(Workspace(tmp_path))
    try:
        engine.index()
        graph = engine.graph().graph
        assert graph._adj["s:a.py:g"]["s:m.py:f"] is graph._adj["s:b.py:g"]["s:m.py:f"]  # one dict for both
        (tmp_path / "a.py").write_text("def g():\n    return 2\n")
        engine.index()
        engine.index()  # with or without a watcher, the change is in
        graph = engine.graph().graph
        assert not graph.has_edge("s:a.py:g", "s:m.py:f") and not graph.has_edge("f:a.py", "f:m.py")
        assert graph.has_edge("s:b.py:g", "s:m.py:f", key="calls") and graph.has_edge("f:b.py", "f:m.py", key="imports")
    finally:
        engine.close()
    # and from the snapshot, in a new engine
    engine = Engine(Workspace(tmp_path))
    try:
        assert engine.index().mode == "warm"
        graph = engine.graph().graph
        assert graph.has_edge("s:b.py:g", "s:m.py:f", key="calls") and not graph.has_edge("s:a.py:g", "s:m.py:f")
    finally:
        engine.close()


def test_the_snapshot_loader_accepts_the_edge_store() -> None:
    edges = SharedEdges(nx.MultiDiGraph())
    edges.link("a", "b", "imports", "ast", "high", 1)
    assert safe_loads(pickle.dumps(edges)).graph.has_edge("a", "b", key="imports")


def test_importing_files_reads_the_adjacency_and_answers_as_the_edges_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The files importing each file, as every ``imports`` edge into the file or its symbols says;
    read off the adjacency, without a networkx edge view per symbol (the apply's check asks this
    for every importer it walks)."""
    index = ProjectIndex(Workspace(make_project(tmp_path, {
        "pkg/__init__.py": "from pkg.core import Thing\n",
        "pkg/core.py": "class Thing:\n    def run(self):\n        return 1\n\ndef helper():\n    return Thing()\n",
        "pkg/use.py": "from pkg.core import helper, Thing\nimport pkg.core\n",
        "app.py": "from pkg import Thing\nfrom pkg.use import helper\n",
    })))
    index.load()
    queries = GraphQueries(index.graph)
    expected = {}
    for path in index.graph.facts:
        contains = nx.subgraph_view(queries.graph, filter_edge=lambda _u, _v, kind: kind == "contains")
        owned = {f"f:{path}", *nx.descendants(contains, f"f:{path}")}
        expected[path] = sorted({source[2:].split(":", 1)[0] for node in owned
                                 for source, _target, kind in queries.graph.in_edges(node, keys=True) if kind == "imports"} - {path})
    assert expected["pkg/core.py"] == ["app.py", "pkg/__init__.py", "pkg/use.py"] and expected["pkg/use.py"] == ["app.py"]

    def no_view(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("an edge view was made")
    for view in ("in_edges", "succ", "pred"):
        monkeypatch.setattr(type(queries.graph), view, property(no_view))
    assert {path: queries.importing_files([path]) for path in index.graph.facts} == expected
