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
from dataclasses import dataclass

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


# Where packaging metadata names an object (``module:attr.attr``): pyproject.toml's
# [project.scripts], [project.gui-scripts], [project.entry-points.*] and [tool.poetry.scripts],
# setup.cfg's [options.entry_points], setup.py's entry_points strings ("tool = pkg:main").
_ENTRY_SECTIONS = {
    "pyproject.toml": re.compile(r"^\[\s*(?:project\.(?:scripts|gui-scripts|entry-points\.[^\]]+)|tool\.poetry\.scripts)\s*\]"),
    "setup.cfg": re.compile(r"^\[\s*options\.entry_points\s*\]"),
}
_OBJECT_REFERENCE = re.compile(r"(?<![\w.:/-])(?P<module>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\s*:\s*(?P<attrs>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?![\w:/])")
_SETUP_PY_ENTRY = re.compile(r"""["']\s*[\w.\-\[\] ]+?\s*=\s*(?P<reference>[^"']+)["']""")


@dataclass(frozen=True)
class EntryPointReference:
    """``module:attr.attr`` in a packaging file, at a 0-based line with the columns of both parts."""

    path: str
    line: int
    module: str
    module_start: int
    attrs: tuple[str, ...]
    attrs_start: int


def entry_point_references(workspace: Workspace) -> list[EntryPointReference]:
    """Every object reference of the workspace's entry points (console scripts, plugins)."""
    found: list[EntryPointReference] = []
    for name in ("pyproject.toml", "setup.cfg", "setup.py"):
        if not (workspace.root / name).is_file():
            continue
        try:
            text = workspace.read(name).text
        except GraftError:
            continue
        section = _ENTRY_SECTIONS.get(name)
        inside = section is None
        for number, line in enumerate(text.splitlines()):
            if section is not None and line.lstrip().startswith("["):
                inside = bool(section.match(line.strip()))
                continue
            if not inside or line.lstrip().startswith(("#", ";")):
                continue
            spans = ([(m.start("reference"), m.group("reference")) for m in _SETUP_PY_ENTRY.finditer(line)] if name == "setup.py"
                     else [(line.find("=") + 1, line[line.find("=") + 1:])] if "=" in line else [])
            for offset, written in spans:
                for match in _OBJECT_REFERENCE.finditer(written):
                    found.append(EntryPointReference(name, number, match.group("module"), offset + match.start("module"),
                                                     tuple(match.group("attrs").split(".")), offset + match.start("attrs")))
    return found


def entry_point_edits(workspace: Workspace, references: list[EntryPointReference], old_path: tuple[str, ...],
                      new_name: str | None, new_module: str | None) -> tuple[list[FileChange], list[str]]:
    """Edits of the given references to ``old_path`` (``Class.method`` as its parts): its last
    part renamed to ``new_name``, its module to ``new_module`` (a move), with ``file:line`` of each."""
    per_file: dict[str, list[TextEdit]] = {}
    places: list[str] = []
    for reference in references:
        if reference.attrs[:len(old_path)] != old_path:
            continue
        edits = per_file.setdefault(reference.path, [])
        if new_module is not None and new_module != reference.module:
            start = Position(reference.line, reference.module_start)
            edits.append(TextEdit(Range(start, Position(reference.line, reference.module_start + len(reference.module))), new_module))
        if new_name is not None and new_name != old_path[-1]:
            column = reference.attrs_start + sum(len(part) + 1 for part in old_path[:-1])
            edits.append(TextEdit(Range(Position(reference.line, column), Position(reference.line, column + len(old_path[-1]))), new_name))
        places.append(f"{reference.path}:{reference.line + 1}")
    changes = [FileChange(path, tuple(sorted(edits, key=lambda e: e.range.start)), workspace.read(path).sha256)
               for path, edits in per_file.items() if edits]
    return changes, places
