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


# -- the program pyright-family servers are given --------------------------------------------


def test_no_generated_program_without_a_narrowing_config_or_a_src_layout(tmp_path: Path) -> None:
    from lsp_pool.pyright_config import whole_workspace_config

    (tmp_path / "pyproject.toml").write_text("[tool.pyright]\ntypeCheckingMode = 'strict'\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    assert whole_workspace_config(tmp_path) is None
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "__init__.py").write_text("")  # a package called src is imported as src
    (tmp_path / "src" / "tool.py").write_text("")
    assert whole_workspace_config(tmp_path) is None


def test_a_src_layout_is_given_to_the_server_as_an_import_root(tmp_path: Path) -> None:
    """Without it, basedpyright resolved the tests' ``import cachetools`` to typeshed's stubs."""
    import json

    from lsp_pool.pyright_config import whole_workspace_config

    (tmp_path / "src" / "cachetools").mkdir(parents=True)
    (tmp_path / "src" / "cachetools" / "__init__.py").write_text("")
    program = whole_workspace_config(tmp_path)
    assert program is not None and program.narrowed_by is None
    config = json.loads(program.path.read_text())
    assert "extends" not in config and config["include"] == [str(tmp_path)]
    assert config["executionEnvironments"] == [{"root": str(tmp_path), "extraPaths": [str(tmp_path / "src")]}]


def test_a_narrowing_config_keeps_its_own_extra_paths_beside_src(tmp_path: Path) -> None:
    import json

    from lsp_pool.pyright_config import whole_workspace_config

    (tmp_path / "pyproject.toml").write_text('[tool.basedpyright]\ninclude = ["src/pkg"]\nextraPaths = ["vendor"]\n')
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("")
    program = whole_workspace_config(tmp_path)
    assert program is not None and program.narrowed_by == "pyproject.toml sets include"
    config = json.loads(program.path.read_text())
    assert config["extends"] == str(tmp_path / "pyproject.toml")
    assert config["executionEnvironments"][-1]["extraPaths"] == [str((tmp_path / "vendor").resolve()), str(tmp_path / "src")]


def test_a_planted_notes_file_never_fails_a_command_and_is_never_followed(tmp_path: Path) -> None:
    """``.graft/servers/notes-said.txt`` shipped as a symlink: the note is said, nothing is written through it."""
    from lsp_pool.said_once import first_time

    outside = tmp_path / "outside.txt"
    outside.write_text("kept\n")
    root = tmp_path / "ws"
    (root / ".graft" / "servers").mkdir(parents=True)
    (root / ".graft" / "servers" / "notes-said.txt").symlink_to(outside)
    assert first_time(root, "a note") and first_time(root, "a note")
    assert outside.read_text() == "kept\n"
