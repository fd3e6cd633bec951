"""A class member's rename where the class fits an interface declared outside the workspace.

Renaming a member of a class (or of an untyped object constant) that fits an interface without
``implements``, the plan renames the interface's member too (engine.refactor.typescript.met_interfaces).
That cannot be done where the interface is declared outside the workspace: TypeScript's own
libraries (``Iterator``'s ``next``, ``PromiseLike``'s ``then``) or a dependency's ``.d.ts`` under
``node_modules``. The class would stop fitting it wherever it is used as one (tsc: TS2741, TS2345),
so such a rename is refused (:class:`FitsOutsideInterface`) when
- a file that names the class (and sees the class's file: engine.refactor.typescript.seen_from)
  spells a type name the workspace does not declare, in a type's place (``: Iterator<number>``,
  ``implements PromiseLike<T>``, ``as Sink``);
- the server's definition of that name lands outside the workspace, or under ``node_modules``;
- the interface declared there has the member, required, and the class has its other required
  members.
Which interface is the server's word, not the name's: a workspace's own ``Iterator`` is not taken
for the library's. A class with a ``then`` method that no file names with an outside interface is
still a thenable, which ``await`` unwraps: renaming ``then`` is warned about, not refused.
Only names spelled in those files are asked about, so a class met as an interface only through an
inferred type (a parameter of a library's function) is not seen.
"""

from __future__ import annotations

import hashlib
import os
import re
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from engine.errors import GraftError, ListingRefusal
from engine.extract.treesitter import TreeSitterExtractor
from engine.positions import Position
from engine.refactor.kept_by_content import KeptByContent
from engine.refactor.typescript import implementers
from engine.refactor.typescript.clashes import ParsedFiles
from engine.refactor.typescript.seen_from import Seeing

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext

_TYPE_NAME = re.compile(r"(?:[:<|&]|\b(?:implements|extends|satisfies|as)\b)\s*(?:readonly\s+)?([A-Z][\w$]*)")
"""A capitalised name where a type is written: after ``:``, ``<``, ``|``, ``&``, ``implements``,
``extends``, ``satisfies`` or ``as``."""
MOST_ASKED = 200
"""Type names put to the server per rename at most (a bound on the requests, far above what the
projects of the corpus spell); past that a warning says the rest were not checked."""


class FitsOutsideInterface(ListingRefusal):
    """A renamed class member fits an interface outside the workspace, which cannot be renamed with it."""

    code = "fits_outside_interface"
    listed_as = "members"


@dataclass(frozen=True)
class _Outside:
    name: str
    file: str
    line: int
    """0-based, where the server's definition lands."""
    required: frozenset[str]
    """The interface's required members there."""


def check(context: PlanContext, members: list[implementers.ClassMember], old: str, new: str,
          parsed: ParsedFiles, mentioning: Callable[[str], set[str]]) -> list[str]:
    """Refuse the rename of ``members`` (class members and object constants' named ``old`` whose
    declarations the plan renames) where one fits an outside interface; the warnings otherwise."""
    if not members or context.services is None:
        return []
    seeing = Seeing(context, parsed)
    refused, warnings, asked = [], [], dict[str, list[_Outside]]()
    read: dict[str, dict[str, list[frozenset[str]]]] = {}
    """Each outside file's interfaces, read once per rename (a library file holds many of the names asked)."""
    for member in members:
        files = sorted(mentioning(member.class_name) & seeing(member.path))
        names = _type_names(parsed, files, member.class_name, lambda name: _declared_here(name, mentioning, parsed))
        for name, (path, position) in names.items():
            if name not in asked and len(asked) >= MOST_ASKED:
                warnings.append(f"{len(names)} type names in the files naming {member.class_name}: past the first "
                                f"{MOST_ASKED} they were not checked for an interface outside the workspace that "
                                f"{member.class_name}.{old} fits; run tsc after the rename")
                break
            if name not in asked:
                asked[name] = _resolved_outside(context, parsed, path, position, name, old, read)
            for outside in asked[name]:
                if old in outside.required and outside.required - {old} <= member.members:
                    refused.append(member.label(old, f"fits {name} ({outside.file}:{outside.line + 1}, outside the "
                                                     f"workspace) without `implements`, and {path} names both"))
                    break
        if old == "then" and not refused:
            warnings.append(f"{member.path}:{member.line + 1} {member.class_name}.then: a value with a `then` method is a "
                            "thenable, which `await`, `Promise.resolve` and an async function's return unwrap as a "
                            "PromiseLike; after the rename they take it as a plain value")
    if refused:
        raise _refusal(sorted(set(refused)), old, new)
    return warnings


def _type_names(parsed: ParsedFiles, files: list[str], class_name: str,
                declared_here: Callable[[str], bool]) -> dict[str, tuple[str, Position]]:
    """The type names those files spell that neither the file (a type parameter, an import from a
    relative path) nor the workspace declares, each with its first place; not in a comment."""
    found: dict[str, tuple[str, Position]] = {}
    for path in files:
        source = parsed.source(path)
        if source is None:
            continue
        text, starts = source.text, source.line_starts
        bound = _bound_in(text)
        for match in _TYPE_NAME.finditer(text):
            name = match.group(1)
            if name == class_name or name in found or name in bound:
                continue
            line = bisect_right(starts, match.start(1)) - 1
            before = text[starts[line]:match.start(1)]
            if "//" in before or before.lstrip().startswith(("*", "/*")) or declared_here(name):
                continue
            found[name] = (path, Position(line, match.start(1) - starts[line]))
    return found


_TYPE_PARAMETER = re.compile(r"[<,]\s*([A-Z][\w$]*)\s*(?=extends\b|=|,|>)")
"""``<T,``, ``, K extends``, ``<V = …``: a type parameter (or a type argument, which is no
interface's name where it stands)."""
_RELATIVE_IMPORT = re.compile(r"\bimport\s+(?:type\s+)?([^;]*?)\s+from\s+['\"]\.")
_NAMES = re.compile(r"[A-Za-z_$][\w$]*")


def _bound_in(text: str) -> set[str]:
    """The names a file binds that a type name may be: its type parameters and what it imports from
    a relative path (a workspace file)."""
    bound = {match.group(1) for match in _TYPE_PARAMETER.finditer(text)} if "<" in text else set()
    for match in _RELATIVE_IMPORT.finditer(text) if "import" in text else ():
        bound.update(_NAMES.findall(match.group(1)))
    return bound


def _declared_here(name: str, mentioning: Callable[[str], set[str]], parsed: ParsedFiles) -> bool:
    """Whether a workspace file declares ``name`` (a workspace's own ``Iterator`` is not asked about;
    nor a ``typeof`` of its constant), not counting a dependency's under ``node_modules``. By the text: the servers'
    outlines list imported names as variables of the importing file."""
    declaring = re.compile(rf"\b(?:interface|class|type|enum|namespace|const|let|var|function)\s+{re.escape(name)}\b")
    for path in sorted(mentioning(name)):
        source = parsed.source(path) if "node_modules" not in Path(path).parts else None
        if source is not None and declaring.search(source.text):
            return True
    return False


def _resolved_outside(context: PlanContext, parsed: ParsedFiles, path: str, position: Position, name: str,
                      old: str, read: dict[str, dict[str, list[frozenset[str]]]]) -> list[_Outside]:
    """The interfaces ``name`` at ``position`` resolves to outside the workspace that declare ``old``."""
    source = parsed.source(path)
    if context.services is None or source is None:
        return []
    try:
        locations = context.services.definition(source, position).value
    except GraftError:
        return []
    found = []
    for location in locations:
        if location.inside_workspace and "node_modules" not in Path(location.file).parts:
            continue
        file = location.file if os.path.isabs(location.file) else str(context.workspace.root / location.file)
        if file not in read:
            read[file] = _interfaces_in(file)
        for declared in read[file].get(name, ()):
            if old in declared:
                found.append(_Outside(name, location.file, location.range.start.line, declared))
    return found


_OUTSIDE: KeptByContent[dict[str, list[frozenset[str]]]] = KeptByContent(64)
"""Each outside declaration file's interfaces: name, then each declaration's required members (a
library's ``Iterator`` is declared in several files, and more than once in one)."""
_EXTRACTOR = TreeSitterExtractor()


def _interfaces_in(file: str) -> dict[str, list[frozenset[str]]]:
    try:
        raw = Path(file).read_bytes()
    except OSError:
        return {}
    return _OUTSIDE.get((file, hashlib.sha256(raw).hexdigest()), lambda: _interfaces_of(raw))


def _interfaces_of(raw: bytes) -> dict[str, list[frozenset[str]]]:
    root = _EXTRACTOR.parse("typescript", raw).root_node
    found: dict[str, list[frozenset[str]]] = {}
    for name, required in implementers.required_members(root, raw):
        found.setdefault(name, []).append(required)
    return found


def _refusal(labels: list[str], old: str, new: str) -> FitsOutsideInterface:
    listing = "\n  ".join(labels)
    return FitsOutsideInterface(
        f"renaming {old} to {new} would leave what it renames no longer fitting an interface declared outside the "
        f"workspace, which a rename cannot change (tsc: TS2741 or TS2345 where it is used as one; a thenable `await` "
        f"stops unwrapping):\n  {listing}\nnothing was changed; keep the name {old}, or stop using it as that interface "
        f"first (or wrap it in an object that fits), then rename", labels)
