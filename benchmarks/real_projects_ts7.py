"""The TypeScript corpus's projects as TypeScript 7 projects (issue 47, item 4).

codegraft picks a TypeScript project's server from the project's own TypeScript, as editors do
(lsp_pool/typescript7.py). For the corpus to run on TypeScript 7's server, ``tsc --lsp``, each
project must be one a real TypeScript 7 user has: its ``package.json`` names ``typescript`` 7 as a
dev dependency and its ``node_modules/typescript`` is TypeScript 7. This module makes that variant
of an unpacked project once, beside it (``<project>-ts7`` under benchmarks/.corpus/npm/):

- a copy of the unpacked tarball, its ``package.json`` given ``"devDependencies": {"typescript": "7.0.2"}``;
- a ``node_modules`` folder of its own: a link to each package the project's ``deps`` installed,
  ``typescript`` and ``@typescript/typescript-<platform>-<arch>`` linked from the pinned TypeScript 7
  that ``.ci/install-servers`` installs (no download), and ``.bin/tsc`` as npm would link it.

The judges then type-check with the project's own compiler: TypeScript 7's ``tsc``.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from lsp_pool.typescript7 import INSTALL_HINT, PINNED_VERSION, native_tsc, package_version, pinned_package

TSSERVER = "tsserver"
TSC_LSP = "tsc-lsp"
BACKENDS = (TSSERVER, TSC_LSP)
"""The corpus's backends: typescript-language-server on tsserver (TypeScript 5.9, the projects as
published), and TypeScript 7's ``tsc --lsp`` (the projects on TypeScript 7)."""

SERVER_NAMES = {TSSERVER: "typescript-language-server", TSC_LSP: "tsc-lsp"}
"""The server each backend's plans must say they came from (``from <server>``)."""


def typescript7_missing() -> str:
    """Why the TypeScript 7 run cannot happen here ('' when it can)."""
    package = pinned_package()
    if not (package_version(package) or "").startswith("7.") or native_tsc(package) is None:
        return f"the pinned TypeScript {PINNED_VERSION} is not installed in {package.parent.parent} ({INSTALL_HINT})"
    return ""


def typescript7_variant(source: Path) -> Path:
    """The unpacked project ``source`` as a TypeScript 7 project, made once beside it."""
    target = source.with_name(f"{source.name}-ts7")
    if target.is_dir():
        return target
    with tempfile.TemporaryDirectory(dir=source.parent) as scratch:
        copy = Path(scratch) / "p"
        shutil.copytree(source, copy, symlinks=True, ignore=shutil.ignore_patterns("node_modules"))
        _depend_on_typescript7(copy / "package.json")
        _link_modules(copy / "node_modules", source / "node_modules")
        copy.rename(target)
    return target


def _depend_on_typescript7(manifest: Path) -> None:
    data = json.loads(manifest.read_text(encoding="utf-8"))
    data["devDependencies"] = {**data.get("devDependencies", {}), "typescript": PINNED_VERSION}
    manifest.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def _link_modules(modules: Path, installed: Path) -> None:
    """``modules``: the ``installed`` packages (a folder of the project's deps, or none) and the
    pinned TypeScript 7, each a link, with their command links in ``.bin``."""
    (modules / ".bin").mkdir(parents=True)
    scoped = modules / "@typescript"
    scoped.mkdir()
    if installed.is_dir():
        for entry in installed.resolve().iterdir():
            if entry.name == ".bin":
                for command in entry.iterdir():
                    (modules / ".bin" / command.name).symlink_to(command.resolve())
            elif entry.name not in ("typescript", "@typescript"):
                (modules / entry.name).symlink_to(entry)
    package = pinned_package()
    (modules / "typescript").symlink_to(package)
    binary = native_tsc(package)
    assert binary is not None, typescript7_missing()
    platform_package = binary.parent.parent  # .../@typescript/typescript-<platform>-<arch>
    (scoped / platform_package.name).symlink_to(platform_package)
    (modules / ".bin" / "tsc").symlink_to(package / "bin" / "tsc")


def project_compiler(root: Path) -> str:
    """The ``tsc`` a project's own scripts would run: its TypeScript 7's native compiler when its
    ``node_modules/typescript`` is 7, else the ``tsc`` on the PATH (the corpus's projects as
    published have no TypeScript of their own: TypeScript 5.9, the one tsserver runs)."""
    package = root / "node_modules" / "typescript"
    if (package_version(package) or "").startswith("7."):
        binary = native_tsc(package)
        if binary is None:
            raise RuntimeError(f"{package} is TypeScript 7 without its platform compiler")
        return str(binary)
    return "tsc"
