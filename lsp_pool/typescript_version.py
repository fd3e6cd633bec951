"""Which TypeScript typescript-language-server runs for a workspace, and its version.

The server runs the ``tsserver.js`` codegraft gives it (the TypeScript installed beside it,
lsp_pool.workspace_trust), or, for a trusted workspace, the workspace's own
``node_modules/typescript`` when there is one. tsserver's "Move to file" refactoring exists from
TypeScript 5.2 on: an older one offers no such action, and the move would be refused without
saying why.
"""

from __future__ import annotations

import re
from pathlib import Path

from engine.ports import Runtime
from lsp_pool.typescript7 import package_version
from lsp_pool.workspace_trust import installed_tsserver

MOVE_TO_FILE = (5, 2)
"""The first TypeScript whose tsserver moves code into an existing file."""


def running_typescript(root: Path, command: tuple[str, ...], trusted: bool) -> tuple[Path, tuple[int, int]] | None:
    """The TypeScript package folder the server runs and its (major, minor), None when unknown."""
    runtime = typescript_runtime(root, command, trusted)
    found = re.match(r"(\d+)\.(\d+)", runtime.version or "") if runtime is not None else None
    return (Path(runtime.folder), (int(found.group(1)), int(found.group(2)))) if runtime is not None and found else None


def typescript_runtime(root: Path, command: tuple[str, ...], trusted: bool) -> Runtime | None:
    """The TypeScript the server runs for ``root``, its version and why that one; None when none is found."""
    workspace_own = root / "node_modules" / "typescript"
    if trusted and (workspace_own / "lib" / "tsserver.js").is_file():
        return Runtime("TypeScript", package_version(workspace_own), str(workspace_own),
                       "the workspace is trusted: its own TypeScript (node_modules/typescript)")
    tsserver = installed_tsserver(command[0])
    if tsserver is None:
        return None
    folder = Path(tsserver).parent.parent
    if trusted:
        why = ("the workspace is trusted but has no node_modules/typescript/lib/tsserver.js of its own "
               "(TypeScript 7 has none): the TypeScript installed beside typescript-language-server")
    else:
        why = ("the workspace is not trusted, so its own TypeScript (its code) is not loaded: the TypeScript "
               "installed beside typescript-language-server (--trust to load the workspace's own)")
    return Runtime("TypeScript", package_version(folder), str(folder), why)


