"""``open_engine``: the one way every front end builds its engine.

It finds the language services and the process tools through their entry points, so every
front end gets the same engine for the same request; and building an engine recovers any
transaction a crash interrupted (``Engine.recovered``), which each front end then reports in
its own way (the CLI on stderr, MCP in its log and instructions, LSP as a message).
"""

from __future__ import annotations

from pathlib import Path

from engine.api import Engine
from engine.choices import SourcePreference
from engine.ports import load_language_services, load_tools
from engine.choices import DEFAULT_MAX_FILE_BYTES
from engine.workspace import Workspace, WorkspaceConfig


def open_engine(
    root: Path, source: SourcePreference = SourcePreference.AUTO, *, servers: bool | None = None, tools: bool = True,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES, trust: bool | None = None,
) -> Engine:
    """An engine on ``root``. Language servers are loaded when the preference may use them (or
    ``servers`` says so either way); the process tools (git, verify, import checks) unless
    ``tools`` is false (a read-only command need not look for them). ``trust``: the caller's
    ``--trust``, which lets the workspace's own Python run (README, "Security"); None: whether
    this process was started with it (:func:`trust_in_this_process`)."""
    trusted = _trusted_process if trust is None else trust
    workspace = Workspace(root, WorkspaceConfig(max_file_bytes=max_file_bytes, trust_workspace_python=trusted))
    wants_servers = source in (SourcePreference.AUTO, SourcePreference.LSP) if servers is None else servers
    return Engine(workspace, services=load_language_services(workspace) if wants_servers else None,
                  tools=load_tools(workspace) if tools else None, source=source)


_trusted_process = False


def trust_in_this_process() -> None:
    """``graft mcp --trust`` and ``graft lsp --trust``: every engine this process opens trusts its
    workspace's code. Those front ends serve one workspace per process, and their own arguments
    do not carry the flag (frontends.cli.main takes it off before handing over)."""
    global _trusted_process
    _trusted_process = True
