"""The Engine's project graph (indexed on first use, re-read after edits, caught up with the disk)
and navigation over it: references, definitions, diagnostics, the served graph."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from engine.choices import SourcePreference
from engine.errors import AmbiguousAddress, MalformedAddress, ServiceUnavailable
from engine.answers import Diagnostic
from engine.graph import GraphQueries, IndexStats, ProjectIndex
from engine.graph.index import Progress
from engine.names import SymbolAddress, parse_address
from engine.overloads import OverloadSet, overload_set
from engine.reading.outlines import OutlineReading
from engine.references import NavigationResult, Navigator
from engine.refactor.mentions import FileWords, MentionIndex
from engine.resolve import match_name_path
from engine.served_graph import ServedGraph


class GraphReading(OutlineReading):
    """The Engine's graph and navigation (engine.api.Engine sets the attributes below)."""

    _index: ProjectIndex | None
    _index_stats: IndexStats | None
    _edited_since_refresh: set[str]
    _mentions: MentionIndex

    def index(self, progress: Progress | None = None) -> IndexStats:
        """Bring the project graph up to date with the disk (cold, incremental or warm)."""
        if self._index is None:
            # The graph's symbols are the trees' unless the server is required (``--source lsp``).
            # With ``auto`` the servers answer per request (outline, find, read, rename), not for
            # the whole index: asking one for every file's symbols made a cold first rename wait
            # for all of them (and doubled basedpyright's memory) for a graph whose
            # edges come from the trees anyway. Every symbol still carries its source.
            serve = self._served_symbols if self.source is SourcePreference.LSP and self.services else None
            self._index = ProjectIndex(self.workspace, progress=progress, served_symbols=serve)
        self._index.progress = progress
        self._edited_since_refresh.clear()  # a load compares every file with the disk anyway
        self._index_stats = self._index.load()
        if self._index_stats.swept and self.services is not None:
            self.services.files_changed(self._index_stats.swept)  # changed behind a long-lived engine's back
        return self._index_stats

    def graph(self) -> GraphQueries:
        """Queries over the project graph, indexing first if this engine has not yet, and
        re-reading first the files edited since it was last asked."""
        if self._index is None or self._index_stats is None:
            self.index()
        elif self._edited_since_refresh:
            edited = sorted(self._edited_since_refresh)
            self._edited_since_refresh.clear()
            self._index.refresh(edited)
        if self._index is None:
            raise RuntimeError("the project index was not loaded")  # index() always sets it
        return GraphQueries(self._index.graph)

    @property
    def graph_loaded(self) -> bool:
        return self._index is not None and self._index_stats is not None

    @property
    def words_indexed(self) -> int:
        """Source files whose words this engine holds (index_words)."""
        return len(self._mentions)

    @property
    def disk_changes(self) -> str:
        """How a long-lived engine learns what changed on disk between calls (for its status)."""
        if self._index is None or not self._index.loaded:
            return "not indexed yet"
        if self._index.watching:
            return f"watching {self._index.watching} folders"
        return f"a whole sweep before each call ({self._index.watch_note})" if self._index.watch_note else "a whole sweep before the next call"

    def refresh_from_disk(self) -> list[str]:
        """Bring a long-lived engine (the CLI's daemon) up to date with what changed on disk
        behind its back: the graph re-reads those files and the language servers are told.
        Nothing to do before the graph is first loaded (a load compares every file anyway).
        Returns the paths found changed."""
        if self._index is None or not self.graph_loaded:
            return []
        self._edited_since_refresh.clear()  # the disk check covers them: an apply's files changed too
        changed, _recomputed = self._index.catch_up()
        if changed and self.services is not None:
            self.services.files_changed(changed)  # changed behind a long-lived engine's back
        return changed

    def file_words(self) -> FileWords | None:
        """The words of the source files indexed at their current content (engine.refactor.mentions):
        a refactoring's search for a name reads only the files whose words may hold it. Taken
        after the graph has re-read the files this engine wrote; None before any index_words."""
        if not self.graph_loaded:
            return None
        return self._mentions.current(self.graph().project.facts)

    def index_words(self) -> int:
        """Index the words of the source files not indexed at their current content; how many.
        A long-lived engine's work between calls (the CLI's daemon), so that no call waits for it:
        every file the first time, then the files changed since."""
        if not self.graph_loaded:
            return 0
        return self._mentions.update(str(self.workspace.root), self.graph().project.facts)

    def workspace_files(self) -> list[str]:
        """Every file of the workspace scan, sources or not. A long-lived engine keeps the list
        between calls while its watcher sees no file appear or go (callers must not change it)."""
        if self._index is None or not self.graph_loaded or self._edited_since_refresh:
            return self.workspace.scan().files  # edits not yet refreshed may have created files
        return self._index.workspace_files()

    def _files_edited(self, paths: list[str]) -> None:
        self._edited_since_refresh.update(paths)

    def references(self, address: str) -> NavigationResult:
        """References to a symbol: the server's when it can answer, else the graph's, labelled.
        An overload set named without ``[n]`` answers for its implementation."""
        return self._through_overloads(address, self._navigator().references)

    def definition(self, address: str) -> NavigationResult:
        """Where the name at ``FILE:LINE:COL`` is defined: the server's answer, else the graph's.
        An overload set named without ``[n]`` answers for its implementation."""
        return self._through_overloads(address, self._navigator().definition)

    def _through_overloads(self, address: str, ask: Callable[[str], NavigationResult]) -> NavigationResult:
        try:
            return ask(address)
        except AmbiguousAddress as refusal:
            chosen = self._overloads_among(address, [c.address for c in refusal.candidates])
            if chosen is None:
                raise
            answer = ask(chosen.implementation.address)
            return replace(answer, notes=[chosen.note(address), *answer.notes])

    def _overloads_among(self, address: str, candidates: list[str]) -> OverloadSet | None:
        """The overload set the graph's candidates for ``address`` form, found in their file's
        outline (the graph has no file text to tell a signature from an implementation)."""
        try:
            parsed = parse_address(address)
        except MalformedAddress:
            return None
        files = {candidate.partition(":")[0] for candidate in candidates}
        if not isinstance(parsed, SymbolAddress) or len(files) != 1:
            return None
        path = files.pop()
        matches = match_name_path([self.outline(path)], parsed.name_path)
        if len(matches) != len(candidates):
            return None
        return overload_set(matches, self.workspace.read(path).text)

    def diagnostics(self, path: str) -> list[Diagnostic]:
        """The language server's diagnostics for a file as it is on disk."""
        if self.services is None:
            raise ServiceUnavailable("diagnostics need a language server, and no language-server support is installed")
        return self.services.diagnostics(self.workspace.read(path)).value

    def served_graph(self) -> ServedGraph:
        """Callers, callees, impact and implementations: the graph's, or the language server's where
        the graph follows no uses in the symbol's language (TypeScript, Go), labelled either way."""
        use_server = self.source in (SourcePreference.AUTO, SourcePreference.LSP) and self.services is not None
        return ServedGraph(self.workspace, self.graph(), self.services, use_server=use_server,
                           require_server=self.source is SourcePreference.LSP)

    def _navigator(self) -> Navigator:
        use_server = self.source in (SourcePreference.AUTO, SourcePreference.LSP)
        return Navigator(self.workspace, self.graph, self.services, use_server, self.source is SourcePreference.LSP)
