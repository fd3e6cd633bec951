"""What a language server may run from the workspace, and how each is held to it.

A read (an outline, a find) starts a server, and servers run programs the workspace names:
basedpyright and pyright run the workspace's ``.venv/bin/python`` (or the ``pythonPath`` its config
names) to learn the search paths; jedi runs the interpreter of the environment it is given;
typescript-language-server loads the workspace's own ``node_modules/typescript``; the go command
switches to the toolchain a ``go.mod`` names. A checkout is someone else's code, so unless the
workspace's Python is trusted (``--trust``, or ``trust_workspace_python``; engine.settings):

- the pyright family is told to use codegraft's own interpreter (``python.pythonPath``, which
  overrides every config file, and the generated config of :mod:`lsp_pool.pyright_config`, which
  points ``venv`` at the workspace's ``.venv`` so that its installed packages are still read, from
  disk, without running it);
- jedi-language-server is given codegraft's interpreter as its environment;
- typescript-language-server is given the installed TypeScript's ``tsserver.js`` (and automatic
  type acquisition, which runs npm, is off); with none found, it is not started;
- gopls runs with ``GOTOOLCHAIN=local`` unless the user's own environment sets it;
- a server whose spec names workspace code it would run anyway (``ServerSpec.workspace_code``:
  pylsp, ty, rust-analyzer) is not started, and the next preferred server is asked instead.

clangd runs nothing of the workspace's: only ``--query-driver`` lets it ask a compiler named in
``compile_commands.json``, and codegraft never passes it. With trust, each server finds its
interpreter its own way, and jedi-language-server is pointed at the workspace's ``.venv``.
"""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from lsp_pool.registry import ServerSpec

TRUST_HINT = ("pass --trust (or trust the workspace in your own ~/.config/codegraft/config.toml: README, \"Security\") "
              "if you trust this workspace's code")


@dataclass(frozen=True)
class Confinement:
    """What a server is told so that it runs nothing the workspace chose."""

    settings: Mapping[str, Any] = field(default_factory=dict)
    """Laid over the spec's answers to ``workspace/configuration``."""
    initialization_options: Mapping[str, Any] = field(default_factory=dict)
    """Laid over the spec's ``initializationOptions``."""
    environment: Mapping[str, str] = field(default_factory=dict)
    """Laid over codegraft's own environment for the server's process."""
    interpreter: str | None = None
    """The Python the pyright family's generated config names (codegraft's own), None when trusted."""
    refusal: str = ""
    """Why the server is not started at all without trust ("" when it may be)."""


def confinement(spec: ServerSpec, root: Path, command: tuple[str, ...], trusted_by: str) -> Confinement:
    """How ``spec``'s server (``command`` in ``root``) is started: confined unless ``trusted_by``."""
    if trusted_by:
        return _trusted(spec, root)
    if spec.workspace_code:
        return Confinement(refusal=f"{spec.id} is not started for a workspace whose code is not trusted: "
                                   f"{spec.workspace_code}; {TRUST_HINT}")
    if spec.whole_workspace_program:
        return Confinement(settings={"python": {"pythonPath": sys.executable}}, interpreter=sys.executable)
    if spec.id == "jedi-language-server":
        return Confinement(initialization_options={"workspace": {"environmentPath": sys.executable}})
    if spec.id == "typescript-language-server":
        tsserver = installed_tsserver(command[0])
        if tsserver is None:
            return Confinement(refusal="typescript-language-server would load the workspace's own TypeScript "
                                       "(node_modules/typescript), and no installed TypeScript was found beside it to "
                                       f"use instead (npm install -g typescript); {TRUST_HINT}")
        return Confinement(initialization_options={"tsserver": {"path": tsserver},
                                                   "disableAutomaticTypingAcquisition": True})
    if spec.id == "gopls" and "GOTOOLCHAIN" not in os.environ:
        return Confinement(environment={"GOTOOLCHAIN": "local"})
    return Confinement()


def _trusted(spec: ServerSpec, root: Path) -> Confinement:
    venv = root / ".venv"
    if spec.id == "jedi-language-server" and (venv / "bin" / "python").is_file():
        # What basedpyright finds on its own: the workspace's .venv, its packages and its Python.
        return Confinement(initialization_options={"workspace": {"environmentPath": str(venv)}})
    return Confinement()


@functools.cache
def installed_tsserver(executable: str) -> str | None:
    """The ``tsserver.js`` of the TypeScript installed beside typescript-language-server (as node
    would resolve ``typescript`` from the server's own files), or None."""
    try:
        folder = Path(os.path.realpath(executable)).parent
    except OSError:
        return None
    for parent in (folder, *folder.parents):
        candidate = parent / "node_modules" / "typescript" / "lib" / "tsserver.js"
        if candidate.is_file():
            return str(candidate)
    return None
