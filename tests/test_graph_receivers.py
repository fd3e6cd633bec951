"""Method calls through instances: the graph infers what a receiver holds from annotations,
constructors, annotated returns and loops, and counts the calls whose receiver it cannot type."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.graph import GraphQueries, ProjectIndex
from engine.workspace import Workspace
from tests.test_graph import edges, make_project

MODELS = """\
from __future__ import annotations

from typing import Iterable, Optional, Self


class Base:
    def describe(self) -> str:
        return "base"


class Order(Base):
    def total(self) -> int:
        return 1

    @classmethod
    def create(cls) -> Self:
        return cls()


class Segment:
    def length(self) -> int:
        return 2


class Box:
    def total(self) -> int:
        return 3


def make_order() -> Order:
    return Order()


def make_segments() -> list[Segment]:
    return [Segment()]


def unannotated():
    return Order()
"""


def calls_of(root: Path, files: dict[str, str]) -> list[str]:
    """The project's ``calls`` edges as ``caller -> callee`` (lines left out)."""
    index = ProjectIndex(Workspace(make_project(root, {"app/__init__.py": "", "app/models.py": MODELS, **files})), jobs=1)
    try:
        index.load()
        return sorted(row.split(" line ")[0].removeprefix("calls ") for row in edges(index) if row.startswith("calls "))
    finally:
        index.close()


# Each case: a use module's text, and the calls edge it must produce (from app/use.py:run).
INFERENCE_FORMS = {
    "annotated parameter": ("def run(order: Order):\n    order.total()\n", "app/models.py:Order/total"),
    "Optional parameter": ("def run(order: Optional[Order] = None):\n    order.total()\n", "app/models.py:Order/total"),
    "union with None, quoted": ("def run(order: 'Order | None'):\n    order.total()\n", "app/models.py:Order/total"),
    "module-qualified annotation": ("from app import models\n\ndef run(order: models.Order):\n    order.total()\n",
                                    "app/models.py:Order/total"),
    "annotated local": ("def run():\n    order: Order = get()\n    order.total()\n", "app/models.py:Order/total"),
    "local from a constructor": ("def run():\n    order = Order()\n    order.total()\n", "app/models.py:Order/total"),
    "local from a function with an annotated return": ("def run():\n    order = make_order()\n    order.total()\n",
                                                       "app/models.py:Order/total"),
    "inherited method": ("def run(order: Order):\n    order.describe()\n", "app/models.py:Base/describe"),
    "loop over list[...]": ("def run(segments: list[Segment]):\n    for s in segments:\n        s.length()\n",
                            "app/models.py:Segment/length"),
    "loop over Iterable[...] through sorted()": (
        "def run(segments: Iterable[Segment]):\n    for s in sorted(segments):\n        s.length()\n", "app/models.py:Segment/length"),
    "loop over enumerate()": ("def run(segments: list[Segment]):\n    for i, s in enumerate(segments):\n        s.length()\n",
                              "app/models.py:Segment/length"),
    "loop over an annotated return": ("def run():\n    for s in make_segments():\n        s.length()\n",
                                      "app/models.py:Segment/length"),
    "comprehension": ("def run(segments: list[Segment]):\n    return [s.length() for s in segments]\n",
                      "app/models.py:Segment/length"),
    "a call's result": ("def run():\n    make_order().total()\n", "app/models.py:Order/total"),
    "a classmethod returning Self": ("def run():\n    Order.create().total()\n", "app/models.py:Order/total"),
    "a method of a typed value called": ("def run(order: Order):\n    again = order.create()\n    again.total()\n",
                                         "app/models.py:Order/total"),
}


@pytest.mark.parametrize("case", INFERENCE_FORMS, ids=list(INFERENCE_FORMS))
def test_each_inference_form_gives_a_calls_edge_to_the_method(tmp_path: Path, case: str) -> None:
    body, method = INFERENCE_FORMS[case]
    imports = "from app.models import Iterable, Optional, Order, Segment, get, make_order, make_segments\n\n"
    found = calls_of(tmp_path, {"app/use.py": imports + body})
    assert f"app/use.py:run -> {method}" in found, found
    # The other class with a same-named method is not reached.
    assert "app/use.py:run -> app/models.py:Box/total" not in found


def test_attributes_of_self_are_typed_by_the_class(tmp_path: Path) -> None:
    service = """\
from app.models import Box, Order, Segment


class Service:
    box: Box

    def __init__(self, order: Order) -> None:
        self.order = order
        self.segment = Segment()
        self.pending: list[Segment] = []

    def run(self) -> None:
        self.order.total()
        self.box.total()
        self.segment.length()

    def lengths(self) -> None:
        for s in self.pending:
            s.length()
"""
    found = calls_of(tmp_path, {"app/service.py": service})
    assert {"app/service.py:Service/run -> app/models.py:Order/total", "app/service.py:Service/run -> app/models.py:Box/total",
            "app/service.py:Service/run -> app/models.py:Segment/length",
            "app/service.py:Service/lengths -> app/models.py:Segment/length"} <= set(found), found


def test_a_parameter_shadowing_a_module_resolves_through_its_annotation(tmp_path: Path) -> None:
    files = {
        "app/util.py": "def total():\n    return 0\n",
        "app/use.py": "from app import util\nfrom app.models import Order\n\n\ndef run(util: Order):\n    util.total()\n",
    }
    found = calls_of(tmp_path, files)
    assert "app/use.py:run -> app/models.py:Order/total" in found
    assert "app/use.py:run -> app/util.py:total" not in found


def queries_for(root: Path, files: dict[str, str]) -> tuple[ProjectIndex, GraphQueries]:
    index = ProjectIndex(Workspace(make_project(root, {"app/__init__.py": "", "app/models.py": MODELS, **files})), jobs=1)
    index.load()
    return index, GraphQueries(index.graph)


def test_impact_and_callers_of_a_method_called_through_an_annotated_parameter(tmp_path: Path) -> None:
    sibling = """\
from app.models import Order


class Report:
    def render(self, order: Order) -> int:
        return order.total()

    def summary(self, order: Order) -> int:
        return self.render(order)
"""
    index, queries = queries_for(tmp_path, {"app/report.py": sibling})
    try:
        impact = [(r.node.address, r.distance) for r in queries.impact("app/models.py:Order/total")]
        callers = [e.source.address for e in queries.callers("app/models.py:Order/total")]
        unresolved = queries.unresolved_calls("app/models.py:Order/total")
    finally:
        index.close()
    assert ("app/report.py:Report/render", 1) in impact and ("app/report.py:Report/summary", 2) in impact
    assert callers == ["app/report.py:Report/render"]
    assert unresolved == []


def test_receivers_of_unknown_type_are_counted_not_ignored(tmp_path: Path) -> None:
    use = """\
from pathlib import Path

from app.models import Order, unannotated


def untyped(order):
    return order.total()


def from_unannotated():
    value = unannotated()
    return value.total()


def subscripted(orders: list[Order]):
    return orders[0].total()


def known(order: Order, path: Path):
    path.exists()
    ", ".join([])
    return order.total()
"""
    index, queries = queries_for(tmp_path, {"app/use.py": use})
    try:
        callers = sorted(e.source.address for e in queries.callers("app/models.py:Order/total"))
        unresolved = queries.unresolved_calls("app/models.py:Order/total")
        notes = queries.call_notes("app/models.py:Order/total")
        of_class = queries.unresolved_calls("app/models.py:Order")
        library = queries.project.unresolved_calls(["exists", "join"])
    finally:
        index.close()
    assert callers == ["app/use.py:known"]
    assert [(u.method, u.places) for u in unresolved] == [("total", (("app/use.py", 7), ("app/use.py", 12), ("app/use.py", 16)))]
    assert notes == ["3 call(s) of .total() on receivers of unknown type, which may reach it: "
                     "app/use.py:7, app/use.py:12, app/use.py:16"]
    assert [u.method for u in of_class] == ["total"]  # a class's answer covers its methods
    assert library == {}  # a library's type is known, just not the project's: nothing to count


def test_a_changed_return_annotation_moves_the_edges_of_the_files_that_call_through_it(tmp_path: Path) -> None:
    files = {"app/make.py": "from app.models import Order, Box\n\n\ndef make() -> Order:\n    return Order()\n",
             "app/use.py": "from app.make import make\n\n\ndef run():\n    made = make()\n    made.total()\n"}
    root = make_project(tmp_path, {"app/__init__.py": "", "app/models.py": MODELS, **files})
    index = ProjectIndex(Workspace(root), jobs=1)
    try:
        index.load()
        before = [row for row in edges(index) if row.startswith("calls app/use.py:run")]
        (root / "app/make.py").write_text(files["app/make.py"].replace("-> Order", "-> Box"), encoding="utf-8")
        index.refresh(["app/make.py"])
        after = [row for row in edges(index) if row.startswith("calls app/use.py:run")]
    finally:
        index.close()
    assert any("-> app/models.py:Order/total" in row for row in before)
    assert any("-> app/models.py:Box/total" in row for row in after) and not any("Order/total" in row for row in after)


def test_long_chains_and_self_references_end_as_unknown_not_in_a_crash(tmp_path: Path) -> None:
    chain = "".join(f"    x{n} = x{n - 1}\n" for n in range(1, 2000))
    use = ("from app.models import Order\n\n\ndef run():\n    x0 = Order()\n" + chain + "    x1999.total()\n"
           "    y = y.next()\n    y.total()\n    [x.total() for x in x]\n    x1.total()\n")
    index, queries = queries_for(tmp_path, {"app/use.py": use})
    try:
        callers = [e.source.address for e in queries.callers("app/models.py:Order/total")]
        unresolved = queries.unresolved_calls("app/models.py:Order/total")
    finally:
        index.close()
    assert callers == ["app/use.py:run"]  # x1 = x0 = Order(): two steps are followed
    assert [line for _path, line in unresolved[0].places] == [2005, 2007, 2008]


_TRICKY_CALLEES = """\
import os.path
from models import Order


def use(order: Order, items: list[Order], flag):
    order.total()
    os.path.join("a", "b")
    True.conjugate()
    None.__class__()
    (1.5).hex()
    "x".join(["a"])
    self_like = order
    self_like.total()
    items[0].total()
    flag.value.total()
    [o for o in items][0].total()


class Holder:
    def __init__(self, order: Order) -> None:
        self.order = order

    def go(self):
        self.order.total()
        self.order.child.total()
        super().go()
"""


@pytest.mark.parametrize("text", [MODELS, _TRICKY_CALLEES], ids=["models", "tricky"])
def test_a_receiver_read_from_the_callee_text_is_the_one_read_from_the_nodes(text: str) -> None:
    """The fast path (a dotted callee's receiver read from its text) answers as the node walk does."""
    from tree_sitter import QueryCursor

    from engine.graph.facts import _PYTHON_QUERY, _query, _span
    from engine.graph.receivers import Receivers, node_text
    from engine.extract import SymbolExtractor

    tree = SymbolExtractor()._tree.parse("python", text.encode())
    captures = {name: sorted(nodes, key=_span) for name, nodes in
                QueryCursor(_query("python", _PYTHON_QUERY)).captures(tree.root_node).items()}
    from_text, from_nodes = Receivers(captures), Receivers(captures)
    callees = captures["callee"]
    assert callees
    assert [from_text.receiver(node, node_text(node)) for node in callees] == [from_nodes.receiver(node) for node in callees]
