"""Scopes, bindings and name uses of one TypeScript or JavaScript file, from its tree-sitter tree.

Enough of the language's scoping to tell what a name refers to before and after a rename:
module, function (parameters and body share one scope, as JavaScript refuses ``let x`` beside a
parameter ``x``), class, block, ``for`` head and ``catch`` scopes; ``var`` and function
declarations hoisted as the language does; values and types as two namespaces (``interface X``
beside ``const X`` is no clash; a class, an enum, an import or a namespace is both).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

from tree_sitter import Node

VALUE, TYPE = "value", "type"
BOTH = frozenset({VALUE, TYPE})

_FUNCTIONS = frozenset({"function_declaration", "generator_function_declaration", "function_expression", "function",
                        "generator_function", "arrow_function", "method_definition", "function_signature"})
_BLOCKS = frozenset({"statement_block", "for_statement", "for_in_statement", "switch_body", "class_body"})
_TYPE_DECLARATIONS = frozenset({"interface_declaration", "type_alias_declaration"})
_NAME_NODES = frozenset({"identifier", "type_identifier", "shorthand_property_identifier"})
_BINDING_NODES = _TYPE_DECLARATIONS | frozenset({
    "class_declaration", "abstract_class_declaration", "class", "enum_declaration", "internal_module", "module",
    "lexical_declaration", "variable_declaration", "import_statement", "export_statement", "catch_clause", "for_in_statement",
})
"""What a scope walk binds names for (_Builder._declaration and _binding)."""
_DECLARED_KIND = {"let": "let", "const": "const", "using": "const"}


@dataclass(eq=False)
class Scope:
    node: Node
    parent: Scope | None
    function_like: bool
    bindings: dict[str, list[Binding]] = field(default_factory=dict)

    def chain(self) -> Iterator[Scope]:
        scope: Scope | None = self
        while scope is not None:
            yield scope
            scope = scope.parent


@dataclass(eq=False)
class Binding:
    name: str
    node: Node
    """The declaring name."""
    scope: Scope
    kind: str
    """var, let, const, function, class, parameter, import, catch, type, enum, namespace."""
    namespaces: frozenset[str]
    declaration: Node
    """The whole declarator (its initializer included), for the temporal dead zone."""

    @property
    def line(self) -> int:
        return self.node.start_point[0] + 1

    @property
    def in_dead_zone_before_declaration(self) -> bool:
        """Whether a use before the declaration (or inside its own initializer) is an error."""
        return self.kind in ("let", "const", "class", "parameter", "enum")


@dataclass(eq=False)
class Use:
    name: str
    node: Node
    scope: Scope
    namespace: str

    @property
    def line(self) -> int:
        return self.node.start_point[0] + 1


@dataclass
class FileScopes:
    module: Scope
    bindings: list[Binding]
    uses: list[Use]

    def resolve(self, name: str, scope: Scope, namespace: str, renamed: frozenset[Binding] = frozenset(),
                old: str | None = None) -> Binding | None:
        """What ``name`` means from ``scope``; with ``renamed`` (bindings called ``old`` now), as it
        will mean once those bindings are called ``name``. None: nothing in this file (a global)."""
        for outer in scope.chain():
            candidates = [b for b in outer.bindings.get(name, []) if namespace in b.namespaces and b not in renamed]
            if old is not None:
                candidates += [b for b in outer.bindings.get(old, []) if namespace in b.namespaces and b in renamed]
            if candidates:
                return min(candidates, key=lambda b: b.node.start_byte)
        return None


def file_scopes(root: Node) -> FileScopes:
    builder = _Builder(root)
    builder.visit(root, builder.module)
    return FileScopes(builder.module, builder.bindings, builder.uses)


class _Builder:
    def __init__(self, root: Node) -> None:
        self.module = Scope(root, None, True)
        self.bindings: list[Binding] = []
        self.uses: list[Use] = []
        self._declared: set[int] = set()
        """Start bytes of declaring names (not uses)."""
        self._skipped: set[int] = set()
        """Start bytes of names that are neither declarations nor uses here (an import's or a
        re-export's name in the other module, an export's public alias)."""

    def bind(self, name: Node, scope: Scope, kind: str, namespaces: frozenset[str], declaration: Node) -> None:
        if kind == "var" or kind == "function":
            scope = next(s for s in scope.chain() if s.function_like) if kind == "var" else scope
        binding = Binding(_text(name), name, scope, kind, namespaces, declaration)
        scope.bindings.setdefault(binding.name, []).append(binding)
        self.bindings.append(binding)
        self._declared.add(name.start_byte)

    def bind_pattern(self, pattern: Node | None, scope: Scope, kind: str, declaration: Node) -> None:
        if pattern is None:
            return
        if pattern.type in ("identifier", "shorthand_property_identifier_pattern"):
            self.bind(pattern, scope, kind, frozenset({VALUE}), declaration)
        elif pattern.type == "pair_pattern":
            self.bind_pattern(pattern.child_by_field_name("value"), scope, kind, declaration)
        elif pattern.type == "assignment_pattern":
            self.bind_pattern(pattern.child_by_field_name("left"), scope, kind, declaration)
        elif pattern.type in ("object_pattern", "array_pattern", "rest_pattern"):
            for child in pattern.named_children:
                self.bind_pattern(child, scope, kind, declaration)
        elif pattern.type in ("required_parameter", "optional_parameter"):
            self.bind_pattern(pattern.child_by_field_name("pattern"), scope, kind, declaration)

    def visit(self, node: Node, scope: Scope) -> None:
        kind = node.type
        if kind in _FUNCTIONS:
            self._function(node, scope)
            return
        if kind in _BINDING_NODES and (self._declaration(node, scope) or self._binding(node, scope)):
            return
        if kind in _BLOCKS:
            self._children(node, Scope(node, scope, False))
            return
        if kind in _NAME_NODES and node.start_byte not in self._declared and node.start_byte not in self._skipped:
            namespace = TYPE if kind == "type_identifier" else VALUE
            self.uses.append(Use(_text(node), node, scope, namespace))
            return
        self._children(node, scope)

    def _declaration(self, node: Node, scope: Scope) -> bool:
        """A class, type, enum or namespace declaration bound in ``scope`` and walked; False for other nodes."""
        kind = node.type
        if kind in ("class_declaration", "abstract_class_declaration", "class"):
            name = node.child_by_field_name("name")
            inner = Scope(node, scope, False)
            if name is not None:
                self.bind(name, scope if kind != "class" else inner, "class", BOTH, node)
            self._type_parameters(node, inner)
            self._children(node, inner)
            return True
        if kind in _TYPE_DECLARATIONS:
            name = node.child_by_field_name("name")
            if name is not None:
                self.bind(name, scope, "type", frozenset({TYPE}), node)
            inner = Scope(node, scope, False)
            self._type_parameters(node, inner)
            self._children(node, inner)
            return True
        if kind == "enum_declaration":
            name = node.child_by_field_name("name")
            if name is not None:
                self.bind(name, scope, "enum", BOTH, node)
            return True  # its members are not names of this scope
        if kind in ("internal_module", "module"):
            name = node.child_by_field_name("name")
            if name is not None and name.type == "identifier":
                self.bind(name, scope, "namespace", BOTH, node)
            body = node.child_by_field_name("body")
            if body is not None:
                self._children(body, Scope(body, scope, True))
            return True
        return False

    def _binding(self, node: Node, scope: Scope) -> bool:
        """A variable declaration, an import or export, a catch clause or a for-in bound and walked;
        False for other nodes."""
        kind = node.type
        if kind in ("lexical_declaration", "variable_declaration"):
            declared = "var" if kind == "variable_declaration" else _DECLARED_KIND.get(_text(node.children[0]), "let")
            for declarator in node.named_children:
                if declarator.type == "variable_declarator":
                    self.bind_pattern(declarator.child_by_field_name("name"), scope, declared, declarator)
            self._children(node, scope)
            return True
        if kind == "import_statement":
            self._import(node, scope)
            return True
        if kind == "export_statement":
            self._export(node, scope)
            return True
        if kind == "catch_clause":
            inner = Scope(node, scope, False)
            self.bind_pattern(node.child_by_field_name("parameter"), inner, "catch", node)
            body = node.child_by_field_name("body")
            if body is not None:
                self._children(body, inner)  # `catch (e) { let e }` is refused: one scope
            return True
        if kind in ("for_in_statement",):
            inner = Scope(node, scope, False)
            keyword = node.child_by_field_name("kind")
            declared = "var" if keyword is not None and _text(keyword) == "var" else "let" if keyword is not None else ""
            if declared:
                self.bind_pattern(node.child_by_field_name("left"), inner, declared, node)
            self._children(node, inner)
            return True
        return False

    def _children(self, node: Node, scope: Scope) -> None:
        for child in node.named_children:
            self.visit(child, scope)

    def _function(self, node: Node, scope: Scope) -> None:
        name = node.child_by_field_name("name")
        inner = Scope(node, scope, True)
        if name is not None and name.type == "identifier":
            if node.type in ("function_declaration", "generator_function_declaration", "function_signature"):
                self.bind(name, scope, "function", frozenset({VALUE}), node)
            else:
                self.bind(name, inner, "function", frozenset({VALUE}), node)  # a named function expression
        self._type_parameters(node, inner)
        parameters = node.child_by_field_name("parameters") or node.child_by_field_name("parameter")
        if parameters is not None:
            if parameters.type == "identifier":  # `x => …`
                self.bind(parameters, inner, "parameter", frozenset({VALUE}), parameters)
            else:
                for parameter in parameters.named_children:
                    self.bind_pattern(parameter, inner, "parameter", parameter)
        for child in node.named_children:
            if child is name and child.type != "identifier":
                continue  # a method's name is a property, not a use
            if child.type == "statement_block":
                self._children(child, inner)  # parameters and body: one scope
            else:
                self.visit(child, inner)

    def _type_parameters(self, node: Node, scope: Scope) -> None:
        parameters = node.child_by_field_name("type_parameters")
        for parameter in parameters.named_children if parameters is not None else []:
            name = parameter.child_by_field_name("name")
            if name is not None:
                self.bind(name, scope, "type", frozenset({TYPE}), parameter)

    def _import(self, node: Node, scope: Scope) -> None:
        for clause in node.named_children:
            if clause.type != "import_clause":
                continue
            for part in clause.named_children:
                if part.type == "identifier":
                    self.bind(part, scope, "import", BOTH, node)
                elif part.type == "namespace_import":
                    for name in part.named_children:
                        self.bind(name, scope, "import", BOTH, node)
                elif part.type == "named_imports":
                    for specifier in part.named_children:
                        local = specifier.child_by_field_name("alias") or specifier.child_by_field_name("name")
                        imported = specifier.child_by_field_name("name")
                        if imported is not None and imported is not local:
                            self._skipped.add(imported.start_byte)
                        if local is not None and local.type == "identifier":
                            self.bind(local, scope, "import", BOTH, node)

    def _export(self, node: Node, scope: Scope) -> None:
        from_module = node.child_by_field_name("source") is not None
        for child in node.named_children:
            if child.type == "export_clause":
                for specifier in child.named_children:
                    name, alias = specifier.child_by_field_name("name"), specifier.child_by_field_name("alias")
                    if alias is not None:
                        self._skipped.add(alias.start_byte)  # the public name, not a use
                    if name is not None and from_module:
                        self._skipped.add(name.start_byte)  # a name of the other module
        self._children(node, scope)


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", errors="replace")
