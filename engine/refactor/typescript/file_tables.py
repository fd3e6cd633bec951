"""What the TypeScript rename passes need of a file whatever the rename is, kept by the hash of its
content: its exports (for the clash check) and where its object shorthands are (for the shorthand
pass). A long-lived engine (the CLI's daemon keeps one) then parses a file again only once it
changed, and a rename whose new name a file does not hold needs no parse of that file at all.

Nothing here depends on the rename asked: the table of a content is the same for every request,
so keeping it is no answer kept for a repeated request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from tree_sitter import Node

from engine.refactor.kept_by_content import KeptByContent

STAR = "star"
NAMES = "names"
DEFAULT = "default"


@dataclass(frozen=True)
class ExportStatement:
    line: int
    """1-based."""
    kind: str
    """NAMES (``export { a as b }``, ``export const a``, ``export * as ns from``), STAR (``export *
    from "x"``) or DEFAULT."""
    names: tuple[tuple[int, str], ...] = ()
    """(start byte, text) of each public name, for NAMES."""
    specifier: str = ""
    """The module specifier as written, quotes stripped, for STAR."""


@dataclass(frozen=True)
class FileTable:
    exports: tuple[ExportStatement, ...]
    shorthands: frozenset[int]
    """Start bytes of the object-literal shorthands (``{ height }``)."""

    named_exports: frozenset[str]
    """The names its NAMES statements export: a rename changes its exports only through one of
    them, or through an ``export *``."""
    exports_all_of_another: bool
    """Whether it has an ``export * from``: what it exports changes with that module's exports."""


def table_of(key: tuple[str, str], parse: Callable[[], Node]) -> FileTable:
    """The table of the content ``key`` ((language, sha256)), from ``parse()``'s tree when not kept."""
    return _TABLES.get(key, lambda: _table(parse()))


def _table(root: Node) -> FileTable:
    exports = tuple(statement for node in root.named_children if node.type == "export_statement"
                    if (statement := _export(node)) is not None)
    named = frozenset(text for statement in exports if statement.kind == NAMES for _start, text in statement.names)
    return FileTable(exports, frozenset(_shorthands(root)), named, any(statement.kind == STAR for statement in exports))


def _export(statement: Node) -> ExportStatement | None:
    line = statement.start_point[0] + 1
    source_node = statement.child_by_field_name("source")
    declaration = statement.child_by_field_name("declaration")
    clause = next((c for c in statement.named_children if c.type == "export_clause"), None)
    if clause is not None:
        publics = [specifier.child_by_field_name("alias") or specifier.child_by_field_name("name")
                   for specifier in clause.named_children]
        return ExportStatement(line, NAMES, _named(p for p in publics if p is not None))
    if declaration is not None:
        if declaration.type == "function_signature":
            return None  # an overload signature: its implementation exports the name once
        return ExportStatement(line, NAMES, _named(declared_names(declaration)))
    if source_node is not None:
        namespace = next((c for c in statement.named_children if c.type == "namespace_export"), None)
        if namespace is not None:
            return ExportStatement(line, NAMES, _named(namespace.named_children))
        text = (source_node.text or b"").decode("utf-8", errors="replace").strip("'\"`")
        return ExportStatement(line, STAR, specifier=text)
    if any(child.type == "default" for child in statement.children):
        return ExportStatement(line, DEFAULT)
    return None


def _named(nodes: Iterable[Node]) -> tuple[tuple[int, str], ...]:
    return tuple((node.start_byte, (node.text or b"").decode("utf-8", errors="replace")) for node in nodes)


def declared_names(declaration: Node) -> list[Node]:
    name = declaration.child_by_field_name("name")
    if name is not None:
        return [name]
    names = []
    for declarator in declaration.named_children:
        if declarator.type == "variable_declarator":
            target = declarator.child_by_field_name("name")
            if target is not None and target.type == "identifier":
                names.append(target)
    return names


def _shorthands(root: Node) -> list[int]:
    found = []
    cursor = root.walk()
    visited_children = False
    while True:
        if not visited_children:
            node = cursor.node
            if node is not None and node.type == "shorthand_property_identifier":
                found.append(node.start_byte)
            if cursor.goto_first_child():
                continue
        if cursor.goto_next_sibling():
            visited_children = False
        elif cursor.goto_parent():
            visited_children = True
        else:
            return found


_TABLES: KeptByContent[FileTable] = KeptByContent(20_000)

