"""The project: one workspace's reading, graph, navigation and refactoring planning.

``Engine`` takes engine types (an :class:`~engine.names.Address`, a
:class:`~engine.symbols.SymbolKind`, an operation of the registry) and returns engine values;
it is also the context operations plan in (engine.refactor.operations.PlanContext). Changes
are applied through a per-connection :class:`engine.client.EngineClient`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from engine.choices import SourcePreference
from engine.edits.apply import Transactions
from engine.edits.baseline_fill import BaselineFill
from engine.edits.kept_baseline import KeptBaseline
from engine.edits.session import EditSession
from engine.errors import AmbiguousAddress, FileNotInWorkspace, GraftError, MalformedAddress, ServiceUnavailable, SymbolNotFound, UnsafePath
from engine.extract import FileSymbols, SymbolExtractor
from engine.extract.reconcile import add_dropped, reconcile
from engine.graph import GraphQueries, IndexStats, ProjectIndex
from engine.graph.index import Progress
from engine.graph.queries import EdgeRef, OverviewEntry
from engine.languages import language_of, profile_of
from engine.names import Address, PositionAddress, SymbolAddress, parse_address
from engine.overloads import OverloadSet, overload_set
from engine.references import NavigationResult, Navigator
from engine.served_graph import ServedGraph
from engine.answers import Diagnostic
from engine.ports import LanguageServices, Tools
from engine.refactor.mentions import FileWords, MentionIndex
from engine.refactor import policy
from engine.refactor.operations import RefactorOperation
from engine.refactor.plan import RefactorPlan
from engine.positions import split_lines
from engine.resolve import ambiguous, checked_position, declaration_at, match_name_path, name_at, not_found, symbol_at
from engine.settings import load_engine_settings
from engine.symbols import Confidence, Source, Symbol, SymbolKind
from engine.workspace import Skipped, SourceFile, Workspace


@dataclass(frozen=True)
class FindResult:
    matches: list[Symbol]
    files_searched: int
    skipped: list[Skipped]


@dataclass(frozen=True)
class SymbolText:
    symbol: Symbol
    file: SourceFile
    first_line: int
    """1-based number of the first line in ``lines``."""
    lines: list[str]
    overloads: OverloadSet | None = None
    """The overload set the address named without ``[n]``, answered for its implementation."""


@dataclass(frozen=True)
class Explanation:
    """What a symbol is: its source, and its neighbours in the project graph."""

    text: SymbolText
    callers: list[EdgeRef]
    callees: list[EdgeRef]
    supertypes: list[EdgeRef]
    subtypes: list[EdgeRef]
    notes: list[str] = field(default_factory=list)
    """Where the callers and callees came from (the server's call hierarchy, outside Python), or
    why there are none to show."""


@dataclass(frozen=True)
class SymbolsListing:
    files: list[FileSymbols]
    skipped: list[Skipped]


class Engine:
    def __init__(
        self,
        workspace: Workspace,
        *,
        services: LanguageServices | None = None,
        tools: Tools | None = None,
        source: SourcePreference = SourcePreference.AST,
        extractor: SymbolExtractor | None = None,
    ) -> None:
        self.workspace = workspace
        self.services = services
        self.tools = tools
        self.source = source
        self.settings = load_engine_settings(workspace.root)
        self._extractor = extractor or SymbolExtractor()
        self._index: ProjectIndex | None = None
        self._index_stats: IndexStats | None = None
        self._edited_since_refresh: set[str] = set()
        self.kept_errors = KeptBaseline()
        """The errors each apply's check had, for the next check of the same files (engine.edits.kept_baseline)."""
        self.baseline_fill = BaselineFill()
        """Asks for the errors before a previewed edit while the preview is read, when a long-lived
        front end enables it (engine.edits.baseline_fill)."""
        """Files an apply or undo wrote that the graph has not re-read yet: it re-reads them when
        next asked, not while the edit's caller waits (re-reading a file mostly means asking the
        server for its symbols again)."""
        self._mentions = MentionIndex()
        """The source files' words, indexed by a long-lived engine between calls (index_words)."""
        self._served_outlines: dict[str, tuple[str, FileSymbols]] = {}
        """path → (sha256, the server's outline of that content): a refactoring asks for the same
        file's outline several times, and a server round trip each time costs more than the rest."""
        self.transactions = Transactions(workspace, dirty_check=tools.dirty_files if tools is not None else None)
        # A transaction interrupted by a crash is rolled back before anything else reads the files.
        # Also moves aside whatever under .graft cannot be trusted (a workspace can ship one).
        self.recovered = self.transactions.recover()

    def close(self) -> None:
        """Shut down whatever language servers this engine started, and close the index cache."""
        if self.services is not None:
            self.services.close()
        if self._index is not None:
            self._index.close()
            self._index = None

    # -- the project graph -----------------------------------------------------

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

    # -- edits -------------------------------------------------------------------

    def edits(self) -> EditSession:
        # The check's scope is what an apply writes and the importers that can see what it
        # changed, transitively: the graph is loaded for it when the check asks (a refactoring
        # has loaded it already; a long-lived engine keeps it), since an importer left out is an
        # error nobody is told of.
        return EditSession(self.workspace, self.transactions, self.services, self.tools, self._files_edited,
                           diagnostics_budget=self.settings.diagnostics_budget,
                           dependents=lambda paths: self.graph().dependents(paths),
                           importers_unknown=lambda paths: self.graph().importers_unknown(paths),
                           kept=self.kept_errors, content_hashes=lambda: self.graph().content_hashes(),
                           fill=self.baseline_fill)

    # -- refactorings -----------------------------------------------------------

    def plan(self, operation: RefactorOperation) -> RefactorPlan:
        """The edit an operation would make (engine.refactor.operations), planned by its policy
        (engine.refactor.policy); nothing is written."""
        self._overlap_server_start(operation)
        return policy.plan(operation, self)

    def _overlap_server_start(self, operation: RefactorOperation) -> None:
        """A cold server takes longer to start and read its first file than a cold graph takes
        to build from the trees: the server is started now without waiting, and the graph is
        built meanwhile, so the two waits overlap. A server that
        fails to start is met, with its reason, by the plan's first request."""
        if not self.use_server or self.services is None:
            return
        file = operation.source_file()
        try:
            relative = self.workspace.resolve(file)[0] if file is not None else None
        except UnsafePath:
            return  # the plan refuses it with its own message
        if relative is None or language_of(relative) is None:
            return
        self.services.warm_up([relative])
        if operation.reads_graph and not self.graph_loaded:
            self.graph()

    @property
    def use_server(self) -> bool:
        return self.source in (SourcePreference.AUTO, SourcePreference.LSP)

    @property
    def require_server(self) -> bool:
        return self.source is SourcePreference.LSP

    @property
    def extractor(self) -> SymbolExtractor:
        return self._extractor

    def pyproject_text(self) -> str | None:
        path = self.workspace.root / "pyproject.toml"
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None

    # -- reading -------------------------------------------------------------

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

    def find(self, address: Address, kind: SymbolKind | None = None) -> FindResult:
        """Every symbol an address names; workspace-wide when it names no file."""
        if isinstance(address, PositionAddress):
            return FindResult([self._symbol_at_position(address)], 1, [])
        listing = self._files_for(address)
        matches = match_name_path(listing.files, address.name_path, kind)
        if not matches:
            where = address.file or f"the workspace ({len(listing.files)} files)"
            wanted = str(address.name_path) + (f" of kind {kind.label}" if kind else "")
            raise not_found(listing.files, wanted, address.name_path, where)
        return FindResult(matches, len(listing.files), listing.skipped)

    def graph_target(self, target: str) -> str:
        """A graph query's target as the graph names it: ``FILE:LINE:COL`` on a name is the symbol
        that name refers to (as :meth:`find` says), since the graph has no file text to tell; a
        file path, a name path or ``FILE:LINE`` go to the graph as they are."""
        try:
            parsed = parse_address(target)
        except MalformedAddress:
            return target  # a file path, which the graph takes as it is
        if not isinstance(parsed, PositionAddress):
            queries = self.graph()
            try:
                nodes = queries.nodes_for(target)
            except GraftError:
                return target  # the graph's own refusal says it, as it did before
            chosen = self._overloads_among(target, [queries.ref(n).address for n in nodes]) if len(nodes) > 1 else None
            # An overload set's impact is its implementation's; other several-named targets go as they are.
            return chosen.implementation.address if chosen is not None else target
        if parsed.column is None:
            return target
        symbol = self.resolve(parsed)
        return f"{symbol.file}:{symbol.name_path}"

    def resolve(self, address: Address, kind: SymbolKind | None = None) -> Symbol:
        """Exactly one symbol, or a refusal that lists the candidates."""
        result = self.find(address, kind)
        if len(result.matches) > 1:
            raise ambiguous(str(address), result.matches)
        return result.matches[0]

    def overview(self, under: str = ".", depth: int = 1) -> list[OverviewEntry]:
        """The graph's map of a folder, the folder checked like any path a user gives: outside the
        workspace, through a symlink (not followed, so not indexed), or missing, it is refused
        rather than answered with an empty map."""
        relative, absolute = self.workspace.resolve(under)
        if absolute.is_symlink():
            raise UnsafePath(f"{relative} is a symlink; codegraft does not follow symlinked folders, so nothing under it is indexed")
        if not absolute.exists():
            raise FileNotInWorkspace(f"{relative} does not exist (paths are relative to the workspace root {self.workspace.root})")
        return self.graph().overview(relative, depth)

    def resolve_binding(self, address: Address) -> list[Symbol]:
        """What rename, move and delete act on: one symbol, or all the same-named definitions of
        one scope when the address names several without ``[n]`` (an ``@overload`` stack, a
        property's getter, setter and deleter, a function defined in both arms of an ``if``):
        in Python those are one name, and acting on one of them alone would break the others."""
        matches = self.find(address).matches
        first = matches[0]
        one_binding = all(
            m.file == first.file and m.name == first.name and m.path[:-1] == first.path[:-1] for m in matches
        )
        kind = profile_of(first.file)
        if len(matches) > 1 and not (one_binding and kind is not None and kind.one_name_definitions):
            raise ambiguous(str(address), matches)
        return sorted(matches, key=lambda m: m.range.start)

    def explain(self, address: Address) -> Explanation:
        """A symbol's source with what calls it, what it calls, its bases and subclasses."""
        found = self.read(address)
        queries = self.graph()
        key = f"{found.symbol.file}:{found.symbol.name_path}"
        served = self.served_graph()
        try:
            callers, callees = served.callers(key), served.callees(key)
        except GraftError as refusal:  # a type (not_callable), a server without call hierarchy, or none at all
            return Explanation(found, [], [], queries.supertypes(key), queries.subtypes(key),
                               [f"callers and callees not known ({refusal.code}): {refusal.message}"])
        notes = list(dict.fromkeys([*callers.notes, *callees.notes]))
        return Explanation(found, callers.rows, callees.rows, queries.supertypes(key), queries.subtypes(key), notes)

    def read(self, address: Address, kind: SymbolKind | None = None) -> SymbolText:
        """A symbol's source text, from the first decorator to the end of its body. An overload
        set named without ``[n]`` reads as its implementation, with the signatures listed."""
        matches = self.find(address, kind).matches
        chosen: OverloadSet | None = None
        if len(matches) > 1:
            chosen = overload_set(matches, self.workspace.read(matches[0].file).text)
            if chosen is None:
                raise ambiguous(str(address), matches)
        symbol = chosen.implementation if chosen is not None else matches[0]
        source = self.workspace.read(symbol.file)
        lines = split_lines(source.text)
        start, end = symbol.range.start.line, symbol.range.last_line
        return SymbolText(symbol, source, start + 1, lines[start:end], chosen)

    # -- helpers -------------------------------------------------------------

    def _symbol_at_position(self, address: PositionAddress) -> Symbol:
        """``FILE:LINE`` is the innermost symbol around the line. ``FILE:LINE:COL`` on a name is
        what the name refers to (a declaration's own name is that declaration; a call's callee is
        the callee, not the function the call is in); on no name, the innermost symbol around it.
        A position past the end of the file or of its line is refused, never clamped."""
        source = self.workspace.read(address.file)
        position = checked_position(source.text, address)
        outline = self.outline(address.file)
        if address.column is None:
            return symbol_at(outline, address)
        declared = declaration_at(outline, position)
        if declared is not None:
            return declared
        if name_at(source, position) is None:
            return symbol_at(outline, address)
        return self._symbol_defined_for(address)

    def _symbol_defined_for(self, address: PositionAddress) -> Symbol:
        """The outline symbol the name at a position is defined as (its definition's declaration)."""
        answer = self.definition(str(address))
        for location in answer.locations:
            if location.inside_workspace and language_of(location.file) is not None:
                found = declaration_at(self.outline(location.file), location.range.start)
                if found is not None:
                    return found
        where = ", ".join(f"{loc.file}:{loc.range.start.line + 1}:{loc.range.start.column + 1}" for loc in answer.locations)
        raise SymbolNotFound(
            f"the name at {address} is defined at {where or 'no place the answer gives'}, which is no symbol of an outline "
            f"(a parameter, a local, a library's name?); {address.file}:{address.line} without a column names the "
            "symbol around the line"
        )

    def _files_for(self, address: SymbolAddress) -> SymbolsListing:
        if address.file is not None:
            return SymbolsListing([self.outline(address.file)], [])
        return self.symbols(".")

