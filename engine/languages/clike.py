"""C and C++: functions, prototypes, structs, classes, enums, typedefs, macros, namespaces."""

from __future__ import annotations

from typing import TYPE_CHECKING


from engine.languages.spec import Definition, LanguageRules, Where, body_field, name_field
from engine.languages.profile import Grammar, Language
from engine.symbols import SymbolKind

if TYPE_CHECKING:  # annotations only: the profiles are read by the thin CLI client, which loads no grammar
    from tree_sitter import Node

_NAME_TYPES = frozenset(
    {"identifier", "field_identifier", "type_identifier", "destructor_name", "operator_name", "namespace_identifier"}
)
_FUNCTION_DECLARATOR = "function_declarator"


def _unwrap_declarator(declarator: Node | None) -> tuple[tuple[str, ...], Node] | None:
    """The name inside a declarator (``*p``, ``a[3]``, ``f(int)``, ``ns::Foo::bar``), with its qualifiers."""
    scope: list[str] = []
    while declarator is not None:
        kind = declarator.type
        if kind in _NAME_TYPES:
            return tuple(scope), declarator
        if kind == "qualified_identifier":
            qualifier = declarator.child_by_field_name("scope")
            if qualifier is not None:
                named = qualifier.child_by_field_name("name") if qualifier.type == "template_type" else qualifier
                scope.append(((named or qualifier).text or b"").decode())
            declarator = declarator.child_by_field_name("name")
            continue
        if kind == "template_function":
            declarator = declarator.child_by_field_name("name")
            continue
        next_declarator = declarator.child_by_field_name("declarator")
        if next_declarator is None:
            # parenthesized_declarator keeps its inner declarator as a plain child.
            next_declarator = declarator.named_children[0] if declarator.named_child_count else None
        declarator = next_declarator
    return None


def _declarator_names(node: Node) -> list[tuple[tuple[str, ...], Node]]:
    found = []
    for declarator in node.children_by_field_name("declarator"):
        named = _unwrap_declarator(declarator)
        if named is not None:
            found.append(named)
    return found


def _is_function(name: Node, stop: Node) -> bool:
    current = name.parent
    while current is not None and current != stop:
        if current.type == _FUNCTION_DECLARATOR:
            return True
        current = current.parent
    return False


def _declaration_kind(node: Node, name: Node, kind: SymbolKind, parent: SymbolKind | None) -> SymbolKind:
    if not _is_function(name, node):
        return kind
    if parent is None or parent in (SymbolKind.NAMESPACE, SymbolKind.MODULE):
        return SymbolKind.FUNCTION
    # Inside a class: no return type means a constructor or destructor.
    return SymbolKind.METHOD if node.child_by_field_name("type") is not None else SymbolKind.CONSTRUCTOR


def _function_kind(node: Node, name: Node, kind: SymbolKind, parent: SymbolKind | None) -> SymbolKind:
    if kind is SymbolKind.METHOD and node.child_by_field_name("type") is None:
        return SymbolKind.CONSTRUCTOR
    return kind


def _named_with_body(node: Node) -> list[tuple[tuple[str, ...], Node]]:
    """``struct P {...}`` is a definition; ``struct P;`` and ``struct P p`` only mention one."""
    name = node.child_by_field_name("name")
    if name is None or node.child_by_field_name("body") is None:
        return []
    return [((), name)]


def _typedef_kind(node: Node, name: Node, kind: SymbolKind, parent: SymbolKind | None) -> SymbolKind:
    target = node.child_by_field_name("type")
    kinds = {
        "struct_specifier": SymbolKind.STRUCT,
        "union_specifier": SymbolKind.STRUCT,
        "class_specifier": SymbolKind.CLASS,
        "enum_specifier": SymbolKind.ENUM,
    }
    return kinds.get(target.type, kind) if target is not None else kind


def _typedef_body(node: Node) -> Node | None:
    target = node.child_by_field_name("type")
    return target.child_by_field_name("body") if target is not None else None


def _macro_name(node: Node) -> list[tuple[tuple[str, ...], Node]]:
    """A ``#define``'s name, except an include guard's (``#ifndef X_H`` / ``#define X_H``)."""
    name = node.child_by_field_name("name")
    if name is None:
        return []
    guard = node.parent
    if node.child_by_field_name("value") is None and guard is not None and guard.type == "preproc_ifdef":
        guarded = guard.child_by_field_name("name")
        if guarded is not None and guarded.text == name.text:
            return []
    return [((), name)]


_COMMON: dict[str, Definition] = {
    "function_definition": Definition(
        SymbolKind.FUNCTION,
        lambda node: _declarator_names(node)[:1],
        body_field(),
        in_type=SymbolKind.METHOD,
        refine=_function_kind,
        walk_body=False,
    ),
    "declaration": Definition(
        SymbolKind.VARIABLE, _declarator_names, where=Where.DECLARATIONS, refine=_declaration_kind
    ),
    "field_declaration": Definition(
        SymbolKind.FIELD, _declarator_names, where=Where.DECLARATIONS, refine=_declaration_kind
    ),
    "struct_specifier": Definition(SymbolKind.STRUCT, _named_with_body, body_field()),
    "union_specifier": Definition(SymbolKind.STRUCT, _named_with_body, body_field()),
    "enum_specifier": Definition(SymbolKind.ENUM, _named_with_body, body_field()),
    "enumerator": Definition(SymbolKind.ENUM_MEMBER, name_field()),
    "type_definition": Definition(SymbolKind.CLASS, _declarator_names, _typedef_body, refine=_typedef_kind),
    "preproc_def": Definition(SymbolKind.CONSTANT, _macro_name),
    "preproc_function_def": Definition(SymbolKind.FUNCTION, name_field()),
}

_DESCEND = frozenset(
    {
        "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef",
        "linkage_specification", "declaration_list",
    }
)

C_RULES = LanguageRules(
    language_id="c",
    definitions=dict(_COMMON),
    descend=_DESCEND,
)

CPP_RULES = LanguageRules(
    language_id="cpp",
    definitions=_COMMON
    | {
        "class_specifier": Definition(SymbolKind.CLASS, _named_with_body, body_field()),
        "namespace_definition": Definition(SymbolKind.NAMESPACE, name_field(), body_field()),
        "alias_declaration": Definition(SymbolKind.TYPE_PARAMETER, name_field()),
    },
    wrappers={"template_declaration": None},
    descend=_DESCEND,
)


PROFILES = (
    Language("c", "c", (".c", ".h"), grammar=Grammar("tree_sitter_c"), rules=C_RULES),
    Language("cpp", "c", (".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp"), grammar=Grammar("tree_sitter_cpp"),
             rules=CPP_RULES),
)
