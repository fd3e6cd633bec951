"""The refactoring companion of a TypeScript 7 project: a pinned TypeScript 6 tsserver beside it.

TypeScript 7's language server (``tsc --lsp``) offers no refactoring code actions: no "Move to
file", extract or inline. For those alone, codegraft runs typescript-language-server on a pinned
TypeScript 6 (the last TypeScript with a ``tsserver.js``), which ``.ci/install-servers`` installs
into a folder of its own (never globally, nor the project's). Everything else, the check after an
apply included, stays on the project's own TypeScript 7 server. The companion is started only when
such a refactoring is asked for, is keyed apart from an ordinary typescript-language-server (it
runs another TypeScript), and is stopped with the pool. Every answer it gives is named for it:
"typescript-language-server on TypeScript 6.0.3 beside tsc-lsp 7.0.2".

It runs nothing of the workspace's (its TypeScript is codegraft's pinned one, whether the
workspace is trusted or not) and automatic type acquisition, which runs npm, is off.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from engine.errors import UnsupportedByServer
from lsp_pool.config import PoolConfig
from lsp_pool.registry import SPECS_BY_ID, ServerSpec
from lsp_pool.server import ManagedServer
from lsp_pool.typescript7 import TSC_LSP, TSLS, package_version

COMPANION = "typescript-language-server-ts6"
"""The companion's server id: its own key in the pool, apart from the ordinary typescript-language-server."""

PINNED_VERSION = "6.0.3"
"""The TypeScript 6 that ``.ci/install-servers`` installs (``npm install --prefix``)."""

PREFIX_VARIABLE = "CODEGRAFT_TS6_PREFIX"
"""Overrides where the pinned TypeScript 6 is looked for (the ``--prefix`` it was installed with)."""

INSTALL_HINT = (f'npm install --prefix "${{{PREFIX_VARIABLE}:-${{XDG_DATA_HOME:-$HOME/.local/share}}/codegraft/typescript6}}" '
                f"typescript@{PINNED_VERSION} (what .ci/install-servers does)")


def pinned_prefix() -> Path:
    """``$CODEGRAFT_TS6_PREFIX``, else ``$XDG_DATA_HOME/codegraft/typescript6`` (``~/.local/share/...``)."""
    override = os.environ.get(PREFIX_VARIABLE)
    if override:
        return Path(override)
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "codegraft" / "typescript6"


def pinned_tsserver() -> tuple[Path, str] | None:
    """The pinned TypeScript 6's ``tsserver.js`` and its version; None when it is not installed (or is not 6)."""
    package = pinned_prefix() / "node_modules" / "typescript"
    version = package_version(package)
    tsserver = package / "lib" / "tsserver.js"
    if version is None or not re.match(r"6\.", version) or not tsserver.is_file():
        return None
    return tsserver, version


def companion_spec(tsserver: Path) -> ServerSpec:
    """typescript-language-server's spec, under the companion's id, told to run ``tsserver``."""
    ordinary = SPECS_BY_ID[TSLS]
    options: dict[str, Any] = dict(ordinary.initialization_options)
    options["tsserver"] = {**dict(options.get("tsserver") or {}), "path": str(tsserver)}
    # Automatic type acquisition runs npm and writes under ~/.cache/typescript.
    options["disableAutomaticTypingAcquisition"] = True
    return replace(ordinary, id=COMPANION, initialization_options=options,
                   install_hint=f"{ordinary.install_hint}; and {INSTALL_HINT}")


def companion_server(served: ManagedServer, command: tuple[str, ...] | None, config: PoolConfig) -> ManagedServer:
    """A new (not started) companion beside ``served``, in its root, with typescript-language-server's
    ``command``; UnsupportedByServer, naming ``served`` and its version, when either part is missing."""
    found = pinned_tsserver()
    if found is None or command is None:
        raise UnsupportedByServer(f"{served_name(served)}: {served.spec.no_refactor_actions}. "
                                  f"{missing_companion(command is not None)}")
    return ManagedServer(companion_spec(found[0]), command, served.root, config)


def missing_companion(typescript_language_server: bool) -> str:
    """Why the companion cannot run here ('' when it can), with the command that installs what it lacks."""
    if pinned_tsserver() is None:
        return (f"codegraft asks them of typescript-language-server on a pinned TypeScript {PINNED_VERSION} in "
                f"{pinned_prefix()}, which is not installed: {INSTALL_HINT}")
    if not typescript_language_server:
        return ("codegraft asks them of typescript-language-server on a pinned TypeScript 6, and "
                f"typescript-language-server is not installed: {SPECS_BY_ID[TSLS].install_hint}")
    return ""


def served_name(served: ManagedServer) -> str:
    """``tsc-lsp 7.0.2``: the server and the version it reports."""
    return f"{served.spec.id} {served.server_version}" if served.server_version else served.spec.id


def companion_label(served: ManagedServer | str) -> str:
    """What answers from the companion beside ``served`` (the server, or its name) are said to come from."""
    found = pinned_tsserver()
    version = found[1] if found is not None else PINNED_VERSION
    name = served if isinstance(served, str) else served_name(served)
    return f"typescript-language-server on TypeScript {version} beside {name}"


def companion_detail(companion: ManagedServer) -> str:
    """What ``graft servers`` says of a running companion."""
    tsserver = companion.spec.initialization_options.get("tsserver")
    path = tsserver.get("path") if isinstance(tsserver, dict) else None
    return f"beside {TSC_LSP}, for the refactoring code actions it lacks (move, extract, inline), on {path}"
