"""The files a call names, read from its words alone: their language servers are started before
the engine, the CLI and the pool are imported.

A cold basedpyright is slow from its start to its first answer, and a first call spends a
long time importing the engine, the CLI and the pool (lsprotocol's types, most of it) before
the plan would start it. Started from the call's words, the server boots on the other core
meanwhile, and the pool adopts its process (engine.ports.start_language_servers_early). The words
are only a hint: the call itself resolves and checks every path again, and a word that is not a
file in the workspace starts nothing.
"""

from __future__ import annotations

import os
from typing import Callable

from engine.api_surface import GraftError, language_of, nothing_to_discard, start_language_servers_early, Workspace
from frontends.cli.call_words import may_use_server, scan_call


def files_named(argv: list[str], workspace: Workspace) -> list[str]:
    """Workspace-relative paths of the files the call names (``FILE`` or ``FILE:NAME/PATH``, as
    addresses are written: relative to the workspace root), in a language codegraft knows; none
    for a call that will not ask a server (a serverless command, or ``--source`` other than
    auto/lsp) or that runs in another workspace (``--root``)."""
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


def start_servers_named(argv: list[str], workspace: Workspace) -> tuple[list[str], Callable[[], None]]:
    """(the files the call names, what kills the server processes started for them that the
    pool did not adopt: run it when the call is over)."""
    files = files_named(argv, workspace)
    languages = [language for language in map(language_of, files) if language is not None]
    return files, start_language_servers_early(workspace.root, languages) if languages else nothing_to_discard
