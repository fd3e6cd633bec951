"""Rust: a method in an ``impl`` block is ``Type/method`` under its type."""

from __future__ import annotations

from typing import TYPE_CHECKING


from engine.languages.spec import Definition, LanguageRules, ScopeBlock, Where, body_field, name_field
from engine.languages.profile import ASCII_IDENTIFIER, Grammar, Language
from engine.symbols import SymbolKind

if TYPE_CHECKING:  # annotations only: the profiles are read by the thin CLI client, which loads no grammar
    from tree_sitter import Node


def _impl_type(node: Node) -> str | None:
    current = node.child_by_field_name("type")
    while current is not None:
        if current.type in ("type_identifier", "primitive_type"):
            return (current.text or b"").decode()
        # generic_type has a ``type`` field, scoped_type_identifier a ``name`` field;
        # references and pointers wrap theirs in ``type``.
        current = current.child_by_field_name("type") or current.child_by_field_name("name")
    return None


RUST_RULES = LanguageRules(
    language_id="rust",
    definitions={
        "function_item": Definition(
            SymbolKind.FUNCTION, name_field(), body_field(), in_type=SymbolKind.METHOD, body_is_code=True
        ),
        "function_signature_item": Definition(SymbolKind.FUNCTION, name_field(), in_type=SymbolKind.METHOD),
        "struct_item": Definition(SymbolKind.STRUCT, name_field(), body_field()),
        "union_item": Definition(SymbolKind.STRUCT, name_field(), body_field()),
        "enum_item": Definition(SymbolKind.ENUM, name_field(), body_field()),
        "enum_variant": Definition(SymbolKind.ENUM_MEMBER, name_field()),
        "trait_item": Definition(SymbolKind.INTERFACE, name_field(), body_field()),
        "mod_item": Definition(SymbolKind.MODULE, name_field(), body_field()),
        "field_declaration": Definition(SymbolKind.FIELD, name_field(), where=Where.DECLARATIONS),
        "const_item": Definition(SymbolKind.CONSTANT, name_field(), where=Where.DECLARATIONS),
        "static_item": Definition(SymbolKind.VARIABLE, name_field(), where=Where.DECLARATIONS),
        "type_item": Definition(SymbolKind.TYPE_PARAMETER, name_field()),
        "associated_type": Definition(SymbolKind.TYPE_PARAMETER, name_field()),
        "macro_definition": Definition(SymbolKind.FUNCTION, name_field()),
    },
    scope_blocks={"impl_item": ScopeBlock(_impl_type, body_field())},
    descend=frozenset({"block", "expression_statement", "declaration_list"}),
    leading=frozenset({"attribute_item"}),
    doc_comment_types=frozenset({"line_comment", "block_comment"}),
    doc_comment_prefixes=("///", "/**", "//!"),
)


PROFILES = (
    Language(
        "rust", "rust", (".rs",),
        keywords=frozenset(
            "as break const continue crate else enum extern false fn for if impl in let loop match mod move mut pub ref"
            " return self Self static struct super trait true type unsafe use where while async await dyn".split()
        ),
        contextual_keywords=frozenset({"union", "macro_rules", "raw", "safe"}),
        identifier_token=ASCII_IDENTIFIER, grammar=Grammar("tree_sitter_rust"), rules=RUST_RULES,
    ),
)
