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
from engine.refactor.typescript.file_tables import NAMES, STAR, FileTable, table_of
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
    """Each file read and parsed at most once per check, and parsed only when a pass needs its tree;
    its scopes walked only when asked for (the walk costs several times the parse, and most files a
    rename edits never need it). What every rename needs of a file (its exports, its shorthands)
    is kept by content across checks (engine.refactor.typescript.file_tables)."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._extractor = TreeSitterExtractor()
        self._sources: dict[str, tuple[SourceFile, str] | None] = {}
        self._trees: dict[str, Node] = {}
        self._scopes: dict[str, FileScopes] = {}
        self._tables: dict[str, FileTable | None] = {}
        self._holding: dict[tuple[str, str], bool] = {}

    def source(self, path: str) -> SourceFile | None:
        """The file's text, when it is a readable file in a language with a parser."""
        found = self._source(path)
        return found[0] if found is not None else None

    def _source(self, path: str) -> tuple[SourceFile, str] | None:
        if path not in self._sources:
            language = language_of(path)
            try:
                source = self.workspace.read(path)
            except (OSError, UnicodeDecodeError, ValueError):
                source = None
            known = source is not None and language is not None and self._extractor.supports(language)
            self._sources[path] = (source, language) if known else None  # type: ignore[assignment]
        return self._sources[path]

    def read_ahead(self, path: str) -> None:
        """Read the file and its table (parsed only for a content not seen before) ahead of the
        passes: a rename does it while the server computes the answer that edits the file."""
        self.table(path)

    def get(self, path: str) -> tuple[SourceFile, Node] | None:
        found = self._source(path)
        return (found[0], self._tree(path, *found)) if found is not None else None

    def _tree(self, path: str, source: SourceFile, language: str) -> Node:
        if path not in self._trees:
            self._trees[path] = self._extractor.parse(language, source.text.encode("utf-8")).root_node
        return self._trees[path]

    def table(self, path: str) -> FileTable | None:
        """The file's exports and shorthands (parsed only when its content was not seen before);
        asked of each edited file by several passes, and looked up in the kept tables once."""
        if path not in self._tables:
            found = self._source(path)
            if found is None:
                self._tables[path] = None
            else:
                source, language = found
                self._tables[path] = table_of((language, source.sha256), lambda: self._tree(path, source, language))
        return self._tables[path]

    def holds(self, path: str, text: str) -> bool:
        """Whether the file holds ``text`` (a new name): worked out once, and for a rename while
        the server computes, for each file its answer will edit (each search runs over the whole file)."""
        if (path, text) not in self._holding:
            source = self.source(path)
            self._holding[(path, text)] = source is not None and text in source.text
        return self._holding[(path, text)]

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
    new_word: re.Pattern[str] | None = None  # compiled once a file holds the new name (a new name misses re's cache)
    clashes: list[Clash] = []
    changed: dict[str, set[int]] = {}
    for change in edit.operations:
        if not isinstance(change, FileChange) or language_of(change.path) is None:
            continue
        source = parsed.source(change.path)
        if source is None:
            continue
        # A scope clash needs the new name in the file already (a binding of it, or a use that
        # the renamed binding would capture): without it nothing there can clash. The substring
        # test first: the word pattern, led by a look-behind, tries every offset.
        if parsed.holds(change.path, new):
            new_word = new_word or re.compile(rf"(?<![\w$]){re.escape(new)}(?![\w$])")
            holds_new = new_word.search(source.text) is not None
        else:
            holds_new = False
        if not holds_new and not _may_export_otherwise(parsed, change.path, old):
            continue  # its exports stay as they are (re-exporters read it unrenamed: the same), nor can its scopes clash
        spans = _renamed_starts(source, change.edits, old, new)
        changed[change.path] = spans
        if not holds_new:
            continue
        found = parsed.get(change.path)
        if found is not None:
            clashes += _scope_clashes(change.path, parsed.scopes(change.path, found[1]), spans, old, new)
            clashes += _member_clashes(change.path, found[1], spans, old, new)
    clashes += _all_export_clashes(parsed, changed, old, new, re_exporters)
    return sorted(set(clashes), key=lambda c: (c.file, c.line, c.what))


def _all_export_clashes(parsed: ParsedFiles, changed: dict[str, set[int]], old: str, new: str,
                        re_exporters: Callable[[list[str]], list[str]]) -> list[Clash]:
    """The export clashes of the edited files, and of the files that re-export them with ``export
    *``, followed from re-exporter to re-exporter for as long as what a file exports changes (only
    such a file's re-exporters can gain a name)."""
    clashes: list[Clash] = []
    checked: set[str] = set()
    frontier = list(changed)
    while frontier:
        exporting_otherwise = []
        for path in frontier:
            checked.add(path)
            if not _may_export_otherwise(parsed, path, old):
                continue  # an importer that re-exports nothing with `export *` exports the same after
            before = _exports(parsed, path, changed, old, new, renamed=False, seen=set())
            after = _exports(parsed, path, changed, old, new, renamed=True, seen=set())
            if before != after:
                exporting_otherwise.append(path)
                clashes += _export_clash(path, before.get(new, []), after.get(new, []), new)
        frontier = [path for path in re_exporters(exporting_otherwise) if path not in checked] if exporting_otherwise else []
    return clashes


def _may_export_otherwise(parsed: ParsedFiles, path: str, old: str) -> bool:
    """Whether a rename could change what ``path`` exports: it exports ``old`` by name, or
    re-exports another module with ``export *`` (whose exports may change). Otherwise its exports
    before and after are the same whatever the edit, and need not be listed twice to say so."""
    table = parsed.table(path)
    return table is not None and (table.exports_all_of_another or old in table.named_exports)


def _renamed_starts(source: SourceFile, edits: tuple[TextEdit, ...], old: str, new: str) -> set[int]:
    """Byte offsets of the names the edits turn from ``old`` into ``new``."""
    text = source.text
    one_byte_each = text.isascii()  # then an offset is its byte offset: no prefix encoded per edit
    starts = set()
    for text_edit in edits:
        start = source.line_starts[text_edit.range.start.line] + text_edit.range.start.column
        end = source.line_starts[text_edit.range.end.line] + text_edit.range.end.column
        if text[start:end] == old and text_edit.new_text == new:
            starts.add(start if one_byte_each else len(text[:start].encode("utf-8")))
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


def _export_clash(path: str, before: list[tuple[str, int]], after: list[tuple[str, int]], new: str) -> list[Clash]:
    """A module that would export ``new`` twice (``before``/``after``: where its exports of ``new``
    come from), counting what its ``export *`` sources export."""
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
    table = parsed.table(path)
    if table is None or path in seen:
        return {}
    seen.add(path)
    spans = changed.get(path, set()) if renamed else set()
    exports: dict[str, list[tuple[str, int]]] = {}
    for statement in table.exports:
        if statement.kind == NAMES:
            for start, text in statement.names:
                exports.setdefault(new if start in spans and text == old else text, []).append((path, statement.line))
        elif statement.kind == STAR:
            target = resolved_module(parsed.workspace, path, statement.specifier)
            if target is not None:
                for brought in _exports(parsed, target, changed, old, new, renamed=renamed, seen=seen):
                    if brought != "default":
                        exports.setdefault(brought, []).append((f"export * from {target}", statement.line))
        else:
            exports.setdefault("default", []).append((path, statement.line))
    return exports


def module_file(parsed: ParsedFiles, importer: str, specifier: Node) -> str | None:
    """The workspace file a relative module specifier names, as TypeScript resolves it."""
    return resolved_module(parsed.workspace, importer, (specifier.text or b"").decode("utf-8", errors="replace").strip("'\"`"))


def resolved_module(workspace: Workspace, importer: str, text: str) -> str | None:
    """The workspace file the relative module specifier ``text`` names, as TypeScript resolves it."""
    if not text.startswith("."):
        return None
    base = posixpath.normpath(posixpath.join(posixpath.dirname(importer), text))
    stems = [base, re.sub(r"\.(m|c)?jsx?$", "", base)]
    for stem in stems:
        for suffix in _MODULE_SUFFIXES:
            candidate = stem + suffix
            if (workspace.root / candidate).is_file() and language_of(candidate) is not None:
                return candidate
    return None
