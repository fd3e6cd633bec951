"""codegraft's own folder, ``<root>/.graft`` (journal, history, locks, cache), which a cloned
repository can ship too: nothing in it is trusted to stay inside the workspace.

- ``.graft`` and every folder codegraft uses in it must be real folders (not symlinks) inside
  the root; a ``.graft`` that is a symlink is refused (the user may have put it there on
  purpose: they are told to remove it), a subfolder that is not a real folder is moved aside;
- files in it are opened with ``O_NOFOLLOW``, so a symlink planted in it is never followed;
- what fails validation is quarantined: moved under ``.graft/quarantine/`` and reported once,
  so that one crafted or damaged entry does not block every later command.

The checks use lstat and O_NOFOLLOW rather than descriptors held for every path: the threat is
content shipped with a workspace, not a process racing codegraft while it runs.
"""

from __future__ import annotations

import os
import stat
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from engine.errors import Refused

STATE_FOLDER = ".graft"
SUBFOLDERS = ("journal", "history", "locks", "cache", "scratch", "servers", "quarantine", "diagnostics", "daemon")
_QUARANTINE = "quarantine"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class UnsafeStateFolder(Refused):
    code = "unsafe_state_folder"


@dataclass(frozen=True)
class Quarantined:
    path: str
    """Workspace-relative, where it was."""
    moved_to: str
    reason: str

    def message(self) -> str:
        return f"{self.path} could not be trusted ({self.reason}); moved aside to {self.moved_to}"


def graft_directory(root: Path) -> Path:
    """``<root>/.graft``, created on first use with a .gitignore, so that it never shows in ``git
    status``; refused when it is a symlink or not a folder."""
    directory = root / STATE_FOLDER
    kind = _kind(directory)
    if kind is None:
        try:
            os.mkdir(directory)
        except FileExistsError:
            pass  # another process made it meanwhile: checked below like any other
        else:
            write_new_file(directory / ".gitignore", b"# codegraft's cache and journal\n*\n")
        kind = _kind(directory)
    if kind == "link":
        raise UnsafeStateFolder(
            f"{directory} is a symlink (to {os.readlink(directory)}); codegraft keeps its journal, locks and cache only in "
            "a real folder inside the workspace, so that nothing it writes or restores can land outside it. "
            f"Remove the link (rm {directory}) and run again"
        )
    if kind != "folder":
        raise UnsafeStateFolder(f"{directory} is not a folder; codegraft keeps its journal, locks and cache there: remove it and run again")
    return directory


def state_folder(root: Path, name: str) -> Path:
    """``<root>/.graft/<name>``, a real folder (made when missing); refused when it is anything else."""
    folder = graft_directory(root) / name
    if _kind(folder) is None:
        try:
            os.mkdir(folder)
        except FileExistsError:
            pass
    if _kind(folder) != "folder":
        raise UnsafeStateFolder(f"{folder} is not a real folder (a symlink or a file); it is moved aside on the next start")
    return folder


def check_state_folders(root: Path) -> list[Quarantined]:
    """At start: every subfolder codegraft uses that exists and is not a real folder is moved
    aside, and every entry of journal/ and history/ that is not a real folder too."""
    directory = root / STATE_FOLDER
    if _kind(directory) is None:
        return []
    graft_directory(root)  # refuses a symlinked .graft
    moved = []
    for name in SUBFOLDERS:
        folder = directory / name
        kind = _kind(folder)
        if kind not in (None, "folder") and name == _QUARANTINE:
            # The quarantine itself cannot hold it: renamed beside it (a link is renamed, never followed).
            aside = directory / f"{_QUARANTINE}-{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"
            os.rename(folder, aside)
            moved.append(Quarantined(_relative(root, folder), _relative(root, aside), f"it is a {kind}, not a folder"))
        elif kind not in (None, "folder"):
            moved.append(quarantine(root, folder, f"it is a {kind}, not a folder"))
        elif kind == "folder" and name == "cache" and _holds_a_link(folder):
            moved.append(quarantine(root, folder, "it holds a symlink, which the cache's database would follow"))
        elif kind == "folder" and name in ("journal", "history"):
            with os.scandir(folder) as entries:
                strays = [Path(e.path) for e in entries if not e.is_dir(follow_symlinks=False)]
            moved += [quarantine(root, p, f"a transaction must be a folder, and this is a {_kind(p)}") for p in strays]
    return moved


def quarantine(root: Path, path: Path, reason: str) -> Quarantined:
    """Move ``path`` (inside ``.graft``; a symlink is moved as the link itself) under ``.graft/quarantine``."""
    folder = state_folder(root, _QUARANTINE)
    target = folder / f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}-{path.name}"
    os.rename(path, target)
    return Quarantined(_relative(root, path), _relative(root, target), reason)


def read_state_file(path: Path) -> bytes:
    """A file under ``.graft``, never through a symlink (OSError, ELOOP, when it is one)."""
    descriptor = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
    with os.fdopen(descriptor, "rb") as handle:
        return handle.read()


def open_state_file(path: Path, flags: int, mode: int = 0o644) -> int:
    """A descriptor for a file under ``.graft``, never through a symlink."""
    return os.open(path, flags | _NOFOLLOW | _CLOEXEC, mode)


def write_new_file(path: Path, data: bytes, *, durable: bool = False) -> None:
    """Create (or truncate) a file under ``.graft`` without following a symlink at its place."""
    descriptor = open_state_file(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(descriptor, view):]
        if durable:
            os.fsync(descriptor)
    finally:
        os.close(descriptor)


def is_real_folder(path: Path) -> bool:
    return _kind(path) == "folder"


def _holds_a_link(folder: Path) -> bool:
    for parent, folders, files in os.walk(folder):
        if any(os.path.islink(os.path.join(parent, name)) for name in (*folders, *files)):
            return True
    return False


def _kind(path: Path) -> str | None:
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "folder"
    return "file" if stat.S_ISREG(mode) else "special file"


def _relative(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()
