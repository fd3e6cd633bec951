"""Java: classes, interfaces, enums, records, annotation types, methods, constructors, fields."""

from __future__ import annotations

from typing import TYPE_CHECKING


from engine.languages.spec import Definition, LanguageRules, Where, body_field, name_field
from engine.languages.profile import Grammar, Language
from engine.symbols import SymbolKind

if TYPE_CHECKING:  # annotations only: the profiles are read by the thin CLI client, which loads no grammar
    from tree_sitter import Node


def _field_names(node: Node) -> list[tuple[tuple[str, ...], Node]]:
    found: list[tuple[tuple[str, ...], Node]] = []
    for declarator in node.children_by_field_name("declarator"):
        name = declarator.child_by_field_name("name")
        if name is not None:
            found.append(((), name))
    return found


def _field_kind(node: Node, name: Node, kind: SymbolKind, parent: SymbolKind | None) -> SymbolKind:
    modifiers = next((c for c in node.children if c.type == "modifiers"), None)
    words = set((modifiers.text or b"").decode().split()) if modifiers is not None else set()
    if {"static", "final"} <= words or parent is SymbolKind.INTERFACE:
        return SymbolKind.CONSTANT
    return kind


_TYPE_BODY = body_field()

JAVA_RULES = LanguageRules(
    language_id="java",
    definitions={
        "class_declaration": Definition(SymbolKind.CLASS, name_field(), _TYPE_BODY),
        "interface_declaration": Definition(SymbolKind.INTERFACE, name_field(), _TYPE_BODY),
        "enum_declaration": Definition(SymbolKind.ENUM, name_field(), _TYPE_BODY),
        "record_declaration": Definition(SymbolKind.STRUCT, name_field(), _TYPE_BODY),
        "annotation_type_declaration": Definition(SymbolKind.INTERFACE, name_field(), _TYPE_BODY),
        "method_declaration": Definition(SymbolKind.METHOD, name_field(), body_field(), walk_body=False),
        "constructor_declaration": Definition(SymbolKind.CONSTRUCTOR, name_field(), body_field(), walk_body=False),
        "compact_constructor_declaration": Definition(
            SymbolKind.CONSTRUCTOR, name_field(), body_field(), walk_body=False
        ),
        "annotation_type_element_declaration": Definition(SymbolKind.METHOD, name_field()),
        "field_declaration": Definition(SymbolKind.FIELD, _field_names, where=Where.DECLARATIONS, refine=_field_kind),
        "constant_declaration": Definition(SymbolKind.CONSTANT, _field_names, where=Where.DECLARATIONS),
        "enum_constant": Definition(SymbolKind.ENUM_MEMBER, name_field()),
    },
    descend=frozenset({"enum_body_declarations", "annotation_type_body"}),
    doc_comment_types=frozenset({"block_comment"}),
    doc_comment_prefixes=("/**",),
)


PROFILES = (Language("java", "java", (".java",), grammar=Grammar("tree_sitter_java"), rules=JAVA_RULES),)
