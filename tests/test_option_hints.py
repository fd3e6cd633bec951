"""The hint a refusal's option gets is built once (frontends/render/option_hints.py) and, in each
front end, names only a flag or argument that front end really has (issue 42)."""

from __future__ import annotations

import argparse
import asyncio
import re
from pathlib import Path

from mcp.client import Client

from engine.api import Engine, SourcePreference
from engine.refactor.operations import OPERATIONS
from engine.workspace import Workspace
from frontends.cli.arguments import build_parser
from frontends.lsp_server import _edit_options
from frontends.mcp_server import build_server
from frontends.render import option_hints
from tests.conftest import REPO, SAMPLE

INVENTED = "frobnicate_everything"
"""An option no front end has: a refusal naming it must get no hint."""


def options_the_engine_names() -> set[str]:
    """Every ``option="..."`` an engine refusal carries."""
    return {found for path in (REPO / "engine").rglob("*.py")
            for found in re.findall(r'option="([a-z_]+)"', path.read_text(encoding="utf-8"))}


def cli_flags() -> set[str]:
    flags: set[str] = set()
    pending = [build_parser()]
    while pending:
        parser = pending.pop()
        for action in parser._actions:
            flags.update(action.option_strings)
            if isinstance(action, argparse._SubParsersAction):
                pending.extend(action.choices.values())
    return flags


def mcp_arguments() -> set[str]:
    engine = Engine(Workspace(SAMPLE), source=SourcePreference.AST)

    async def listing() -> set[str]:
        async with Client(build_server(engine)) as client:
            return {name for tool in (await client.list_tools()).tools for name in tool.input_schema.get("properties", {})}

    try:
        return asyncio.run(listing())
    finally:
        engine.close()


def test_every_hint_names_a_flag_or_argument_the_front_end_has(tmp_path: Path) -> None:
    options = options_the_engine_names()
    assert {"allow_dirty", "create", "max_file_bytes"} <= options, "the scan finds the engine's refusals"
    flags, arguments = cli_flags(), mcp_arguments()
    engine = Engine(Workspace(tmp_path), source=SourcePreference.AST)
    try:
        for option in options | {INVENTED}:
            cli = option_hints.CLI(option)
            assert cli == "" or set(re.findall(r"--[a-z-]+", cli)) <= flags, (option, cli)
            mcp = option_hints.MCP(option)
            assert mcp == "" or option in arguments, (option, mcp)
            for operation in OPERATIONS.values():
                lsp = option_hints.LSP(option, operation)
                values = {option: True}
                _edit_options(engine, values)  # takes out the apply's options an LSP command reads
                assert lsp == "" or option not in values or option in {i.name for i in operation.fields()}, (option, lsp)
    finally:
        engine.close()
    # What each front end can set gets its hint: a refusal's way out is said, not left to guess.
    assert option_hints.CLI("max_file_bytes") == " (raise it with --max-file-bytes N)"
    assert all(option_hints.CLI(option) for option in options)
    assert option_hints.MCP("allow_dirty") == " (call again with allow_dirty=true)"
    assert option_hints.LSP("allow_syntax_errors", OPERATIONS["replace"]) == ' (give "allow_syntax_errors": true in the command\'s arguments)'
    assert option_hints.LSP("create", OPERATIONS["move"]) and not option_hints.LSP("create", OPERATIONS["rename"])
    assert (option_hints.CLI(INVENTED), option_hints.MCP(INVENTED), option_hints.LSP(INVENTED, OPERATIONS["rename"])) == ("", "", "")
