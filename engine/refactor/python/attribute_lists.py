"""A class's list of its own attribute names, read back through getattr: those strings are names.

boltons' URL keeps ``_cmp_attrs = ('scheme', ..., 'path', ...)`` and compares with
``for attr in self._cmp_attrs: getattr(self, attr) == getattr(other, attr, None)``. Renaming the
``path`` property left the string, and every comparison raised AttributeError. A string in a
class-level tuple or list of strings is renamed with the member when the class loops over that
collection and passes the loop variable to getattr, setattr, hasattr or delattr: then each string
is an attribute name of the class, not prose.
"""

from __future__ import annotations

import ast

from engine.edits.model import FileChange, WorkspaceEdit
from engine.edits.text import Coverage
from engine.answers import TextEdit
from engine.positions import Position, Range
from engine.refactor.corpus import Corpus
from engine.refactor.python.pytrees import code_points, parse_python, with_spans

_ATTRIBUTE_CALLS = frozenset({"getattr", "setattr", "hasattr", "delattr"})


def with_attribute_lists(corpus: Corpus, edit: WorkspaceEdit, path: str, owner: str, old: str, new: str) -> tuple[WorkspaceEdit, list[str]]:
    """``edit`` plus the ``'old'`` strings of class ``owner``'s attribute-name collections."""
    text = corpus.source(path).text
    tree = parse_python(text)
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == owner), None) if tree else None
    if cls is None:
        return edit, []
    lines = text.splitlines()
    spans = []
    for statement in cls.body:
        if not isinstance(statement, ast.Assign) or not isinstance(statement.value, (ast.Tuple, ast.List)):
            continue
        names = [t.id for t in statement.targets if isinstance(t, ast.Name)]
        strings = [e for e in statement.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        if not names or len(strings) != len(statement.value.elts) or not any(_looped_into_getattr(cls, n) for n in names):
            continue
        for element in strings:
            if element.value == old and element.end_col_offset is not None:
                line = lines[element.lineno - 1]
                start = code_points(line, element.col_offset) + 1  # after the quote
                spans.append(TextEdit(Range(Position(element.lineno - 1, start), Position(element.lineno - 1, start + len(old))), new))
    if not spans:
        return edit, []
    known = next((op for op in edit.operations if isinstance(op, FileChange) and op.path == path), None)
    coverage = Coverage(known.edits) if known is not None else None
    spans = [s for s in spans if coverage is None or not coverage.covers(s.range.start)]
    if not spans:
        return edit, []
    places = ", ".join(f"{path}:{s.range.start.line + 1}" for s in spans)
    return with_spans(edit, lambda _path: corpus.source(path).sha256, {path: spans}), [
        f"attribute names listed by {owner} and read back with getattr renamed with it: {places}"]


def _looped_into_getattr(cls: ast.ClassDef, collection: str) -> bool:
    """Whether a method loops over ``self.collection`` (or ``cls.``/``Owner.``) and passes the
    loop variable to getattr & co."""
    for node in ast.walk(cls):
        if not isinstance(node, (ast.For, ast.comprehension)):
            continue
        source = node.iter
        if not (isinstance(source, ast.Attribute) and source.attr == collection) or not isinstance(node.target, ast.Name):
            continue
        variable = node.target.id
        scope = node if isinstance(node, ast.For) else cls
        for call in ast.walk(scope):
            if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in _ATTRIBUTE_CALLS
                    and len(call.args) >= 2 and isinstance(call.args[1], ast.Name) and call.args[1].id == variable):
                return True
    return False

