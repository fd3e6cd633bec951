"""The names a class goes by where other classes extend it, and the server's word on an ``extends``.

A class below a renamed member's class may name its base another way than the base's own name:
``import { Base as B } from "./base"; class Sub extends B``, or through a barrel that re-exports it
under another name (``export { Base as Foundation } from "./base"``), or through a namespace
(``extends shapes.Base``). :func:`names_of` finds those names by following ``Base as X`` in the
files that spell the base's name, then each ``X`` in turn (a default export imported under a name of
its own, or ``const B = Base``, is not followed). Name matching finds more than is there (an
unrelated class may have the same name), so each ``extends`` it finds is put to the server's
definition request (:func:`extends_the_base`), which resolves imports, aliases and barrels as the
compiler does: an ``extends`` the server resolves elsewhere is not counted; where no server can
say, the match stands (a refusal, never a silent miss).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable, Iterable

from tree_sitter import Node

from engine.errors import GraftError
from engine.positions import Position
from engine.refactor.kept_by_content import KeptByContent
from engine.refactor.typescript.clashes import ParsedFiles

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext

_ALIAS_ROUNDS = 4
"""How many times an alias may be renamed again (``Base as B``, then ``B as C``, …)."""
_CLASSES = frozenset({"class_declaration", "abstract_class_declaration", "class"})


def names_of(name: str, mentioning: Callable[[str], set[str]], parsed: ParsedFiles) -> frozenset[str]:
    """``name`` and every name it is imported or re-exported as (``name as X``), as far as that goes."""
    names, new = {name}, {name}
    for _round in range(_ALIAS_ROUNDS):
        found: set[str] = set()
        for alias_of in new:
            for path in sorted(mentioning(alias_of)):
                found.update(alias for name_there, alias in _aliases(parsed, path) if name_there == alias_of)
        new = found - names
        if not new:
            break
        names |= new
    return frozenset(names)


_AS = re.compile(r"(?<![\w$.])([A-Za-z_$][\w$]*)\s+as\s+([A-Za-z_$][\w$]*)")
_ALIASES: KeptByContent[list[tuple[str, str]]] = KeptByContent(4096)
"""Each file's ``X as Y`` pairs, by path and content: looked up once for every class of a hierarchy."""


def _aliases(parsed: ParsedFiles, path: str) -> list[tuple[str, str]]:
    source = parsed.source(path)
    if source is None:
        return []
    text = source.text
    return _ALIASES.get((path, source.sha256),
                        lambda: [(match.group(1), match.group(2)) for match in _AS.finditer(text)] if " as " in text else [])


def extended_name(declaration: Node) -> Node | None:
    """The identifier a class's ``extends`` names (``Base``, the ``Base`` of ``ns.Base``, of
    ``Base<T>``); None when it extends no name (a call, no ``extends`` at all)."""
    heritage = next((child for child in declaration.named_children if child.type == "class_heritage"), None)
    extends = next((child for child in heritage.named_children if child.type == "extends_clause"), None) if heritage else None
    value = extends.child_by_field_name("value") if extends is not None else None
    if value is not None and value.type == "member_expression":
        value = value.child_by_field_name("property")
    return value if value is not None and value.type in ("identifier", "property_identifier") else None


def extends_the_base(context: PlanContext, parsed: ParsedFiles, sub_path: str, at: tuple[int, int],
                     base_path: str, base_name: str) -> bool:
    """Whether the server resolves the name at ``at`` (an ``extends``) to the class ``base_name``
    declared in ``base_path``; True where there is no server, or it cannot say."""
    source = parsed.source(sub_path)
    if context.services is None or source is None:
        return True
    try:
        locations = context.services.definition(source, Position(*at)).value
    except GraftError:
        return True
    if not locations:
        return True
    declared = class_lines(parsed, base_path, base_name)
    return any(location.file == base_path and any(first <= location.range.start.line <= last for first, last in declared)
               for location in locations)


def class_lines(parsed: ParsedFiles, path: str, name: str) -> list[tuple[int, int]]:
    """Each class ``name`` of a file: the 0-based lines from where its declaration starts (its
    decorators, ``export``) to its name."""
    tree = parsed.get(path)
    if tree is None:
        return []
    found = []
    for declaration in _walk(tree[1]):
        name_node = declaration.child_by_field_name("name")
        if name_node is None and declaration.parent is not None and declaration.parent.type == "variable_declarator":
            name_node = declaration.parent.child_by_field_name("name")
        if name_node is not None and name_node.text == name.encode():
            outer = declaration.parent if declaration.parent is not None and declaration.parent.type == "export_statement" else declaration
            found.append((outer.start_point[0], name_node.start_point[0]))
    return found


def _walk(node: Node) -> Iterable[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in _CLASSES:
            yield current
        stack.extend(reversed(current.named_children))
