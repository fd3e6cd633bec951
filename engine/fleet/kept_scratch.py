"""One scratch copy per worker process, at a path that stays, with its language servers kept
between the repositories the worker plans (issue 48, item 5).

A fleet task plans in a copy of its repository (the repository itself is only read). A copy at a
new path each time needs a new server each time, which then analyses the library's imports from
nothing. Here the copy stays where it is: each task makes it equal to its repository (files
created, rewritten, deleted, modes; ``.git`` and ``.graft`` left out, as ``graft batch``'s copy
leaves them), tells the kept servers which paths changed (as the engine tells them after its
own writes), and plans there. The servers then answer about this repository's files, from
an analysis of the shared imports they already have.

The servers are started again, never reused, when anything that sets them up differs from the
repository they were started for: the workspace's settings, or any file that configures a server
or chooses its interpreter (CONFIG_NAMES, anywhere in the tree). A copy whose update failed
half-way is never planned in with the old servers: they are closed, and the next task starts
fresh ones. Once the worker is done (``release_all``, which the executors call), the servers are
stopped and the folder removed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import threading
import tomllib
from pathlib import Path

from engine.api import Engine
from engine.ports import LanguageServices, load_language_services
from engine.workspace import Workspace

CONFIG_NAMES = frozenset({
    "pyproject.toml", "pyrightconfig.json", "setup.cfg", "pyvenv.cfg", ".python-version", "package.json", "tsconfig.json",
    "jsconfig.json", "go.mod", "go.work", "compile_commands.json", ".clangd", "Cargo.toml", "graft.toml",
})
"""Files whose content sets a server up (its configuration, its interpreter, its project): a
repository whose set of these differs from the last one gets new servers."""

_SKIPPED = frozenset({".git", ".graft"})
_PREFIX = "graft-fleet-kept-"


def _sweep_dead() -> None:
    """Remove the copies of worker processes that died without releasing them (a killed worker):
    a folder names its process, and one whose process is gone is nobody's."""
    for folder in Path(tempfile.gettempdir()).glob(f"{_PREFIX}*-*"):
        owner = folder.name[len(_PREFIX):].split("-", 1)[0]
        if owner.isdigit() and not _alive(int(owner)):
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: alive, and not ours to sweep
    return True


class KeptScratch:
    """This process's scratch copy and the servers kept on it."""

    def __init__(self) -> None:
        _sweep_dead()
        self._folder = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-"))
        self.copy = self._folder / "repo"
        self.copy.mkdir()
        self._services: LanguageServices | None = None
        self._setup: str | None = None
        self._closed_start_seconds = 0.0
        self.closed = False

    def engine_for(self, engine: Engine) -> Engine:
        """An engine on the copy, made equal to ``engine``'s workspace, with the kept servers (new
        ones when the setup differs; none when ``engine`` has none)."""
        try:
            # The last plan's journal and index: a transaction it left unfinished must not be
            # recovered over this repository's files.
            shutil.rmtree(self.copy / ".graft", ignore_errors=True)
            changed, rewritten, setup = _sync(engine.workspace.root, self.copy)
        except BaseException:
            self._drop_services()  # the copy is in no known state: no server may answer about it
            raise
        setup = hashlib.sha256(f"{engine.workspace.config!r}\0{setup}".encode()).hexdigest()
        if engine.services is None:
            services = None
        else:
            if self._services is not None and setup != self._setup:
                self._drop_services()
            if self._services is None:
                self._services, self._setup = load_language_services(Workspace(self.copy, engine.workspace.config)), setup
            else:
                self._services.files_changed(changed, rewritten)
            services = self._services
        return Engine(Workspace(self.copy, engine.workspace.config), services=services, tools=engine.tools,
                      source=engine.source)

    def start_seconds(self) -> float:
        """Seconds every server this copy has had spent starting."""
        running = self._services.start_seconds() if self._services is not None else 0.0
        return self._closed_start_seconds + running

    def done_with(self, trial: Engine) -> None:
        """Close what ``trial`` holds of its own, keeping the servers for the next repository."""
        trial.services = None
        trial.close()

    def close(self) -> None:
        self.closed = True
        self._drop_services()
        shutil.rmtree(self._folder, ignore_errors=True)

    def _drop_services(self) -> None:
        if self._services is not None:
            self._closed_start_seconds += self._services.start_seconds()
            self._services.close()
            self._services = None
            self._setup = None


def _sync(source: Path, copy: Path) -> tuple[list[str], list[str], str]:
    """``copy`` made equal to ``source``: the paths changed, those of them that existed before
    (rewritten in place), and a digest of the files that set servers up."""
    old, new = _entries(copy), _entries(source)
    changed: list[str] = []
    for relative in sorted(old.keys() - new.keys(), reverse=True):
        (copy / relative).unlink()
        changed.append(relative)
    _remove_empty_folders(copy, {str(Path(r).parent) for r in changed})
    for relative, entry in sorted(new.items()):
        if relative in old and _same(source / relative, copy / relative, entry, old[relative]):
            continue
        _place(source / relative, copy / relative, entry, existed=relative in old)
        changed.append(relative)
    setup = hashlib.sha256()
    for relative in sorted(r for r in new if Path(r).name in CONFIG_NAMES):
        setup.update(relative.encode() + b"\0" + _content(source / relative) + b"\0")
    return changed, [r for r in changed if r in old and r in new], setup.hexdigest()


def _entries(root: Path) -> dict[str, str]:
    """Every file and symlink under ``root`` (not inside .git or .graft): ``link`` or ``file``."""
    found: dict[str, str] = {}
    for folder, folders, files in os.walk(root):
        folders[:] = [name for name in folders if name not in _SKIPPED]  # as graft batch's copy leaves them out
        for name in [*(f for f in files if f not in _SKIPPED), *(f for f in folders if os.path.islink(os.path.join(folder, f)))]:
            path = os.path.join(folder, name)
            found[os.path.relpath(path, root)] = "link" if os.path.islink(path) else "file"
        folders[:] = [name for name in folders if not os.path.islink(os.path.join(folder, name))]
    return found


def _same(source: Path, copy: Path, kind: str, old_kind: str) -> bool:
    if kind != old_kind:
        return False
    if kind == "link":
        return os.readlink(source) == os.readlink(copy)
    mine, theirs = source.stat(), copy.stat()
    if mine.st_size != theirs.st_size or (mine.st_mode & 0o777) != (theirs.st_mode & 0o777):
        return False
    return source.read_bytes() == copy.read_bytes()


def _place(source: Path, target: Path, kind: str, *, existed: bool) -> None:
    if existed or target.is_symlink():
        target.unlink()
    target.parent.mkdir(parents=True, exist_ok=True)
    if kind == "link":
        os.symlink(os.readlink(source), target)
    else:
        shutil.copy2(source, target)


def _content(path: Path) -> bytes:
    """What of a configuring file can set a server up: all of it, except a pyproject.toml's
    ``[project]`` and ``[build-system]`` tables (a package's name, version and dependencies
    configure no server; it resolves imports from the interpreter), so that repositories that
    differ only there share servers."""
    if path.is_symlink():
        return os.readlink(path).encode()
    data = path.read_bytes()
    if path.name != "pyproject.toml":
        return data
    try:
        tables = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return data  # unreadable here: all of it counts
    kept = {name: table for name, table in tables.items() if name not in ("project", "build-system")}
    return json.dumps(kept, sort_keys=True, default=str).encode()


def _remove_empty_folders(root: Path, folders: set[str]) -> None:
    for relative in sorted(folders, key=lambda f: -len(Path(f).parts)):
        folder = root / relative
        while folder != root and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
            folder = folder.parent


_LOCAL = threading.local()
_ALL: list[KeptScratch] = []
_ALL_LOCK = threading.Lock()


def for_this_thread() -> KeptScratch:
    """The kept scratch copy of the calling thread (a Dask worker runs tasks on several threads)."""
    kept = getattr(_LOCAL, "kept", None)
    if kept is None or kept.closed:  # released by release_all, from whichever thread
        kept = KeptScratch()
        _LOCAL.kept = kept
        with _ALL_LOCK:
            _ALL.append(kept)
    return kept


def release_all() -> int:
    """Stop every kept server of this process and remove the copies: the number released."""
    with _ALL_LOCK:
        kept, _ALL[:] = list(_ALL), []
    for each in kept:
        each.close()  # a thread whose copy is closed gets a new one if it plans again
    return len(kept)
