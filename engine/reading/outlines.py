"""One file's symbols, and every file's under a folder: the server's outline reconciled with the
tree's, or the tree's alone, as the source preference allows."""

from __future__ import annotations

from dataclasses import dataclass, replace

from engine.choices import SourcePreference
from engine.errors import GraftError, ServiceUnavailable
from engine.extract import FileSymbols, SymbolExtractor
from engine.extract.reconcile import add_dropped, reconcile
from engine.languages import language_of
from engine.ports import LanguageServices
from engine.symbols import Confidence, Source
from engine.workspace import Skipped, SourceFile, Workspace


@dataclass(frozen=True)
class SymbolsListing:
    files: list[FileSymbols]
    skipped: list[Skipped]


class OutlineReading:
    """The Engine's outlines (engine.api.Engine sets the attributes below)."""

    workspace: Workspace
    services: LanguageServices | None
    source: SourcePreference
    _extractor: SymbolExtractor
    _served_outlines: dict[str, tuple[str, FileSymbols]]

    @property
    def extractor(self) -> SymbolExtractor:
        return self._extractor

    def outline(self, path: str) -> FileSymbols:
        """The symbol tree of one file, from the best source the preference allows, labelled with it."""
        source = self.workspace.read(path)
        if self.source is SourcePreference.REGEX:
            return self._extractor.extract_with_regex(source)
        if self.source is SourcePreference.AST:
            return self._extractor.extract(source)
        known = self._served_outlines.get(source.path)
        if known is not None and known[0] == source.sha256:
            return known[1]
        notes: list[str] = []
        served = self._serve(source, notes)
        if served is not None:
            if len(self._served_outlines) >= 256:
                self._served_outlines.clear()
            self._served_outlines[source.path] = (source.sha256, served)
            return served
        fallback = self._extractor.extract(source)
        return replace(fallback, notes=notes + fallback.notes)

    def _served_symbols(self, source: SourceFile, syntactic: FileSymbols) -> FileSymbols | None:
        """For the index: the server's symbols for a file, or None to use the tree."""
        return self._serve(source, [], syntactic) if source.language is not None else None

    def _serve(self, source: SourceFile, notes: list[str], syntactic: FileSymbols | None = None) -> FileSymbols | None:
        """The server's symbols reconciled with the file's tree (``syntactic``: its symbols, when
        the caller has them), or None with the reason in ``notes`` (with ``--source lsp`` the
        reason is raised instead)."""
        required = self.source is SourcePreference.LSP
        if self.services is None:
            if required:
                raise ServiceUnavailable("no language-server support is installed (the lsp_pool package is missing)")
            notes.append("no language-server support is installed")
            return None
        try:
            served = self.services.document_symbols(source)
        except ServiceUnavailable as error:
            if required:
                raise
            notes.append(f"language server unavailable: {error.message}")
            return None
        if not served.symbols and not required:
            notes.append("the language server returned no symbols")
            return None
        syntactic = syntactic if syntactic is not None else self._extractor.extract(source)
        if syntactic.confidence is Confidence.HIGH or syntactic.source is not Source.AST:
            return replace(served, symbols=reconcile(served.symbols, syntactic.symbols))
        # Syntax errors: a server may silently drop what follows them, where the tree recovers.
        dropped = add_dropped(served.symbols, syntactic.symbols)
        merged_notes = [*served.notes, "the file has syntax errors"]
        if dropped:
            merged_notes.append(f"the server's outline lacked {len(dropped)} symbol(s) the syntax tree has, added from it "
                                f"(source ast): {', '.join(dropped[:8])}" + (" …" if len(dropped) > 8 else ""))
        return replace(served, symbols=reconcile(served.symbols, syntactic.symbols), confidence=Confidence.MEDIUM, notes=merged_notes)

    def symbols(self, under: str = ".") -> SymbolsListing:
        """The symbol trees of every source file under a folder, with the files skipped and why."""
        scan = self.workspace.scan(under)
        files: list[FileSymbols] = []
        skipped = list(scan.skipped)
        for path in scan.files:
            if language_of(path) is None:
                continue
            try:
                files.append(self.outline(path))
            except GraftError as error:
                skipped.append(Skipped(path, getattr(error, "reason", error.message)))
        return SymbolsListing(files, skipped)
