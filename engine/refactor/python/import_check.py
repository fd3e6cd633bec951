"""Does the package still import once the plan is applied? Checked before anything is written.

A move can create a cycle that shows only when the package is imported: the destination imports
the source at module level, and the source uses the moved name at import time (a default
argument, a decorator, a class body, a module-level call). Static analysis of "uses at import
time" missed some of them on real projects; importing is the reliable check. The modules the
plan touches are imported, each in a fresh interpreter (the project's own), in a scratch copy of
the workspace under ``.graft/scratch`` with the planned files laid over it: first as the workspace
is (a package that does not import even now cannot be judged, and that is said, never passed
silently), then as planned. A planned import that fails is refused with the interpreter's own
error and the chain of project files it went through.
"""

from __future__ import annotations

import os
import re
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

from engine.edits.materialize import materialize
from engine.edits.model import WorkspaceEdit
from engine.errors import Refused
from engine.graph.queries import GraphQueries
from engine.ports import Tools
from engine.settings import workspace_python_trust
from engine.state_folder import state_folder
from engine.workspace import EXCLUDED_DIR_NAMES, Workspace

_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


_SCRIPT_BLOCK = re.compile(r"""^if\s+\(?\s*(?:__name__\s*==\s*['"]__main__['"]|['"]__main__['"]\s*==\s*__name__)""", re.MULTILINE)


class ImportBroken(Refused):
    code = "import_cycle"


class ScriptRunBroken(Refused):
    """A module the project runs as a script (``python pkg/__init__.py``: it has a module-level
    ``if __name__ == "__main__":`` block) would fail that way with the plan applied, although
    it imports: a module-level relative import has no parent package there."""

    code = "script_run_broken"


def runs_as_script(text: str) -> bool:
    """Whether a module has a module-level ``if __name__ == "__main__":`` block."""
    return bool(_SCRIPT_BLOCK.search(text))


@dataclass(frozen=True)
class ImportCheck:
    checked: list[str]
    """Modules imported with the plan applied."""
    note: str


def check_imports(workspace: Workspace, queries: GraphQueries, tools: Tools | None, edit: WorkspaceEdit,
                  paths: list[str], what: str) -> ImportCheck:
    """Import the modules of ``paths`` (Python files; those the plan deletes are skipped) as the
    plan leaves them. Raises ImportBroken when one fails that imports today."""
    if tools is None:
        return ImportCheck([], "import check skipped: no process support is installed (lsp_pool)")
    if not workspace_python_trust(workspace.root, workspace.config.trust_workspace_python):
        # Importing runs the project's module-level code: never for a workspace not trusted.
        return ImportCheck([], "import check skipped: it would run the project's own code (its module-level "
                               "statements, with its .venv's Python), and the workspace's code is not trusted; "
                               "pass --trust (or trust the workspace in your own ~/.config/codegraft/config.toml: README, 'Security') to have it")
    modules = [(path, name) for path in paths if path.endswith(".py") and (name := queries.project.module_name_for(path))]
    if not modules:
        return ImportCheck([], "")
    roots = sorted({_root_of(path, name) for path, name in modules})
    planned = {state.path: state.after for state in materialize(edit, workspace) if state.changed}
    scripts = [path for path, _name in modules if (data := planned.get(path)) is not None
               and runs_as_script(data.decode("utf-8", errors="replace"))]
    scratch = state_folder(workspace.root, "scratch") / uuid.uuid4().hex[:12]
    try:
        _copy_python_tree(workspace, scratch)
        _copy_ignored_modules(workspace, scratch, {_package_of(path, name) for path, name in modules})
        already_broken, scripts_broken = _broken_before(tools, scratch, roots, modules, scripts)
        _write_planned(scratch, planned)
        broken_before = {name for name, _ in already_broken}
        errors_before = {error for _, error in already_broken}
        checked = []
        for path, name in modules:
            if name in broken_before or not (scratch / path).is_file():
                continue
            imported, output = tools.import_module(scratch, roots, name)
            if not imported and _last_line(output) in errors_before:
                # A module the plan creates (a renamed file) fails as the package failed before it.
                already_broken.append((name, _last_line(output)))
                continue
            checked.append(name)
            if not imported:
                error = _last_line(output).replace(str(scratch) + os.sep, "")
                raise ImportBroken(
                    f"{what} would break `import {name}`: {error}\n"
                    f"  through (lines of the planned files): {' -> '.join(_chain(output, scratch)) or '(no project frame)'}\n"
                    "nothing was changed (the check imported the planned files in a scratch copy)"
                )
        scripts_run = _run_scripts(tools, scratch, roots, [p for p in scripts if p not in dict(scripts_broken)], what)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return ImportCheck(checked, _note(checked, scripts_run, scripts_broken, already_broken))


def _broken_before(
    tools: Tools, scratch: Path, roots: list[str], modules: list[tuple[str, str]], scripts: list[str],
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The modules that do not import, and the scripts that do not run, before the plan: (name or
    path, the error's last line) each; the check after the plan leaves them out."""
    already_broken = []
    for path, name in modules:
        if (scratch / path).is_file():
            imported, output = tools.import_module(scratch, roots, name)
            if not imported:
                already_broken.append((name, _last_line(output)))
    scripts_broken = []
    for path in scripts:
        if (scratch / path).is_file():
            ran, output = tools.run_as_script(scratch, roots, str(scratch / path))
            if not ran:
                scripts_broken.append((path, _last_line(output)))
    return already_broken, scripts_broken


def _write_planned(scratch: Path, planned: dict[str, bytes | None]) -> None:
    """The planned files written into the scratch copy (a deleted one removed)."""
    for path, data in planned.items():
        target = scratch / path
        if target.exists() or target.is_symlink():
            target.unlink()  # a hard link to the user's file: never written through
        if data is not None:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)


def _note(checked: list[str], scripts_run: list[str], scripts_broken: list[tuple[str, str]],
          already_broken: list[tuple[str, str]]) -> str:
    parts = [f"import check: {', '.join(checked)} import(s) with the plan applied"] if checked else []
    if scripts_run:
        parts.append(f"run as a script (`python PATH`, its main block not run): {', '.join(scripts_run)}")
    if scripts_broken:
        parts.append("script run not checked for files that fail that way even now: " + "; ".join(
            f"{path} ({error})" for path, error in scripts_broken))
    note = "; ".join(parts)
    if already_broken:
        skipped = "; ".join(f"{name} ({error})" for name, error in already_broken)
        note = (note + "; " if note else "") + f"import check skipped for modules that do not import even now: {skipped}"
    return note


def _run_scripts(tools: Tools, scratch: Path, roots: list[str], scripts: list[str], what: str) -> list[str]:
    """Run each planned script module as ``python PATH`` would; refuse the first that fails."""
    for path in scripts:
        if not (scratch / path).is_file():
            continue
        ran, output = tools.run_as_script(scratch, roots, str(scratch / path))
        if not ran:
            error = _last_line(output).replace(str(scratch) + os.sep, "")
            raise ScriptRunBroken(
                f"{what} would break `python {path}` ({path} runs as a script: it has an `if __name__ == \"__main__\":` "
                f"block): {error}\n  through (lines of the planned files): {' -> '.join(_chain(output, scratch)) or '(no project frame)'}\n"
                "nothing was changed (the check ran the planned files in a scratch copy); write the import absolutely "
                "(`from pkg.mod import name`) or move the main block to a `__main__.py` or a console script"
            )
    return [path for path in scripts if (scratch / path).is_file()]


def _root_of(path: str, module: str) -> str:
    """The folder ``module`` is imported from (``src`` for ``src/pkg/a.py`` as ``pkg.a``)."""
    depth = module.count(".") + 1 + (1 if path.endswith("/__init__.py") else 0)
    parts = path.split("/")[:-depth]
    return "/".join(parts) or "."


def _copy_python_tree(workspace: Workspace, scratch: Path) -> None:
    """The workspace's files, hard-linked where the file system allows (copied otherwise)."""
    for relative in workspace.scan(".").files:
        source = workspace.root / relative
        target = scratch / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if os.path.islink(source):
            continue
        try:
            os.link(source, target)
        except OSError:
            shutil.copy2(source, target)


def _package_of(path: str, module: str) -> str:
    """The folder of ``module``'s top-level package (``src/pkg`` for ``src/pkg/a.py`` as ``pkg.a``)."""
    root = _root_of(path, module)
    top = module.split(".")[0]
    return top if root == "." else f"{root}/{top}"


def _copy_ignored_modules(workspace: Workspace, scratch: Path, packages: set[str]) -> None:
    """Python files of the planned packages that the workspace scan leaves out because version
    control ignores them: a ``_version.py`` written at build time (hatch-vcs, setuptools-scm)
    is imported by the package's ``__init__``, and without it nothing would import."""
    for package in sorted(packages):
        folder = workspace.root / package
        if not folder.is_dir() or folder.is_symlink():
            continue
        for source in folder.rglob("*.py"):
            relative = source.relative_to(workspace.root)
            target = scratch / relative
            if target.exists() or source.is_symlink() or EXCLUDED_DIR_NAMES & set(relative.parts):
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def _last_line(output: str) -> str:
    lines = [line for line in output.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else "(no output)"


def _chain(output: str, scratch: Path) -> list[str]:
    """The project files of the traceback, in order, as ``path:line``."""
    prefix = str(scratch) + os.sep
    chain = []
    for file, line in _FRAME.findall(output):
        if file.startswith(prefix):
            chain.append(f"{file[len(prefix):]}:{line}")
    return chain
