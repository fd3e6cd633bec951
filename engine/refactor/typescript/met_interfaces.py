"""The interfaces a renamed class member leaves behind: the class fits them without ``implements``.

Renaming a member of a class that declares ``implements Shape``, both TypeScript servers rename
``Shape``'s member with it (and so every other implementer and use of ``Shape``'s). Renaming the
member of a class that fits ``Shape`` only by structure, they rename the class's member alone, and
tsc breaks wherever an instance is used as a ``Shape`` (TS2741, TS2345). The same goes for an
untyped object constant's member. So a plan that renames such a member (at its declaration) is
looked at, the way engine.refactor.typescript.implementers looks the other way: an interface (or
object type alias) is met (:func:`find`) when
- it declares the member, required, and the plan leaves it as it is;
- the class has the interface's other required members;
- and some file spells both the class's name and the interface's, and sees both files (is one of
  them, or imports them, directly or through a barrel).
engine.refactor.typescript.structural_renames then renames the interface's member through the
server, as it does for an ``implements`` class, and the interface's other structural fits follow
it; or refuses (a fit that says little, ``--no-structural``).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from engine.edits.model import Span, WorkspaceEdit
from engine.refactor.corpus import Corpus
from engine.refactor.kept_by_content import KeptByContent
from engine.refactor.typescript import implementers
from engine.refactor.typescript.clashes import ParsedFiles
from engine.refactor.typescript.seen_from import Seeing
from engine.refactor.typescript.visibility import LANGUAGE_IDS, in_family
from engine.workspace import SourceFile

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext

_MODIFIERS = r"(?:(?:public|protected|private|readonly|static|async|get|set|abstract|override|declare|accessor)\s+|\*\s*)*"
_DECLARES_BEFORE = re.compile(rf"(?:^|[{{,(])\s*{_MODIFIERS}$")
"""What precedes a member's name on its line where it is declared: nothing but modifiers, or an
object literal's (a parameter list's) ``{``, ``,`` or ``(``."""
_DECLARES_AFTER = re.compile(r"\s*(?:[(:=;?!<]|$)")
"""What follows it: a method's parameters, a type, a value, or the line's end."""


@dataclass(frozen=True)
class Met:
    """A renamed class member (or object constant's) and an interface it fits, left as it is."""

    member: implementers.ClassMember
    declared: implementers.DeclaredIn
    named_in: str
    """A file that names both the class and the interface."""
    inheritor: implementers.ClassMember | None = None
    """The class below the member's class that fits the interface with it, when not the class itself."""

    @property
    def fitter(self) -> str:
        return (self.inheritor or self.member).class_name

    def label(self, old: str, why: str = "") -> str:
        interface = self.declared.interface
        line = min(self.declared.at)[0] + 1
        below = (f"inherited by {self.inheritor.class_name} ({self.inheritor.path}:{self.inheritor.line + 1}), which "
                 if self.inheritor is not None else "")
        return self.member.label(old, f"{below}fits {interface.name} ({interface.path}:{line}) without `implements`, and "
                                      f"{self.named_in} names both{', ' + why if why else ''}")


def find(context: PlanContext, edit: WorkspaceEdit, old: str, parsed: ParsedFiles,
         members: list[implementers.ClassMember] | None = None) -> list[Met]:
    """The interfaces the plan's renamed class members fit and leave behind (see the module's text);
    ``members``: :func:`renamed_members` of ``edit``, when worked out already."""
    members = renamed_members(edit, old, parsed) if members is None else members
    if not members:
        return []
    renamed = implementers.edit_starts(edit)
    mentioning = mentioning_in(context)

    declared: list[implementers.DeclaredIn] = []
    for path in sorted(mentioning(old)):
        source = parsed.source(path)
        tree = (parsed.get(path) if source is not None and implementers.may_declare_an_interface(source.text, source.sha256)
                else None)
        if tree is not None:
            declared += [found for found in implementers.interfaces_declaring(path, tree[1], tree[0].text.encode("utf-8"), old,
                                                                           tree[0].sha256)
                         if found.required and not found.at & renamed.get(path)]
    if not declared:
        return []
    # Each renamed member with the class that may fit with it: its own, and each class below it
    # that inherits it (with the chain, which the server confirms only where a fit is found).
    fitting: list[tuple[implementers.ClassMember, implementers.ClassMember, frozenset[str], tuple[implementers.Hop, ...]]]
    fitting = [(member, member, member.members, ()) for member in members]
    fitting += [(base, chain[-1].sub, base.members.union(*(hop.sub.members for hop in chain)), chain)
                for base, chain in implementers.descendants([m for m in members if not m.is_object], mentioning, parsed, old,
                                                            context.graph().importing_files)]
    seeing = Seeing(context, parsed)
    met = []
    for member, fitter, have, chain in fitting:
        for interface in declared:
            both = (sorted(mentioning(fitter.class_name) & mentioning(interface.interface.name)
                           & seeing.declared(interface.interface.path, interface.interface.everywhere) & seeing(fitter.path))
                    if interface.interface.others <= have else [])
            if both and (not chain or implementers.confirmed(context, parsed, member, chain)):
                met.append(Met(member, interface, both[0], fitter if chain else None))
    return met


def mentioning_in(context: PlanContext) -> Callable[[str], set[str]]:
    """The TypeScript and JavaScript files that hold a name, by one corpus of the workspace."""
    corpus = Corpus(context.workspace, list(context.graph().project.facts), context.workspace_files, context.file_words())

    def mentioning(name: str) -> set[str]:
        return {path for language in LANGUAGE_IDS for path in corpus.mentioning(name, language)}
    return mentioning


def renamed_members(edit: WorkspaceEdit, old: str, parsed: ParsedFiles,
                    renamed: implementers.EditStarts | None = None) -> list[implementers.ClassMember]:
    """The class members and object constants' members named ``old`` whose declaration the plan
    renames; a file is parsed only where an edit sits where a member could be declared.
    ``renamed``: :func:`implementers.edit_starts` of ``edit``, when worked out already."""
    renamed = implementers.edit_starts(edit) if renamed is None else renamed
    members = []
    for path in sorted(renamed.paths()):
        source = parsed.source(path) if in_family(path) else None
        if source is None or not _may_declare_any(source, renamed.spans(path), old):
            continue
        tree = parsed.get(path)
        if tree is not None:
            text = tree[0].text.encode("utf-8")
            found = [*implementers.class_members_named(path, tree[1], text, old),
                     *implementers.object_constants_named(path, tree[1], text, old)]
            members += [member for member in found if (member.line, member.column) in renamed.get(path) and not member.shorthand]
    return members


def read_ahead(source: SourceFile, old: str) -> None:
    """Work out, before the answer, what :func:`_may_declare_any` keeps of a file's words ``old``."""
    _DECLARING_WORDS.get((old, source.sha256), lambda: _declaring_words(source, old))


def _may_declare_any(source: SourceFile, spans: tuple[Span, ...], old: str) -> bool:
    """Whether one of the names the edits of ``spans`` start at sits where a member is declared
    (:func:`_may_declare_at`). Its answer at each word ``old`` of the file is kept by content: a
    rename's edits are those words, and looking at each edit's line again was a fifth of the work
    after the server's answer."""
    words, declaring = _DECLARING_WORDS.get((old, source.sha256), lambda: _declaring_words(source, old))
    if not declaring.isdisjoint(spans):
        return True
    if words.issuperset(spans):
        return False  # a rename's edits: each a word, none where a member is declared
    # An edit elsewhere (or starting at a word but ending elsewhere: the look answers for its start alone).
    return _may_declare_at(source, {span[:2] for span in spans if span not in words}, old)


def _declaring_words(source: SourceFile, old: str) -> tuple[frozenset[Span], frozenset[Span]]:
    """Where the file holds ``old`` as a word (each the span of an edit replacing it), and which of
    those :func:`_may_declare_at` says may declare a member."""
    lines, width = source.line_starts, len(old)
    words = frozenset((line, column, line, column + width)
                      for match in re.finditer(rf"(?<![\w$]){re.escape(old)}(?![\w$])", source.text)
                      for line in (bisect_right(lines, match.start()) - 1,) for column in (match.start() - lines[line],))
    return words, frozenset(word for word in words if _may_declare_at(source, {word[:2]}, old))


def _may_declare_at(source: SourceFile, starts: set[tuple[int, int]], old: str) -> bool:
    """Whether one of the names at ``starts`` sits where a member is declared: a cheap look at its
    line, the character before it first (most renamed names follow ``.``, ``=`` or a keyword)."""
    text, lines = source.text, source.line_starts
    for line, column in starts:
        if line >= len(lines):
            continue
        offset = lines[line] + column
        before = text[lines[line]:offset].rstrip()
        if before and before[-1] not in "{,(*" and not before[-1].isalpha():
            continue
        end = lines[line + 1] if line + 1 < len(lines) else len(text)
        if _DECLARES_AFTER.match(text[offset + len(old):end].rstrip("\r\n")) and _DECLARES_BEFORE.search(before):
            return True
    return False


_DECLARING_WORDS: KeptByContent[tuple[frozenset[Span], frozenset[Span]]] = KeptByContent(4096)
"""By (old name, content): :func:`_declaring_words`. Each holds a set per file that mentions the
name: the last few renames' files, as the other per-content passes keep (not every file ever seen)."""


def refusal(met: list[Met], labels: list[str], old: str, new: str, *, followable: bool) -> implementers.ImplementationsLeftBehind:
    """``labels``: each renamed member and the interface it leaves (:meth:`Met.label`); ``followable``
    when the rename could have renamed the interfaces' members too (the user turned that off)."""
    names = ", ".join(sorted({fit.declared.interface.name for fit in met}))
    members = ", ".join(sorted({f"{fit.declared.interface.name}.{old}" for fit in met}))
    listing = "\n  ".join(labels)
    why = (f"the servers rename an interface's member with a class's only when the class declares `implements`; these "
           f"would stop fitting {names} wherever they are used as one")
    if followable:
        return implementers.ImplementationsLeftBehind(
            f"renaming {old} to {new} would leave {members} as it is, though what it renames fits {names} without saying "
            f"so ({why}):\n  {listing}\nnothing was changed; rename without --no-structural (structural=true) to rename "
            f"{members} too, with its uses and implementers, or rename {members} itself", labels)
    return implementers.ImplementationsLeftBehind(
        f"renaming {old} to {new} would leave {members} as it is, though what it renames fits {names} without saying so, "
        f"and the rename cannot follow ({why}):\n  {listing}\nnothing was changed; rename {members} itself if the class "
        f"is meant to fit, or rename the class's member first where it is used as a {names}", labels)
