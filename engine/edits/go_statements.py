"""A Go file's top-level declarations as the check's scope reads them (engine.edits.check_scope).

Each declaration is read as its interface: a function or method without its body (Go declares
every parameter and result type, so a body never changes what others see), a type, var or const
declaration whole (a var's type may be inferred from its value, and a const group's values follow
each other through ``iota``). Layout and comments are not part of it. A method also changes its
receiver type's method set, so it binds the type's name beside its own.

What this cannot read makes the whole file count as changed (None): a file that does not parse, a
cgo file (its C preamble is a comment), and a change of package clause or of a ``//go:``
directive (a build constraint, ``go:embed``, ``go:linkname``), through a declaration binding
``*``, which the scope takes as "anything".
"""

from __future__ import annotations

import functools
from typing import Iterator

from tree_sitter import Node

from engine.extract.treesitter import TreeSitterExtractor

Declaration = tuple[str, frozenset[str], str]
"""(its interface's tokens, the names it binds, the same tokens as one text to find words in)."""

_EVERYTHING = frozenset({"*"})
_SPEC_NAMES = {"type_spec": "name", "type_alias": "name", "var_spec": "name", "const_spec": "name"}
_parser = TreeSitterExtractor()


@functools.lru_cache(maxsize=64)
def go_declarations(data: bytes) -> tuple[Declaration, ...] | None:
    """The file's top-level declarations, by its content (see the module's docstring)."""
    tree = _parser.parse("go", data)
    root = tree.root_node
    if root.has_error:
        return None
    declarations: list[Declaration] = []
    directives: list[str] = []
    for node in root.named_children:
        if node.type == "comment":
            text = _text(node).strip()
            if text.startswith("//go:") or text.startswith("// +build"):
                directives.append(text)
            continue
        if node.type == "import_declaration" and '"C"' in _text(node):
            return None  # cgo: the C preamble in the comment above it is code
        tokens = " ".join(_tokens(node))
        declarations.append((tokens, _bound(node), tokens))
    declarations.append(("directives " + "\n".join(directives), _EVERYTHING, ""))
    return tuple(declarations)


def _bound(node: Node) -> frozenset[str]:
    if node.type == "package_clause":
        return _EVERYTHING
    if node.type == "function_declaration":
        return frozenset(_names(node.child_by_field_name("name")))
    if node.type == "method_declaration":
        return frozenset([*_names(node.child_by_field_name("name")), *_receiver_types(node)])
    bound: set[str] = set()
    pending = list(node.named_children)
    while pending:
        child = pending.pop()
        field = _SPEC_NAMES.get(child.type)
        if field is not None:
            for name in child.children_by_field_name(field):
                bound.update(_names(name))
        elif child.type in ("type_spec_list", "var_spec_list", "const_spec_list"):
            pending.extend(child.named_children)
    return frozenset(bound)


def _receiver_types(method: Node) -> Iterator[str]:
    receiver = method.child_by_field_name("receiver")
    pending = list(receiver.named_children) if receiver is not None else []
    while pending:
        child = pending.pop()
        if child.type == "type_identifier":
            yield _text(child)
            return
        pending.extend(reversed(child.named_children))


def _names(node: Node | None) -> list[str]:
    return [] if node is None else [_text(node)]


def _tokens(node: Node) -> Iterator[str]:
    """The declaration's tokens, comments and a function's body left out."""
    body = node.child_by_field_name("body") if node.type in ("function_declaration", "method_declaration") else None
    pending = [node]
    while pending:
        current = pending.pop()
        if current.type == "comment" or (body is not None and current.id == body.id):
            continue
        if current.child_count == 0:
            yield _text(current)
        else:
            pending.extend(reversed(current.children))


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", errors="replace")
