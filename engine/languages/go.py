"""Go: a method is ``Type/Method`` under its receiver type, wherever that type is declared."""

from __future__ import annotations

from typing import TYPE_CHECKING


from engine.languages.spec import Definition, LanguageRules, Where, body_field, first_child_of_type, name_field
from engine.languages.profile import ASCII_IDENTIFIER, FileMoves, Grammar, ImportStyle, Language, SymbolMoves
from engine.symbols import SymbolKind

if TYPE_CHECKING:  # annotations only: the profiles are read by the thin CLI client, which loads no grammar
    from tree_sitter import Node


def _receiver_type(node: Node) -> str | None:
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return None
    stack = list(receiver.named_children)
    while stack:
        current = stack.pop(0)
        if current.type == "type_identifier":
            return (current.text or b"").decode()
        stack[0:0] = current.named_children
    return None


def _method_name(node: Node) -> list[tuple[tuple[str, ...], Node]]:
    name = node.child_by_field_name("name")
    receiver = _receiver_type(node)
    if name is None:
        return []
    return [(((receiver,) if receiver else ()), name)]


def _type_kind(node: Node, name: Node, kind: SymbolKind, parent: SymbolKind | None) -> SymbolKind:
    type_node = node.child_by_field_name("type")
    if type_node is None:
        return kind
    return {"struct_type": SymbolKind.STRUCT, "interface_type": SymbolKind.INTERFACE}.get(type_node.type, kind)


def _type_body(node: Node) -> Node | None:
    type_node = node.child_by_field_name("type")
    if type_node is None:
        return None
    if type_node.type == "struct_type":
        return first_child_of_type(type_node, ("field_declaration_list",))
    if type_node.type == "interface_type":
        return type_node
    return None


GO_RULES = LanguageRules(
    language_id="go",
    definitions={
        "function_declaration": Definition(SymbolKind.FUNCTION, name_field(), body_field(), body_is_code=True),
        "method_declaration": Definition(
            SymbolKind.METHOD, _method_name, body_field(), in_type=SymbolKind.METHOD, body_is_code=True
        ),
        "type_spec": Definition(SymbolKind.CLASS, name_field(), _type_body, refine=_type_kind),
        "type_alias": Definition(SymbolKind.CLASS, name_field()),
        "field_declaration": Definition(SymbolKind.FIELD, name_field(), where=Where.DECLARATIONS),
        "method_elem": Definition(SymbolKind.METHOD, name_field()),
        "const_spec": Definition(SymbolKind.CONSTANT, name_field(), where=Where.DECLARATIONS),
        "var_spec": Definition(SymbolKind.VARIABLE, name_field(), where=Where.DECLARATIONS),
    },
    groups=frozenset({"type_declaration", "const_declaration", "var_declaration"}),
    descend=frozenset({"var_spec_list"}),
)


PROFILES = (
    Language(
        "go", "go", (".go",),
        keywords=frozenset(
            "break case chan const continue default defer else fallthrough for func go goto if import interface map"
            " package range return select struct switch type var".split()
        ),
        identifier_token=ASCII_IDENTIFIER, grammar=Grammar("tree_sitter_go"), rules=GO_RULES, imports=ImportStyle.GO_PACKAGES,
        symbol_moves=SymbolMoves.SAME_PACKAGE, file_moves=FileMoves.SAME_FOLDER_FREE,
    ),
)
