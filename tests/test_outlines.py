"""Expected outline of every fixture file, as data in fixtures/expected/outlines/.

To accept a deliberate change, run with GRAFT_UPDATE_GOLDENS=1 and review the diff.
"""

from __future__ import annotations

import os

import pytest

from engine.api import Engine
from engine.workspace import Workspace
from tests.conftest import EXPECTED, SAMPLE
from tests.outline_golden import render

GOLDENS = EXPECTED / "outlines"
SOURCE_FILES = [
    "shop/__init__.py",
    "shop/models.py",
    "shop/pricing.py",
    "shop/util.py",
    "tests/conftest.py",
    "tests/test_shop.py",
    "web/cart.ts",
    "web/format.ts",
    "web/widget.tsx",
    "web/legacy.js",
    "go/inventory/inventory.go",
    "go/inventory/restock.go",
    "rust/src/lib.rs",
    "native/geometry.h",
    "native/geometry.c",
    "native/labels.c",
    "native/shapes.cpp",
    "java/com/example/Ledger.java",
    "csharp/Order.cs",
    "scripts/deploy.rb",
]


@pytest.mark.parametrize("relative", SOURCE_FILES)
def test_outline_matches_expected(relative: str) -> None:
    engine = Engine(Workspace(SAMPLE))
    actual = render(engine.outline(relative))
    golden = GOLDENS / (relative + ".txt")
    if os.environ.get("GRAFT_UPDATE_GOLDENS"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(actual, encoding="utf-8")
    assert golden.exists(), f"no expected outline for {relative}; create it with GRAFT_UPDATE_GOLDENS=1"
    assert actual == golden.read_text(encoding="utf-8")


def test_every_fixture_source_file_has_an_expected_outline() -> None:
    engine = Engine(Workspace(SAMPLE))
    listed = {f.file for f in engine.symbols().files}
    assert listed == set(SOURCE_FILES)


def test_goldens_are_not_stale() -> None:
    on_disk = {str(p.relative_to(GOLDENS))[: -len(".txt")] for p in GOLDENS.rglob("*.txt")}
    assert on_disk == set(SOURCE_FILES)
