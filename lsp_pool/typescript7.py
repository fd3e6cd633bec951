"""Which TypeScript server serves a TypeScript project, as editors decide: by the project's own TypeScript.

TypeScript 7 (the native compiler) ships no ``tsserver.js``: its language server is
``tsc --lsp --stdio``. A project whose own ``node_modules/typescript`` (or, with none installed,
its lock file) says 7 or later is served by that server; any other, by typescript-language-server
on tsserver, as before. Each project folder decides for itself, so a monorepo holding both gets
both servers.

Which ``tsc`` runs: the project's own (its ``node_modules/typescript``) only for a trusted
workspace, since it is the workspace's code; otherwise the pinned TypeScript 7 that
``.ci/install-servers`` installs into a folder of its own (never globally: its ``tsc`` would shadow
TypeScript 5.9's, which typescript-language-server runs). That folder is :func:`pinned_prefix`.
"""

from __future__ import annotations

import functools
import json
import os
import platform
import re
import stat
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

PINNED_VERSION = "7.0.2"
"""The TypeScript 7 that ``.ci/install-servers`` installs (``npm install --prefix``)."""

PREFIX_VARIABLE = "CODEGRAFT_TS7_PREFIX"
"""Overrides where the pinned TypeScript 7 is looked for (the ``--prefix`` it was installed with)."""

TSC_LSP = "tsc-lsp"
TSLS = "typescript-language-server"
SERVER_IDS = (TSLS, TSC_LSP)
"""The servers of the TypeScript family that this choice decides between."""

INSTALL_HINT = (f'npm install --prefix "${{{PREFIX_VARIABLE}:-${{XDG_DATA_HOME:-$HOME/.local/share}}/codegraft/typescript7}}" '
                f"typescript@{PINNED_VERSION} (what .ci/install-servers does)")


def pinned_prefix() -> Path:
    """The folder the pinned TypeScript 7 is installed into: ``$CODEGRAFT_TS7_PREFIX``, else
    ``$XDG_DATA_HOME/codegraft/typescript7`` (``~/.local/share/codegraft/typescript7``)."""
    override = os.environ.get(PREFIX_VARIABLE)
    if override:
        return Path(override)
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "codegraft" / "typescript7"


def pinned_package() -> Path:
    return pinned_prefix() / "node_modules" / "typescript"


def native_tsc(package: Path) -> Path | None:
    """The compiler binary of a TypeScript 7 package (``@typescript/typescript-<platform>-<arch>``),
    resolved as node would from the package; None when its platform package is missing. Started
    directly: the package's ``bin/tsc`` is a node script that, on Node 20, stays alive as the
    binary's parent for the whole session."""
    platform_package = f"typescript-{_node_platform()}-{_node_arch()}"
    for parent in (package, *package.parents):
        candidate = parent / "node_modules" / "@typescript" / platform_package / "lib" / "tsc"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def _node_platform() -> str:
    return {"linux": "linux", "darwin": "darwin", "win32": "win32"}.get(sys.platform, sys.platform)


def _node_arch() -> str:
    machine = platform.machine().lower()
    return {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine, machine)


def pinned_command() -> tuple[str, ...] | None:
    """``tsc --lsp --stdio`` of the pinned TypeScript 7, None when it is not installed (or is not 7)."""
    package = pinned_package()
    if (_major(package_version(package)) or 0) < 7:
        return None
    binary = native_tsc(package)
    return (str(binary), "--lsp", "--stdio") if binary is not None else None


@dataclass(frozen=True)
class Backend:
    """The server that serves one TypeScript project folder, and why."""

    server: str
    """``tsc-lsp`` (TypeScript 7's own server) or ``typescript-language-server`` (tsserver)."""
    version: str | None
    """The project's own TypeScript version, None when it names none."""
    found_in: str
    """Where the version was read (workspace-relative), '' when nowhere."""
    why: str
    command: tuple[str, ...] | None = None
    """For ``tsc-lsp``, the project's own compiler when the workspace is trusted and has one; None:
    the pinned one."""


def typescript_backend(root: Path, folder: Path, trusted: bool) -> Backend:
    """Which server serves the TypeScript project at ``folder`` (inside ``root``), from the
    TypeScript node would resolve there: the nearest ``node_modules/typescript/package.json`` up to
    the root, else the version a lock file pins, else none (tsserver, as before).

    Asked for every request (a warm rename asks it seven times), and working it out resolves both
    folders and reads a manifest: the choice is kept while what it was made from is unchanged
    (:func:`_evidence`)."""
    evidence = _evidence(root, folder, trusted)
    key = (str(root), str(folder))
    if evidence is not None:
        with _KEPT_LOCK:
            kept = _KEPT_BACKENDS.get(key)
        if kept is not None and kept[0] == evidence:
            return kept[1]
    backend = _chosen(root, folder, trusted)
    if evidence is not None:
        with _KEPT_LOCK:
            if len(_KEPT_BACKENDS) >= _KEPT_LIMIT:
                _KEPT_BACKENDS.clear()
            _KEPT_BACKENDS[key] = (evidence, backend)
    return backend


_KEPT_BACKENDS: dict[tuple[str, str], tuple[tuple[object, ...], Backend]] = {}
_KEPT_LOCK = threading.Lock()
_KEPT_LIMIT = 256


def _evidence(root: Path, folder: Path, trusted: bool) -> tuple[object, ...] | None:
    """What :func:`_chosen` reads for ``folder``, as its status: for each folder from ``folder`` up
    to ``root``, the status of ``node_modules/typescript/package.json`` and of ``package-lock.json``
    (None when missing; a symlinked package, as pnpm makes, is followed, so a new target is a new
    status), and what the pinned prefix that the reason names is made from. None, and nothing
    kept, when a folder on the way is a symlink (the choice walks the resolved path), when
    ``folder`` is not under ``root``, or for a trusted workspace (its own compiler's binary is
    looked for up to the file system's root)."""
    if trusted:
        return None
    top, here = os.path.abspath(root), os.path.abspath(folder)
    if here != top and not here.startswith(top.rstrip(os.sep) + os.sep):
        return None
    # What pinned_prefix() reads: building its path each time cost as much as the rest.
    found: list[object] = [os.environ.get(PREFIX_VARIABLE), os.environ.get("XDG_DATA_HOME"), os.environ.get("HOME")]
    while True:
        try:
            if stat.S_ISLNK(os.lstat(here).st_mode):
                return None
        except OSError:
            return None
        found += [_status(os.path.join(here, "node_modules", "typescript", "package.json")),
                  _status(os.path.join(here, "package-lock.json"))]
        if here == top:
            return tuple(found)
        here = os.path.dirname(here)


def _status(path: str) -> tuple[int, int, int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns


def _chosen(root: Path, folder: Path, trusted: bool) -> Backend:
    version, found_in, package = _own_typescript(root, folder)
    major = _major(version)
    if major is None or major < 7:
        said = f"TypeScript {version} ({found_in})" if version else "no TypeScript of its own"
        return Backend(TSLS, version, found_in, f"the project has {said}: tsserver, through typescript-language-server")
    own = native_tsc(package) if trusted and package is not None else None
    if own is not None:
        return Backend(TSC_LSP, version, found_in,
                       f"the project has TypeScript {version} ({found_in}), and the workspace is trusted: "
                       f"its own TypeScript 7 language server (tsc --lsp)", (str(own), "--lsp", "--stdio"))
    reason = ("the workspace is not trusted, so its own compiler (its code) is not run" if not trusted
              else "its own compiler is not installed there")
    return Backend(TSC_LSP, version, found_in,
                   f"the project has TypeScript {version} ({found_in}): the TypeScript 7 language server (tsc --lsp); "
                   f"{reason}: the pinned TypeScript {PINNED_VERSION} ({pinned_prefix()})")


def project_folder(root: Path, path: Path) -> Path:
    """The folder whose TypeScript decides for ``path``: the file's own folder (the lookup walks up)."""
    return path if path.is_dir() else path.parent


def _own_typescript(root: Path, folder: Path) -> tuple[str | None, str, Path | None]:
    """(version, where it was read, the installed package folder or None)."""
    root = root.resolve()
    here = folder.resolve()
    chain = [here, *here.parents] if here == root or root in here.parents else [root]
    chain = chain[: chain.index(root) + 1] if root in chain else chain
    for parent in chain:
        package = parent / "node_modules" / "typescript"
        version = package_version(package)
        if version is not None:
            return version, _relative(root, package / "package.json"), package
    for parent in chain:
        locked = _locked_version(parent / "package-lock.json")
        if locked is not None:
            return locked, _relative(root, parent / "package-lock.json"), None
    return None, "", None


def _locked_version(lock: Path) -> str | None:
    """The ``typescript`` version an npm lock file pins (lockfileVersion 2 and 3)."""
    try:
        found = lock.stat()
    except OSError:
        return None
    # Asked on every request (the pool chooses per file), and a large project's lock file runs
    # to megabytes: read again only when it changes.
    return _read_locked_version(str(lock), found.st_mtime_ns, found.st_size)


@functools.lru_cache(maxsize=64)
def _read_locked_version(lock: str, _mtime_ns: int, _size: int) -> str | None:
    try:
        data = json.loads(Path(lock).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    packages = data.get("packages") if isinstance(data, dict) else None
    entry = packages.get("node_modules/typescript") if isinstance(packages, dict) else None
    version = entry.get("version") if isinstance(entry, dict) else None
    return version if isinstance(version, str) else None


def package_version(folder: Path) -> str | None:
    """The ``version`` of an npm package's ``package.json``, None when it cannot be read."""
    try:
        manifest = json.loads((folder / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    version = manifest.get("version") if isinstance(manifest, dict) else None
    return version if isinstance(version, str) else None


def _major(version: str | None) -> int | None:
    found = re.match(r"\s*v?(\d+)", version or "")
    return int(found.group(1)) if found else None


def _relative(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


SERVER_SETTINGS: dict[str, object] = {
    "js/ts": {
        # A real rename: by default the server keeps the old public name where a module
        # re-exports it (``export { newName as oldName }``), leaving the barrel's importers alone.
        "preferences": {"useAliasesForRenames": False},
        # Automatic type acquisition runs npm and writes under ~/.cache/typescript.
        "tsserver": {"automaticTypeAcquisition": {"enabled": False}},
        "disableAutomaticTypeAcquisition": True,
    },
}
"""Answers to ``workspace/configuration`` (TypeScript 7 reads the ``js/ts`` section there; the same
settings sent as initializationOptions had no effect)."""
