"""The one place where LSP types become engine types and back, columns included.

LSP columns count UTF-16 code units unless the server agreed to UTF-8; the
engine counts code points. Every conversion goes through
:class:`engine.positions.LineIndex` built from the file's bytes as the server
sees them (from disk, BOM removed), so an emoji or a CJK character before a
symbol on the same line moves nothing.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterable, Sequence
from urllib.parse import unquote, urlparse

from lsprotocol import types as t

from engine.answers import CallEdge, CodeAction, Diagnostic, FileEdits, HierarchyItem, Hover, Location, ServerEdit, TextEdit
from engine.ports import ActionDetails
from engine.positions import LineIndex, Position, PositionEncoding, Range
from engine.read_memo import KEPT_BYTES, RememberedReads
from engine.symbols import Confidence, Source, Symbol, SymbolKind
from engine.workspace import read_bytes
from lsp_pool.connection import shared_converter
from lsp_pool.kept_ranges import EditKey, KeptRanges, converted as converted_range
from lsp_pool.reader import collection_paused

_GO_METHOD = re.compile(r"^\(\*?(?P<type>[\w.]+)(?:\[[^\]]*\])?\)\.(?P<name>\w+)$")
_CODE_KINDS = frozenset({SymbolKind.FUNCTION, SymbolKind.METHOD, SymbolKind.CONSTRUCTOR})
_NESTED_DEFINITION_KINDS = frozenset({SymbolKind.FUNCTION, SymbolKind.CLASS, SymbolKind.STRUCT, SymbolKind.INTERFACE, SymbolKind.ENUM})
_TYPE_KINDS = frozenset({SymbolKind.CLASS, SymbolKind.STRUCT})
_IDENTIFIER = re.compile(r"[\w$~]+")
_SEVERITY = {1: "error", 2: "warning", 3: "information", 4: "hint"}
_UTF8_BOM = b"\xef\xbb\xbf"


def uri_to_path(uri: str) -> Path:
    return Path(_uri_path(uri))


def _uri_path(uri: str) -> str:
    if uri.startswith("file:///") and not any(c in uri for c in "%?#"):
        return uri[7:]  # the usual local URI: nothing to parse or unquote (a rename has a hundred)
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        raise ValueError(f"not a file URI: {uri}")
    return unquote(parsed.path)


class Converter:
    def __init__(self, root: Path, encoding: PositionEncoding) -> None:
        self.root = root.resolve()
        self._root_prefix = str(self.root).rstrip(os.sep) + os.sep
        self.encoding = encoding
        self._indexes: dict[str, LineIndex] = {}

    # -- files and positions -------------------------------------------------

    def relative(self, path: Path) -> tuple[str, bool]:
        try:
            return path.resolve().relative_to(self.root).as_posix(), True
        except ValueError:
            return str(path), False

    def index(self, path: Path | str) -> LineIndex:
        key = str(path)
        index = self._indexes.get(key)
        if index is None:
            index = self._indexes[key] = _kept_index(key)
        return index

    def position(self, path: Path, position: t.Position) -> Position:
        return self.index(path).from_protocol(position.line, position.character, self.encoding)

    def range(self, path: Path, lsp_range: t.Range) -> Range:
        return Range(self.position(path, lsp_range.start), self.position(path, lsp_range.end))

    def to_lsp_position(self, path: Path, position: Position) -> t.Position:
        line, character = self.index(path).to_protocol(position, self.encoding)
        return t.Position(line=line, character=character)

    def to_lsp_range(self, path: Path, engine_range: Range) -> t.Range:
        return t.Range(start=self.to_lsp_position(path, engine_range.start), end=self.to_lsp_position(path, engine_range.end))

    # -- symbols -------------------------------------------------------------

    def symbols(self, result: Any, path: Path, *, complete: bool) -> list[Symbol]:
        """documentSymbol's answer as engine symbols (not yet finalized: no name paths)."""
        file, _inside = self.relative(path)
        confidence = Confidence.HIGH if complete else Confidence.MEDIUM
        items = list(result or [])
        if items and isinstance(items[0], t.SymbolInformation):
            flat = [self._symbol(path, file, s.name, s.kind, s.location.range, s.location.range, "", confidence)
                    for s in items]
            return _nest_by_range(flat)
        symbols = [self._document_symbol(path, file, item, confidence) for item in items if isinstance(item, t.DocumentSymbol)]
        return sorted(symbols, key=lambda symbol: symbol.range.start)

    def _document_symbol(self, path: Path, file: str, item: t.DocumentSymbol, confidence: Confidence) -> Symbol:
        symbol = self._symbol(path, file, item.name, item.kind, item.range, item.selection_range, item.detail or "", confidence)
        in_code = symbol.kind in _CODE_KINDS
        for child in item.children or []:
            # Inside a function body only named nested definitions are symbols: locals, object
            # literal members and anonymous callbacks (tsserver's "x.map() callback") are not,
            # as in the syntax-tree source, so that name paths agree across sources. They are
            # skipped before conversion: pyright lists every local, often most of the answer.
            if in_code and (
                SymbolKind(int(child.kind)) not in _NESTED_DEFINITION_KINDS or not _IDENTIFIER.fullmatch(child.name)
            ):
                continue
            converted = self._document_symbol(path, file, child, confidence)
            if converted.kind is SymbolKind.VARIABLE and symbol.kind in _TYPE_KINDS:
                converted.kind = SymbolKind.FIELD  # pyright calls class attributes variables
            symbol.children.append(converted)
        # tsserver lists children alphabetically; codegraft keeps source order (overload indices depend on it).
        symbol.children.sort(key=lambda child: child.range.start)
        return symbol

    def _symbol(
        self, path: Path, file: str, name: str, kind: int, full: t.Range, selection: t.Range, detail: str,
        confidence: Confidence,
    ) -> Symbol:
        scope: tuple[str, ...] = ()
        go_method = _GO_METHOD.match(name)
        if go_method is not None:
            scope, name = (go_method.group("type").split(".")[-1],), go_method.group("name")
        elif "::" in name and not name.startswith("operator"):
            *qualifiers, name = name.split("::")
            scope = tuple(q for q in qualifiers if q)
        selection_range = self.range(path, selection)
        line = self.index(path).line_text(selection_range.start.line).strip()
        return Symbol(
            name=name,
            kind=SymbolKind(int(kind)),
            file=file,
            range=self.range(path, full),
            selection_range=selection_range,
            source=Source.LSP,
            confidence=confidence,
            signature=(detail if detail and len(detail) > len(name) else line)[:160],
            scope=scope,
        )

    # -- locations -----------------------------------------------------------

    def locations(self, result: Any) -> list[Location]:
        if result is None:
            return []
        items = result if isinstance(result, Sequence) else [result]
        found = []
        for item in items:
            if isinstance(item, t.LocationLink):
                uri, lsp_range = item.target_uri, item.target_selection_range
            else:
                uri, lsp_range = item.uri, item.range
            path = uri_to_path(uri)
            file, inside = self.relative(path)
            found.append(Location(file, self.range(path, lsp_range), inside))
        return found

    def hover(self, result: t.Hover | None, path: Path) -> Hover | None:
        if result is None:
            return None
        contents = result.contents
        if isinstance(contents, t.MarkupContent):
            text = contents.value
        elif isinstance(contents, list):
            text = "\n\n".join(c if isinstance(c, str) else c.value for c in contents)
        elif isinstance(contents, t.MarkedStringWithLanguage):
            text = contents.value
        else:
            text = str(contents)
        return Hover(text, self.range(path, result.range) if result.range else None)

    # -- edits ---------------------------------------------------------------

    def workspace_edit(self, edit: t.WorkspaceEdit | dict[str, Any] | None) -> ServerEdit:
        """A server's WorkspaceEdit, as the JSON itself (rename answers, see lsp_pool.connection)
        or as lsprotocol objects, which are read through their JSON form: one reader for both."""
        if edit is None:
            return ServerEdit()
        with collection_paused():  # thousands of values, all alive (lsp_pool.reader)
            return self._workspace_edit_json(edit if isinstance(edit, dict) else shared_converter().unstructure(edit))

    def _workspace_edit_json(self, edit: dict[str, Any]) -> ServerEdit:
        per_file: dict[str, list[TextEdit]] = {}
        repeats: dict[str, set[tuple[EditKey, str]]] = {}
        created: list[str] = []
        renamed: list[tuple[str, str]] = []
        deleted: list[str] = []

        def add(uri: str, edits: list[dict[str, Any]]) -> None:
            # Lexically relative: the engine reads every file of an edit through its workspace,
            # which refuses symlinks out of it, so resolving each path here too would only cost.
            lexical = os.path.normpath(_uri_path(uri))
            file = lexical[len(self._root_prefix):] if lexical.startswith(self._root_prefix) else lexical
            self._text_edits(lexical, edits, per_file.setdefault(file, []), repeats.setdefault(file, set()))

        for change in edit.get("documentChanges") or []:
            kind = change.get("kind")
            if kind is None:
                add(change["textDocument"]["uri"], change.get("edits") or [])
            elif kind == "create":
                created.append(self.relative(uri_to_path(change["uri"]))[0])
            elif kind == "rename":
                renamed.append((self.relative(uri_to_path(change["oldUri"]))[0], self.relative(uri_to_path(change["newUri"]))[0]))
            elif kind == "delete":
                deleted.append(self.relative(uri_to_path(change["uri"]))[0])
        for uri, edits in (edit.get("changes") or {}).items():
            add(uri, edits)
        return ServerEdit(
            files=tuple(FileEdits(file, tuple(edits)) for file, edits in sorted(per_file.items())),
            created=tuple(created),
            renamed=tuple(renamed),
            deleted=tuple(deleted),
        )

    def _text_edits(self, path: str, edits: list[dict[str, Any]], converted: list[TextEdit],
                    seen: set[tuple[EditKey, str]]) -> None:
        """``edits`` (JSON) of the file at ``path`` appended to ``converted``, less repeats of a
        replacement already in it (``seen``): tsserver renames a re-export (``export { parse as
        read }``) once per overload signature of what it re-exports, the same edit three times,
        which would read as overlapping edits. Two equal insertions are kept: an insertion twice
        is two insertions. Each range is the one kept for the file's content (lsp_pool.kept_ranges)."""
        index, encoding = self.index(path), self.encoding
        ranges = _KEPT_RANGES.of(path, index, encoding)
        try:
            for text_edit in edits:
                start, end = text_edit["range"]["start"], text_edit["range"]["end"]
                key = (start["line"], start["character"], end["line"], end["character"])
                kept = ranges.get(key)
                if kept is None:
                    kept = ranges[key] = converted_range(index, key, encoding)
                new_text = text_edit["newText"] if "newText" in text_edit else text_edit["snippet"]["value"]
                if kept[1] is not None:
                    # Told apart by the ends in engine positions, as plain tuples: hashing the
                    # position objects, field by field in Python, cost more than the conversion.
                    replacement = (kept[1], new_text)
                    if replacement in seen:
                        continue
                    seen.add(replacement)
                converted.append(TextEdit(kept[0], new_text))
        finally:
            _KEPT_RANGES.counted(path, encoding, ranges)

    def code_action(self, action: t.CodeAction | t.Command) -> CodeAction:
        if isinstance(action, t.Command):
            return CodeAction(action.title, "command", None, action)
        edit = self.workspace_edit(action.edit) if action.edit is not None else None
        return CodeAction(action.title, str(action.kind or ""), edit, action)

    @staticmethod
    def action_details(handle: object, *, resolves: bool) -> ActionDetails:
        """What a server's action (``CodeAction.handle``) carries besides its edit. ``resolves``:
        the server answers ``codeAction/resolve``. An action without an edit is resolvable only
        when it carries no command either: with one, the command is what it does (tsserver's
        fix-all actions carry data too, and resolve to no edit)."""
        if isinstance(handle, t.Command):
            return ActionDetails(command=handle.command)
        if not isinstance(handle, t.CodeAction):
            return ActionDetails()
        command = handle.command.command if handle.command is not None else None
        return ActionDetails(
            command=command,
            resolvable=resolves and handle.edit is None and command is None,
            preferred=bool(handle.is_preferred),
            disabled=handle.disabled.reason if handle.disabled is not None else None,
        )

    # -- hierarchies and diagnostics ----------------------------------------

    def hierarchy_item(self, item: t.CallHierarchyItem | t.TypeHierarchyItem) -> HierarchyItem:
        path = uri_to_path(item.uri)
        file, _inside = self.relative(path)
        return HierarchyItem(
            name=item.name,
            kind=SymbolKind(int(item.kind)),
            file=file,
            range=self.range(path, item.range),
            selection_range=self.range(path, item.selection_range),
            detail=item.detail or "",
            handle=item,
        )

    def call_edges(self, calls: Any, *, incoming: bool, asked_uri: str = "") -> list[CallEdge]:
        """Incoming or outgoing calls as edges; ``asked_uri`` is the file of the item asked about,
        where an outgoing call's sites are (LSP: ``fromRanges`` are relative to the caller)."""
        edges = []
        for call in calls or []:
            item = call.from_ if incoming else call.to
            site_path = uri_to_path(call.from_.uri) if incoming else uri_to_path(asked_uri)
            sites = tuple(self.range(site_path, r) for r in call.from_ranges)
            edges.append(CallEdge(self.hierarchy_item(item), sites))
        return edges

    def diagnostics(self, uri: str, diagnostics: Iterable[t.Diagnostic]) -> list[Diagnostic]:
        path = uri_to_path(uri)
        file, _inside = self.relative(path)
        return [
            Diagnostic(
                file=file,
                range=self.range(path, d.range),
                severity=_SEVERITY.get(int(d.severity or 1), "error"),
                message=d.message,
                source=d.source or "",
                code=str(d.code) if d.code is not None else "",
            )
            for d in diagnostics
        ]


_KEPT_INDEXES: RememberedReads[LineIndex] = RememberedReads(KEPT_BYTES)
"""Line indexes kept from request to request: each request has its own Converter, and a warm
rename's answer names the same fifty files again, each read and indexed anew before."""


_KEPT_RANGES = KeptRanges()
"""Text edits' ranges kept from request to request, per file content and encoding."""


def _kept_index(path: str) -> LineIndex:
    """``path``'s line index as the disk has it, kept while its status is unchanged (the read
    memo's check: a write since, even within one tick of the clock, is seen)."""
    status = os.stat(path)
    kept = _KEPT_INDEXES.get(path, status)
    if kept is not None and kept[1] is not None:
        return kept[1]
    data = read_bytes(path)
    index = LineIndex(data[len(_UTF8_BOM):] if data.startswith(_UTF8_BOM) else data)
    _KEPT_INDEXES.keep(path, status, data, index)
    return index


def _nest_by_range(symbols: list[Symbol]) -> list[Symbol]:
    """Rebuild a hierarchy from a flat SymbolInformation list by range containment."""
    ordered = sorted(symbols, key=lambda s: (s.range.start, (-s.range.end.line, -s.range.end.column)))
    top: list[Symbol] = []
    stack: list[Symbol] = []
    for symbol in ordered:
        while stack and not stack[-1].range.encloses(symbol.range):
            stack.pop()
        (stack[-1].children if stack else top).append(symbol)
        stack.append(symbol)
    return top
