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
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
) -> Engine:
    """An engine on ``root``. Language servers are loaded when the preference may use them (or
    ``servers`` says so either way); the process tools (git, verify, import checks) unless
    ``tools`` is false (a read-only command need not look for them)."""
    workspace = Workspace(root, WorkspaceConfig(max_file_bytes=max_file_bytes))
    wants_servers = source in (SourcePreference.AUTO, SourcePreference.LSP) if servers is None else servers
    return Engine(workspace, services=load_language_services(workspace) if wants_servers else None,
                  tools=load_tools(workspace) if tools else None, source=source)
