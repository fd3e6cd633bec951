"""A renamed Python module's mentions outside Python source.

Edited, because they are code that runs: entry points (``pkg.old:main`` in pyproject.toml's
``[project.scripts]``/``[project.entry-points.*]``, setup.cfg's ``[options.entry_points]``) and
the file's path in test-runner configuration (``testpaths``, ``--doctest-modules pkg/old.py``,
``--ignore=`` in pytest.ini, tox.ini, setup.cfg, pyproject.toml).

Listed, labelled, not edited, because they are prose an author owns: documentation that names
the module (mkdocstrings ``::: pkg.old``, Sphinx ``.. automodule:: pkg.old``, roles
``:mod:`pkg.old```).
"""

from __future__ import annotations

import re

from engine.edits.model import FileChange
from engine.errors import GraftError
from engine.answers import TextEdit
from engine.positions import Position, Range
from engine.workspace import Workspace

_CONFIG_FILES = ("pyproject.toml", "setup.cfg", "tox.ini", "pytest.ini")


def config_edits(workspace: Workspace, old_module: str, new_module: str, old_path: str, new_path: str) -> tuple[list[FileChange], list[str]]:
    """Edits of entry points naming the module and of config paths naming the file, with notes."""
    # `pkg.old:main` (an entry point's object reference) or `pkg.old.sub:main`; a path as a word.
    entry_point = re.compile(rf"(?<![\w.]){re.escape(old_module)}(?=(?:\.[\w.]+)?\s*:\s*[A-Za-z_])")
    path_word = re.compile(rf"(?<![\w./]){re.escape(old_path)}(?![\w])")
    changes, places = [], []
    for name in _CONFIG_FILES:
        if not (workspace.root / name).is_file():
            continue
        try:
            source = workspace.read(name)
        except GraftError:
            continue
        edits = []
        for number, line in enumerate(source.text.splitlines()):
            for pattern, replacement in ((entry_point, new_module), (path_word, new_path)):
                for match in pattern.finditer(line):
                    edits.append(TextEdit(Range(Position(number, match.start()), Position(number, match.end())), replacement))
                    places.append(f"{name}:{number + 1}")
        if edits:
            changes.append(FileChange(name, tuple(sorted(edits, key=lambda e: e.range.start)), source.sha256))
    notes = [f"entry points and configuration paths updated: {', '.join(places)}"] if places else []
    return changes, notes


def documentation_mentions(workspace: Workspace, old_module: str) -> list[str]:
    """``file:line`` of documentation that names the module, for a labelled list."""
    mention = re.compile(
        rf"(?:^:::\s+{re.escape(old_module)}\b|^\.\.\s+auto\w+::\s+{re.escape(old_module)}\b|:mod:`~?{re.escape(old_module)}`)", re.M
    )
    found = []
    for path in workspace.scan(".").files:
        if not path.endswith((".md", ".rst")):
            continue
        try:
            text = workspace.read(path).text
        except GraftError:
            continue
        if old_module in text:
            found += [f"{path}:{text.count(chr(10), 0, m.start()) + 1}" for m in mention.finditer(text)]
    return found
