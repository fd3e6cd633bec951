"""TypeScript, TSX and JavaScript."""

from __future__ import annotations

from typing import TYPE_CHECKING


from engine.languages.spec import Definition, LanguageRules, Where, body_field, name_field
from engine.languages.profile import SCRIPT_IDENTIFIER, Grammar, ImportStyle, Language
from engine.symbols import SymbolKind

if TYPE_CHECKING:  # annotations only: the profiles are read by the thin CLI client, which loads no grammar
    from tree_sitter import Node

_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})


def _declarator_names(node: Node) -> list[tuple[tuple[str, ...], Node]]:
    """Names bound by ``const a = 1, b = 2`` (destructuring patterns are not symbols)."""
    found: list[tuple[tuple[str, ...], Node]] = []
    for declarator in node.named_children:
        if declarator.type == "variable_declarator":
            name = declarator.child_by_field_name("name")
            if name is not None and name.type == "identifier":
                found.append(((), name))
    return found


def _declarator_kind(node: Node, name: Node, kind: SymbolKind, parent: SymbolKind | None) -> SymbolKind:
    declarator = name.parent
    value = declarator.child_by_field_name("value") if declarator is not None else None
    if value is not None and value.type in _FUNCTION_VALUES:
        return SymbolKind.FUNCTION
    keyword = node.children[0].type if node.children else ""
    return SymbolKind.CONSTANT if keyword == "const" else kind


def _self(node: Node) -> list[tuple[tuple[str, ...], Node]]:
    return [((), node)]


def _field_kind(node: Node, name: Node, kind: SymbolKind, parent: SymbolKind | None) -> SymbolKind:
    value = node.child_by_field_name("value")
    return SymbolKind.METHOD if value is not None and value.type in _FUNCTION_VALUES else kind


def _rules(language_id: str, *, typed: bool) -> LanguageRules:
    definitions = {
        "function_declaration": Definition(SymbolKind.FUNCTION, name_field(), body_field(), body_is_code=True),
        "generator_function_declaration": Definition(
            SymbolKind.FUNCTION, name_field(), body_field(), body_is_code=True
        ),
        "class_declaration": Definition(SymbolKind.CLASS, name_field(), body_field()),
        "class": Definition(SymbolKind.CLASS, name_field(), body_field()),
        "method_definition": Definition(SymbolKind.METHOD, name_field(), body_field(), body_is_code=True),
        "field_definition": Definition(SymbolKind.FIELD, name_field("property"), refine=_field_kind),
        "lexical_declaration": Definition(
            SymbolKind.VARIABLE, _declarator_names, where=Where.DECLARATIONS, refine=_declarator_kind
        ),
        "variable_declaration": Definition(
            SymbolKind.VARIABLE, _declarator_names, where=Where.DECLARATIONS, refine=_declarator_kind
        ),
    }
    if typed:
        definitions |= {
            "function_signature": Definition(SymbolKind.FUNCTION, name_field()),
            "abstract_class_declaration": Definition(SymbolKind.CLASS, name_field(), body_field()),
            "interface_declaration": Definition(SymbolKind.INTERFACE, name_field(), body_field()),
            "enum_declaration": Definition(SymbolKind.ENUM, name_field(), body_field()),
            "type_alias_declaration": Definition(SymbolKind.TYPE_PARAMETER, name_field()),
            "internal_module": Definition(SymbolKind.NAMESPACE, name_field(), body_field()),
            "module": Definition(SymbolKind.MODULE, name_field(), body_field()),
            "method_signature": Definition(SymbolKind.METHOD, name_field()),
            "abstract_method_signature": Definition(SymbolKind.METHOD, name_field()),
            "property_signature": Definition(SymbolKind.PROPERTY, name_field()),
            "public_field_definition": Definition(SymbolKind.FIELD, name_field(), refine=_field_kind),
            # Enum members: a bare name or ``Name = value`` inside an enum body.
            "property_identifier": Definition(SymbolKind.ENUM_MEMBER, _self, where=Where.DECLARATIONS),
            "enum_assignment": Definition(SymbolKind.ENUM_MEMBER, name_field(), where=Where.DECLARATIONS),
        }
    return LanguageRules(
        language_id=language_id,
        definitions=definitions,
        wrappers={"export_statement": "declaration", "ambient_declaration": None},
        descend=frozenset(
            {
                "statement_block", "if_statement", "else_clause", "for_statement", "for_in_statement",
                "while_statement", "do_statement", "try_statement", "catch_clause", "finally_clause",
                "switch_statement", "switch_body", "switch_case", "expression_statement", "labeled_statement",
            }
        ),
        leading=frozenset({"decorator"}),
        doc_comment_prefixes=("/**",),
        constructor_names=frozenset({"constructor"}),
    )


TYPESCRIPT_RULES = _rules("typescript", typed=True)
TSX_RULES = _rules("typescriptreact", typed=True)
JAVASCRIPT_RULES = _rules("javascript", typed=False)


_KEYWORDS = frozenset(
    "break case catch class const continue debugger default delete do else enum export extends false finally for"
    " function if import in instanceof new null return super switch this throw true try typeof var void while with"
    " let static yield await implements interface package private protected public".split()
)
_CONTEXTUAL = frozenset(
    "abstract accessor any as asserts async declare from get global infer is keyof module namespace never of out"
    " override readonly require satisfies set type unique unknown".split()
)


def _profile(language_id: str, extensions: tuple[str, ...], grammar: Grammar, rules: LanguageRules) -> Language:
    """TypeScript and JavaScript are one family: one server, one import resolution, one keyword set."""
    # Overload signatures and their implementation, a getter and its setter, are one name:
    # renamed, moved and deleted together.
    return Language(language_id, "typescript", extensions, keywords=_KEYWORDS, contextual_keywords=_CONTEXTUAL,
                    identifier_token=SCRIPT_IDENTIFIER, grammar=grammar, rules=rules, imports=ImportStyle.ES_MODULES,
                    one_name_definitions=True)


PROFILES = (
    _profile("typescript", (".ts", ".mts", ".cts"), Grammar("tree_sitter_typescript", "language_typescript"), TYPESCRIPT_RULES),
    _profile("typescriptreact", (".tsx",), Grammar("tree_sitter_typescript", "language_tsx"), TSX_RULES),
    _profile("javascript", (".js", ".mjs", ".cjs"), Grammar("tree_sitter_javascript"), JAVASCRIPT_RULES),
    _profile("javascriptreact", (".jsx",), Grammar("tree_sitter_javascript"), JAVASCRIPT_RULES),
)
