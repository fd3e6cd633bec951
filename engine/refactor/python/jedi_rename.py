"""jedi's scope-aware rename (the Python fallback when no server answers), on the bytes the engine read.

jedi parses through parso, whose caches (in memory and on disk) are keyed by path and trusted by
modification time. A file whose content changed while its mtime did not move forward (``cp -a``,
``git checkout`` within a second, tools that keep mtimes) is then renamed from an old tree, and its
"new" text would write the old content back. So:

- parso's disk cache lives in a folder of this process's own (never the user's shared cache,
  which concurrent processes also raced on: "Ran out of input"), emptied before each rename;
- its in-memory entries for the workspace's files are dropped before each rename;
- every file jedi changes is checked to have been parsed from exactly the text the engine reads
  now; a mismatch is refused, never written.

jedi also stops searching for references after parsing 30 files
(``jedi.inference.references._PARSED_FILE_LIMIT``), silently: a rename in a larger project
would miss every use past them. The limit is lifted (as for jedi-language-server), and the
2,000-file limit on files opened is raised to the workspace's size.
"""

from __future__ import annotations

import atexit
import difflib
import functools
import os
import re
import shutil
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from engine.edits.model import FileChange, WorkspaceEdit
from engine.errors import EditsOutsideWorkspace, Refused
from engine.refactor.pass_protocol import RenameUnavailable
from engine.answers import TextEdit
from engine.positions import Position, Range, split_lines
from engine.edits.text import line_edits
from engine.settings import workspace_python_trust
from engine.source_roots import source_roots
from engine.workspace import Workspace

_BOM = "\ufeff"
_jedi_lock = threading.Lock()
"""jedi's settings and parso's caches are process-wide: one rename through them at a time."""


class SourceChangedUnderJedi(Refused):
    code = "stale_plan"


def jedi_rename(workspace: Workspace, file: str, position: Position, new_name: str) -> WorkspaceEdit:
    import jedi  # the fallback only: loading jedi costs time the server path does not need

    source = workspace.read(file)
    with _jedi_lock:
        _private_fresh_cache(workspace.root)
        _unlimited_reference_search()
        script = jedi.Script(code=source.text, path=str(workspace.root / file), project=_project(workspace),
                             environment=_environment(workspace))
        try:
            refactoring = script.rename(position.line + 1, position.column, new_name=new_name)
            changed_files = sorted(refactoring.get_changed_files().items())
            renames = refactoring.get_renames()
        except Exception as error:  # noqa: BLE001 - jedi raises its own RefactoringError and others
            raise RenameUnavailable(f"jedi cannot rename at {file}:{position.line + 1}:{position.column + 1}: {error}") from None
        if renames:
            raise RenameUnavailable("jedi's rename would also move files; use rename-file for that")
        outside = [str(path) for path, _changed in changed_files if not Path(path).resolve().is_relative_to(workspace.root)]
        if outside:
            raise EditsOutsideWorkspace(outside, f"jedi's rename at {file}:{position.line + 1}:{position.column + 1}")
        changes = []
        for path, changed in changed_files:
            relative = Path(path).resolve().relative_to(workspace.root).as_posix()
            before = workspace.read(relative)
            if _parsed_text(changed) != before.text:
                raise SourceChangedUnderJedi(
                    f"jedi parsed a different version of {relative} than the one on disk (it changed while the rename "
                    "was planned, or a cache held an older copy); nothing was changed: re-run the rename"
                )
            changes.append(FileChange(relative, word_edits(before.text, changed.get_new_code()), before.sha256))
    if not changes:
        raise RenameUnavailable(f"nothing to rename at {file}:{position.line + 1}:{position.column + 1}")
    return WorkspaceEdit(tuple(changes))


def jedi_definitions(workspace: Workspace, places: list[tuple[str, Position]], *, infer: bool = False) -> list[set[tuple[str, int, int]]]:
    """Per place (file, position of a name), where jedi's ``goto`` lands: ``(file, line, column)``
    of each definition (0-based; the file relative to the workspace, or absolute outside it, as
    ``random.choice`` is), empty when jedi cannot follow it. ``infer``: where the value the name
    holds is defined instead (``serializer.signer`` → the class ``Signer``). Every file is parsed
    from the text the engine reads, through the same private cache as a rename."""
    import jedi

    found: list[set[tuple[str, int, int]]] = []
    root = workspace.root
    with _jedi_lock:
        _private_fresh_cache(root)
        project, environment = _project(workspace), _environment(workspace)
        scripts: dict[str, Any] = {}
        for path, position in places:
            if path not in scripts:
                scripts[path] = jedi.Script(code=workspace.read(path).text, path=str(root / path), project=project,
                                            environment=environment)
            try:
                script = scripts[path]
                names = (script.infer if infer else script.goto)(position.line + 1, position.column)
            except Exception:  # noqa: BLE001 - jedi's inference errors mean "cannot follow"
                names = []
            landed = set()
            for name in names:
                module = name.module_path
                if module is None or name.line is None or name.column is None:
                    continue
                resolved = Path(module).resolve()
                inside = resolved.is_relative_to(root)
                landed.add((resolved.relative_to(root).as_posix() if inside else str(resolved), name.line - 1, name.column))
            found.append(landed)
    return found


_TOKENS = re.compile(r"\w+|[^\w]+")


def word_edits(before: str, after: str) -> tuple[TextEdit, ...]:
    """The edits turning ``before`` into ``after`` as the words that changed (a rename's), so that
    later passes see exactly which names the rename covered; whole lines where lines were added
    or removed."""
    old_lines, new_lines = split_lines(before), split_lines(after)
    if len(old_lines) != len(new_lines):
        return line_edits(before, after)
    edits = []
    for number, (old, new) in enumerate(zip(old_lines, new_lines)):
        if old == new:
            continue
        old_tokens, new_tokens = _TOKENS.findall(old), _TOKENS.findall(new)
        old_starts = [0]
        for token in old_tokens:
            old_starts.append(old_starts[-1] + len(token))
        matcher = difflib.SequenceMatcher(a=old_tokens, b=new_tokens, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag != "equal":
                span = Range(Position(number, old_starts[i1]), Position(number, old_starts[i2]))
                edits.append(TextEdit(span, "".join(new_tokens[j1:j2])))
    return tuple(edits)


def jedi_script(workspace: Workspace, file: str, text: str) -> Any:
    """A jedi script over ``text`` as the workspace's ``file``, with the project and environment
    a rename would use (for questions other passes ask jedi: what a class's base resolves to).
    Callers hold ``jedi_lock``."""
    import jedi

    _private_fresh_cache(workspace.root)
    return jedi.Script(code=text, path=str(workspace.root / file), project=_project(workspace), environment=_environment(workspace))


jedi_lock = _jedi_lock
"""The lock every use of jedi in this process holds (its settings and parso's caches are shared)."""


def _project(workspace: Workspace) -> Any:
    """jedi's project for the workspace, with a ``src/`` layout's folder on its path (else the
    tests' ``import pkg`` is not followed to the sources); a trusted workspace's ``.venv`` is its
    environment, as basedpyright finds it."""
    import jedi

    root = workspace.root
    venv = root / ".venv"
    trusted = workspace_python_trust(root, workspace.config.trust_workspace_python)
    environment_path = str(venv) if trusted and (venv / "bin" / "python").is_file() else None
    return jedi.Project(str(root), added_sys_path=[str(path) for path in source_roots(root)], environment_path=environment_path)


def _environment(workspace: Workspace) -> Any:
    """None (the project's environment) for a trusted workspace; else codegraft's own
    interpreter. jedi's default would be ``$VIRTUAL_ENV``'s, which may be the workspace's own."""
    if workspace_python_trust(workspace.root, workspace.config.trust_workspace_python):
        return None
    return _own_interpreter()


@functools.cache
def _own_interpreter() -> Any:
    """One for the process: jedi keeps its helper process on the environment object."""
    from jedi.api.environment import SameEnvironment

    return SameEnvironment()


def _parsed_text(changed: Any) -> str:
    """The text jedi computed this file's rename on. jedi keeps the old tree only as a private
    attribute; without it the rename cannot be checked, so it is refused rather than trusted."""
    module = getattr(changed, "_module_node", None)
    if module is None:
        raise RenameUnavailable("this jedi version does not show which text it renamed, so its rename cannot be checked")
    text: str = module.get_code()
    return text[1:] if text.startswith(_BOM) else text


def _unlimited_reference_search() -> None:
    import jedi.inference.references as references

    references._PARSED_FILE_LIMIT = sys.maxsize
    references._OPENED_FILE_LIMIT = sys.maxsize
    if references._check_fs is not _passing_over_unreadable_files:
        global _jedi_check_fs
        _jedi_check_fs = references._check_fs
        references._check_fs = _passing_over_unreadable_files


_jedi_check_fs: Any = None


def _passing_over_unreadable_files(inference_state: Any, file_io: Any, regex: Any) -> Any:
    """jedi's reference search reads every ``.py`` under the project itself and lets any error
    but a missing file escape: a symlink loop named ``loop.py`` (ELOOP) failed the whole rename.
    A file it cannot read is passed over, as the workspace's scan skips it (with a note)."""
    try:
        return _jedi_check_fs(inference_state, file_io, regex)
    except OSError:
        return None


def _private_fresh_cache(root: Path) -> None:
    """Point parso's disk cache at this process's own empty folder, and forget what it holds in
    memory for files under ``root`` (the standard library's trees stay: they do not change)."""
    import jedi
    import parso.cache

    folder = _private_cache_folder()
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder, exist_ok=True)
    jedi.settings.cache_directory = folder
    prefix = str(root).rstrip(os.sep) + os.sep
    for by_path in parso.cache.parser_cache.values():
        for path in [p for p in by_path if str(p).startswith(prefix)]:
            del by_path[path]


@functools.lru_cache(maxsize=1)
def _private_cache_folder() -> str:
    folder = tempfile.mkdtemp(prefix=f"graft-jedi-{os.getpid()}-")
    atexit.register(shutil.rmtree, folder, True)
    return folder
