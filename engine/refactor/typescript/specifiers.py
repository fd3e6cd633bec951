"""A move's new import specifiers in the project's own style.

tsserver's "Move to file" (TypeScript 5.9) writes the importers' new specifiers with its default
preference whatever the client says (``getModuleSpecifier`` is called with no preferences):
"shortest", which with a ``baseUrl`` is ``'_internals/utils'``, a path that a test runner without
path mapping cannot resolve. In a project whose own imports are relative
(engine.refactor.typescript.style), each specifier the move writes that names a project file
through ``baseUrl`` is written relative to its importer instead.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from engine.answers import TextEdit
from engine.edits.model import FileChange, Operation, WorkspaceEdit
from engine.refactor.typescript.configs import root_compiler_options
from engine.refactor.typescript.style import import_specifier_preference, path_aliases

_WRITTEN_SPECIFIER = re.compile(r"""(\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*)(["'])([^"'\n]+)\2""")
_FILE_SUFFIXES = (".ts", ".tsx", ".d.ts", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")


def relative_specifiers(root: Path, edit: WorkspaceEdit, created: set[str]) -> tuple[WorkspaceEdit, list[str]]:
    """``edit`` with its new non-relative specifiers of project files made relative, when the
    project's imports are relative; and a note of each rewritten. ``created``: files the edit makes."""
    base = _base_url(root)
    if base is None or import_specifier_preference(root) != "relative":
        return edit, []
    notes: list[str] = []
    operations: list[Operation] = []
    for operation in edit.operations:
        if not isinstance(operation, FileChange):
            operations.append(operation)
            continue
        edits = []
        for text_edit in operation.edits:
            new_text = _rewritten(root, base, operation.path, text_edit.new_text, created, notes)
            edits.append(TextEdit(text_edit.range, new_text) if new_text != text_edit.new_text else text_edit)
        operations.append(FileChange(operation.path, tuple(edits), operation.expected_sha256))
    return (WorkspaceEdit(tuple(operations), edit.annotations), notes) if notes else (edit, [])


def aliased_specifiers(root: Path, edit: WorkspaceEdit, created: set[str]) -> tuple[WorkspaceEdit, list[str]]:
    """``edit`` with each new bare ``baseUrl`` specifier of a project file (``'src/deep/dest'``,
    which tsserver writes for a destination no alias covers) written the project's way, when its
    imports go through ``paths`` aliases (engine.refactor.typescript.style.path_aliases): through
    the alias that covers the file, else relative to its importer; and a note of each rewritten."""
    aliases = path_aliases(root)
    base = _base_url(root)
    if not aliases or base is None:
        return edit, []
    notes: list[str] = []
    operations: list[Operation] = []
    for operation in edit.operations:
        if not isinstance(operation, FileChange):
            operations.append(operation)
            continue
        edits = []
        for text_edit in operation.edits:
            new_text = _rewritten(root, base, operation.path, text_edit.new_text, created, notes, aliases)
            edits.append(TextEdit(text_edit.range, new_text) if new_text != text_edit.new_text else text_edit)
        operations.append(FileChange(operation.path, tuple(edits), operation.expected_sha256))
    return (WorkspaceEdit(tuple(operations), edit.annotations), notes) if notes else (edit, [])


def _through_alias(target: str, aliases: dict[str, str]) -> str | None:
    """``target`` (a workspace-relative path as a specifier names it) through the alias whose
    folder pattern covers it, or None."""
    for alias, pattern in aliases.items():
        prefix, suffix = pattern.split("*")
        prefix = "" if prefix in ("./", ".") else prefix
        if target.startswith(prefix) and target.endswith(suffix) and len(target) > len(prefix) + len(suffix):
            return alias.replace("*", target[len(prefix):len(target) - len(suffix)])
    return None


def _rewritten(root: Path, base: str, importer: str, text: str, created: set[str], notes: list[str],
               aliases: dict[str, str] | None = None) -> str:
    def relative(match: re.Match[str]) -> str:
        lead, quote, specifier = match.groups()
        if specifier.startswith((".", "/")):
            return match.group(0)
        if aliases and any(specifier.startswith(alias.split("*")[0]) for alias in aliases):
            return match.group(0)  # already through the project's alias
        target = posixpath.normpath(posixpath.join(base, specifier)) if base else specifier
        if not _is_project_file(root, target, created):
            return match.group(0)  # a package, or a path alias this pass does not follow
        written = _through_alias(target, aliases) if aliases else None
        if written is None:
            written = posixpath.relpath(target, posixpath.dirname(importer) or ".")
            written = written if written.startswith("../") else f"./{written}"
        why = "the project's imports go through its paths aliases" if aliases else "the project's own imports are relative"
        notes.append(f"{importer}: the server wrote '{specifier}' (through baseUrl); written '{written}', as {why}"
                     + (" and none covers that file" if aliases and not written.startswith(tuple(a.split('*')[0] for a in aliases))
                        else ""))
        return f"{lead}{quote}{written}{quote}"

    return _WRITTEN_SPECIFIER.sub(relative, text)


def _is_project_file(root: Path, target: str, created: set[str]) -> bool:
    stem = re.sub(r"\.(m|c)?jsx?$", "", target)
    candidates = [target, *(stem + suffix for suffix in _FILE_SUFFIXES), *(f"{stem}/index{s}" for s in _FILE_SUFFIXES)]
    return any(c in created or (root / c).is_file() for c in candidates if "node_modules" not in c)


def _base_url(root: Path) -> str | None:
    """The root config's ``baseUrl`` as a workspace-relative folder ("" for the root), or None."""
    options = root_compiler_options(root)
    base = options.get("baseUrl") if options is not None else None
    if not isinstance(base, str):
        return None
    normalized = posixpath.normpath(base)
    return "" if normalized == "." else normalized