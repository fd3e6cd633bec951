"""The vocabulary in which each language's tree-sitter rules are written.

A language is described as data: which node types define symbols, how to
find their names and bodies, which nodes only wrap a definition, and which
nodes may contain definitions further down. The walker in
:mod:`engine.extract.treesitter` interprets these tables; it knows no
language by name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass, field
from typing import Callable, Iterable


from engine.symbols import SymbolKind

if TYPE_CHECKING:  # annotations only: the profiles are read by the thin CLI client, which loads no grammar
    from tree_sitter import Node

#: Returns (logical scope, identifier node) pairs: several for ``int a, b;``.
NameFinder = Callable[["Node"], list[tuple[tuple[str, ...], "Node"]]]
#: Returns the node whose children are this symbol's children, or None.
BodyFinder = Callable[["Node"], "Node | None"]
#: Decides a kind from the definition node, the name node and the kind so far
#: (an arrow function in a ``const`` is a function; an upper-case module variable a constant).
KindRefiner = Callable[["Node", "Node", SymbolKind, "SymbolKind | None"], SymbolKind]


class Where:
    """Where a definition counts as a symbol."""

    ANYWHERE = "anywhere"
    """Also nested inside function bodies (functions, classes)."""
    DECLARATIONS = "declarations"
    """Only at module level or directly in a type or namespace (variables, fields)."""


@dataclass(frozen=True)
class Definition:
    kind: SymbolKind
    name: NameFinder
    body: BodyFinder | None = None
    where: str = Where.ANYWHERE
    in_type: SymbolKind | None = None
    """Kind to use when the parent is a class, struct, interface or enum (functions become methods)."""
    refine: KindRefiner | None = None
    walk_body: bool = True
    """False when the body never holds symbols (a C function): it then only ends the signature."""
    body_is_code: bool = False
    """The body is executable code (a function body): variables in it are locals, not symbols."""


@dataclass(frozen=True)
class ScopeBlock:
    """A node that adds a logical parent to what it contains but is no symbol itself (a Rust ``impl``)."""

    scope: Callable[[Node], str | None]
    body: BodyFinder
    treat_as: SymbolKind = SymbolKind.STRUCT


@dataclass(frozen=True)
class LanguageRules:
    language_id: str
    definitions: dict[str, Definition]
    wrappers: dict[str, str | None] = field(default_factory=dict)
    """Node type → field holding the wrapped definition (None: its first named child with a rule).
    The symbol's full range grows to cover the wrapper (decorators, ``export``, ``template<>``)."""
    scope_blocks: dict[str, ScopeBlock] = field(default_factory=dict)
    descend: frozenset[str] = frozenset()
    """Nodes that are no symbol but may hold some (statement blocks, ``if`` at module level)."""
    groups: frozenset[str] = frozenset()
    """Nodes that declare one or more definitions (Go ``type (...)``). When a group declares just
    one, the symbol's range and doc comment widen to the whole group, keyword included."""
    leading: frozenset[str] = frozenset()
    """Sibling node types that belong to the next definition (Rust ``#[attr]``, TS member decorators)."""
    doc_comment_types: frozenset[str] = frozenset({"comment"})
    doc_comment_prefixes: tuple[str, ...] = ("",)
    """A preceding comment is a doc comment only if its text starts with one of these."""
    docstring: Callable[[Node], "Node | None"] | None = None
    """Finds a docstring inside the definition (Python)."""
    constructor_names: frozenset[str] = frozenset()


# -- small helpers used by the rule tables -------------------------------------


def name_field(field_name: str = "name") -> NameFinder:
    def find(node: Node) -> list[tuple[tuple[str, ...], Node]]:
        # children_by_field_name also yields anonymous nodes such as the commas in ``A, B int``.
        return [((), found) for found in node.children_by_field_name(field_name) if found.is_named]

    return find


def body_field(field_name: str = "body") -> BodyFinder:
    def find(node: Node) -> Node | None:
        return node.child_by_field_name(field_name)

    return find


def first_child_of_type(node: Node, types: Iterable[str]) -> Node | None:
    wanted = set(types)
    for child in node.named_children:
        if child.type in wanted:
            return child
    return None


def text_of(node: Node) -> str:
    return (node.text or b"").decode("utf-8", errors="replace")
