"""A TypeScript or JavaScript file's top-level statements as the check's scope reads them
(engine.edits.check_scope), and the words an importer may see.

Each statement is read as its interface: its tokens, comments and layout aside, but for a
TypeScript function or method whose return type is declared, without its body (its type is its
signature, whatever the body does). JavaScript keeps its bodies and its comments: there a type
is inferred from a body, and JSDoc comments declare types.

The names a statement binds are those it declares or exports (``export default`` binds
``default`` beside the declaration's own name; ``export { a as b }`` binds ``b``; an assignment to
``exports.x`` binds ``x``). What cannot be listed makes the whole module count as changed, through
a binding of ``*``: ``export * from``, ``export =``, ``declare global``, ``declare module``,
``module.exports = ...``, a side-effect import, a triple-slash directive, and any other top-level
statement (an ``if``, a call), which may declare or mutate anything.

An import that takes a whole module (``import * as m``, ``export * as m``, ``import m =
require()``, a ``require()`` or ``import()`` call) binds a name that stands for every name of that
module: its words hold :data:`WHOLE_MODULE`, which the scope adds to the names an importer
receives, so a change to any name of the module changes that binding. An importer that takes a
whole module, or re-exports everything from one, sees any name (:func:`ts_words` is None); a
default import sees ``default`` whatever it calls it.
"""

from __future__ import annotations

import functools
import re
from typing import Iterator

from tree_sitter import Node

from engine.extract.treesitter import TreeSitterExtractor

Declaration = tuple[str, frozenset[str], frozenset[str]]
"""(its interface's tokens, the names it binds, the words of its interface)."""

TS_SUFFIXES = (".ts", ".mts", ".cts", ".tsx", ".js", ".mjs", ".cjs", ".jsx")
WHOLE_MODULE = "*module"
"""A word no identifier spells: in a statement's words, it reads every name of some module."""

_EVERYTHING = frozenset({"*"})
_WORD = re.compile(r"[A-Za-z_$][\w$]*")
_WHOLE_MODULE_CALL = re.compile(r"\b(?:require|import)\s*\(")
_WHOLE_MODULE_LINE = re.compile(r"^\s*(?:import\s+(?:type\s+)?(?:[\w$]+\s*,\s*)?\*|export\s+(?:type\s+)?\*|import\s+[\w$]+\s*=)", re.MULTILINE)
"""``import * as m``, ``import d, * as m``, ``export *``, ``export * as m``, ``import m = require()``, at a line's start."""
_DEFAULT_IMPORT_LINE = re.compile(r"^\s*import\s+(?:type\s+)?[\w$]+\s*(?:,|from\b)", re.MULTILINE)
_NAMED = frozenset({"function_declaration", "generator_function_declaration", "function_signature", "class_declaration",
                    "abstract_class_declaration", "interface_declaration", "type_alias_declaration", "enum_declaration",
                    "internal_module", "module"})
_VARIABLES = frozenset({"lexical_declaration", "variable_declaration"})
_FUNCTIONS = frozenset({"function_declaration", "generator_function_declaration", "method_definition"})
_parser = TreeSitterExtractor()


def _language(path: str) -> str:
    if path.endswith(".tsx"):
        return "typescriptreact"
    return "typescript" if path.endswith((".ts", ".mts", ".cts")) else "javascript"


@functools.lru_cache(maxsize=64)
def ts_declarations(path: str, data: bytes) -> tuple[Declaration, ...] | None:
    """The file's top-level statements, by its content (see the module's docstring); None when it
    does not parse."""
    language = _language(path)
    root = _parser.parse(language, data).root_node
    if root.has_error:
        return None
    javascript = language == "javascript"
    declarations: list[Declaration] = []
    directives: list[str] = []
    comments: list[str] = []  # JavaScript's JSDoc above a statement, which is its type
    for node in root.named_children:
        if node.type == "comment":
            if _text(node).startswith("///"):
                directives.append(_text(node))
            elif javascript:
                comments.append(_text(node))
            continue
        if node.type in ("hash_bang_line", "empty_statement"):
            continue
        tokens = " ".join([*comments, *_tokens(node, keep_bodies=javascript, keep_comments=javascript)])
        comments = []
        words = frozenset(_WORD.findall(tokens)) | _whole_module_words(node)
        declarations.append((tokens, _bound(node), words))
    declarations.append(("directives " + "\n".join(directives), _EVERYTHING, frozenset()))
    return tuple(declarations)


def ts_words(text: str) -> frozenset[str] | None:
    """The words an importer mentions (in code, a string or a comment alike), ``default`` when it
    takes a default export; None, any name, when it takes a whole module or re-exports everything
    from one. Read by line, not parsed: every importer of a changed file is read, and a line
    that only looks like such an import (in a template string) only keeps more in scope."""
    if _WHOLE_MODULE_CALL.search(text) or _WHOLE_MODULE_LINE.search(text):
        return None
    words = set(_WORD.findall(text))
    if _DEFAULT_IMPORT_LINE.search(text):
        words.add("default")
    return frozenset(words)


def _takes_whole_module(node: Node) -> bool:
    """``import * as m``, ``import m = require()``, ``export *`` and ``export * as m``."""
    if node.type == "import_statement":
        clause = _child(node, "import_clause")
        return _child(node, "import_require_clause") is not None or (clause is not None and _child(clause, "namespace_import") is not None)
    if node.type == "export_statement":
        return any(child.type in ("*", "namespace_export") for child in node.children)
    return False


def _default_import(node: Node) -> bool:
    clause = _child(node, "import_clause")
    return clause is not None and any(child.type == "identifier" for child in clause.named_children)


def _whole_module_words(node: Node) -> frozenset[str]:
    words: set[str] = set()
    if _takes_whole_module(node) or _WHOLE_MODULE_CALL.search(_text(node)):
        words.add(WHOLE_MODULE)
    if node.type == "import_statement" and _default_import(node):
        words.add("default")
    return frozenset(words)


def _bound(node: Node) -> frozenset[str]:
    """The names a top-level statement binds; ``*`` for what cannot be listed."""
    if node.type == "export_statement":
        return _exported(node)
    if node.type == "import_statement":
        return _imported(node)
    if node.type in _NAMED:
        return _declared_name(node)
    if node.type in _VARIABLES:
        return frozenset(name for declarator in node.named_children if declarator.type == "variable_declarator"
                         for name in _pattern_names(declarator.child_by_field_name("name")))
    if node.type == "ambient_declaration":
        inner = [child for child in node.named_children if child.type != "statement_block"]
        return _bound(inner[0]) if inner and _child(node, "global") is None else _EVERYTHING
    if node.type == "expression_statement":
        return _assigned(node.named_children[0]) if node.named_children else _EVERYTHING
    return _EVERYTHING


def _exported(node: Node) -> frozenset[str]:
    declaration = node.child_by_field_name("declaration")
    default = frozenset({"default"}) if _child(node, "default") is not None else frozenset()
    if declaration is not None:
        return _bound(declaration) | default
    if default:
        return default
    clause = _child(node, "export_clause")
    if clause is not None:
        return frozenset(_text(specifier.named_children[-1]) for specifier in clause.named_children
                         if specifier.type == "export_specifier" and specifier.named_children)
    namespace = _child(node, "namespace_export")
    if namespace is not None:
        return frozenset(_text(child) for child in namespace.named_children if child.type in ("identifier", "string"))
    return _EVERYTHING  # export * from, export =, export as namespace


def _imported(node: Node) -> frozenset[str]:
    clause = _child(node, "import_clause")
    required = _child(node, "import_require_clause")
    if required is not None:
        return frozenset(_text(child) for child in required.named_children[:1] if child.type == "identifier")
    if clause is None:
        return _EVERYTHING  # a side-effect import may declare globals or augment a module
    names: set[str] = set()
    for child in clause.named_children:
        if child.type == "identifier":
            names.add(_text(child))
        elif child.type == "namespace_import":
            names.update(_text(part) for part in child.named_children if part.type == "identifier")
        elif child.type == "named_imports":
            names.update(_text(specifier.named_children[-1]) for specifier in child.named_children
                         if specifier.type == "import_specifier" and specifier.named_children)
    return frozenset(names)


def _declared_name(node: Node) -> frozenset[str]:
    name = node.child_by_field_name("name")
    if name is None or name.type == "string":
        return _EVERYTHING  # declare module 'x': an augmentation of another module
    if name.type == "nested_identifier":
        return frozenset(_WORD.findall(_text(name))[:1])
    return frozenset({_text(name)})


def _pattern_names(pattern: Node | None) -> Iterator[str]:
    """The names a declarator's pattern binds (a default value's names too: only more is taken as changed)."""
    pending = [pattern] if pattern is not None else []
    while pending:
        node = pending.pop()
        if node.type in ("identifier", "shorthand_property_identifier_pattern"):
            yield _text(node)
        pending.extend(node.named_children)


def _assigned(expression: Node) -> frozenset[str]:
    """What a top-level expression statement binds: a namespace's name, an assignment's target
    (``Foo.prototype.x = ...`` changes ``Foo``, ``exports.x = ...`` changes ``x``); anything for
    ``module.exports = ...``, ``this.x = ...`` or a call."""
    if expression.type == "internal_module":
        return _declared_name(expression)
    if expression.type not in ("assignment_expression", "augmented_assignment_expression"):
        return _EVERYTHING
    path: list[str] = []
    target = expression.child_by_field_name("left")
    while target is not None and target.type == "member_expression":
        field = target.child_by_field_name("property")
        path.insert(0, _text(field) if field is not None else "")
        target = target.child_by_field_name("object")
    if target is None or target.type != "identifier":
        return _EVERYTHING
    root = [_text(target), *path]
    if root[0] == "module" and root[1:2] == ["exports"]:
        root = root[1:]
    if root[0] == "exports":
        return frozenset(root[1:2]) if len(root) > 1 else _EVERYTHING
    return frozenset(root[:1])


def _tokens(node: Node, *, keep_bodies: bool, keep_comments: bool) -> Iterator[str]:
    """The statement's tokens, without comments (unless kept) and without the body of a
    function or method whose return type is declared (unless bodies are kept)."""
    pending = [node]
    while pending:
        current = pending.pop()
        if current.type == "comment" and not keep_comments:
            continue
        if not keep_bodies and current.type in _FUNCTIONS and current.child_by_field_name("return_type") is not None:
            body = current.child_by_field_name("body")
            pending.extend(reversed([child for child in current.children if body is None or child.id != body.id]))
            continue
        if current.child_count == 0:
            yield _text(current)
        else:
            pending.extend(reversed(current.children))


def _child(node: Node, kind: str) -> Node | None:
    return next((child for child in node.children if child.type == kind), None)


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", errors="replace")
