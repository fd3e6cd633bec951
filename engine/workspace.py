"""The workspace: its root, which files belong to it, and safe access to them.

Every path a user gives goes through :meth:`Workspace.resolve`, which refuses
anything that lands outside the root, whether by ``..``, by an absolute path
elsewhere, or by a symlink that points out.
"""

from __future__ import annotations

import codecs
import errno
import hashlib
import os
import re
import threading
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISREG
from typing import Callable, Iterable, Iterator
from urllib.parse import unquote, urlparse

import pathspec

from engine.choices import DEFAULT_MAX_FILE_BYTES
from engine.errors import FileNotInWorkspace, ProtectedPath, UnreadableFile, UnsafePath
from engine.languages import language_of
from engine.positions import line_starts
from engine.read_memo import KEPT_BYTES, RememberedReads

#: Folders never scanned, whatever .gitignore says.
EXCLUDED_DIR_NAMES = frozenset(
    {
        ".git", ".hg", ".svn", ".graft", "node_modules", "__pycache__", ".venv", "venv",
        ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", "build", "dist", "target",
    }
)

#: Folders no edit ever writes into, at any depth: version control's own (git runs what its
#: config and hooks name, and codegraft runs git) and codegraft's journal, locks and cache.
PROTECTED_DIR_NAMES = frozenset({".git", ".graft", ".hg", ".svn"})

_BINARY_SNIFF_BYTES = 8192
_MISSING = frozenset({errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.EBADF})
"""What ``Path.exists()`` takes for "no such file" (a broken symlink included)."""
_UTF8_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class SourceFile:
    """A file's content as the engine sees it, with what is needed to write it back faithfully."""

    path: str
    """Workspace-relative, ``/``-separated."""
    data: bytes
    """UTF-8 bytes without the BOM: what parsers and positions are computed on."""
    text: str
    has_bom: bool
    newline: str
    """The file's dominant line ending (``\\n``, ``\\r\\n`` or ``\\r``)."""
    sha256: str
    """Hash of the bytes on disk, BOM included."""
    mtime: float
    size: int
    language: str | None
    encoding: str = "utf-8"
    """How the file is written on disk: UTF-8, or a Python file's PEP 263 declared encoding
    (``data`` is UTF-8 all the same; an edit is written back in this encoding)."""

    def encode(self, text: str) -> bytes:
        """``text`` as this file's bytes on disk (its BOM and encoding kept)."""
        return (_UTF8_BOM if self.has_bom else b"") + text.encode(self.encoding)

    @property
    def line_starts(self) -> list[int]:
        """Offsets where each line of ``text`` starts, computed once per content: a rename's
        passes, its leftover check and its apply all need them for the same hundred files.
        Shared: callers must not change the list."""
        return _LINE_STARTS.get(self.sha256, self.text)


@dataclass(frozen=True)
class Skipped:
    path: str
    reason: str


@dataclass(frozen=True)
class ScanResult:
    files: list[str]
    skipped: list[Skipped]
    folders: list[str] = field(default_factory=list)
    """The folders walked (relative; ``""`` for the workspace root), for a watcher."""


@dataclass(frozen=True)
class WorkspaceConfig:
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    trust_workspace_python: bool = False
    """The caller's ``--trust``: the workspace's own Python may run (engine.settings.workspace_python_trust)."""


class Workspace:
    def __init__(self, root: Path, config: WorkspaceConfig | None = None) -> None:
        if not root.is_dir():
            raise FileNotInWorkspace(f"workspace root {root} is not a directory")
        self.root = root.resolve()
        self.config = config or WorkspaceConfig()
        self.remembered_reads: RememberedReads[SourceFile] | None = None
        """Set for the length of one call (:meth:`remembering_reads`)."""
        self._kept_reads: RememberedReads[SourceFile] | None = None
        """The memo a long-lived engine keeps from call to call (:meth:`keep_reads_between_calls`)."""
        self._call_folders: _RealFolders | None = None
        """Within one call, each folder's real path worked out once (:meth:`remembering_reads`)."""

    # -- paths ---------------------------------------------------------------

    def resolve(self, user_path: str) -> tuple[str, Path]:
        """(workspace-relative path, absolute path) for a path a user gave.

        Relative paths are relative to the workspace root, like the FILE part
        of an address. Raises :class:`UnsafePath` for anything outside it.
        """
        folders = self._call_folders
        relative, lexical, _real = self._checked(user_path, folders.real_path if folders is not None else os.path.realpath)
        return relative, Path(lexical)

    def _checked(self, user_path: str, real_path: Callable[[str], str] = os.path.realpath) -> tuple[str, str, str]:
        """(relative, lexical absolute, real absolute) of a path a user gave, or UnsafePath.
        Strings throughout: an apply checks a hundred paths, and pathlib cost more than the rest."""
        if not user_path or "\x00" in user_path:
            raise UnsafePath(f"{user_path!r} is not a usable path")
        if user_path.startswith("file:"):
            user_path = _file_uri_path(user_path)  # a URI an agent or editor passed: its path, checked like any
        root = str(self.root)
        lexical = os.path.normpath(user_path if os.path.isabs(user_path) else os.path.join(root, user_path))
        if not _is_within(lexical, root):
            raise UnsafePath(f"{user_path} is outside the workspace {self.root}; only files under it can be read or changed")
        real = real_path(lexical)
        if not _is_within(real, root):
            raise UnsafePath(
                f"{user_path} is a symlink (or lies under one) that points to {real}, outside the workspace {self.root}"
            )
        return _relative_to(lexical, root), lexical, real

    def canonical(self, user_path: str, real_path: Callable[[str], str] = os.path.realpath) -> str:
        """The workspace-relative real path (symlinks inside the workspace followed) of a path a
        user gave; refused like :meth:`resolve` when it is, or points, outside."""
        _relative, _lexical, real = self._checked(user_path, real_path)
        return _relative_to(real, str(self.root))

    def canonical_all(self, user_paths: Iterable[str]) -> dict[str, str]:
        """:meth:`canonical` of many paths, each folder's real path worked out once (an apply
        checks a hundred paths that share most of their folders)."""
        folders = _RealFolders()
        return {path: self.canonical(path, folders.real_path) for path in user_paths}

    def check_writable(self, canonical_path: str) -> None:
        """Refuse a write into :data:`PROTECTED_DIR_NAMES` (give the canonical path: a symlink
        into ``.git`` is then seen for what it is)."""
        for part in canonical_path.split("/"):
            if part.lower() in PROTECTED_DIR_NAMES:
                whose = "codegraft's own journal, locks and cache" if part.lower() == ".graft" else (
                    "version control's own folder, whose config and hooks are programs that git runs")
                raise ProtectedPath(
                    f"{canonical_path} lies in {part}/, {whose}; no edit writes there (change it by hand if you must)"
                )

    def relative(self, absolute: Path) -> str:
        return absolute.relative_to(self.root).as_posix()

    # -- reading -------------------------------------------------------------

    def read(self, user_path: str) -> SourceFile:
        # resolve()'s checks with string paths: a plan reads a hundred files, most of them
        # remembered, and building a Path for each cost more than its status call.
        folders = self._call_folders
        relative, absolute, _real = self._checked(user_path, folders.real_path if folders is not None else os.path.realpath)
        try:
            stat = os.stat(absolute)  # one call for what exists(), is_file() and stat() each asked
        except OSError as error:
            if error.errno in _MISSING:
                raise FileNotInWorkspace(f"{relative} does not exist (paths are relative to the workspace root {self.root})") from None
            raise UnreadableFile(relative, f"cannot be read: {error.strerror or error}") from error
        if not S_ISREG(stat.st_mode):
            raise FileNotInWorkspace(f"{relative} is not a regular file")
        if stat.st_size > self.config.max_file_bytes:
            raise UnreadableFile(
                relative,
                f"{_megabytes(stat.st_size)} is over the {_megabytes(self.config.max_file_bytes)} limit for source files",
                option="max_file_bytes",
            )
        remembered = self.remembered_reads
        kept = remembered.get(relative, stat) if remembered is not None else None
        if kept is not None and kept[1] is not None:
            return kept[1]
        try:
            raw = kept[0] if kept is not None else read_bytes(absolute)
        except OSError as error:
            raise UnreadableFile(relative, f"cannot be read: {error.strerror or error}") from error
        source = decode_source(relative, raw, stat.st_mtime)
        if remembered is not None:
            remembered.keep(relative, stat, raw, source)
        return source

    def listed_bytes(self, relative: str) -> bytes:
        """The bytes of a file a scan listed (vetted already: not resolved again), to search;
        remembered for the call like :meth:`read`, which then only decodes them. OSError as
        reading raises it."""
        absolute = f"{self.root}/{relative}"
        remembered = self.remembered_reads
        if remembered is None:
            return read_bytes(absolute)
        status = os.stat(absolute)
        kept = remembered.get(relative, status)
        if kept is not None:
            return kept[0]
        data = read_bytes(absolute)
        remembered.keep(relative, status, data)
        return data

    @contextmanager
    def remembering_reads(self) -> Iterator[None]:
        """Within the block (one call), a file read again unchanged is not read again
        (engine.read_memo), and each folder's real path is worked out once (a plan reads a hundred
        files of a few folders; a folder swapped for a link within one call is a local process
        racing codegraft, which the trust model does not defend); what was read is let go at its
        end, unless reads are kept between calls."""
        if self.remembered_reads is not None:
            yield  # an enclosing block remembers already
            return
        self.remembered_reads = self._kept_reads if self._kept_reads is not None else RememberedReads()
        self._call_folders = _RealFolders()
        try:
            yield
        finally:
            self.remembered_reads = None
            self._call_folders = None

    def keep_reads_between_calls(self, limit_bytes: int = KEPT_BYTES) -> None:
        """For a long-lived engine (the CLI's daemon): each call's reads stay for the next, checked
        against the file's status as within a call (engine.read_memo), at most ``limit_bytes``."""
        if self._kept_reads is None:
            self._kept_reads = RememberedReads(limit_bytes)

    def forget_kept_reads(self) -> None:
        """Let the reads kept between calls go (a daemon at rest gives their memory back)."""
        if self._kept_reads is not None:
            self._kept_reads.clear()

    # -- enumeration ---------------------------------------------------------

    def scan(self, under: str = ".") -> ScanResult:
        """Every file under ``under`` that is not ignored, in a stable order.

        Honours ``.gitignore`` files at every level and ``.git/info/exclude``,
        plus :data:`EXCLUDED_DIR_NAMES` and any folder holding ``pyvenv.cfg``
        (a virtual environment, whatever its name). Symlinked folders are not
        followed; symlinked files are kept only when they point inside.
        """
        relative, start = self.resolve(under)
        if start.is_file():
            return ScanResult([relative], [])
        if not start.is_dir():
            raise FileNotInWorkspace(f"{relative} does not exist (paths are relative to the workspace root {self.root})")
        root = str(self.root)
        ignores = _IgnoreRules(root)
        files: list[str] = []
        skipped: list[Skipped] = []
        folders: list[str] = []
        cut = len(root) + 1
        # os.scandir and plain strings: this runs on every start of every command that
        # needs the whole project, so it avoids pathlib's per-path parsing.
        stack = [str(start)]
        while stack:
            directory = stack.pop()
            with os.scandir(directory) as listing:
                entries = list(listing)  # unsorted: the result is sorted once at the end
            names = {entry.name for entry in entries}
            if "pyvenv.cfg" in names and directory != str(start):
                continue  # a virtual environment, whatever its name
            folders.append(directory[cut:])
            if ".gitignore" in names:
                ignores.load(directory)
            for entry in entries:
                relative_path = entry.path[cut:]
                if entry.is_symlink():
                    target = os.path.realpath(entry.path)
                    if os.path.isdir(target):
                        skipped.append(Skipped(relative_path, "symlinked folder, not followed"))
                    elif ignores.ignored(entry.path, is_dir=False):
                        continue
                    elif not _is_within(Path(target), self.root):
                        skipped.append(Skipped(relative_path, "symlink points outside the workspace"))
                    elif (broken := _unfollowable_link(entry.path)) is not None:
                        skipped.append(Skipped(relative_path, broken))
                    else:
                        files.append(relative_path)
                elif entry.is_dir(follow_symlinks=False):
                    name = entry.name
                    if name in EXCLUDED_DIR_NAMES or name.endswith(".egg-info"):
                        continue
                    if ignores.ignored(entry.path, is_dir=True):
                        continue
                    stack.append(entry.path)
                elif entry.is_file(follow_symlinks=False) and not ignores.ignored(entry.path, is_dir=False):
                    files.append(relative_path)
        return ScanResult(sorted(files), sorted(skipped, key=lambda s: s.path), folders)


def _unfollowable_link(path: str) -> str | None:
    """Why a symlink inside the workspace cannot be read as a file (dangling, a loop, a link to
    a FIFO or device), or None: every command that lists the workspace would otherwise stat or
    read it and fail (or, on a FIFO, wait for ever)."""
    try:
        status = os.stat(path)
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "symlink loop (following it leads back to a symlink), not followed"
        if error.errno in (errno.ENOENT, errno.ENOTDIR):
            return f"dangling symlink (its target {os.readlink(path)} does not exist), not followed"
        return f"symlink that cannot be followed ({error.strerror or error}), not followed"
    if not S_ISREG(status.st_mode):
        return "symlink to something that is not a regular file, not followed"
    return None


def decode_source(relative: str, raw: bytes, mtime: float) -> SourceFile:
    """Check and decode a file's bytes; refuse binary and non-UTF-8 content with the reason."""
    if b"\x00" in raw[:_BINARY_SNIFF_BYTES]:
        raise UnreadableFile(relative, "binary file (it contains NUL bytes)")
    has_bom = raw.startswith(_UTF8_BOM)
    data = raw[len(_UTF8_BOM):] if has_bom else raw
    encoding = "utf-8"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        declared = _declared_encoding(relative, data)
        if declared is None:
            line = data.count(b"\n", 0, error.start) + 1
            raise UnreadableFile(
                relative,
                f"not valid UTF-8 (byte 0x{data[error.start]:02x} on line {line}), and it declares no other encoding "
                "(a Python file may, with a PEP 263 coding line)",
            ) from error
        encoding, text = declared
        data = text.encode("utf-8")
    return SourceFile(
        path=relative,
        data=data,
        text=text,
        has_bom=has_bom,
        newline=_dominant_newline(data),
        sha256=hashlib.sha256(raw).hexdigest(),
        mtime=mtime,
        size=len(raw),
        language=language_of(relative),
        encoding=encoding,
    )


_CODING_LINE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


def _declared_encoding(relative: str, data: bytes) -> tuple[str, str] | None:
    """(codec name, text) for a Python file whose first or second line declares its encoding
    (PEP 263) and decodes with it; None otherwise."""
    if not relative.endswith((".py", ".pyi")):
        return None
    for line in data.split(b"\n", 2)[:2]:
        match = _CODING_LINE.match(line)
        if match is None:
            continue
        try:
            codec = codecs.lookup(match.group(1).decode("ascii")).name
            return codec, data.decode(codec)
        except (LookupError, UnicodeDecodeError) as error:
            raise UnreadableFile(relative, f"declares the encoding {match.group(1).decode('ascii', 'replace')}, "
                                           f"but cannot be read with it ({error})") from None
    return None


class _RealFolders:
    """``os.path.realpath`` for paths that share folders, each folder resolved once: a path's
    real form is its folder's real form joined with its name, unless the name is a link."""

    def __init__(self) -> None:
        self._folders: dict[str, str] = {}

    def real_path(self, path: str) -> str:
        parent, name = os.path.split(path)
        if not name or parent == path:
            return os.path.realpath(path)
        folder = self._folders.get(parent)
        if folder is None:
            folder = self._folders[parent] = self.real_path(parent)
        joined = os.path.join(folder, name)
        return os.path.realpath(joined) if os.path.islink(joined) else joined


def read_bytes(path: str) -> bytes:
    """A file's bytes through the descriptor calls themselves (OSError as ``open`` raises it): a
    rename reads every file of the project once, and ``open()``'s file objects cost half again
    as much as the reads."""
    descriptor = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = []
        while chunk := os.read(descriptor, _READ_CHUNK):
            chunks.append(chunk)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    finally:
        os.close(descriptor)


_READ_CHUNK = 1 << 20


class _LineStartsByContent:
    """Line starts of recently read contents, by the hash of their bytes (which fixes the text),
    least recently used dropped first once they hold more than ``limit`` offsets in all."""

    def __init__(self, limit: int = 2_000_000) -> None:
        self._limit = limit
        self._held = 0
        self._starts: OrderedDict[str, list[int]] = OrderedDict()
        self._lock = threading.Lock()  # the passes of a rename and a server's thread may both read

    def get(self, sha256: str, text: str) -> list[int]:
        with self._lock:
            found = self._starts.get(sha256)
            if found is not None:
                self._starts.move_to_end(sha256)
                return found
        found = line_starts(text)
        with self._lock:
            if sha256 not in self._starts:
                self._starts[sha256] = found
                self._held += len(found)
                while self._held > self._limit and len(self._starts) > 1:
                    self._held -= len(self._starts.popitem(last=False)[1])
        return found


_LINE_STARTS = _LineStartsByContent()


def _file_uri_path(uri: str) -> str:
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost") or not parsed.path:
        raise UnsafePath(f"{uri} is not a local file URI; give a path relative to the workspace root")
    return unquote(parsed.path)


def _dominant_newline(data: bytes) -> str:
    if b"\r" not in data:
        return "\n"  # the usual case, found by one memchr instead of three counts of the whole file
    crlf = data.count(b"\r\n")
    lf = data.count(b"\n") - crlf
    cr = data.count(b"\r") - crlf
    if crlf >= lf and crlf >= cr and crlf > 0:
        return "\r\n"
    if cr > lf:
        return "\r"
    return "\n"


def _is_within(path: Path | str, root: Path | str) -> bool:
    """Lexical containment of two normalised absolute paths (strings: Path.parents is slow)."""
    inner, outer = str(path), str(root)
    return inner == outer or inner.startswith(outer.rstrip(os.sep) + os.sep)


def _relative_to(inner: str, root: str) -> str:
    """``inner`` (a normalised absolute path within ``root``) relative to it, ``/``-separated; "." for the root."""
    if inner == root:
        return "."
    relative = inner[len(root.rstrip(os.sep)) + 1:]
    return relative.replace(os.sep, "/") if os.sep != "/" else relative


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB"


class _IgnoreRules:
    """The .gitignore files met so far while walking, each applied relative to its own folder.

    Limitation: a negation (``!pattern``) re-includes only paths that the
    same file excluded; git applies it across files too, which is rare.
    """

    def __init__(self, root: str) -> None:
        self._specs: list[tuple[str, pathspec.PathSpec]] = []
        exclude = os.path.join(root, ".git", "info", "exclude")
        if os.path.isfile(exclude):
            self._add(root, exclude)

    def load(self, directory: str) -> None:
        self._add(directory, os.path.join(directory, ".gitignore"))

    def _add(self, base: str, file: str) -> None:
        with open(file, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
        self._specs.append((base + os.sep, pathspec.GitIgnoreSpec.from_lines(lines)))

    def ignored(self, path: str, *, is_dir: bool) -> bool:
        for base, spec in self._specs:
            if path.startswith(base):
                relative = path[len(base):].replace(os.sep, "/") + ("/" if is_dir else "")
                if spec.match_file(relative):
                    return True
        return False
