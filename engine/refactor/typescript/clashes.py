"""The name clashes a TypeScript or JavaScript rename would make, which tsserver applies without a word.

Read from each file the rename edits (and each module that re-exports one of them with
``export *``), before the edit, with engine.refactor.typescript.scopes:
- **an existing binding in the target scope**: a renamed declaration lands beside another of the
  new name (a local, a parameter, an import, a declaration of the module), or a renamed member
  beside another member of its class, interface or object;
- **a colliding export**: a module would export the new name twice (its own export and an alias
  or a re-export; or two modules it re-exports with ``export *`` would both export it);
- **new shadowing**: a renamed use would be captured by an inner binding of the new name, or a
  use of an outer name (or a global) inside the renamed binding's scope would now mean the renamed
  binding; when that use runs before the binding is initialised (a parameter's default value,
  a ``let`` or ``const`` above it), it is a temporal-dead-zone error too.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import Callable

from tree_sitter import Node

from engine.answers import TextEdit
from engine.edits.model import FileChange, WorkspaceEdit
from engine.extract.treesitter import TreeSitterExtractor
from engine.languages import language_of
from engine.refactor.typescript.scopes import FileScopes, file_scopes
from engine.workspace import SourceFile, Workspace

_MEMBER_CONTAINERS = frozenset({"class_body", "interface_body", "object_type", "object", "enum_body"})
_MEMBER_NAMES = frozenset({"property_identifier", "private_property_identifier"})
_MODULE_SUFFIXES = ("", ".ts", ".tsx", ".d.ts", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs",
                    "/index.ts", "/index.tsx", "/index.d.ts", "/index.js", "/index.jsx")


@dataclass(frozen=True)
class Clash:
    file: str
    line: int
    what: str

    def message(self) -> str:
        return f"{self.file}:{self.line}: {self.what}"


class ParsedFiles:
    """Each file read and parsed once per check; its scopes walked only when asked for (the walk
    costs several times the parse, and most files a rename edits never need it)."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._extractor = TreeSitterExtractor()
        self._trees: dict[str, tuple[SourceFile, Node] | None] = {}
        self._scopes: dict[str, FileScopes] = {}

    def get(self, path: str) -> tuple[SourceFile, Node] | None:
        if path not in self._trees:
            language = language_of(path)
            try:
                source = self.workspace.read(path)
            except (OSError, UnicodeDecodeError, ValueError):
                self._trees[path] = None
                return None
            if language is None or not self._extractor.supports(language):
                self._trees[path] = None
                return None
            root = self._extractor.parse(language, source.text.encode("utf-8")).root_node
            self._trees[path] = (source, root)
        return self._trees[path]

    def scopes(self, path: str, root: Node) -> FileScopes:
        """The scopes of ``path``, whose tree is ``root`` (from :meth:`get`)."""
        if path not in self._scopes:
            self._scopes[path] = file_scopes(root)
        return self._scopes[path]


def rename_clashes(workspace: Workspace, edit: WorkspaceEdit, old: str, new: str,
                   re_exporters: Callable[[list[str]], list[str]], parsed: ParsedFiles | None = None) -> list[Clash]:
    """Every clash the rename ``edit`` of ``old`` to ``new`` would make; ``re_exporters(files)``
    gives the files that may re-export those files (their importers)."""
    parsed = parsed or ParsedFiles(workspace)
    new_word = re.compile(rf"(?<![\w$]){re.escape(new)}(?![\w$])")
    clashes: list[Clash] = []
    changed: dict[str, set[int]] = {}
    for change in edit.operations:
        if not isinstance(change, FileChange) or language_of(change.path) is None:
            continue
        found = parsed.get(change.path)
        if found is None:
            continue
        source, root = found
        spans = _renamed_starts(source, change.edits, old, new)
        changed[change.path] = spans
        if not new_word.search(source.text):
            # A scope clash needs the new name in the file already (a binding of it, or a use
            # that the renamed binding would capture): without it nothing there can clash.
            continue
        clashes += _scope_clashes(change.path, parsed.scopes(change.path, root), spans, old, new)
        clashes += _member_clashes(change.path, root, spans, old, new)
    for path in dict.fromkeys([*changed, *re_exporters(list(changed))]):
        clashes += _export_clashes(parsed, path, changed, old, new)
    return sorted(set(clashes), key=lambda c: (c.file, c.line, c.what))


def _renamed_starts(source: SourceFile, edits: tuple[TextEdit, ...], old: str, new: str) -> set[int]:
    """Byte offsets of the names the edits turn from ``old`` into ``new``."""
    text = source.text
    starts = set()
    for text_edit in edits:
        start = source.line_starts[text_edit.range.start.line] + text_edit.range.start.column
        end = source.line_starts[text_edit.range.end.line] + text_edit.range.end.column
        if text[start:end] == old and text_edit.new_text == new:
            starts.add(len(text[:start].encode("utf-8")))
    return starts


def _scope_clashes(path: str, scopes: FileScopes, spans: set[int], old: str, new: str) -> list[Clash]:
    renamed = frozenset(b for b in scopes.bindings if b.node.start_byte in spans and b.name == old)
    found = []
    for binding in renamed:
        for other in binding.scope.bindings.get(new, []):
            if other.namespaces & binding.namespaces:
                found.append(Clash(path, binding.line, f"{new} is already declared in this scope (line {other.line}): "
                                                       f"the renamed {binding.kind} {old} would be declared twice"))
    if not renamed:
        return found  # only uses of a binding declared elsewhere: it keeps its meaning unless captured below
    for use in scopes.uses:
        if use.name == old and use.node.start_byte in spans:
            before = scopes.resolve(old, use.scope, use.namespace)
            after = scopes.resolve(new, use.scope, use.namespace, renamed, old)
            if before is not None and after is not None and after is not before:
                found.append(Clash(path, use.line, f"this use of {old} would be renamed to {new}, which here means "
                                                   f"the {after.kind} {new} of line {after.line} (shadowing)"))
        elif use.name == new and use.node.start_byte not in spans:
            before = scopes.resolve(new, use.scope, use.namespace)
            after = scopes.resolve(new, use.scope, use.namespace, renamed, old)
            if after is not None and after in renamed and after is not before:
                meant = f"the {before.kind} of line {before.line}" if before is not None else "a global or an import elsewhere"
                dead = after.in_dead_zone_before_declaration and (
                    use.node.start_byte < after.node.start_byte
                    or after.declaration.start_byte <= use.node.start_byte < after.declaration.end_byte)
                found.append(Clash(path, use.line, f"this use of {new} ({meant}) would mean the renamed {after.kind} of "
                                                   f"line {after.line} instead"
                                                   + (": a temporal-dead-zone error (used before it is initialised)" if dead else "")))
    return found


def _member_clashes(path: str, root: Node, spans: set[int], old: str, new: str) -> list[Clash]:
    found = []
    for start in spans:
        name = root.descendant_for_byte_range(start, start + len(old.encode("utf-8")))
        if name is None or name.type not in _MEMBER_NAMES:
            continue
        member = name.parent
        container = member.parent if member is not None else None
        if container is None or container.type not in _MEMBER_CONTAINERS:
            continue
        for sibling in container.named_children:
            key = sibling.child_by_field_name("name") or sibling.child_by_field_name("key") or (
                sibling if sibling.type in _MEMBER_NAMES else None)
            if key is not None and key.text == new.encode("utf-8") and key.start_byte not in spans:
                found.append(Clash(path, name.start_point[0] + 1,
                                   f"{new} is already a member here (line {key.start_point[0] + 1}): the renamed "
                                   f"member {old} would collide with it"))
    return found


def _export_clashes(parsed: ParsedFiles, path: str, changed: dict[str, set[int]], old: str, new: str) -> list[Clash]:
    """A module that would export ``new`` twice, counting what its ``export *`` sources export."""
    found = parsed.get(path)
    if found is None:
        return []
    before = _exports(parsed, path, changed, old, new, renamed=False, seen=set()).get(new, [])
    after = _exports(parsed, path, changed, old, new, renamed=True, seen=set()).get(new, [])
    if _exported_twice(before) or not _exported_twice(after):
        return []
    return [Clash(path, after[1][1], f"{path} would export {new} twice: "
                                     + " and ".join(f"{where} (line {line})" for where, line in after[:3]))]


def _exported_twice(origins: list[tuple[str, int]]) -> bool:
    """Two explicit exports of a name are an error, and so are two ``export *`` that bring it
    with none explicit (TS2308); an explicit export hides what ``export *`` brings."""
    explicit = [o for o in origins if not o[0].startswith("export * from")]
    return len(explicit) >= 2 or (not explicit and len(origins) >= 2)


def _exports(parsed: ParsedFiles, path: str, changed: dict[str, set[int]], old: str, new: str, *, renamed: bool,
             seen: set[str]) -> dict[str, list[tuple[str, int]]]:
    """Every name ``path`` exports, with where each comes from (file, line); ``renamed``: after the edit."""
    found = parsed.get(path)
    if found is None or path in seen:
        return {}
    seen.add(path)
    _source, root = found
    spans = changed.get(path, set()) if renamed else set()

    def named(node: Node) -> str:
        text = (node.text or b"").decode("utf-8", errors="replace")
        return new if node.start_byte in spans and text == old else text

    exports: dict[str, list[tuple[str, int]]] = {}

    def add(name: str, line: int, origin: str) -> None:
        exports.setdefault(name, []).append((origin, line))

    for statement in root.named_children:
        if statement.type != "export_statement":
            continue
        line = statement.start_point[0] + 1
        source_node = statement.child_by_field_name("source")
        declaration = statement.child_by_field_name("declaration")
        clause = next((c for c in statement.named_children if c.type == "export_clause"), None)
        if clause is not None:
            for specifier in clause.named_children:
                public = specifier.child_by_field_name("alias") or specifier.child_by_field_name("name")
                if public is not None:
                    add(named(public), line, path)
        elif declaration is not None:
            if declaration.type == "function_signature":
                continue  # an overload signature: its implementation exports the name once
            for name in _declared_names(declaration):
                add(named(name), line, path)
        elif source_node is not None:
            namespace = next((c for c in statement.named_children if c.type == "namespace_export"), None)
            if namespace is not None:
                for alias in namespace.named_children:
                    add(named(alias), line, path)
                continue
            target = module_file(parsed, path, source_node)
            if target is not None:
                for brought in _exports(parsed, target, changed, old, new, renamed=renamed, seen=seen):
                    if brought != "default":
                        add(brought, line, f"export * from {target}")
        elif any(child.type == "default" for child in statement.children):
            add("default", line, path)
    return exports


def _declared_names(declaration: Node) -> list[Node]:
    name = declaration.child_by_field_name("name")
    if name is not None:
        return [name]
    names = []
    for declarator in declaration.named_children:
        if declarator.type == "variable_declarator":
            target = declarator.child_by_field_name("name")
            if target is not None and target.type == "identifier":
                names.append(target)
    return names


def module_file(parsed: ParsedFiles, importer: str, specifier: Node) -> str | None:
    """The workspace file a relative module specifier names, as TypeScript resolves it."""
    text = (specifier.text or b"").decode("utf-8", errors="replace").strip("'\"`")
    if not text.startswith("."):
        return None
    base = posixpath.normpath(posixpath.join(posixpath.dirname(importer), text))
    stems = [base, re.sub(r"\.(m|c)?jsx?$", "", base)]
    for stem in stems:
        for suffix in _MODULE_SUFFIXES:
            candidate = stem + suffix
            if (parsed.workspace.root / candidate).is_file() and language_of(candidate) is not None:
                return candidate
    return None
