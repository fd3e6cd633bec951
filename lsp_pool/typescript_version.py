"""Which TypeScript typescript-language-server runs for a workspace, and its version.

The server runs the ``tsserver.js`` codegraft gives it (the TypeScript installed beside it,
lsp_pool.workspace_trust), or, for a trusted workspace, the workspace's own
``node_modules/typescript`` when there is one. tsserver's "Move to file" refactoring exists from
TypeScript 5.2 on: an older one offers no such action, and the move would be refused without
saying why.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from lsp_pool.workspace_trust import installed_tsserver

MOVE_TO_FILE = (5, 2)
"""The first TypeScript whose tsserver moves code into an existing file."""


def running_typescript(root: Path, command: tuple[str, ...], trusted: bool) -> tuple[Path, tuple[int, int]] | None:
    """The TypeScript package folder the server runs and its (major, minor), None when unknown."""
    workspace_own = root / "node_modules" / "typescript"
    if trusted and (workspace_own / "lib" / "tsserver.js").is_file():
        folder = workspace_own
    else:
        tsserver = installed_tsserver(command[0])
        if tsserver is None:
            return None
        folder = Path(tsserver).parent.parent
    try:
        manifest = json.loads((folder / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    found = re.match(r"(\d+)\.(\d+)", str(manifest.get("version", ""))) if isinstance(manifest, dict) else None
    return (folder, (int(found.group(1)), int(found.group(2)))) if found else None
