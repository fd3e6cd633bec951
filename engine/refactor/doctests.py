"""Doctests are code: a rename edits ``>>>`` examples, and reports documentation that names the symbol.

A server renames code, not strings, so ``>>> old(3)`` in a docstring stayed behind, and a
project that runs ``--doctest-modules`` (or collects ``.md``/``.rst`` files with
``--doctest-glob``) went red. Edited here:

- example lines (``>>>`` and ``...``) in the docstrings of the defining module and of every
  Python file the rename already changes (there the name means the symbol), and
- example lines of the text files the project's pytest configuration collects as doctests
  (``--doctest-glob`` patterns, and pytest's default ``test*.txt``),

where the old name stands alone and is not an attribute of something else (``x.old``).
Documentation that only mentions the symbol (mkdocstrings ``::: pkg.mod.old``, Sphinx roles
``:func:`old```, ``.. autofunction::``) is listed, labelled, never edited: prose is the
author's to change.
"""

from __future__ import annotations

import configparser
import fnmatch
import re
import shlex
import tomllib
from typing import Callable

from engine.edits.model import FileChange, WorkspaceEdit
from engine.edits.text import Coverage
from engine.errors import GraftError
from engine.navigation import TextEdit
from engine.positions import Position, Range
from engine.refactor.corpus import Corpus
from engine.refactor.pytext import CodeMap

_EXAMPLE = re.compile(r"^[ \t]*(?:>>>|\.\.\.)(?: |$)", re.M)
_DOC_SUFFIXES = (".md", ".rst", ".txt")
_DEFAULT_DOCTEST_GLOB = "test*.txt"


class DoctestPass:
    """Built while the server computes its rename (it only reads files); :meth:`add` then keeps
    the examples of the files the rename changes."""

    def __init__(self, corpus: Corpus, defining_file: str, old: str, new: str) -> None:
        self.corpus, self.defining_file, self.old = corpus, defining_file, old
        mention = re.compile(rf"(?<![\w.]){re.escape(old)}(?!\w)")
        self._python: dict[str, list[TextEdit]] = {}
        for path in corpus.mentioning(old, "python"):
            source = corpus.source(path)
            code = CodeMap(source.text)
            edits = _example_edits(source.text, mention, new, lambda offset: not code.is_code(offset))
            if edits:
                self._python[path] = edits
        files = corpus.workspace.scan(".").files
        collected = _collected_text_files(corpus, files)
        self._text: list[FileChange] = []
        for path in collected:
            try:
                source = corpus.workspace.read(path)
            except GraftError:
                continue
            edits = _example_edits(source.text, mention, new, lambda offset: True)
            if edits:
                self._text.append(FileChange(path, tuple(edits), source.sha256))
        self._mentions = _documentation_mentions(corpus, files, old, set(collected))

    def add(self, edit: WorkspaceEdit) -> tuple[list[FileChange], list[str]]:
        """The example edits ``edit`` misses (to merge into it), and notes."""
        changes = {op.path: op for op in edit.operations if isinstance(op, FileChange)}
        added = list(self._text)
        for path, edits in self._python.items():
            if path != self.defining_file and path not in changes:
                continue  # the name may mean something else there
            coverage = Coverage(changes[path].edits) if path in changes else None
            kept = [e for e in edits if coverage is None or not coverage.covers(e.range.start)]
            if kept:
                added.append(FileChange(path, tuple(kept), self.corpus.source(path).sha256))
        notes = []
        if added:
            notes.append("doctest examples renamed with it: " + ", ".join(f"{c.path}:{c.edits[0].range.start.line + 1}" for c in added))
        if self._mentions:
            notes.append(f"documentation that mentions {self.old} (not edited): " + ", ".join(self._mentions[:10])
                         + (f" and {len(self._mentions) - 10} more" if len(self._mentions) > 10 else ""))
        return added, notes


def _example_edits(text: str, mention: re.Pattern[str], new: str, accept: Callable[[int], bool]) -> list[TextEdit]:
    """Edits of the old name on example lines (``>>>``/``...``) whose offsets ``accept`` takes."""
    edits = []
    lines = text.split("\n")
    offset = 0
    for number, line in enumerate(lines):
        prompt = _EXAMPLE.match(line)
        if prompt is not None and accept(offset + prompt.start()):
            for found in mention.finditer(line, prompt.end()):
                edits.append(TextEdit(Range(Position(number, found.start()), Position(number, found.end())), new))
        offset += len(line) + 1
    return edits


def _collected_text_files(corpus: Corpus, files: list[str]) -> list[str]:
    """Text files pytest collects as doctests under the project's configuration."""
    patterns = _doctest_globs(corpus)
    return [p for p in files if p.endswith(_DOC_SUFFIXES) and any(fnmatch.fnmatch(p.rsplit("/", 1)[-1], g) for g in patterns)]


def _doctest_globs(corpus: Corpus) -> list[str]:
    """``--doctest-glob`` values from pyproject.toml, pytest.ini, tox.ini or setup.cfg (pytest's default if none)."""
    root = corpus.workspace.root
    options: list[str] = []
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            table = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {}).get("pytest", {}).get("ini_options", {})
            addopts = table.get("addopts", "")
            options += shlex.split(addopts) if isinstance(addopts, str) else [str(a) for a in addopts]
        except (OSError, ValueError):
            pass
    for name, section in (("pytest.ini", "pytest"), ("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        path = root / name
        if path.is_file():
            parser = configparser.ConfigParser(interpolation=None)
            try:
                parser.read(path, encoding="utf-8")
                options += shlex.split(parser.get(section, "addopts", fallback=""))
            except (configparser.Error, ValueError, OSError):
                continue
    globs = [o.split("=", 1)[1] for o in options if o.startswith("--doctest-glob=")]
    globs += [options[i + 1] for i, o in enumerate(options[:-1]) if o == "--doctest-glob"]
    return globs or [_DEFAULT_DOCTEST_GLOB]


def _documentation_mentions(corpus: Corpus, files: list[str], old: str, collected: set[str]) -> list[str]:
    mention = re.compile(
        rf"(?:^:::\s+[\w.]*\b{re.escape(old)}\b|:(?:func|class|meth|attr|data|obj|exc|mod):`[~!.\w]*\b{re.escape(old)}`"
        rf"|^\.\.\s+auto\w+::\s+[\w.]*\b{re.escape(old)}\b)", re.M,
    )
    found = []
    for path in files:
        if not path.endswith((".md", ".rst")) or path in collected:
            continue
        try:
            text = corpus.workspace.read(path).text
        except GraftError:
            continue
        if old not in text:
            continue
        found += [f"{path}:{text.count(chr(10), 0, m.start()) + 1}" for m in mention.finditer(text)]
    return found
