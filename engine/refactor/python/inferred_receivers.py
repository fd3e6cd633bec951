"""Attribute uses a server's rename leaves because it cannot type the receiver, resolved by jedi.

A type checker renames ``cache.currsize`` only where it knows what ``cache`` is. In test helpers
(``def _test_getsizeof(self, cache)``) the parameter is untyped: the server leaves the use, and
the project's suite goes red (cachetools: 21 failures after a server rename of
``Cache.currsize``). jedi infers an untyped parameter from the arguments its callers pass. So
each ``.old`` left in code after the server's edit is asked of jedi (``goto``), and renamed when
jedi lands on one of the rename's own declarations, never on a guess. A use jedi follows
elsewhere is a homonym and stays; a use nobody can follow (``cache = pickle.loads(...)``) stays
too, and a warning names it as what it is: a receiver of unknown type.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Callable

from engine.edits.model import FileChange, WorkspaceEdit
from engine.edits.text import Coverage, word_offsets
from engine.answers import TextEdit
from engine.positions import Position, Range
from engine.refactor.corpus import Corpus
from engine.refactor.python.jedi_rename import jedi_definitions
from engine.refactor.python.pytrees import parse_python, with_spans
from engine.workspace import Workspace

MAX_ASKED = 400
"""Uses asked of jedi per rename; each may infer through the callers (tens of ms). Past it the
rest stay, and the note says how many were not asked."""


@dataclass(frozen=True)
class Declaration:
    path: str
    position: Position
    """Where the declared name starts (a rename target's position)."""


FixtureMember = Callable[[str, int, str], "tuple[str, int] | None"]
"""(file, 1-based line, receiver name) → (file, 0-based line) of the member the receiver (a pytest
fixture's value, a module from import_module) has under the old name, or None
(engine/refactor/python/pytest_fixtures.py)."""


def inferred_receiver_uses(
    workspace: Workspace, corpus: Corpus, edit: WorkspaceEdit, old: str, new: str, declarations: list[Declaration],
    uses: list[tuple[str, Position]], *, ask_jedi: bool = True, fixture_member: FixtureMember | None = None,
) -> tuple[WorkspaceEdit, list[str]]:
    """The edit plus every ``x.old`` it leaves in code that jedi (``ask_jedi``; the edit may be
    jedi's own) or the receiver's pytest fixture resolves to one of ``declarations``; notes say
    what was added and what nobody could follow. ``uses``: :func:`attribute_uses`, found beside the server."""
    edited = {op.path: op for op in edit.operations if isinstance(op, FileChange)}
    candidates = uncovered_attribute_uses(edited, uses)
    if not candidates:
        return edit, []
    asked = candidates[:MAX_ASKED]
    wanted = {(d.path, d.position.line, d.position.column) for d in declarations}
    found = jedi_definitions(workspace, asked) if ask_jedi else [set() for _ in asked]
    classes = DeclaringClasses(corpus)
    added: dict[str, list[TextEdit]] = {}
    untyped: list[str] = []
    through_fixtures: list[str] = []
    through_self: list[str] = []
    for (path, position), definitions in zip(asked, found):
        span = TextEdit(Range(position, Position(position.line, position.column + len(old))), new)
        receiver = receiver_name(corpus.source(path).text, corpus.source(path).line_starts[position.line] + position.column)
        if receiver in ("self", "cls") and fixture_member is not None:
            # jedi lands an assignment `self.old = ...` on itself; the class's hierarchy decides.
            if classes.same(fixture_member(path, position.line + 1, receiver), declarations):
                added.setdefault(path, []).append(span)
                through_self.append(f"{path}:{position.line + 1}")
            continue
        if any(definition in wanted for definition in definitions):
            added.setdefault(path, []).append(span)
        elif not definitions:
            member = fixture_member(path, position.line + 1, receiver) if fixture_member and receiver else None
            if member is not None and classes.same(member, declarations):
                added.setdefault(path, []).append(span)
                through_fixtures.append(f"{path}:{position.line + 1}")
            elif member is None and ask_jedi:
                untyped.append(f"{path}:{position.line + 1}")
    notes = []
    by_jedi = [f"{path}:{span.range.start.line + 1}" for path, spans in added.items() for span in spans
               if f"{path}:{span.range.start.line + 1}" not in {*through_fixtures, *through_self}]
    if through_self:
        notes.append(f"uses on self (or cls) whose class has the renamed member, its own or inherited, renamed: "
                     f"{', '.join(_shown(through_self))}")
    if by_jedi:
        notes.append(f"uses on receivers the server could not type, resolved to the renamed symbol by jedi (from their "
                     f"callers' arguments) and renamed: {', '.join(by_jedi)}")
    if through_fixtures:
        notes.append(f"uses on pytest fixture values and modules loaded by import_module that hold the renamed symbol, renamed: "
                     f"{', '.join(_shown(through_fixtures))}")
    if untyped:
        shown = ", ".join(untyped[:10]) + (f" and {len(untyped) - 10} more" if len(untyped) > 10 else "")
        notes.append(f"uses of .{old} on receivers of unknown type (neither the server nor jedi can tell what they hold), "
                     f"left as they are: check them, they may be the renamed member: {shown}")
    if len(candidates) > len(asked):
        notes.append(f"{len(candidates) - len(asked)} more use(s) of .{old} on receivers the server could not type were not checked")
    return with_spans(edit, lambda path: corpus.source(path).sha256, added), notes


def _shown(places: list[str]) -> list[str]:
    return places[:10] + ([f"and {len(places) - 10} more"] if len(places) > 10 else [])


def receiver_name(text: str, offset: int) -> str | None:
    """The bare name before ``.old`` at ``offset`` (``signer`` of ``signer.unsign``), else None.
    An instance of self's own class made on the spot (``self.__class__(value).unescape()``,
    ``type(self)(...)``: markupsafe's striptags) is ``self`` as far as its members go."""
    window = max(0, offset - 200)
    if _SAME_CLASS_BEFORE_DOT.search(text, window, offset):
        return "self"
    match = _NAME_BEFORE_DOT.search(text, window, offset)
    return match.group(1) if match else None


_NAME_BEFORE_DOT = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\.$")
_SAME_CLASS_BEFORE_DOT = re.compile(r"(?<![\w.])(?:self\.__class__|type\(self\)|cls)\([^()]*\)\.$")


def attribute_uses(corpus: Corpus, old: str) -> list[tuple[str, Position]]:
    """Every ``.old`` in code (not strings or comments), per file in order: independent of any
    edit, so a rename finds them beside the server's request."""
    found: list[tuple[str, Position]] = []
    for path in corpus.mentioning(old, "python"):
        text = corpus.source(path).text
        offsets = [o for o in word_offsets(text, old, "_") if o > 0 and text[o - 1] == "."]
        if not offsets:
            continue
        starts = corpus.source(path).line_starts
        code = corpus.code_map(path)
        for offset in offsets:
            if code.is_code(offset):
                line = bisect_right(starts, offset) - 1
                found.append((path, Position(line, offset - starts[line])))
    return found


def uncovered_attribute_uses(edited: dict[str, FileChange], uses: list[tuple[str, Position]]) -> list[tuple[str, Position]]:
    """The :func:`attribute_uses` that the edit does not change, per file in order."""
    coverages: dict[str, Coverage] = {}
    found = []
    for path, position in uses:
        change = edited.get(path)
        if change is not None:
            coverage = coverages.get(path) or coverages.setdefault(path, Coverage(change.edits))
            if coverage.covers(position):
                continue
        found.append((path, position))
    return found


def without_self_homonyms(
    corpus: Corpus, edit: WorkspaceEdit, old: str, declarations: list[Declaration], fixture_member: FixtureMember,
) -> tuple[WorkspaceEdit, list[str]]:
    """``edit`` without the server's edits of ``self.old`` that the project graph resolves, in
    their enclosing class, to a declaration in another class than the renamed ones': a class of
    the same name elsewhere (boltons urlutils' own copy of OrderedMultiDict, with its own
    ``_insert``), which the server took for the renamed class. (Within the renamed member's own
    class, a property's setter and getter are one member.)"""
    classes = DeclaringClasses(corpus)
    operations = list(edit.operations)
    dropped: list[str] = []
    for index, change in enumerate(operations):
        if not isinstance(change, FileChange) or not change.path.endswith(".py"):
            continue
        source = corpus.source(change.path)
        kept = []
        for text_edit in change.edits:
            start = text_edit.range.start
            offset = source.line_starts[start.line] + start.column if start.line < len(source.line_starts) else -1
            receiver = receiver_name(source.text, offset) if offset > 0 and source.text[offset - 1] == "." else None
            if receiver in ("self", "cls") and source.text[offset:offset + len(old)] == old:
                member = fixture_member(change.path, start.line + 1, receiver)
                if member is not None and not classes.same(member, declarations):
                    dropped.append(f"{change.path}:{start.line + 1}")
                    continue
            kept.append(text_edit)
        if len(kept) != len(change.edits):
            operations[index] = FileChange(change.path, tuple(kept), change.expected_sha256)
    operations = [op for op in operations if not (isinstance(op, FileChange) and not op.edits)]
    notes = [f"uses of self.{old} in classes whose own {old} is another declaration, left as they are (the server "
             f"had renamed them): {', '.join(_shown(dropped))}"] if dropped else []
    return WorkspaceEdit(tuple(operations), edit.annotations), notes


class DeclaringClasses:
    """Which class a declaration sits in (file and the ``class`` line), from Python's own trees."""

    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self._ranges: dict[str, list[tuple[int, int]]] = {}

    def of(self, path: str, line: int) -> tuple[str, int] | None:
        """(file, 0-based line of its ``class``) of the innermost class around 0-based ``line``."""
        if path not in self._ranges:
            tree = parse_python(self.corpus.source(path).text) if self.corpus.bytes_of(path) is not None else None
            self._ranges[path] = sorted((n.lineno - 1, (n.end_lineno or n.lineno) - 1) for n in ast.walk(tree)
                                        if isinstance(n, ast.ClassDef)) if tree is not None else []
        around = [start for start, end in self._ranges[path] if start <= line <= end]
        return (path, max(around)) if around else None

    def same(self, member: tuple[str, int] | None, declarations: list[Declaration]) -> bool:
        """Whether ``member`` (file, 0-based line) is one of the declarations, or sits in the same
        class as one of them (an accessor of the same property)."""
        if member is None:
            return False
        if any((d.path, d.position.line) == member for d in declarations):
            return True
        owner = self.of(*member)
        return owner is not None and any(self.of(d.path, d.position.line) == owner for d in declarations)
