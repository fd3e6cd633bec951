"""The project: one workspace's reading, graph, navigation and refactoring planning.

``Engine`` takes engine types (an :class:`~engine.names.Address`, a
:class:`~engine.symbols.SymbolKind`, an operation of the registry) and returns engine values;
it is also the context operations plan in (engine.refactor.operations.PlanContext). Changes
are applied through a per-connection :class:`engine.client.EngineClient`.
"""

from __future__ import annotations

from engine.choices import SourcePreference
from engine.edits.apply import Transactions
from engine.edits.baseline_fill import BaselineFill
from engine.edits.kept_baseline import KeptBaseline
from engine.edits.session import EditSession
from engine.errors import UnsafePath
from engine.extract import FileSymbols, SymbolExtractor
from engine.graph import IndexStats, ProjectIndex
from engine.languages import language_of
from engine.ports import LanguageServices, Tools
from engine.refactor.mentions import MentionIndex
from engine.refactor import policy
from engine.refactor.operations import RefactorOperation
from engine.refactor.plan import RefactorPlan
from engine.settings import load_engine_settings
from engine.workspace import Workspace
from engine.reading.addresses import (
    AddressReading, Explanation as Explanation, FindResult as FindResult, SymbolText as SymbolText,
)
from engine.reading.outlines import SymbolsListing as SymbolsListing


class Engine(AddressReading):
    """A workspace's engine: what it reads (engine.reading: outlines, the graph and navigation,
    addresses), its plans and its edit sessions, and the servers and index it owns."""

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
        if not self.use_server or self.services is None or operation.span_only:
            return  # a span-only plan starts a server only if the syntax tree cannot settle its target
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

    def pyproject_text(self) -> str | None:
        path = self.workspace.root / "pyproject.toml"
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None

    # -- reading -------------------------------------------------------------
