"""ARCHITECTURE.md stays a short, true map: under its size limit, naming only paths that exist."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import REPO

ARCHITECTURE_LIMIT_BYTES = 10_240
"""A map a newcomer reads in one sitting; measurements and history belong in benchmarks/RESULTS.md."""

WORKSPACE_STATE = (".graft", ".git/")
"""Paths in a user's workspace that the map describes (codegraft's state, git's), not files of this repository."""

_PATH_CHARACTERS = re.compile(r"[\w./-]+")
_FILE_NAME = re.compile(r"[\w.-]+\.(?:py|md|toml|json)")


def backticked(text: str) -> list[str]:
    return re.findall(r"`([^`\n]+)`", text)


def missing_paths(text: str, root: Path) -> list[str]:
    """The repository paths ``text`` names in backticks that do not exist under ``root``: a
    token with a slash is a path from the root; a bare file name must be some file's name."""
    file_names = {path.name for path in root.rglob("*") if ".venv" not in path.parts and ".git" not in path.parts}
    missing = []
    for token in backticked(text):
        if not _PATH_CHARACTERS.fullmatch(token) or token.startswith(WORKSPACE_STATE):
            continue
        if "/" in token:
            if not (root / token).exists():
                missing.append(token)
        elif _FILE_NAME.fullmatch(token) and token not in file_names:
            missing.append(token)
    return missing


def test_architecture_stays_under_its_size_limit() -> None:
    size = len((REPO / "ARCHITECTURE.md").read_bytes())
    assert size <= ARCHITECTURE_LIMIT_BYTES, f"ARCHITECTURE.md is {size} bytes, over {ARCHITECTURE_LIMIT_BYTES}: shorten it"


def test_architecture_names_only_paths_that_exist() -> None:
    assert missing_paths((REPO / "ARCHITECTURE.md").read_text(encoding="utf-8"), REPO) == []


def test_the_path_check_sees_a_missing_path(tmp_path: Path) -> None:
    """Guard against a check that passes because it recognises no path at all."""
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "api.py").write_text("", encoding="utf-8")
    text = "`engine/api.py`, `engine/gone.py`, `api.py`, `gone.py`, `.graft/cache`, `FILE:LINE:COL`, `graft batch`"
    assert missing_paths(text, tmp_path) == ["engine/gone.py", "gone.py"]
