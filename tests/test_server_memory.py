"""A server past its memory ceiling is restarted between requests, and answers on as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.choices import SourcePreference
from engine.errors import UsageError
from engine.opening import open_engine
from engine.ports import ServerStatus
from engine.positions import Position
from engine.symbols import Source
from lsp_pool.config import load_config
from lsp_pool.registry import SPECS_BY_ID, locate


def test_the_ceiling_is_configurable_and_checked(tmp_path: Path) -> None:
    assert load_config(tmp_path).server_memory_limit_mb == 3072.0
    (tmp_path / ".graft.toml").write_text("server_memory_limit_mb = 512\n")
    assert load_config(tmp_path).server_memory_limit_mb == 512.0
    (tmp_path / ".graft.toml").write_text("server_memory_limit_mb = 0\n")
    assert load_config(tmp_path).server_memory_limit_mb == 0.0
    (tmp_path / ".graft.toml").write_text('server_memory_limit_mb = "lots"\n')
    with pytest.raises(UsageError, match="server_memory_limit_mb must be a number of megabytes"):
        load_config(tmp_path)


@pytest.mark.skipif(locate(SPECS_BY_ID["basedpyright"]) is None, reason="basedpyright is not installed")
def test_a_server_past_a_tiny_ceiling_is_restarted_between_calls_and_answers_the_same(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / "shop").mkdir(parents=True)
    (root / "shop" / "__init__.py").write_text("")
    (root / "shop" / "pricing.py").write_text(
        "def apply_discount(amount: int, percent: int) -> int:\n    return amount * (100 - percent) // 100\n")
    (root / "shop" / "cart.py").write_text(
        "from shop.pricing import apply_discount\n\n\ndef total(amounts: list[int]) -> int:\n"
        "    return sum(apply_discount(a, 10) for a in amounts) + apply_discount(1, 1)\n")
    (root / "pyproject.toml").write_text("[tool.graft]\nserver_memory_limit_mb = 1\n")
    engine = open_engine(root, SourcePreference.LSP)
    try:
        services = engine.services
        assert services is not None
        source = engine.workspace.read("shop/pricing.py")
        position = Position(0, 5)  # apply_discount's name
        # One pool call each: the first starts the server (nothing to look at before it runs).
        before = services.references(source, position)
        first = _basedpyright(engine)
        assert first.restarts == 0 and first.pid is not None
        after = services.references(source, position)  # looked at first, found past 1 MB: restarted
        status = _basedpyright(engine)
        assert status.restarts == 1 and status.pid not in (None, first.pid), status
        assert "past its memory ceiling" in status.detail and "over 1 MB" in status.detail, status.detail
        assert before.server == after.server == "basedpyright" and before.complete and after.complete
        assert sorted(map(str, after.value)) == sorted(map(str, before.value)) and len(before.value) == 4
        # Not restarted again at once: the next calls are answered by the same process.
        assert engine.outline("shop/cart.py").source is Source.LSP
        assert len(engine.references("shop/pricing.py:apply_discount").locations) == 4
        assert (_basedpyright(engine).restarts, _basedpyright(engine).pid) == (1, status.pid)
    finally:
        engine.close()


def _basedpyright(engine: object) -> ServerStatus:
    services = getattr(engine, "services")
    found: ServerStatus = next(s for s in services.status() if s.id == "basedpyright")
    return found
