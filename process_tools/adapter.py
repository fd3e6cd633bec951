"""Outside programs for the apply layer (git, the user's verify command): the engine's Tools port.

Trust: the only program codegraft runs on its own is ``git status``, for the dirty-file guard,
and the repository's configuration can name programs that git then runs (``core.fsmonitor``,
hooks such as ``post-index-change``, the clean filters of ``filter.<driver>``). A workspace is
not trusted to choose what codegraft executes, so each of those is switched off on the command
line, the system config is not read, no pager is started, and git is asked not to write the
index. The ``--verify`` command is the user's own and runs as given. The import check runs the
project's code, and the engine asks for it only when the workspace is trusted (``--trust``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from engine.errors import Refused
from engine.ports import Formatted, GoBuildCheck
from engine.settings import workspace_python_trust
from engine.workspace import Workspace
from process_tools.go_build import go_build
from process_tools.interpreter import project_interpreter

_OUTPUT_TAIL = 4000
_GIT_TIMEOUT = 30
_IMPORT_TIMEOUT = 60
_GOFMT_TIMEOUT = 30
_NEUTRALISED = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null")
_FILTER_COMMANDS = ("clean", "smudge", "process")
_REPOSITORY_VARIABLES = frozenset({"GIT_DIR", "GIT_WORK_TREE"})
"""Environment variables that make git find a repository where no ``.git`` is: git is asked."""


class DirtyCheckFailed(Refused):
    """The repository's uncommitted changes could not be read; an apply is refused rather than
    taken to be over clean files."""

    code = "dirty_check_failed"


class ProcessTools:
    def __init__(self, workspace: Workspace) -> None:
        self.root = workspace.root
        self.trusted = bool(workspace_python_trust(workspace.root, workspace.config.trust_workspace_python))

    def dirty_files(self, paths: list[str]) -> set[str]:
        """Fails closed: outside a repository nothing is guarded, but a repository whose status
        cannot be read (git missing, timing out, failing) is refused with the reason, never
        taken as clean."""
        if not paths:
            return set()
        if not self._looks_versioned() and not _REPOSITORY_VARIABLES & os.environ.keys():
            # Outside every repository git would only say so, two processes later: 6 ms or more
            # of each preview and apply, which wait for the check.
            return set()
        try:
            result = self._git("status", "--porcelain", "-z", "--", *paths)
        except FileNotFoundError:
            if self._looks_versioned():
                raise DirtyCheckFailed("the workspace is a git repository, but git is not installed, so its uncommitted "
                                       "changes cannot be checked; install git, or allow dirty files to write anyway") from None
            return set()  # no git and no repository: nothing to guard
        except (OSError, subprocess.TimeoutExpired) as error:
            raise DirtyCheckFailed(f"git status failed ({error}), so uncommitted changes cannot be checked; "
                                   "allow dirty files to write anyway") from None
        if result.returncode != 0:
            message = result.stderr.decode("utf-8", errors="replace").strip()
            if "not a git repository" in message:
                return set()  # not a repository: nothing to guard
            raise DirtyCheckFailed(f"git status failed with status {result.returncode} ({message[-300:] or 'no message'}), so "
                                   "uncommitted changes cannot be checked; allow dirty files to write anyway")
        dirty = set()
        for record in result.stdout.decode("utf-8", errors="replace").split("\0"):
            if len(record) > 3:
                dirty.add(record[3:])
        return dirty & set(paths)

    def revision(self, *, untracked: bool = False) -> str | None:
        """HEAD's commit when no tracked file (with ``untracked``, no file git does not ignore)
        has uncommitted changes, else None (and None when git cannot tell: a baseline or a row
        is then computed rather than taken from a cache)."""
        if not self._looks_versioned():
            return None
        try:
            status = self._git("status", "--porcelain", "-z", f"--untracked-files={'all' if untracked else 'no'}")
            head = self._git("rev-parse", "--verify", "--quiet", "HEAD")
        except (OSError, subprocess.TimeoutExpired):
            return None
        if status.returncode != 0 or head.returncode != 0 or status.stdout.strip(b"\0"):
            return None
        return head.stdout.decode("ascii", errors="replace").strip() or None

    def _looks_versioned(self) -> bool:
        """A ``.git`` (a folder, or a file for a worktree or submodule) here or above: where git
        looks for the repository a folder belongs to."""
        return any((folder / ".git").exists() for folder in (self.root, *self.root.parents))

    def run(self, command: str) -> tuple[int, str]:
        result = subprocess.run(command, shell=True, cwd=self.root, capture_output=True, check=False)  # noqa: S602 - the user's own command
        output = (result.stdout + result.stderr).decode("utf-8", errors="replace")
        return result.returncode, output[-_OUTPUT_TAIL:]

    def import_module(self, folder: Path, roots: list[str], module: str) -> tuple[bool, str]:
        environment = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1",
                       "PYTHONPATH": os.pathsep.join(str(folder / root) for root in roots)}
        try:
            result = subprocess.run(
                [self._interpreter(), "-c", "import importlib, sys; importlib.import_module(sys.argv[1])", module],
                cwd=folder, env=environment, capture_output=True, check=False, timeout=_IMPORT_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            return False, f"importing {module} took more than {_IMPORT_TIMEOUT} s"
        output = (result.stdout + result.stderr).decode("utf-8", errors="replace")
        return result.returncode == 0, output[-_OUTPUT_TAIL:]

    def run_as_script(self, folder: Path, roots: list[str], path: str) -> tuple[bool, str]:
        environment = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1",
                       "PYTHONPATH": os.pathsep.join(str(folder / root) for root in roots)}
        # runpy.run_path gives the file no parent package, as `python PATH` does; the run name
        # keeps its main block from running (the program itself is not the check's business).
        script = ("import os, runpy, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[1]))); "
                  "runpy.run_path(sys.argv[1], run_name='__graft_script_check__')")
        try:
            result = subprocess.run([self._interpreter(), "-c", script, path], cwd=folder, env=environment,
                                    capture_output=True, check=False, timeout=_IMPORT_TIMEOUT)
        except subprocess.TimeoutExpired:
            return False, f"running {path} took more than {_IMPORT_TIMEOUT} s"
        output = (result.stdout + result.stderr).decode("utf-8", errors="replace")
        return result.returncode == 0, output[-_OUTPUT_TAIL:]

    def gofmt(self, texts: list[str]) -> list[Formatted]:
        """gofmt over each text on its standard input (it reads nothing else), a few at once."""
        program = shutil.which("gofmt")
        if program is None:
            return [Formatted(None, "gofmt is not installed (it comes with Go: https://go.dev/dl)")] * len(texts)
        with ThreadPoolExecutor(min(4, max(1, len(texts))), thread_name_prefix="graft-gofmt") as workers:
            return list(workers.map(lambda text: _gofmt_one(program, text), texts))

    def go_build(self, folder: str, settings: dict[str, str], tags: list[str]) -> GoBuildCheck:
        return go_build(self.root, folder, settings, tags)

    def _interpreter(self) -> str:
        """The project's own Python, found as its language server finds it (process_tools.interpreter),
        when the workspace's code is trusted (the engine does not ask for an import otherwise), else codegraft's."""
        return project_interpreter(self.root) if self.trusted else sys.executable

    def _git(self, *arguments: str) -> subprocess.CompletedProcess[bytes]:
        """git with every program the repository's config could make it run switched off."""
        environment = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
        overrides = [*_NEUTRALISED, *self._filter_overrides(environment)]
        return subprocess.run(["git", "--no-pager", *overrides, *arguments], cwd=self.root, env=environment,
                              capture_output=True, check=False, timeout=_GIT_TIMEOUT)

    def _filter_overrides(self, environment: dict[str, str]) -> list[str]:
        """``-c filter.<driver>.clean=`` (and smudge, process) for every filter driver the config
        defines: an empty command is no command. Reading the config runs nothing."""
        listed = subprocess.run(["git", "config", "--null", "--name-only", "--list"], cwd=self.root, env=environment,
                                capture_output=True, check=False, timeout=_GIT_TIMEOUT)
        drivers = set()
        for key in listed.stdout.decode("utf-8", errors="replace").split("\0"):
            section, _, rest = key.partition(".")
            driver, _, name = rest.rpartition(".")
            if section.lower() == "filter" and driver and name.lower() in _FILTER_COMMANDS:
                drivers.add(driver)
        return [option for driver in sorted(drivers) for name in _FILTER_COMMANDS for option in ("-c", f"filter.{driver}.{name}=")]


def _gofmt_one(program: str, text: str) -> Formatted:
    try:
        result = subprocess.run([program], input=text.encode("utf-8"), capture_output=True, check=False, timeout=_GOFMT_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as error:
        return Formatted(None, f"gofmt failed: {error}")
    if result.returncode != 0:
        # gofmt names the input <standard input>: its first lines say where the text does not parse.
        message = result.stderr.decode("utf-8", errors="replace").strip().replace("<standard input>", "line")
        return Formatted(None, message.splitlines()[0] if message else f"gofmt exited with status {result.returncode}")
    return Formatted(result.stdout.decode("utf-8", errors="replace"))


def create(workspace: Workspace) -> ProcessTools:
    """Entry point ``codegraft.tools``."""
    return ProcessTools(workspace)
