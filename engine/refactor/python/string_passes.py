"""Rename passes for the places that name a Python symbol in a string or an example: ``__all__``
entries, dotted paths (``mock.patch("pkg.mod.old")``), doctests, and lookups by computed name."""

from __future__ import annotations

import re
from bisect import bisect_right

from engine.answers import TextEdit
from engine.edits.model import FileChange, WorkspaceEdit
from engine.languages import language_of
from engine.positions import Position, Range, split_lines
from engine.refactor.corpus import Corpus
from engine.refactor.pass_protocol import RenameRequest, merge
from engine.refactor.python.doctests import DoctestPass
from engine.symbols import Source
from engine.workspace import SourceFile

_ALL = re.compile(r"^__all__\s*\+?=\s*[\[(]", re.MULTILINE)


class AllEntries:
    """``__all__`` strings naming the old name, in the defining module and in every module the
    rename already touches (re-exporters)."""

    name = "all_entries"
    hazards = ("__all__ strings",)

    def prepare(self, corpus: Corpus, request: RenameRequest) -> None:
        self.corpus, self.request = corpus, request
        # Every file a rename edits mentions the old name; their __all__ entries are looked up now.
        self.found = {path: all_entries(corpus.source(path), request.old_name)
                      for path in corpus.mentioning(request.old_name, "python")}

    def add(self, edit: WorkspaceEdit, source: Source) -> tuple[WorkspaceEdit, list[str]]:
        request = self.request
        return with_all_entries(self.corpus, edit, request.primary, request.old_name, request.new_name, self.found), []


def with_all_entries(
    corpus: Corpus, edit: WorkspaceEdit, defining_file: str, old: str, new: str, found: dict[str, list[Range]] | None = None,
) -> WorkspaceEdit:
    """Add the ``__all__`` strings naming the old name, in the defining module and in every module
    the rename already touches (re-exporters), unless the plan already edits them. ``found``
    holds files' entries already looked up (:func:`all_entries`)."""
    files = [defining_file] + [op.path for op in edit.operations if isinstance(op, FileChange) and op.path != defining_file]
    by_file = {op.path: op for op in edit.operations if isinstance(op, FileChange)}
    changes: dict[str, FileChange] = dict(by_file)
    for path in files:
        if language_of(path) != "python":
            continue
        spans = found[path] if found is not None and path in found else all_entries(corpus.source(path), old)
        existing = list(by_file[path].edits) if path in by_file else []
        added = [TextEdit(span, new) for span in spans
                 if not any(e.range.start <= span.start < e.range.end or e.range.start == span.start for e in existing)]
        if added:
            changes[path] = FileChange(path, tuple(existing + added), corpus.source(path).sha256)
    ordered = [changes.pop(op.path) if isinstance(op, FileChange) and op.path in changes else op for op in edit.operations]
    return WorkspaceEdit(tuple(ordered + list(changes.values())), edit.annotations)


def all_entries(source: SourceFile, old: str) -> list[Range]:
    """Where the file's ``__all__`` lists name ``old`` (the name inside the quotes)."""
    text = source.text
    if "__all__" not in text:
        return []
    starts = source.line_starts
    spans = []
    for match in _ALL.finditer(text):
        closing = text.find("]" if text[match.end() - 1] == "[" else ")", match.end())
        region = text[match.end():closing if closing != -1 else len(text)]
        for entry in re.finditer(rf"([\"']){re.escape(old)}\1", region):
            offset = match.end() + entry.start() + 1
            line = bisect_right(starts, offset) - 1
            spans.append(Range(Position(line, offset - starts[line]), Position(line, offset - starts[line] + len(old))))
    return spans


class DottedStrings:
    """Strings that name the symbol by its dotted path, such as ``mock.patch("pkg.mod.old")`` or
    ``monkeypatch.setattr("pkg.mod.old", ...)``: code references a server does not see."""

    name = "dotted_strings"
    hazards = ("mock.patch targets", "dotted paths in strings")

    def prepare(self, corpus: Corpus, request: RenameRequest) -> None:
        self.additions = dotted_strings(corpus, request.dotted, request.old_name, request.new_name)

    def add(self, edit: WorkspaceEdit, source: Source) -> tuple[WorkspaceEdit, list[str]]:
        return (merge([edit, *self.additions]) if self.additions else edit), []


def dotted_strings(corpus: Corpus, dotted: str | None, old: str, new: str) -> list[WorkspaceEdit]:
    """One edit per file of the strings naming ``dotted`` (or a dotted path under it)."""
    if not dotted:
        return []
    pattern = re.compile(rf"([\"']){re.escape(dotted)}(?=(?:\.[\w.]*)?\1)")
    additions = []
    for path in corpus.mentioning(dotted, "python"):
        source = corpus.source(path)
        spans = []
        for number, line in enumerate(split_lines(source.text)):
            for match in pattern.finditer(line):
                start = match.end() - len(old)
                spans.append(TextEdit(Range(Position(number, start), Position(number, match.end())), new))
        if spans:
            additions.append(WorkspaceEdit((FileChange(path, tuple(spans), source.sha256),)))
    return additions


class Doctests:
    """The symbol's name on doctest example lines (and the documentation's mentions, listed or,
    with ``include_docs``, edited). Symbols only (they have a dotted path): a parameter's or
    local's name on an example line is as likely another function's keyword (``pred=`` in a
    sibling's doctest) as this one."""

    name = "doctests"
    hazards = ("doctest examples", "documentation mentions")

    def prepare(self, corpus: Corpus, request: RenameRequest) -> None:
        self.doctests = None if request.dotted is None else DoctestPass(
            corpus, request.primary, request.old_name, request.new_name, request.targets[0].position.line,
            request.include_docs, request.dotted)

    def add(self, edit: WorkspaceEdit, source: Source) -> tuple[WorkspaceEdit, list[str]]:
        if self.doctests is None:
            return edit, []
        examples, notes = self.doctests.add(edit)
        return (merge([edit, WorkspaceEdit(tuple(examples))]) if examples else edit), notes


class DynamicLookups:
    """Warnings for lookups by computed name in the defining module or its package."""

    name = "dynamic_lookups"
    hazards = ("module __getattr__", "globals()[...] lookups")

    def prepare(self, corpus: Corpus, request: RenameRequest) -> None:
        self.warnings = dynamic_module_lookups(corpus, request.primary, request.old_name)

    def add(self, edit: WorkspaceEdit, source: Source) -> tuple[WorkspaceEdit, list[str]]:
        return edit, self.warnings


_MODULE_GETATTR = re.compile(r"^def __getattr__\s*\(", re.MULTILINE)
_GLOBALS_LOOKUP = re.compile(r"\bglobals\(\)\s*\[\s*(?![\"'])")


def dynamic_module_lookups(corpus: Corpus, defining_file: str, old: str) -> list[str]:
    """Warnings for lookups by computed name in the defining module or its package: a module
    ``__getattr__`` (deprecation shims, lazy imports) or ``globals()[…]`` with a computed key
    may hand out the old name, which no rename can see; listed with the places that still
    name it in a string."""
    package_init = defining_file.rsplit("/", 1)[0] + "/__init__.py" if "/" in defining_file else "__init__.py"
    warnings = []
    for path in dict.fromkeys([defining_file, package_init]):
        if path not in corpus.paths:
            continue
        text = corpus.source(path).text
        for pattern, what in ((_MODULE_GETATTR, "a module-level __getattr__"), (_GLOBALS_LOOKUP, "a globals()[…] lookup by computed name")):
            for match in pattern.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                warnings.append(f"{path}:{line} has {what}: code reaching {old} through it by name is not renamed; check it")
    if warnings:
        quoted = re.compile(rf"[\"']{re.escape(old)}[\"']")
        strings = [f"{path}:{n + 1}" for path in corpus.mentioning(old, "python")
                   for n, line in enumerate(corpus.source(path).text.splitlines()) if quoted.search(line)]
        if strings:
            warnings.append(f"places naming {old} in a string, which such a lookup may serve: {', '.join(strings[:10])}")
    return warnings
