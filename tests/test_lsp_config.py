"""Server registry and project configuration ([tool.graft] / .graft.toml)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.errors import UsageError
from lsp_pool.config import load_config
from lsp_pool.registry import DEFAULT_PREFERENCE, SPECS, SPECS_BY_ID, locate


def test_every_language_with_a_preference_has_specs_that_serve_it() -> None:
    for language, ids in DEFAULT_PREFERENCE.items():
        for server_id in ids:
            assert language in SPECS_BY_ID[server_id].languages
    assert len({spec.id for spec in SPECS}) == len(SPECS)


def test_basedpyright_is_always_found_as_a_dependency() -> None:
    command = locate(SPECS_BY_ID["basedpyright"])
    assert command is not None and command[-1] == "--stdio"


def test_defaults_without_configuration(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert config.preference["python"][0] == "basedpyright" and config.source == "defaults"


def test_pyproject_tool_graft(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.graft]\nidle_timeout = 60\nreadiness_budget = 5.5\n[tool.graft.servers]\npython = ["jedi-language-server", "basedpyright"]\n'
    )
    config = load_config(tmp_path)
    assert config.preference["python"] == ("jedi-language-server", "basedpyright")
    assert (config.idle_timeout, config.readiness_budget, config.request_timeout) == (60.0, 5.5, None)


def test_graft_toml_wins_over_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.graft.servers]\npython = "pylsp"\n')
    (tmp_path / ".graft.toml").write_text('[servers]\npython = "ty"\n')
    assert load_config(tmp_path).preference["python"] == ("ty",)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[servers]\npython = "nonesuch"\n', "unknown server 'nonesuch'; known: basedpyright"),
        ('[servers]\npython = "gopls"\n', "gopls does not serve python"),
        ("idle_timeout = -1\n", "idle_timeout must be a positive number of seconds"),
        ("colour = 1\n", "unknown setting(s) colour"),
        ("servers = [", "is not valid TOML"),
    ],
)
def test_bad_configuration_is_a_clear_usage_error(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / ".graft.toml").write_text(text)
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_config(tmp_path)
