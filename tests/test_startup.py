"""The CLI's start-up tricks live in one module, frontends/cli/startup.py: the reading of a call's
words before the grammar is built, and the early start of the servers of the files it names,
which the in-process run and the daemon both reach through it."""

from __future__ import annotations

import argparse
import ast

import pytest

from frontends.cli import startup
from frontends.cli.arguments import _common_options, build_parser
from tests.conftest import REPO

LINES = [
    ["find", "shop/models.py:Order"],
    ["--source", "ast", "find", "shop/models.py:Order"],
    ["find", "--source=lsp", "shop/models.py:Order"],
    ["--root", "find", "find", "X"],  # a value that looks like a command
    ["--root=/tmp/w", "--max-file-bytes", "10", "rename", "a.py:f", "g", "--source", "regex"],
    ["outline", "--json", "a.py", "--root", "elsewhere"],
    ["search", "--", "--source"],  # after --, words are arguments
]


@pytest.mark.parametrize("argv", LINES, ids=[" ".join(line) for line in LINES])
def test_the_words_are_read_as_the_grammar_reads_them(argv: list[str]) -> None:
    try:
        parsed = build_parser().parse_args(argv)
    except Exception as refused:  # noqa: BLE001 - a line the grammar refuses says nothing about routing
        pytest.skip(f"the grammar refuses {argv}: {refused}")
    command, options = startup.scan_call(argv)
    assert command == parsed.command
    assert options.get("--root", parsed.root) == parsed.root
    assert options.get("--source", parsed.source) == parsed.source
    assert int(options.get("--max-file-bytes", parsed.max_file_bytes)) == parsed.max_file_bytes


def test_the_options_read_before_the_grammar_are_its_global_options_that_take_a_value() -> None:
    taking_a_value = {option for action in _common_options(suppress=False)._actions if action.nargs != 0
                      and not isinstance(action, argparse._HelpAction) for option in action.option_strings}
    assert startup.VALUED_OPTIONS == taking_a_value


def _names_used(relative: str) -> set[str]:
    tree = ast.parse((REPO / relative).read_text(encoding="utf-8"))
    return ({node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
            | {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
            | {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names})


def test_one_module_owns_the_early_start_and_the_word_reading() -> None:
    owners = sorted(str(path.relative_to(REPO)) for path in (REPO / "frontends").rglob("*.py")
                    if _names_used(str(path.relative_to(REPO))) & {"start_language_servers_early", "files_named"}
                    or "def scan_call" in path.read_text(encoding="utf-8"))
    assert owners == ["frontends/cli/startup.py"]
    # The in-process run and the daemon start the servers through the same function.
    for caller in ("frontends/cli/entry.py", "frontends/cli/daemon_server.py"):
        assert "start_early" in _names_used(caller), caller
