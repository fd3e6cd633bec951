"""A method reached only through instances (fixtures/graph-instance-calls): ``callers`` and
``impact`` read the same resolved calls, so impact names every caller that callers names, and
what calls those callers (issue 45, item 3)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest

from engine.graph import GraphQueries, ProjectIndex
from engine.workspace import Workspace
from frontends.cli.main import main
from tests.conftest import REPO

FIXTURE = REPO / "fixtures" / "graph-instance-calls"
TOTAL = "shop/cart.py:Cart/total"

# Each form of reaching Cart.total, with the node that calls it and its distance in an impact answer.
REACHED = {
    "a local built by the constructor": ("shop/checkout.py:pay", 1),
    "a parameter annotated with the class": ("shop/checkout.py:charge", 1),
    "self in a subclass": ("shop/premium.py:PremiumCart/discounted", 1),
    "a function calling a caller (transitive)": ("shop/checkout.py:receipt", 2),
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    target = tmp_path / "graph-instance-calls"
    shutil.copytree(FIXTURE, target, ignore=shutil.ignore_patterns(".graft"))
    return target


@pytest.fixture
def queries(project: Path) -> Iterator[GraphQueries]:
    index = ProjectIndex(Workspace(project), jobs=1)
    try:
        index.load()
        yield GraphQueries(index.graph)
    finally:
        index.close()


@pytest.mark.parametrize("form", sorted(REACHED))
def test_impact_of_a_method_names_what_reaches_it_through_an_instance(queries: GraphQueries, form: str) -> None:
    caller, distance = REACHED[form]
    impact = {reached.node.address: reached.distance for reached in queries.impact(TOTAL)}
    assert impact.get(caller) == distance, f"{form}: impact of {TOTAL} was {impact}"


def test_callers_and_the_first_ring_of_impact_are_the_same_calls(queries: GraphQueries) -> None:
    callers = sorted(edge.source.address for edge in queries.callers(TOTAL))
    first_ring = sorted(reached.node.address for reached in queries.impact(TOTAL) if reached.distance == 1)
    assert callers == first_ring == sorted(caller for caller, distance in REACHED.values() if distance == 1)
    assert queries.call_notes(TOTAL) == []  # every receiver's class is said: nothing left uncounted


def test_cli_callers_and_impact_agree(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """As a user asks: ``graft --no-daemon graph callers`` and ``graph impact`` of the method."""

    def ask(query: str, key: str) -> list[dict[str, Any]]:
        code = main(["--root", str(project), "--no-daemon", "--json", "graph", query, TOTAL])
        out = capsys.readouterr().out
        assert code == 0, out
        rows: list[dict[str, Any]] = json.loads(out)[key]
        return rows

    callers = {edge["from"] for edge in ask("callers", "edges")}
    impact = {row["address"]: row["distance"] for row in ask("impact", "dependants")}
    assert callers and all(impact.get(caller) == 1 for caller in callers), (callers, impact)
    assert impact == {caller: distance for caller, distance in REACHED.values()}
