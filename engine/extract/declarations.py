"""Every name a file declares, at any depth: what a server's outline could list, for a caller
that must know whether the tree's symbols can stand in for the server's (engine.refactor.syntactic_target).

Read from the syntax tree: a node that is the ``name``, ``key`` or ``alias`` of its parent (a
function, class, method, field, variable, enum member, object member, import), every identifier
of a destructuring pattern or a parameter (TypeScript's parameter properties are fields), and
the names an import clause binds. In C and C++ a name is declared as its parent's
``declarator`` (functions, variables, fields, typedefs and parameters, through pointer, array
and function declarators) or ``name`` (tags, enumerators, namespaces, macros, and the member a
qualified definition such as ``Box::area`` names); a tag named as a declaration's type
(``struct box *b``) is a mention, while a forward declaration (``struct box;``) counts. It errs
towards more names: one too many only makes the caller ask the server.
"""

from __future__ import annotations

import functools

from tree_sitter import Node

from engine.extract.treesitter import TreeSitterExtractor

_NAME_FIELDS = ("name", "key", "alias", "declarator")
_PATTERN_FIELDS = ("pattern", "left")
_NAMES = frozenset({"identifier", "property_identifier", "type_identifier", "private_property_identifier",
                    "shorthand_property_identifier_pattern", "shorthand_property_identifier", "statement_identifier",
                    "field_identifier", "namespace_identifier"})
_BINDING_PARENTS = frozenset({"import_clause", "namespace_import", "object_pattern", "array_pattern", "rest_pattern",
                              "pair_pattern", "assignment_pattern", "object_assignment_pattern"})
_TAGS = frozenset({"struct_specifier", "union_specifier", "enum_specifier", "class_specifier"})
_parser = TreeSitterExtractor()


def declared_names(language_id: str | None, data: bytes) -> list[str]:
    """The names declared in the file, once per declaration."""
    return list(_declared(language_id or "", data))


@functools.lru_cache(maxsize=16)
def _declared(language_id: str, data: bytes) -> tuple[str, ...]:
    root = _parser.parse(language_id, data).root_node
    names: list[str] = []
    pending = [root]
    while pending:
        node = pending.pop()
        pending.extend(node.children)
        if node.type not in _NAMES:
            continue
        parent = node.parent
        if parent is None:
            continue
        if _mentions_a_tag(parent):
            continue
        if parent.type in _BINDING_PARENTS or node.type == "shorthand_property_identifier_pattern" \
                or any(_is(parent.child_by_field_name(field), node) for field in (*_NAME_FIELDS, *_PATTERN_FIELDS)):
            names.append((node.text or b"").decode("utf-8", errors="replace"))
    return tuple(names)


def _mentions_a_tag(parent: Node) -> bool:
    """``struct box`` without a body as another declaration's type: the tag is used, not declared."""
    holder = parent.parent
    return parent.type in _TAGS and parent.child_by_field_name("body") is None and holder is not None \
        and _is(holder.child_by_field_name("type"), parent)


def _is(candidate: Node | None, node: Node) -> bool:
    return candidate is not None and candidate.id == node.id
