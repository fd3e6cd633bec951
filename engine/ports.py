"""The ports through which the engine reaches what lives outside it.

``lsp_pool`` implements :class:`LanguageServices`; the engine never imports
it. Front ends obtain an implementation through :func:`load_language_services`,
which looks it up as an entry point, so that the pure core stays free of
process and protocol code and the CLI's fast paths do not import ``lsprotocol``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Collection, Generic, Iterator, Mapping, Protocol, TypeVar

if TYPE_CHECKING:
    from engine.extract import FileSymbols
    from engine.answers import CallEdge, CodeAction, Diagnostic, HierarchyItem, Hover, Location, ServerEdit
    from engine.positions import Position, Range
    from engine.workspace import SourceFile, Workspace

T = TypeVar("T")


@dataclass(frozen=True)
class Answered(Generic[T]):
    """A server's answer, which server gave it, and whether its index was complete."""

    value: T
    server: str
    complete: bool
    notes: tuple[str, ...] = ()
    """What the pool changed about how the server sees the project, and why."""
    current: bool = False
    """For diagnostics: the answer is for exactly the changes sent before the question (the
    server was asked, not waited for: ``textDocument/diagnostic``), so asking again gives the same."""

ENTRY_POINT_GROUP = "codegraft.language_services"


@dataclass(frozen=True)
class ServerStatus:
    """One configured language server as a person or script sees it in ``graft servers``."""

    id: str
    languages: tuple[str, ...]
    preferred_for: tuple[str, ...]
    found: bool
    executable: str | None
    version: str | None
    state: str
    """not-found | stopped | starting | indexing | ready | dead"""
    pid: int | None
    memory_bytes: int | None
    detail: str
    """Why it is in that state, or how to install it."""
    restarts: int = 0
    """Times the server was started again in this session (it died, or grew past its memory ceiling)."""


class Feature(str, Enum):
    """What a language server gives a refactoring client, as measured (../shared/design/
    LANGUAGE-SERVERS.md): each server's spec lists its own, and ``graft doctor`` derives from
    them which operations go through the server."""

    RENAME = "rename"
    REFERENCES = "references"
    IMPLEMENTATION = "implementation"
    CALL_HIERARCHY = "call-hierarchy"
    TYPE_HIERARCHY = "type-hierarchy"
    DIAGNOSTICS = "diagnostics"
    WILL_RENAME_FILES = "will-rename-files"
    """Imports updated when a file moves (``workspace/willRenameFiles``)."""
    MOVE_TO_FILE = "move-to-file"
    """A code action that moves declarations into another file, importers updated (tsserver's)."""


@dataclass(frozen=True)
class Runtime:
    """What a server runs on that decides what it can do (typescript-language-server: a TypeScript)."""

    name: str
    version: str | None
    folder: str
    why: str
    """Why this one and not another (the workspace's own is not loaded unless trusted)."""


@dataclass(frozen=True)
class Serving:
    """The server that would serve a language in this workspace, or why none would (``graft doctor``).
    Asking starts no server (a version flag may be run)."""

    language: str
    state: str
    """ok | not-configured | not-found | too-old | not-trusted (no-services: no implementation of this port)"""
    server: str | None = None
    """The server that would serve (``ok``), else the first one found and passed over, else the
    first one preferred (none installed), else None (none configured)."""
    version: str | None = None
    command: tuple[str, ...] = ()
    """Where it was found: the command line that starts it."""
    detail: str = ""
    """Why it does not serve, with the command that installs a supported one or how to trust; ''."""
    features: frozenset[Feature] = frozenset()
    """What the serving server does here (its measured features less those ``lacking``)."""
    lacking: Mapping[Feature, str] = field(default_factory=dict)
    """A feature the server has elsewhere and not here, and why (TypeScript older than 5.2: no Move to file)."""
    runtime: Runtime | None = None
    backend: str = ""
    """Why this server, where the project's own toolchain picks it (a TypeScript project: its version)."""
    refactored_by: str = ""
    """Who does the refactoring code actions (move, extract, inline) where the serving server has
    none and another runs beside it for them (a TypeScript 7 project: a pinned TypeScript 6); ''."""


@dataclass(frozen=True)
class ActionDetails:
    """What a server's code action carries besides its title, kind and edit."""

    command: str | None = None
    """A command the server would run for it (after its edit, or instead of one). codegraft never
    asks a server to run one: a command changes files behind the journaled apply's back."""
    resolvable: bool = False
    """The server fills in its edit when asked (``codeAction/resolve``)."""
    preferred: bool = False
    """The server marks it as the fix to choose."""
    disabled: str | None = None
    """Why the server says it cannot be applied now, if it says so."""


class NavigationServices(Protocol):
    """What a language server says about the code: symbols, references, definitions, calls, hovers."""

    def document_symbols(self, source: "SourceFile") -> "FileSymbols":
        """Symbols from the language server for this file's language.

        Raises :class:`engine.errors.ServiceUnavailable` (with the reason) when
        no server can answer within its readiness budget and request timeout.
        """
        ...

    def references(self, source: "SourceFile", position: "Position") -> "Answered[list[Location]]":
        """Every reference to the symbol at a position, declaration included, from the server."""
        ...

    def definition(self, source: "SourceFile", position: "Position") -> "Answered[list[Location]]":
        ...

    def implementations(self, source: "SourceFile", position: "Position") -> "Answered[list[Location]]":
        """What implements the interface or interface method at a position (LSP
        ``textDocument/implementation``). Raises :class:`engine.errors.UnsupportedByServer` when the
        file's server does not offer the request."""
        ...

    def call_hierarchy(self, source: "SourceFile", position: "Position") -> "Answered[list[HierarchyItem]]":
        """The callable at a position as the server's call hierarchy names it (LSP
        ``textDocument/prepareCallHierarchy``; empty when nothing there is callable). Raises
        :class:`engine.errors.UnsupportedByServer` when the file's server has no call hierarchy."""
        ...

    def calls(self, source: "SourceFile", item: "HierarchyItem", *, incoming: bool) -> "Answered[list[CallEdge]]":
        """The calls of ``item`` (``incoming``: the callers, with their call sites) or the calls it
        makes (``callHierarchy/incomingCalls`` or ``outgoingCalls``), asked of the server of
        ``source``, the file the hierarchy was prepared in."""
        ...

class EditServices(Protocol):
    """The edits a language server computes: renames, file moves, code actions, refactorings."""

    def rename(
        self, source: "SourceFile", position: "Position", new_name: str, sent: "Callable[[], None] | None" = None,
    ) -> "Answered[ServerEdit]":
        """The server's rename plan (after its prepareRename accepts the position). ``sent`` is
        called once the request is on its way (or waits on something else, a server starting),
        from any thread: work the caller does beside the request starts then."""
        ...

    def will_rename_file(self, source: "SourceFile", new_path: str) -> "Answered[ServerEdit]":
        """The edits the server wants made before ``source`` moves to ``new_path`` (LSP
        ``workspace/willRenameFiles``): import updates. Raises ServiceUnavailable when the
        file's server does not offer it."""
        ...

    def move_to_file(self, source: "SourceFile", span: "Range", dest_path: str) -> "Answered[ServerEdit]":
        """The server's "Move to file" refactoring of the declarations in ``span`` into
        ``dest_path`` (importers updated by the server). Raises ServiceUnavailable when the
        server offers no such code action."""
        ...

    def hover(self, source: "SourceFile", position: "Position") -> "Answered[Hover | None]":
        """The server's hover at a position (type, signature, documentation, as Markdown or plain
        text); None when the server has nothing to show there."""
        ...

    def code_actions(self, source: "SourceFile", span: "Range") -> "Answered[list[CodeAction]]":
        """The quick fixes, refactorings and source actions (organise imports) the server offers
        for a range, asked as an editor asks: with the file's diagnostics that overlap the range.
        Listing runs nothing and changes nothing."""
        ...

    def code_action_details(self, source: "SourceFile", action: "CodeAction") -> "ActionDetails":
        """What a listed action would do besides (or instead of) an edit, read from the
        server's own action behind ``action.handle``."""
        ...

    def code_action_edit(self, source: "SourceFile", action: "CodeAction") -> "Answered[ServerEdit | None]":
        """The edit an action of :meth:`code_actions` makes, asked of the server
        (``codeAction/resolve``) when the listing carried none; None when the action has no edit,
        only a command for the server to run. Nothing is applied or executed."""
        ...

    def refactorings(self, source: "SourceFile", span: "Range", kind: str) -> "Answered[list[CodeAction]]":
        """The server's own refactorings of ``kind`` (``refactor.extract.function``,
        ``refactor.extract.constant``, ``refactor.inline.call``) for ``span``, its sub-kinds included,
        as the server titles them. Where the serving server offers no refactorings (TypeScript 7's
        ``tsc --lsp``) they are asked of a server run beside it for them, and the answer names it;
        :class:`engine.errors.UnsupportedByServer` when there is none."""
        ...

    def refactoring_edit(self, source: "SourceFile", action: "CodeAction") -> "Answered[ServerEdit]":
        """The edit one of :meth:`refactorings` makes: resolved, or sent back by the server command
        that carries it out, captured and never applied. Nothing is written."""
        ...

class ServerLifecycle(Protocol):
    """The servers themselves: started, warmed, told of changes, asked for diagnostics, closed."""

    def diagnostics(self, source: "SourceFile", *, when_ready: bool = False, recheck: bool = False,
                    timeout: float | None = None) -> "Answered[list[Diagnostic]]":
        """The server's diagnostics for a file as it is on disk now; with ``when_ready``, once the
        server has finished analysing (within its readiness budget), else labelled incomplete.
        ``recheck``: asked again after files it imports changed; the implementation gives the
        server the time it takes to re-check a file's dependents. Past ``timeout`` seconds the
        question is dropped and TimeoutError raised (a caller's budget bounds every wait in it)."""
        ...

    def files_changed(self, paths: list[str], rewritten: Collection[str] = ()) -> None:
        """Tell running servers that these workspace files were written, created or deleted
        (didChange / watched files). ``rewritten``: those of them known to have existed before
        (edited in place); the others may be new to the server's program."""
        ...

    def status(self) -> list[ServerStatus]:
        ...

    def start_seconds(self) -> float:
        """Seconds this session's servers spent starting (spawn until ``initialize`` answered;
        their indexing after it is not counted); 0 when none started."""
        ...

    def serving(self, language: str, folder: str = ".") -> Serving:
        """Which server would serve ``language`` (a languageId) here, and what it can do, without
        starting it: the choice a request would make (preference, version, trust), for the project
        at ``folder`` (workspace-relative) where the project decides (TypeScript: its own version)."""
        ...

    def start_for_workspace(self) -> None:
        """Start the server of every language the workspace has (``graft servers --start``)."""
        ...

    def show_importers(self, files: list[str], importers: Callable[[list[str]], list[str]],
                       same_project: Callable[[str, str], bool] | None = None) -> None:
        """Before a cross-file request on ``files`` (a rename, a file rename, a move): a server
        that answers only for open documents (tsserver without a tsconfig) opens the files that
        import them, which ``importers(files)`` computes, only then; the others read the disk.
        ``same_project(a, b)``: whether opening ``a`` loads a project that includes ``b``; a
        server that searches an open file's whole project is then not shown ``files``' own
        project's files (TypeScript 7's server is: it loads a config's project only for an open file)."""
        ...

    def warm_up(self, paths: list[str]) -> None:
        """Start the servers of these files' languages without waiting (a failure is met by the
        first request instead), so that their start overlaps the caller's own work."""
        ...

    def close(self) -> None:
        """Shut down every server this object started."""
        ...


class LanguageServices(NavigationServices, EditServices, ServerLifecycle, Protocol):
    """The port through which the engine asks language servers (lsp_pool implements it)."""


LanguageServicesFactory = Callable[["Workspace"], LanguageServices]


def load_language_services(workspace: "Workspace") -> LanguageServices | None:
    """The installed implementation of :class:`LanguageServices`, or None when there is none."""
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        factory: LanguageServicesFactory = entry_point.load()
        return factory(workspace)
    return None


EARLY_ENTRY_POINT_GROUP = "codegraft.early_language_servers"


def start_language_servers_early(root: Path, languages: Collection[str]) -> Callable[[], None]:
    """Start the processes of these languages' servers for ``root`` before the implementation
    behind :func:`load_language_services` is imported (its protocol types are slow to import), so that they boot meanwhile; its
    first use of each server adopts the process. Returns what kills the processes nobody adopted:
    the caller runs it once its call is over. Call from the main thread (see lsp_pool.early)."""
    for entry_point in entry_points(group=EARLY_ENTRY_POINT_GROUP):
        start: Callable[[Path, Collection[str]], Callable[[], None]] = entry_point.load()
        return start(root, languages)
    return nothing_to_discard


def nothing_to_discard() -> None:
    """What a start of language servers returns when it started nothing."""


class Tools(Protocol):
    """Outside programs the apply layer consults: version control and the user's verify command."""

    def dirty_files(self, paths: list[str]) -> set[str]:
        """Which of these workspace paths have uncommitted changes (empty outside a repository)."""
        ...

    def run(self, command: str) -> tuple[int, str]:
        """Run a shell command in the workspace root; (exit status, combined output tail)."""
        ...

    def revision(self, *, untracked: bool = False) -> str | None:
        """The commit checked out, when no tracked file has uncommitted changes (untracked files
        are looked at too with ``untracked``: any that git does not ignore makes it None); None
        when some have, or outside a repository. A fleet caches its verify baseline by it, and
        its rows by the stricter form."""
        ...

    def import_module(self, folder: Path, roots: list[str], module: str) -> tuple[bool, str]:
        """Import one Python module with the project's interpreter in a fresh process, with
        ``folder``'s ``roots`` first on its path and no bytecode written; (imported, output tail)."""
        ...

    def run_as_script(self, folder: Path, roots: list[str], path: str) -> tuple[bool, str]:
        """Run one Python file's module-level code as ``python PATH`` would (its folder first on
        the path, no parent package), but under another ``__name__``, so that its
        ``if __name__ == "__main__":`` block does not run; ``roots`` on the path as an installed
        project's are. The project's interpreter, a fresh process, no bytecode; (ran, output tail)."""
        ...

    def gofmt(self, texts: list[str]) -> list[Formatted]:
        """Each Go source as gofmt prints it, in order. gofmt reads only the text it is given and
        runs nothing the workspace chose."""
        ...

    def go_build(self, folder: str, settings: dict[str, str], tags: list[str]) -> "GoBuildCheck":
        """Compile one Go package folder (workspace-relative) and its tests without running them,
        under ``settings`` (GOOS, GOARCH, CGO_ENABLED) and build ``tags``: the check after an apply
        for files gopls does not build. Nothing is downloaded and no other toolchain is fetched."""
        ...


@dataclass(frozen=True)
class Formatted:
    """A source as its language's formatter prints it, or why it could not be formatted."""

    text: str | None
    """None when it was not formatted."""
    error: str = ""
    """Why not: the formatter is not installed, or the source does not parse."""


@dataclass(frozen=True)
class CompileError:
    path: str
    """Workspace-relative."""
    line: int
    """1-based, as the compiler prints them."""
    column: int
    message: str


@dataclass(frozen=True)
class GoBuildCheck:
    """What compiling one Go package under a configuration found."""

    command: str
    """What ran, as a user would type it (``GOOS=windows go test -c -tags integration``)."""
    included: tuple[str, ...] = ()
    """The folder's Go files (names) that this configuration builds, tests included."""
    errors: tuple[CompileError, ...] = ()
    failure: str = ""
    """Why nothing was compiled (go not installed, the package could not be loaded); '' when it was."""


TOOLS_ENTRY_POINT_GROUP = "codegraft.tools"


def load_tools(workspace: "Workspace") -> Tools | None:
    for entry_point in entry_points(group=TOOLS_ENTRY_POINT_GROUP):
        factory: Callable[["Workspace"], Tools] = entry_point.load()
        return factory(workspace)
    return None


RunAlive = Callable[[], bool]
"""A fleet run's lease, asked by a task just before it commits: whether the run's driver is still
there (a task whose driver has gone rolls back). Picklable: it travels to workers."""

FleetTask = Callable[[str], dict[str, object]]
"""One repository's whole run (engine.fleet.run_repo with its plan and options bound): takes the
repository's path, returns its result row as plain data. Picklable: it travels to workers."""


class FleetExecutor(Protocol):
    """Where a fleet's tasks run: one task per repository, the rows yielded as tasks finish."""

    workers: int
    """How many tasks run at once (for the progress line)."""

    def map(self, task: FleetTask, repos: list[str]) -> Iterator[tuple[str, dict[str, object]]]:
        """(repository, row) for every repository, in the order they finish. A task that fails
        in the executor itself (a worker lost for good) still yields a row, with status error."""
        ...

    def run_alive(self) -> RunAlive:
        """The lease of the run this executor serves, for its tasks to ask before they commit."""
        ...

    def close(self) -> None: ...


FLEET_ENTRY_POINT_GROUP = "codegraft.fleet_executors"


def load_fleet_executor(name: str, *, scheduler: str | None, workers: int | None) -> FleetExecutor | None:
    """The installed executor called ``name`` (``dask``), or None when none is installed under it."""
    for entry_point in entry_points(group=FLEET_ENTRY_POINT_GROUP):
        if entry_point.name == name:
            factory: Callable[..., FleetExecutor] = entry_point.load()
            return factory(scheduler=scheduler, workers=workers)
    return None
