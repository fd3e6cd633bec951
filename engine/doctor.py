"""``graft doctor``: for each language family in the workspace, the server that would serve it and
what each operation and query does there, and how.

Every row is derived from what the code does, not written out by hand: the language's profile
(``engine/languages``: how symbols and files move, its grammar, whether the graph follows its
uses), and the port's :class:`~engine.ports.Serving` (which server the pool would choose, by
preference, version and trust, and that server's measured features). The policies it mirrors:
``engine/refactor/rename.py`` (server, else jedi for Python, else refused unless ``--text``),
``move_other.py`` and ``policy/move.py``, ``rename_file.py``, ``policy/delete.py``,
``symbol_edits.py``, ``engine/edits/syntax.py`` and ``verification.py``, ``graph/queries.py``.
Asking starts no language server.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from engine.languages import LANGUAGES, FileMoves, Language, SymbolMoves, profile_of
from engine.ports import Feature, LanguageServices, Serving
from engine.workspace import Workspace

YES, PARTLY, NO = "yes", "partly", "no"

_PROJECT_FILES = frozenset({"package.json", "tsconfig.json", "jsconfig.json"})
"""Files that make a folder a TypeScript or JavaScript project of its own."""


@dataclass(frozen=True)
class Capability:
    operation: str
    works: str
    """yes | partly | no"""
    how: str


@dataclass(frozen=True)
class TypeScriptProject:
    """A folder holding a package.json or a tsconfig/jsconfig, and the TypeScript that serves it."""

    folder: str
    own_version: str | None
    """The version in the nearest node_modules/typescript/package.json at or above it (None: none installed)."""
    served_by: str
    why: str


@dataclass(frozen=True)
class FamilyReport:
    family: str
    languages: tuple[str, ...]
    """The languageIds of the family that have files here (all of them with ``--all`` and no files)."""
    files: int
    serving: Serving
    capabilities: tuple[Capability, ...]
    typescript: tuple[TypeScriptProject, ...] = ()


@dataclass(frozen=True)
class Doctor:
    root: str
    trusted: bool
    families: tuple[FamilyReport, ...]


def diagnose(workspace: Workspace, services: LanguageServices | None, *, every_family: bool = False) -> Doctor:
    """One report per language family with files in the workspace (every family known with ``every_family``)."""
    listed = workspace.scan().files
    counts: dict[str, int] = {}
    present: dict[str, list[str]] = {}
    for path in listed:
        kind = profile_of(path)
        if kind is not None:
            counts[kind.family] = counts.get(kind.family, 0) + 1
            if kind.id not in present.setdefault(kind.family, []):
                present[kind.family].append(kind.id)
    families: list[FamilyReport] = []
    known = list(dict.fromkeys(language.family for language in LANGUAGES))
    present_first = [family for family in known if family in counts] + [family for family in known if family not in counts]
    for family in present_first:
        if family not in counts and not every_family:
            continue
        members = [language for language in LANGUAGES if language.family == family]
        ids = present.get(family) or [language.id for language in members]
        kind = next(language for language in members if language.id == ids[0])
        serving = services.serving(kind.id) if services is not None else Serving(
            kind.id, "no-services", detail="no language-server support is installed (the lsp_pool package is missing)")
        projects = (_typescript_projects(workspace.root, listed, services, kind.id, serving)
                    if family == "typescript" and family in counts else ())
        families.append(FamilyReport(family, tuple(sorted(ids, key=[m.id for m in members].index)), counts.get(family, 0),
                                     serving, capabilities(kind, serving), projects))
    return Doctor(str(workspace.root), workspace.config.trust_workspace_python, tuple(families))


def capabilities(kind: Language, serving: Serving) -> tuple[Capability, ...]:
    """What each operation and query does for files of ``kind`` when ``serving`` says who serves them."""
    return (_rename(kind, serving), _move(kind, serving), _rename_file(kind, serving), _replace_insert(kind, serving),
            _delete(kind, serving), _check(kind, serving), _graph(kind, serving))


def _has(serving: Serving, feature: Feature) -> bool:
    return serving.state == "ok" and feature in serving.features


def _without(serving: Serving, feature: Feature) -> str:
    """Why the server does not do ``feature`` here."""
    if serving.state != "ok":
        return f"no language server: {serving.state}"
    return serving.lacking.get(feature) or f"{serving.server} offers none"


def _rename(kind: Language, serving: Serving) -> Capability:
    if _has(serving, Feature.RENAME):
        passes = ", with codegraft's Python passes (keyword arguments, strings, doctests, ...)" if kind.graph_sees_uses else ""
        return Capability("rename", YES, f"{serving.server}'s rename{passes}")
    if kind.id == "python" and importlib.util.find_spec("jedi") is not None:
        return Capability("rename", YES, "jedi's scope-aware rename (medium confidence), with codegraft's Python passes")
    return Capability("rename", NO, "refused; --text renames identifier-bounded occurrences in same-language files "
                                    "(low confidence)")


def _move(kind: Language, serving: Serving) -> Capability:
    if kind.symbol_moves is SymbolMoves.PYTHON:
        return Capability("move", YES, "codegraft's own: the code, its imports and every importer rewritten, import-checked")
    if _has(serving, Feature.MOVE_TO_FILE):
        runtime = f" ({serving.runtime.name} {serving.runtime.version})" if serving.runtime is not None else ""
        by = f"\"Move to file\" from {serving.refactored_by}" if serving.refactored_by else \
            f"{serving.server}'s \"Move to file\"{runtime}"
        return Capability("move", YES, f"{by}, into an existing file")
    why = _without(serving, Feature.MOVE_TO_FILE)
    if kind.symbol_moves is SymbolMoves.SAME_PACKAGE:
        return Capability("move", PARTLY, f"within its package (folder): codegraft's own, imports carried; "
                                          f"across packages refused: no server move ({why})")
    return Capability("move", NO, f"refused: no server move ({why})")


def _rename_file(kind: Language, serving: Serving) -> Capability:
    if kind.file_moves is FileMoves.PYTHON:
        return Capability("rename-file", YES, "codegraft's own import rewriting (every import form, stubs along)")
    served = _has(serving, Feature.WILL_RENAME_FILES)
    if kind.file_moves is FileMoves.SAME_FOLDER_FREE:
        if served:
            return Capability("rename-file", YES, f"within its folder no import names the file; elsewhere "
                                                  f"{serving.server}'s willRenameFiles")
        return Capability("rename-file", PARTLY, "within its folder (no import names the file); elsewhere refused: no "
                                                 f"willRenameFiles ({_without(serving, Feature.WILL_RENAME_FILES)})")
    if served:
        return Capability("rename-file", YES, f"{serving.server}'s willRenameFiles updates the importers")
    return Capability("rename-file", NO, f"refused: no willRenameFiles ({_without(serving, Feature.WILL_RENAME_FILES)})")


def _parses(kind: Language) -> bool:
    """Whether codegraft has a tree-sitter grammar for ``kind`` (its wheel installed)."""
    return kind.grammar is not None and kind.rules is not None and importlib.util.find_spec(kind.grammar.module) is not None


def _replace_insert(kind: Language, serving: Serving) -> Capability:
    extents = "the syntax tree" if _parses(kind) else "regular expressions (low confidence)"
    if serving.state == "ok":
        extents = f"{serving.server}'s outline, else {extents}"
    return Capability("replace, insert", YES if _parses(kind) else PARTLY,
                      f"codegraft's own, on whole lines; symbol extents from {extents}")


def _delete(kind: Language, serving: Serving) -> Capability:
    if _has(serving, Feature.REFERENCES):
        return Capability("delete", YES, f"codegraft's own, refused while {serving.server} finds a reference outside it")
    if kind.graph_sees_uses:
        return Capability("delete", YES, "codegraft's own, refused while the graph finds a reference or a use by name")
    return Capability("delete", NO, "refused: the references cannot be checked without a language server")


def _check(kind: Language, serving: Serving) -> Capability:
    if not _parses(kind):
        syntax = ""
    elif kind.interpreter_parses:
        syntax = "the syntax (the interpreter's own parser)"
    else:
        syntax = "the syntax (tree-sitter)"
    if _has(serving, Feature.DIAGNOSTICS):
        also = f"; and {syntax}" if syntax else ""
        return Capability("check", YES, f"{serving.server}'s errors before and after, over the files written and their "
                                        f"importers{also}")
    if not syntax:
        return Capability("check", NO, "none: no server's errors, and no grammar parses these files")
    asked = (f"; {serving.server}'s diagnostics are asked for too, what it reports is not measured here"
             if serving.state == "ok" else "")
    return Capability("check", PARTLY, f"syntax only: {syntax}{asked}")


def _graph(kind: Language, serving: Serving) -> Capability:
    if kind.graph_sees_uses:
        return Capability("graph", YES, "callers, impact and dead code followed by codegraft's graph")
    if _has(serving, Feature.CALL_HIERARCHY):
        implementations = (", implementations from its textDocument/implementation"
                           if _has(serving, Feature.IMPLEMENTATION) else "")
        return Capability("graph", PARTLY, f"callers, callees and impact from {serving.server}'s call hierarchy"
                                           f"{implementations}; dead code not followed (the graph follows no uses here)")
    return Capability("graph", NO, "callers, impact and dead code not followed (graft graph refs asks the server)")


def _typescript_projects(root: Path, listed: list[str], services: LanguageServices | None, language: str,
                         serving: Serving) -> tuple[TypeScriptProject, ...]:
    """Each folder with a package.json or a tsconfig/jsconfig (the root when none has), its own
    TypeScript and what serves it: each project's own TypeScript picks its server (TypeScript 7's
    ``tsc --lsp``, else tsserver), so a monorepo may have both."""
    folders = sorted({str(PurePosixPath(path).parent) for path in listed if PurePosixPath(path).name in _PROJECT_FILES} or {"."})
    projects = []
    for folder in folders:
        here = services.serving(language, folder) if services is not None else serving
        served_by, why = _served_by(here)
        projects.append(TypeScriptProject(folder, _own_typescript(root, folder), served_by, why))
    return tuple(projects)


def _served_by(serving: Serving) -> tuple[str, str]:
    """What serves a TypeScript project, and why."""
    chosen_by = f"{serving.backend}; " if serving.backend else ""
    if serving.state != "ok":
        return "nothing", serving.detail
    if serving.runtime is None:
        name = f"{serving.server} {serving.version or ''}".strip()
        if serving.backend:
            return name, serving.backend
        return name, "no TypeScript was found for it to run"
    runtime = serving.runtime
    return (f"{serving.server} {serving.version or ''} on {runtime.name} {runtime.version} ({runtime.folder})",
            f"{chosen_by}{runtime.why}")


def _own_typescript(root: Path, folder: str) -> str | None:
    """The TypeScript version node would resolve from ``folder``: the nearest node_modules/typescript up to the root."""
    here = root / folder
    for parent in (here, *here.parents):
        manifest = parent / "node_modules" / "typescript" / "package.json"
        if manifest.is_file():
            try:
                version = json.loads(manifest.read_text(encoding="utf-8")).get("version")
            except (OSError, ValueError, AttributeError):
                return None
            return version if isinstance(version, str) else None
        if parent == root:
            break
    return _locked_typescript(here / "package-lock.json")


def _locked_typescript(lock: Path) -> str | None:
    """The TypeScript version the folder's npm lock file pins, when none is installed."""
    try:
        entry = json.loads(lock.read_text(encoding="utf-8"))["packages"]["node_modules/typescript"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    version = entry.get("version") if isinstance(entry, dict) else None
    return version if isinstance(version, str) else None
