"""Classes whose base is a value known only at run time, that define the renamed member's name.

itsdangerous' tests write ``class BadUnsign(serializer.signer): def unsign(...)`` inside a test:
the base is whatever the ``serializer`` fixture holds. No server or graph resolves it, so a rename
of ``Signer.unsign`` did not know that ``BadUnsign`` overrides it; the server renamed the
``super().unsign`` call inside it and left the ``def`` (12 red tests). jedi infers such a base
from annotations and defaults (``serializer: Serializer`` → ``Serializer.signer`` → ``Signer``):
when the class it infers has the renamed declaration as that member, the override is renamed
with it. When jedi cannot tell, the class is named in a warning: it may be an override.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable

from engine.edits.model import FileChange, WorkspaceEdit
from engine.edits.text import Coverage
from engine.answers import TextEdit
from engine.positions import Position, Range
from engine.refactor.corpus import Corpus
from engine.refactor.python.jedi_rename import jedi_definitions
from engine.refactor.python.local_scopes import LocalScopes
from engine.refactor.python.pytrees import code_points, parse_python, with_spans
from engine.workspace import Workspace

MemberOf = Callable[[str, int], "tuple[str, int] | None"]
"""(file, 0-based line of a class's name) → (file, 0-based line) of its member under the old
name, its own or inherited; None when it has none."""


@dataclass(frozen=True)
class DynamicSubclass:
    path: str
    line: int
    """1-based line of the ``class``."""
    name: str
    base: str
    base_at: Position
    """Where the base expression's last name is (what jedi is asked to infer)."""
    member_at: Position
    """Where the class's own definition of the old name is spelled."""


def dynamic_subclasses(corpus: Corpus, old: str) -> list[DynamicSubclass]:
    """Classes that define ``old`` and derive from a function's local value (or parameter)."""
    found = []
    for path in corpus.mentioning(old, "python"):
        text = corpus.source(path).text
        tree = parse_python(text)
        if tree is None:
            continue
        scopes: LocalScopes | None = None
        for node in ast.walk(tree):
            defined = _definition_of(node, old) if isinstance(node, ast.ClassDef) else None
            if defined is None or not isinstance(node, ast.ClassDef):
                continue
            member = Position(defined[0] - 1, code_points(split_line(text, defined[0]), defined[1]))
            for base in node.bases:
                head = _head(base)
                scopes = scopes or LocalScopes.of(text)
                if head is not None and scopes.binds(head, node.lineno):
                    column = code_points(split_line(text, base.end_lineno or node.lineno), base.end_col_offset or 1) - 1
                    found.append(DynamicSubclass(path, node.lineno, node.name, ast.unparse(base),
                                                 Position((base.end_lineno or 1) - 1, max(column, 0)), member))
                    break
    return found


def with_dynamic_overrides(
    workspace: Workspace, corpus: Corpus, edit: WorkspaceEdit, subclasses: list[DynamicSubclass], old: str, new: str,
    wanted: set[tuple[str, int]], member_of: MemberOf,
) -> tuple[WorkspaceEdit, list[str]]:
    """The edit plus each subclass's member where jedi infers a base whose member is one of the
    ``wanted`` declarations (file, 0-based line); a warning for each it cannot tell about."""
    if not subclasses:
        return edit, []
    inferred = jedi_definitions(workspace, [(s.path, s.base_at) for s in subclasses], infer=True)
    edited = {op.path: op for op in edit.operations if isinstance(op, FileChange)}
    added: dict[str, list[TextEdit]] = {}
    unknown = []
    for subclass, bases in zip(subclasses, inferred):
        if not {member_of(path, line) for path, line, _column in bases} & wanted:
            unknown.append(subclass)
            continue
        start = subclass.member_at
        known = edited.get(subclass.path)
        if known is None or not Coverage(known.edits).covers(start):
            added.setdefault(subclass.path, []).append(TextEdit(Range(start, Position(start.line, start.column + len(old))), new))
    renamed = [f"{path}:{span.range.start.line + 1}" for path, spans in added.items() for span in spans]
    notes = [f"overrides in classes built on run-time values that jedi resolves to the renamed member's class, "
             f"renamed: {', '.join(renamed)}"] if renamed else []
    notes += [f"{s.path}:{s.line}: class {s.name} derives from {s.base}, a value known only at run time, and defines "
              f"{old}: it may override the renamed member (left as it is; check it)" for s in unknown]
    return with_spans(edit, lambda path: corpus.source(path).sha256, added), notes


def split_line(text: str, number: int) -> str:
    """The 1-based line ``number`` of ``text``."""
    lines = text.splitlines()
    return lines[number - 1] if 0 < number <= len(lines) else ""


def _definition_of(cls: ast.ClassDef, name: str) -> tuple[int, int] | None:
    """(1-based line, UTF-8 byte column) where the class body defines ``name`` (a def, or an
    assignment's target)."""
    for statement in cls.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name == name:
            # The name follows `def ` (or `async def `) on the def's own line (decorators are above).
            offset = statement.col_offset + (len("async def ") if isinstance(statement, ast.AsyncFunctionDef) else len("def "))
            return statement.lineno, offset
        targets = statement.targets if isinstance(statement, ast.Assign) else (
            [statement.target] if isinstance(statement, ast.AnnAssign) else [])
        for target in targets:
            if isinstance(target, ast.Name) and target.id == name:
                return target.lineno, target.col_offset
    return None


def _head(expression: ast.expr) -> str | None:
    """The name an attribute chain, call or subscript starts from (``serializer`` of ``serializer.signer``)."""
    while isinstance(expression, (ast.Attribute, ast.Call, ast.Subscript)):
        expression = expression.value if not isinstance(expression, ast.Call) else expression.func
    return expression.id if isinstance(expression, ast.Name) else None

