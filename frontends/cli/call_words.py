"""What a call's words say before any grammar is built: its command and the global options that
route it (the workspace, the source preference), and whether it may ask a language server.

Read by the thin client (frontends.cli.entry), which must stay light, and by the early start of
the servers a call names (frontends.cli.early_servers): the standard library only, and none of it.
"""

from __future__ import annotations

#: Commands that never use a language server: no daemon is started for them (a running one still answers).
_SERVERLESS = frozenset({"history", "recover", "undo", "redo", "read-file", "write-file", "edit-file", "find-files", "search",
                         "find-replace"})
_VALUED_OPTIONS = frozenset({"--root", "--max-file-bytes", "--source"})
#: engine.choices.SourcePreference's values that let a server answer, as strings: its module imports
#: enum, which the thin client would pay for on every call. tests/test_cli.py holds the two to the same values.
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
        if name in _VALUED_OPTIONS:
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
