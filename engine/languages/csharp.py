"""C#: namespaces, classes, structs, records, interfaces, enums, delegates, methods, constructors,
properties, fields, constants and events. Added as one module: this profile and its rules."""

from __future__ import annotations

from typing import TYPE_CHECKING


from engine.languages.profile import Grammar, Language
from engine.languages.spec import Definition, LanguageRules, Where, body_field, name_field
from engine.symbols import SymbolKind

if TYPE_CHECKING:  # annotations only: the profiles are read by the thin CLI client, which loads no grammar
    from tree_sitter import Node


def _declared_names(node: Node) -> list[tuple[tuple[str, ...], Node]]:
    """``int a = 1, b;``: each declarator of the field's variable declaration."""
    found: list[tuple[tuple[str, ...], Node]] = []
    for declaration in (c for c in node.named_children if c.type == "variable_declaration"):
        for declarator in (c for c in declaration.named_children if c.type == "variable_declarator"):
            name = declarator.child_by_field_name("name")
            if name is not None:
                found.append(((), name))
    return found


def _namespace_name(node: Node) -> list[tuple[tuple[str, ...], Node]]:
    """``namespace Shop.Models``: the name ``Models`` in the logical scope ``Shop``, so that the
    address is ``Shop/Models/Order`` (a dot is no part of a name path)."""
    name = node.child_by_field_name("name")
    if name is None:
        return []
    parts: list[Node] = []
    while name.type == "qualified_name":
        qualifier, last = name.child_by_field_name("qualifier"), name.child_by_field_name("name")
        if qualifier is None or last is None:
            break
        parts.insert(0, last)
        name = qualifier
    parts.insert(0, name)
    scope = tuple((part.text or b"").decode() for part in parts[:-1])
    return [(scope, parts[-1])]


def _field_kind(node: Node, name: Node, kind: SymbolKind, parent: SymbolKind | None) -> SymbolKind:
    modifiers = {(c.text or b"").decode() for c in node.children if c.type == "modifier"}
    return SymbolKind.CONSTANT if "const" in modifiers or {"static", "readonly"} <= modifiers else kind


_BODY = body_field()

CSHARP_RULES = LanguageRules(
    language_id="csharp",
    definitions={
        "namespace_declaration": Definition(SymbolKind.NAMESPACE, _namespace_name, _BODY),
        "file_scoped_namespace_declaration": Definition(SymbolKind.NAMESPACE, _namespace_name),
        "class_declaration": Definition(SymbolKind.CLASS, name_field(), _BODY),
        "record_declaration": Definition(SymbolKind.CLASS, name_field(), _BODY),
        "struct_declaration": Definition(SymbolKind.STRUCT, name_field(), _BODY),
        "interface_declaration": Definition(SymbolKind.INTERFACE, name_field(), _BODY),
        "enum_declaration": Definition(SymbolKind.ENUM, name_field(), _BODY),
        "enum_member_declaration": Definition(SymbolKind.ENUM_MEMBER, name_field()),
        "delegate_declaration": Definition(SymbolKind.FUNCTION, name_field()),
        "method_declaration": Definition(SymbolKind.METHOD, name_field(), _BODY, walk_body=False),
        "constructor_declaration": Definition(SymbolKind.CONSTRUCTOR, name_field(), _BODY, walk_body=False),
        "property_declaration": Definition(SymbolKind.PROPERTY, name_field()),
        "field_declaration": Definition(SymbolKind.FIELD, _declared_names, where=Where.DECLARATIONS, refine=_field_kind),
        "event_field_declaration": Definition(SymbolKind.EVENT, _declared_names, where=Where.DECLARATIONS),
    },
    descend=frozenset({"declaration_list", "enum_member_declaration_list"}),
    doc_comment_types=frozenset({"comment"}),
    doc_comment_prefixes=("///", "/**"),
)

_KEYWORDS = frozenset(
    "abstract as base bool break byte case catch char checked class const continue decimal default delegate do double else"
    " enum event explicit extern false finally fixed float for foreach goto if implicit in int interface internal is lock"
    " long namespace new null object operator out override params private protected public readonly ref return sbyte"
    " sealed short sizeof stackalloc static string struct switch this throw true try typeof uint ulong unchecked unsafe"
    " ushort using virtual void volatile while".split()
)

PROFILES = (
    Language("csharp", "csharp", (".cs",), keywords=_KEYWORDS,
             contextual_keywords=frozenset("add alias async await get global init nameof record remove set value var when where yield".split()),
             grammar=Grammar("tree_sitter_c_sharp"), rules=CSHARP_RULES),
)
