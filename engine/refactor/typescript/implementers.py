"""Which classes satisfy, without saying so, an interface whose member a plan renames.

Both TypeScript servers (tsserver and TypeScript 7's ``tsc --lsp``) rename, with an interface's
member, the members of the classes that declare ``implements I`` and of the object literals
typed as ``I``. A class that satisfies ``I`` only structurally (no ``implements``: an instance
passed or assigned where ``I`` is expected) is not among them: its member keeps the old name and
tsc breaks where the instance meets ``I`` (TS2345, TS2322), or, where the class was only ever
meant to fit, nothing says so at all.

So a plan that renames a member of an interface (or of an object type alias) is looked at: a
class is found (:func:`find`; engine.refactor.typescript.structural_renames follows or refuses) when
- it declares the member, and the plan leaves that declaration as it is;
  (an untyped object constant of a module, ``export const square = { area() {…}, name: "sq" }``,
  is checked the same way, by its variable's name);
- it declares the interface's other required members too (its own body and its constructor's
  parameter properties);
- and some file spells both the class's name and the interface's (where an instance meets the
  interface, or the class's own file naming it), and sees both files (is one of them or imports
  them, directly or through a barrel: engine.refactor.typescript.seen_from): without that, a class
  that has the same members by chance (``height`` of a shape and of a one-member ``Box``), or one
  that fits a same-named interface elsewhere, would be taken for one.
A class that gets the member from a class above it (its base, or further up, by whatever name
it extends it: engine.refactor.typescript.heritage), where that class does not fit itself, is
found apart (``inherited``): only the base's member could be renamed.
It may still be a class that fits by chance; the user decides.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable

from tree_sitter import Node

from engine.edits.model import FileChange, Span, WorkspaceEdit
from engine.errors import ListingRefusal
from engine.refactor.corpus import Corpus
from engine.refactor.kept_by_content import KeptByContent
from engine.refactor.typescript import heritage, type_declarations
from engine.refactor.typescript.clashes import ParsedFiles
from engine.refactor.typescript.seen_from import Seeing
from engine.refactor.typescript.visibility import LANGUAGE_IDS, in_family

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext

_MEMBER_SIGNATURES = frozenset({"property_signature", "method_signature"})
_CLASSES = frozenset({"class_declaration", "abstract_class_declaration", "class"})
ANONYMOUS = "(a class with no name)"
"""The name of a class expression without one (``export default class extends Base {…}``): no
file spells it, so nothing is found below it or by it; an interface's fit of its own refuses."""
_CLASS_MEMBERS = frozenset({"method_definition", "public_field_definition", "field_definition",
                            "abstract_method_signature", "method_signature"})
_HIDDEN = frozenset({"private", "protected"})
_MAY_DECLARE_AN_INTERFACE = re.compile(r"\b(?:interface|type)\b")
"""The keyword an interface or a type alias declaration begins with, as a word: a file without either declares none."""


def may_declare_an_interface(text: str, sha256: str | None = None) -> bool:
    """Whether ``text`` holds ``interface`` or ``type`` as a word; kept by content when its
    ``sha256`` is given (every member rename asks it of each file the answer edits, and the
    substring tests over a hundred files were a tenth of the work after the answer)."""
    if sha256 is not None:
        return _INTERFACE_KEYWORDS.get(("interface or type", sha256), lambda: may_declare_an_interface(text))
    # The substring test first: it is what most files of a rename answer (neither word in them)
    # fail, in a fraction of the word pattern's time, which cannot skip ahead to a literal.
    return ("interface" in text or "type" in text) and _MAY_DECLARE_AN_INTERFACE.search(text) is not None


class ImplementationsLeftBehind(ListingRefusal):
    """The rename of an interface's member leaves classes that satisfy the interface behind."""

    code = "implementations_left_behind"
    listed_as = "members"


@dataclass(frozen=True)
class RenamedInterface:
    path: str
    name: str
    others: frozenset[str]
    """The interface's other required members (not optional: a class need not have those)."""
    extends: bool = False
    """Whether it extends other types, whose members are not compared."""
    everywhere: bool = False
    """Declared in ``declare global { … }``: every file sees it without importing its file."""

    def unjudged(self) -> str:
        """Why a class's fit to it says little (empty when it says enough): it has no other
        member a class must have, or it gets members from types not compared."""
        if self.extends:
            return f"{self.name} extends other types, whose members were not compared: whether it fits {self.name} is not known"
        if not self.others:
            return f"{self.name} has no other required member: it fits {self.name} by this one name alone"
        return ""


@dataclass(frozen=True)
class ClassMember:
    """A class's member, or an object constant's (its variable's name as ``class_name``)."""

    path: str
    line: int
    """0-based line of the member's name."""
    column: int
    class_name: str
    members: frozenset[str]
    """Every instance member the class's own body declares (constructor parameter properties too)."""
    is_object: bool = False
    """An object constant's, not a class's."""
    shorthand: bool = False
    """An object's shorthand key (``{ area }``): a rename there renames the variable it reads."""

    def label(self, old: str, why: str = "") -> str:
        return f"{self.path}:{self.line + 1} ({self.class_name}.{old}{', ' + why if why else ''})"


@dataclass(frozen=True)
class Fit:
    """A class (or object constant) left behind, and a file that names both it and the interface."""

    member: ClassMember
    interface: RenamedInterface
    named_in: str


@dataclass(frozen=True)
class Findings:
    interfaces: tuple[RenamedInterface, ...]
    fits: tuple[Fit, ...]
    """What satisfies a renamed interface structurally and declares the member the plan leaves."""
    inherited: tuple[str, ...]
    """What satisfies it but gets the member from a base that does not (``file:line (Sub.old,
    inherited from Base at file:line)``): renaming the base's member would change every class below it."""

    def __bool__(self) -> bool:
        return bool(self.fits or self.inherited)


def find(context: PlanContext, edit: WorkspaceEdit, old: str, parsed: ParsedFiles,
         renamed: EditStarts | None = None) -> Findings:
    """The classes and object constants the plan leaves behind (see the module's text);
    ``renamed``: :func:`edit_starts` of ``edit``, when worked out already."""
    renamed = edit_starts(edit) if renamed is None else renamed
    interfaces: list[RenamedInterface] = []
    for path in renamed.paths():
        source = parsed.source(path) if in_family(path) else None
        if source is None or not may_declare_an_interface(source.text, source.sha256):
            continue  # neither keyword as a word: no interface or type alias here, and no parse
        tree = parsed.get(path)
        if tree is not None:
            interfaces += renamed_interfaces(path, tree[1], tree[0].text.encode("utf-8"), renamed.get(path), old,
                                             tree[0].sha256)
    if not interfaces:
        return Findings((), (), ())
    corpus = Corpus(context.workspace, list(context.graph().project.facts), context.workspace_files, context.file_words())

    def mentioning(name: str) -> set[str]:
        return {path for language in LANGUAGE_IDS for path in corpus.mentioning(name, language)}

    classes: list[ClassMember] = []
    for path in sorted(mentioning(old)):
        tree = parsed.get(path)
        if tree is not None:
            classes += class_members_named(path, tree[1], tree[0].text.encode("utf-8"), old)
            classes += object_constants_named(path, tree[1], tree[0].text.encode("utf-8"), old)
    met = {interface.name: mentioning(interface.name) for interface in interfaces}
    seeing = Seeing(context, parsed)

    def named_with(fitter: ClassMember, members: frozenset[str]) -> tuple[RenamedInterface, str] | None:
        """The first interface ``members`` satisfy that some file names with ``fitter``'s class and
        sees both files (engine.refactor.typescript.seen_from), and that file."""
        for interface in interfaces:
            both = (sorted(met[interface.name] & mentioning(fitter.class_name) & seeing.declared(interface.path, interface.everywhere)
                           & seeing(fitter.path)) if interface.others <= members else [])
            if both:
                return interface, both[0]
        return None

    fits = [Fit(member, *both) for member in left_behind(interfaces, classes, renamed)
            if (both := named_with(member, member.members)) is not None]
    fits.sort(key=lambda fit: (fit.member.path, fit.member.line))
    followed = {fit.member for fit in fits}
    bases = [member for member in classes if member not in followed and not member.is_object
             and (member.line, member.column) not in renamed.get(member.path)]
    inherited = []
    for base, chain in descendants(bases, mentioning, parsed, old, context.graph().importing_files):
        have = base.members.union(*(hop.sub.members for hop in chain))
        anonymous = chain[-1].sub.class_name == ANONYMOUS
        # A class with no name cannot be found where it is used: its fit alone refuses.
        fit = (next(((interface, "") for interface in interfaces if interface.others <= have), None) if anonymous
               else named_with(chain[-1].sub, have))
        if fit is not None and confirmed(context, parsed, base, chain):
            through = f" through {', '.join(hop.sub.class_name for hop in chain[:-1])}" if len(chain) > 1 else ""
            unnamed = f", and it has no name to follow to where it is used as {fit[0].name}" if anonymous else ""
            inherited.append(chain[-1].sub.label(old, f"inherited from {base.class_name} at {base.path}:{base.line + 1}"
                                                      f"{through}, which does not fit {fit[0].name} itself{unnamed}"))
    return Findings(tuple(interfaces), tuple(fits), tuple(sorted(inherited)))


@dataclass(frozen=True)
class Hop:
    """A class that extends the one above it in a chain and does not declare the member itself."""

    sub: ClassMember
    """At the class's name, with its own members."""
    extends_at: tuple[int, int]
    """Where its ``extends`` names the class above: (0-based line, column)."""


def descendants(bases: list[ClassMember], mentioning: Callable[[str], set[str]], parsed: ParsedFiles,
                 old: str, importing: Callable[[list[str]], list[str]]) -> Iterable[tuple[ClassMember, tuple[Hop, ...]]]:
    """Each base's subclasses that do not declare ``old``, theirs in turn, and so on down, each
    with the chain from the base: found by every name the class above goes by (its imports and
    re-exports under other names); the server confirms them (:func:`confirmed`)."""
    for base in bases:
        queue: list[tuple[ClassMember, tuple[Hop, ...]]] = [(base, ())]
        seen = {(base.path, base.class_name)}
        while queue:
            above, chain = queue.pop(0)
            names = heritage.names_of(above.class_name, above.path, mentioning, parsed, importing)
            for path in sorted(set[str]().union(*(mentioning(name) for name in names))):
                for hop in subclasses_of(parsed, path, names, old):
                    if (hop.sub.path, hop.sub.class_name) not in seen:
                        seen.add((hop.sub.path, hop.sub.class_name))
                        yield base, (*chain, hop)
                        queue.append((hop.sub, (*chain, hop)))


def confirmed(context: PlanContext, parsed: ParsedFiles, base: ClassMember, chain: tuple[Hop, ...]) -> bool:
    """Whether the server resolves each ``extends`` of the chain to the class above it (a match by
    name may be another class of that name)."""
    above = [base, *(hop.sub for hop in chain[:-1])]
    return all(heritage.extends_the_base(context, parsed, hop.sub.path, hop.extends_at, upper.path, upper.class_name)
               for upper, hop in zip(above, chain))


class EditStarts:
    """Where a plan's edits start, by file: (0-based line, column). A file's are listed when first
    asked: the passes need them only for the few files they parse, and look at the others' edits
    through their spans (a rename's thousand starts, listed on every plan, were a pass of their own)."""

    def __init__(self, edit: WorkspaceEdit) -> None:
        self._spans: dict[str, tuple[Span, ...]] = {}
        for change in edit.operations:
            if isinstance(change, FileChange):
                self._spans[change.path] = self._spans.get(change.path, ()) + change.spans
        self._starts: dict[str, set[tuple[int, int]]] = {}

    def paths(self) -> list[str]:
        """The files the plan edits."""
        return list(self._spans)

    def spans(self, path: str) -> tuple[Span, ...]:
        """The spans of ``path``'s edits (none for a file the plan does not edit)."""
        return self._spans.get(path, ())

    def get(self, path: str) -> set[tuple[int, int]]:
        """Where ``path``'s edits start (empty for a file the plan does not edit)."""
        if path not in self._starts:
            self._starts[path] = {(line, column) for line, column, _end_line, _end_column in self.spans(path)}
        return self._starts[path]


def edit_starts(edit: WorkspaceEdit) -> EditStarts:
    """Where the plan's edits start, by file."""
    return EditStarts(edit)


def renamed_interfaces(path: str, root: Node, text: bytes, renamed: set[tuple[int, int]], old: str,
                       sha256: str | None = None) -> list[RenamedInterface]:
    """The interfaces and object type aliases of a file whose member ``old`` the plan renames."""
    return [declared.interface for declared in interfaces_declaring(path, root, text, old, sha256) if declared.at & renamed]


@dataclass(frozen=True)
class DeclaredIn:
    """An interface (or object type alias) that declares the member."""

    interface: RenamedInterface
    at: frozenset[tuple[int, int]]
    """Where the member's name is (0-based line, column): more than one for overloaded signatures."""
    required: bool
    """Not optional (``old?:``): a class must have it to fit."""


def interfaces_declaring(path: str, root: Node, text: bytes, old: str, sha256: str | None = None) -> list[DeclaredIn]:
    """The interfaces and object type aliases of a file that declare a member ``old``, at any depth
    (engine.refactor.typescript.type_declarations; ``sha256``, the content's, keeps where they are)."""
    found = []
    for declaration in type_declarations.declarations(root, text, (path, sha256) if sha256 is not None else None):
        body = declaration.child_by_field_name("body") or declaration.child_by_field_name("value")
        if body is None or body.type not in ("interface_body", "object_type"):
            continue
        members = [(_name(member), member) for member in body.named_children if member.type in _MEMBER_SIGNATURES]
        target = [(name, member) for name, member in members if name is not None and name.text == old.encode()]
        if target:
            others = {name.text.decode() for name, member in members if name is not None and name.text
                      and name.text != old.encode() and not _optional(member)}
            name_node = declaration.child_by_field_name("name")
            extends = any(child.type in ("extends_type_clause", "extends_clause") for child in declaration.named_children)
            interface = RenamedInterface(path, name_node.text.decode() if name_node and name_node.text else "?",
                                         frozenset(others), extends, _in_declare_global(declaration))
            found.append(DeclaredIn(interface, frozenset(_start(name, text) for name, _member in target),
                                    any(not _optional(member) for _name_node, member in target)))
    return found


def required_members(root: Node, text: bytes) -> list[tuple[str, frozenset[str]]]:
    """Each interface and object type alias of a tree, at any depth: its name and its required members."""
    found = []
    for declaration in type_declarations.declarations(root, text):
        body = declaration.child_by_field_name("body") or declaration.child_by_field_name("value")
        name_node = declaration.child_by_field_name("name")
        if body is None or body.type not in ("interface_body", "object_type") or name_node is None or not name_node.text:
            continue
        names = (_name(member) for member in body.named_children if member.type in _MEMBER_SIGNATURES and not _optional(member))
        found.append((name_node.text.decode(), frozenset(name.text.decode() for name in names if name is not None and name.text)))
    return found


def _in_declare_global(declaration: Node) -> bool:
    above = declaration.parent
    while above is not None and above.type != "ambient_declaration":
        above = above.parent
    return above is not None and any(child.type == "global" for child in above.children)


def _optional(member: Node) -> bool:
    return any(child.type == "?" for child in member.children)


def class_members_named(path: str, root: Node, text: bytes, old: str) -> list[ClassMember]:
    """The classes of a file that declare an instance member ``old`` another class could see."""
    found = []
    for declaration in _walk(root, _CLASSES):
        body = declaration.child_by_field_name("body")
        name = _class_name(declaration)
        members = _own_members(body) if body is not None else {}
        if old in members and name is not None:  # an anonymous class has no name to find its uses by
            line, column = _start(members[old], text)
            found.append(ClassMember(path, line, column, name, frozenset(members)))
    return found


def subclasses_of(parsed: ParsedFiles, path: str, bases: frozenset[str], old: str) -> list[Hop]:
    """The classes of a file that extend one of ``bases`` by that name (``ns.Base`` too) and do not
    declare ``old`` themselves."""
    source = parsed.source(path)
    if source is None or not bases & _extended_names(path, source.sha256, source.text):
        return []  # no `extends` of one of them: no parse, no walk
    return [Hop(member, at) for extended, member, at in _extenders(parsed, path)
            if extended in bases and old not in member.members]


_EXTENDS = re.compile(r"\bextends\s+(?:[\w$]+\s*\.\s*)*([\w$]+)")


_INTERFACE_KEYWORDS: KeptByContent[bool] = KeptByContent(20_000)
_EXTENDED: KeptByContent[frozenset[str]] = KeptByContent(4096)


def _extended_names(path: str, sha256: str, text: str) -> frozenset[str]:
    """The names a file's text puts after ``extends`` (the last of ``ns.Base``): by path and content."""
    return _EXTENDED.get((path, sha256), lambda: frozenset(_EXTENDS.findall(text)) if "extends" in text else frozenset())


_EXTENDERS: KeptByContent[list[tuple[str, ClassMember, tuple[int, int]]]] = KeptByContent(4096)
"""Each file's classes that extend a name, by path and content: a hierarchy is walked down from
each class above, and each file would be walked again for each (zod's v3 types.ts, for each of
the forty classes below ZodType)."""


def _extenders(parsed: ParsedFiles, path: str) -> list[tuple[str, ClassMember, tuple[int, int]]]:
    """The classes of a file that extend a name: that name, the class (at its name, with its own
    members) and where its ``extends`` names it."""
    source = parsed.source(path)
    if source is None:
        return []
    return _EXTENDERS.get((path, source.sha256), lambda: _extenders_in(parsed, path, source.text.encode("utf-8")))


def _extenders_in(parsed: ParsedFiles, path: str, text: bytes) -> list[tuple[str, ClassMember, tuple[int, int]]]:
    found = []
    tree = parsed.get(path)
    for declaration in _walk(tree[1], _CLASSES) if tree is not None else []:
        body, name_node = declaration.child_by_field_name("body"), declaration.child_by_field_name("name")
        value = heritage.extended_name(declaration)
        name = _class_name(declaration) or ANONYMOUS
        if value is not None and value.text and body is not None:
            line, column = _start(name_node or declaration, text)
            found.append((value.text.decode(), ClassMember(path, line, column, name, frozenset(_own_members(body))),
                          _start(value, text)))
    return found


def _class_name(declaration: Node) -> str | None:
    name_node = declaration.child_by_field_name("name")
    if name_node is None and declaration.parent is not None and declaration.parent.type == "variable_declarator":
        name_node = declaration.parent.child_by_field_name("name")  # const Square = class { ... }
    return name_node.text.decode() if name_node is not None and name_node.text else None


def _own_members(body: Node) -> dict[str, Node]:
    """The instance members another class could see that a class body declares, by name: its
    public fields and methods, and its constructor's parameter properties."""
    members: dict[str, Node] = {}
    for member in body.named_children:
        name = _name(member) if member.type in _CLASS_MEMBERS else None
        if name is not None and name.text and not _static_or_hidden(member):
            members.setdefault(name.text.decode(), name)
    members.update({name: node for name, node in _parameter_properties(body)})
    return members


def object_constants_named(path: str, root: Node, text: bytes, old: str) -> list[ClassMember]:
    """A module's untyped object constants with a member ``old`` (``export const square = { area() {…}, name }``):
    an object typed as the interface (annotated, ``satisfies``, ``as``, or written where one is expected)
    is renamed by the server, one that meets the interface later, through its variable, is not."""
    found = []
    for statement in root.named_children:
        declaration = statement.child_by_field_name("declaration") if statement.type == "export_statement" else statement
        if declaration is None or declaration.type not in ("lexical_declaration", "variable_declaration"):
            continue
        for declarator in declaration.named_children:
            value, name = declarator.child_by_field_name("value"), declarator.child_by_field_name("name")
            if (declarator.type != "variable_declarator" or value is None or value.type != "object" or name is None
                    or name.type != "identifier" or not name.text or declarator.child_by_field_name("type") is not None):
                continue
            keys = _object_keys(value)
            if old in keys:
                line, column = _start(keys[old], text)
                shorthand = keys[old].type == "shorthand_property_identifier"
                found.append(ClassMember(path, line, column, name.text.decode(), frozenset(keys), is_object=True,
                                         shorthand=shorthand))
    return found


def _object_keys(literal: Node) -> dict[str, Node]:
    keys: dict[str, Node] = {}
    for member in literal.named_children:
        key = (member if member.type == "shorthand_property_identifier"
               else member.child_by_field_name("key") if member.type == "pair" else _name(member))
        if key is not None and key.type in ("property_identifier", "shorthand_property_identifier") and key.text:
            keys.setdefault(key.text.decode(), key)
    return keys


def left_behind(interfaces: Iterable[RenamedInterface], classes: Iterable[ClassMember],
                renamed: EditStarts) -> list[ClassMember]:
    """The classes whose member the plan leaves as it is though they have every other required
    member of a renamed interface."""
    interfaces = list(interfaces)
    return [member for member in classes if (member.line, member.column) not in renamed.get(member.path)
            and any(interface.others <= member.members for interface in interfaces)]


def refusal(interfaces: list[RenamedInterface], labels: list[str], old: str, new: str, *,
            followable: bool) -> ImplementationsLeftBehind:
    """``labels``: ``file:line (Class.member…)`` of each member left behind; ``followable`` when
    the rename could have followed them all (the user turned that off)."""
    names = ", ".join(sorted({interface.name for interface in interfaces}))
    listing = "\n  ".join(labels)
    why = (f"the server renames only the classes that declare `implements {names}` and the objects typed as it; these "
           f"would stop fitting {names} wherever they are used as one")
    if followable:
        return ImplementationsLeftBehind(
            f"renaming {names}.{old} to {new} leaves {len(labels)} member(s) of classes or object constants that satisfy "
            f"{names} without saying so as they are ({why}):\n  {listing}\nnothing was changed; rename without "
            f"--no-structural (structural=true) to rename them too, or add `implements {names}` to the classes (the type "
            f"`{names}` to the objects) that are meant to fit, then rename again", labels)
    return ImplementationsLeftBehind(
        f"renaming {names}.{old} to {new} would leave {len(labels)} member(s) that satisfy {names} without saying so, "
        f"which the rename cannot follow ({why}):\n  {listing}\nnothing was changed; add `implements {names}` to the "
        f"classes (the type `{names}` to the objects) that are meant to fit, then rename again, or rename each member "
        "first (each with its uses)", labels)


def _walk(node: Node, types: frozenset[str], through: frozenset[str] | None = None) -> Iterable[Node]:
    """The nodes of ``types`` under ``node``, looking inside only nodes of ``through`` when given."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in types:
            yield current
        if through is None or current.type in through:
            stack.extend(reversed(current.named_children))


def _name(member: Node) -> Node | None:
    name = member.child_by_field_name("name") or member.child_by_field_name("property")
    return name if name is not None and name.type == "property_identifier" else None


def _static_or_hidden(member: Node) -> bool:
    for child in member.children:
        if child.type == "static" or (child.type == "accessibility_modifier" and child.text
                                      and child.text.decode() in _HIDDEN):
            return True
    return False


def _parameter_properties(body: Node) -> list[tuple[str, Node]]:
    """``constructor(public name: string)``: the parameters a constructor makes public members."""
    found = []
    for member in body.named_children:
        name = _name(member)
        if member.type != "method_definition" or name is None or name.text != b"constructor":
            continue
        parameters = member.child_by_field_name("parameters")
        for parameter in parameters.named_children if parameters is not None else []:
            modifiers = [child for child in parameter.children if child.type in ("accessibility_modifier", "readonly")]
            pattern = parameter.child_by_field_name("pattern")
            hidden = any(child.text and child.text.decode() in _HIDDEN for child in modifiers)
            if modifiers and not hidden and pattern is not None and pattern.type == "identifier" and pattern.text:
                found.append((pattern.text.decode(), pattern))
    return found


def _start(node: Node, text: bytes) -> tuple[int, int]:
    """(0-based line, column in code points) of a node, as the plan's edits count (tree-sitter's
    columns are bytes)."""
    line, byte_column = node.start_point
    line_start = node.start_byte - byte_column
    return line, len(text[line_start:node.start_byte].decode("utf-8", errors="replace"))
