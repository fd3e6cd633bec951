"""The CLI's start-up tricks, in one place: reading a call's words before any grammar is built,
and starting the language servers of the files it names before the engine is imported.

- **The words.** The thin client (frontends.cli.entry) routes a call from its command and the
  global options that say where and how it runs (``--root``, ``--source``, ``--max-file-bytes``)
  before it builds the grammar or imports the engine: :func:`scan_call` reads them as the grammar
  does (tests/test_startup.py holds the two to the same reading).
- **The early start.** A cold basedpyright is slow from its start to its first answer, and a first
  call spends a long time importing the engine, the CLI and the pool (lsprotocol's types, most of
  it) before the plan would start it. Started from the call's words (:func:`start_early`, by the
  in-process run and by the daemon alike), the server boots on the other core meanwhile, and the
  pool adopts its process (engine.ports.start_language_servers_early). The words are only a hint:
  the call itself resolves and checks every path again, and a word that is not a file in the
  workspace starts nothing.

Imported by the thin client on every call: the standard library only at the top; the engine's
names are imported by the early start alone, when it runs.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # importing typing would cost the thin client on every call; mypy reads this name as True
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Callable

    from engine.api_surface import Workspace

#: Commands that never use a language server: no daemon is started for them (a running one still answers).
_SERVERLESS = frozenset({"history", "recover", "undo", "redo", "read-file", "write-file", "edit-file", "find-files", "search",
                         "find-replace"})
VALUED_OPTIONS = frozenset({"--root", "--max-file-bytes", "--source"})
"""The grammar's global options that take a value (frontends.cli.arguments)."""
#: engine.choices.SourcePreference's values that let a server answer, as strings: its module imports
#: enum, which the thin client would pay for on every call. tests/test_startup.py holds the two to the same values.
SERVER_SOURCES = ("auto", "lsp")


def scan_call(argv: list[str]) -> tuple[str | None, dict[str, str]]:
    """The command (the first word that is not an option or an option's value) and the global
    options that route a call, as the grammar would read them."""
    options: dict[str, str] = {}
    command = None
    index = 0
    while index < len(argv):
        word = argv[index]
        name, equals, value = word.partition("=")
        if name in VALUED_OPTIONS:
            if not equals:
                index += 1
                value = argv[index] if index < len(argv) else ""
            options[name] = value
        elif word == "--":
            break
        elif command is None and not word.startswith("-"):
            command = word
        index += 1
    return command, options


def may_use_server(command: str | None, options: dict[str, str]) -> bool:
    """Whether the call may ask a language server (its command is not serverless, and its
    ``--source`` lets a server answer)."""
    source = options.get("--source", SERVER_SOURCES[0])
    return command not in _SERVERLESS and source in SERVER_SOURCES


def files_named(argv: list[str], workspace: Workspace) -> list[str]:
    """Workspace-relative paths of the files the call names (``FILE`` or ``FILE:NAME/PATH``, as
    addresses are written: relative to the workspace root), in a language codegraft knows; none
    for a call that will not ask a server (a serverless command, or ``--source`` other than
    auto/lsp) or that runs in another workspace (``--root``)."""
    from engine.api_surface import GraftError, language_of

    command, options = scan_call(argv)
    if not may_use_server(command, options):
        return []
    if "--root" in options and os.path.realpath(options["--root"]) != str(workspace.root):
        return []  # relative to the caller's working directory, as the client resolved it
    words = argv[: argv.index("--")] if "--" in argv else argv
    named: list[str] = []
    for word in words:
        path = word.partition(":")[0]
        if word.startswith("-") or not path or language_of(path) is None:
            continue
        try:
            relative, absolute = workspace.resolve(path)
        except GraftError:
            continue  # outside the workspace, or not a usable path: the call says so itself
        if absolute.is_file() and relative not in named:
            named.append(relative)
    return named


def start_early(argv: list[str], root: Path | None = None) -> tuple[list[str], Callable[[], None]]:
    """Start the language servers of the files the call names, without waiting: (those files,
    what kills the server processes started for them that the pool did not adopt: run it when
    the call is over). ``root``: the workspace (the daemon's own); by default the call's
    ``--root``, else the folder found from the working directory. Only a head start: a call that
    will not ask a server, or a workspace that cannot be opened, starts nothing (the call meets
    the same failure and says so)."""
    from engine.api_surface import GraftError, Workspace, find_root_folder, language_of, nothing_to_discard
    from engine.api_surface import start_language_servers_early

    command, options = scan_call(argv)
    if not may_use_server(command, options):
        return [], nothing_to_discard
    try:
        if root is None:
            from pathlib import Path

            root = Path(options.get("--root") or find_root_folder(os.getcwd()))
        workspace = Workspace(root)
        files = files_named(argv, workspace)
        languages = [language for language in map(language_of, files) if language is not None]
        return files, start_language_servers_early(workspace.root, languages) if languages else nothing_to_discard
    except (GraftError, OSError):
        return [], nothing_to_discard
