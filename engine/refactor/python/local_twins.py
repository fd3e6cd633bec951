"""A module that defines the renamed name itself and also imports it: its own binding stays.

boltons' urlutils.py carries a copy of ``OrderedMultiDict`` (a fallback class) and then, in a
``try``, ``from .dictutils import OrderedMultiDict``: whichever binds last wins. basedpyright
merges the two declarations into one symbol, so its rename of dictutils' class renamed urlutils'
own class, its isinstance checks and its subclass too. The module's name is its own: only the
import changes, to ``from .dictutils import MultiValueDict as OrderedMultiDict``, and every other
edit the server made in that file is dropped.
"""

from __future__ import annotations

import ast
import re

from engine.edits.model import FileChange, WorkspaceEdit
from engine.answers import TextEdit
from engine.positions import Position, Range
from engine.refactor.corpus import Corpus
from engine.refactor.python.pytrees import code_points, parse_python


def possible_twins(corpus: Corpus, paths: list[str], old: str) -> dict[str, bool]:
    """Whether each Python file of ``paths`` may define ``old`` itself: what :func:`keep_local_twins`
    asks of each file it edits, answered before the rename's edit is known (beside the server)."""
    return {path: _may_define(corpus.source(path).text, old) for path in paths if path.endswith(".py")}


def keep_local_twins(
    corpus: Corpus, edit: WorkspaceEdit, defining_file: str, old: str, new: str, possible: dict[str, bool],
) -> tuple[WorkspaceEdit, list[str]]:
    """``edit`` with each file that both defines ``old`` at module level and imports the renamed
    symbol reduced to that import, aliased to the old name. ``possible``: :func:`possible_twins`
    of the files the edit may change, found beside the server (a file it does not name is looked at here)."""
    operations = list(edit.operations)
    kept: list[str] = []
    for index, change in enumerate(operations):
        if not isinstance(change, FileChange) or change.path == defining_file or not change.path.endswith(".py"):
            continue
        text = corpus.source(change.path).text
        may_define = possible.get(change.path)
        if not (_may_define(text, old) if may_define is None else may_define):
            continue  # the common case, decided without parsing (a warm rename touched 91 files, defined in none)
        tree = parse_python(text)
        if tree is None or not _defines_at_module_level(tree, old):
            continue
        starts = corpus.source(change.path).line_starts
        imports = {_position(text, starts, alias) for alias in _plain_import_aliases(tree, old)}
        at_imports = [e for e in change.edits if (e.range.start.line, e.range.start.column) in imports]
        if not at_imports:
            continue
        aliased = tuple(TextEdit(Range(e.range.start, Position(e.range.start.line, e.range.start.column + len(old))), f"{new} as {old}")
                        for e in at_imports)
        operations[index] = FileChange(change.path, aliased, change.expected_sha256)
        kept.append(change.path)
    notes = [f"{', '.join(kept)} define(s) {old} too: that binding keeps its name; the import of the renamed symbol there "
             f"becomes `{new} as {old}`"] if kept else []
    return WorkspaceEdit(tuple(operations), edit.annotations), notes


def _may_define(text: str, name: str) -> bool:
    """Whether the text could bind ``name`` by a def, class or assignment: no false negatives (a
    binding always reads like this), false positives are settled by the tree.

    What ``(?:\\bdef|\\bclass)\\s+NAME\\b|\\bNAME\\s*(?::[^=\\n]*)?=(?!=)`` finds, looked for from each
    occurrence of the name: that one regular expression tried at every offset of every file a
    warm rename searches costs far more than the name's own search."""
    start = 0
    while (found := text.find(name, start)) >= 0:
        start = found + len(name)
        if (found and _WORD.match(text, found - 1)) or _WORD.match(text, start):
            continue  # inside a longer name
        if _ASSIGNED.match(text, start):
            return True
        before = found
        while before and _SPACE.match(text, before - 1):
            before -= 1
        if _DEFINING.search(text, max(0, before - len("class") - 1), before):
            return True
    return False


_WORD, _SPACE = re.compile(r"\w"), re.compile(r"\s")
_ASSIGNED = re.compile(r"\s*(?::[^=\n]*)?=(?!=)")
_DEFINING = re.compile(r"(?:\bdef|\bclass)\Z")
"""Searched in a slice ending where the whitespace before the name starts: ``\\Z`` is that end."""


def _defines_at_module_level(tree: ast.Module, name: str) -> bool:
    for statement in _module_level(tree.body):
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and statement.name == name:
            return True
        if isinstance(statement, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in statement.targets):
            return True
    return False


def _module_level(body: list[ast.stmt]) -> list[ast.stmt]:
    found: list[ast.stmt] = []
    for statement in body:
        found.append(statement)
        if isinstance(statement, (ast.If, ast.Try)):
            for block in (statement.body, statement.orelse, *(getattr(statement, "finalbody", []),),
                          *(h.body for h in getattr(statement, "handlers", []))):
                found += _module_level(block)
    return found


def _plain_import_aliases(tree: ast.Module, name: str) -> list[ast.alias]:
    return [alias for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            for alias in node.names if alias.name == name and alias.asname is None]


def _position(text: str, starts: list[int], alias: ast.alias) -> tuple[int, int]:
    line = alias.lineno - 1
    end = starts[line + 1] if line + 1 < len(starts) else len(text)
    return line, code_points(text[starts[line]:end], alias.col_offset)

