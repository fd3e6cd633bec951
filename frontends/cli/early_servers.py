"""The files a call names, read from its words alone: the daemon starts their language servers
before it imports the engine.

A cold basedpyright takes over a second from its start to its first answer, and the daemon's
first call spends about 0.4 s importing the engine and the CLI before the plan would start it.
Started from the call's words, the server boots on the other core meanwhile. The words are only
a hint: the call itself resolves and checks every path again, and a word that is not a file in
the workspace starts nothing.
"""

from __future__ import annotations

import os

from engine.errors import GraftError
from engine.languages import language_of
from engine.workspace import Workspace
from frontends.cli.entry import may_use_server, scan_call


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
