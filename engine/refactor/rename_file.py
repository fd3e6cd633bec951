"""Rename (move) a source file and update what imports it.

Where the import updates come from:
- Python: every import of the module rewritten on LibCST trees (see ``module_references``),
  the file's own relative imports recomputed from its new place, its ``.pyi`` stub moved
  along, and dotted strings (``mock.patch``) retargeted: source ast. (The server's answer
  is not used for Python: basedpyright's misses relative imports, see below.)
- Go, within one folder: nothing to update, a package is named by its folder;
- other languages: the language server's ``workspace/willRenameFiles`` when it offers it
  (typescript-language-server does): source lsp;
- otherwise refused: moving the file would leave its importers broken.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Callable

from engine.edits.model import FileChange, Operation, RenameFile, WorkspaceEdit
from engine.errors import DestinationMissing, ExtensionMismatch, FileNotInWorkspace, PackageInit, Refused, ServiceUnavailable, TargetExists, UsageError
from engine.graph.queries import GraphQueries
from engine.languages import FileMoves, language_of, profile_of
from engine.ports import LanguageServices
from engine.refactor.python.dotted_strings import retarget_dotted_strings
from engine.refactor.python.module_doctests import rewrite_doctest_imports
from engine.refactor.python.module_mentions import config_edits, documentation_mentions
from engine.refactor.python.module_references import rewrite_module_references
from engine.refactor.plan import RefactorPlan
from engine.refactor.python.cst_edits import ModuleName, file_change, parse
from engine.symbols import Confidence, Source
from engine.workspace import Workspace


class RenameFileUnavailable(Refused):
    code = "rename_unavailable"


def plan_rename_file(
    workspace: Workspace, queries: GraphQueries, services: LanguageServices | None, use_server: bool, old: str, new: str,
    importers: Callable[[list[str]], list[str]] | None = None,
) -> RefactorPlan:
    """``importers``: the files a server that answers only for open documents is shown first
    (by default the graph's importers of the file)."""
    old_path, new_path = _check_paths(workspace, old, new)
    language = language_of(old_path)
    kind = profile_of(old_path)
    moves = kind.file_moves if kind is not None else FileMoves.SERVER
    notes: list[str] = []
    if moves is FileMoves.PYTHON:
        # Measured: basedpyright's willRenameFiles leaves relative imports (`from . import m`,
        # `from .m import f`) and the moved file's own relative imports unchanged, without a
        # word; the LibCST rewrite covers them, and stubs and patch strings as well.
        return _python_rename(workspace, queries, old_path, new_path, notes)
    if moves is FileMoves.SAME_FOLDER_FREE and PurePosixPath(old_path).parent == PurePosixPath(new_path).parent:
        # Go imports name directories: a file renamed inside its package changes no import.
        edit = WorkspaceEdit((RenameFile(old_path, new_path),))
        return RefactorPlan("rename-file", edit, Source.AST, Confidence.HIGH, [f"same {language} package: no import names the file"])
    if use_server and services is not None:
        try:
            services.show_importers([old_path], importers or queries.importing_files)  # their imports change with the rename
            answer = services.will_rename_file(workspace.read(old_path), new_path)
            operations: list[Operation] = []
            for file_edits in answer.value.files:
                if not file_edits.edits:
                    continue
                source = workspace.read(file_edits.file)
                operations.append(FileChange(source.path, file_edits.edits, source.sha256))
            operations.append(RenameFile(old_path, new_path))
            confidence = Confidence.HIGH if answer.complete else Confidence.MEDIUM
            return RefactorPlan("rename-file", WorkspaceEdit(tuple(operations)), Source.LSP, confidence, [f"from {answer.server}"])
        except ServiceUnavailable as error:
            notes.append(f"language server: {error.message}")
    raise RenameFileUnavailable(
        f"no language server can update the imports of {old_path}"
        + (f" ({notes[0]})" if notes else "")
        + "; nothing was moved"
    )


def _check_paths(workspace: Workspace, old: str, new: str) -> tuple[str, str]:
    old_path, old_absolute = workspace.resolve(old)
    new_path, new_absolute = workspace.resolve(new)
    if not old_absolute.is_file():
        raise FileNotInWorkspace(f"{old_path} is not a file in the workspace" + (" (rename-file moves one module file)" if old_absolute.is_dir() else ""))
    if new_absolute.exists():
        raise TargetExists(f"{new_path} already exists")
    if not new_absolute.parent.is_dir():
        raise DestinationMissing(f"the folder of {new_path} does not exist; create it first")
    if language_of(old_path) != language_of(new_path) or old_path.endswith(".py") != new_path.endswith(".py"):
        raise ExtensionMismatch(f"{old_path} and {new_path} must have the same kind of extension")
    return old_path, new_path


def _binding_read_elsewhere(workspace: Workspace, queries: GraphQueries, importer: str, importer_module: str, old_last: str) -> bool:
    """Whether another file reads ``importer_last.old_last``: the importer's own binding of the old
    module taken as its attribute (packaging's tests patch ``tags._manylinux``). Renaming that
    binding would break them; it keeps its name instead."""
    importer_last = importer_module.rpartition(".")[2]
    if not importer_last:
        return False
    read = re.compile(rf"(?<![\w.]){re.escape(importer_last)}\.{re.escape(old_last)}\b")
    for path in queries.project.facts:
        if path == importer or not path.endswith(".py"):
            continue
        text = workspace.read(path).text
        if old_last in text and any(read.search(line) and not line.lstrip().startswith(("import ", "from "))
                                    for line in text.splitlines() if old_last in line):
            return True
    return False


def _python_rename(workspace: Workspace, queries: GraphQueries, old_path: str, new_path: str, notes: list[str]) -> RefactorPlan:
    """The LibCST rename of a module: importers, the file's own relative imports, stub, strings."""
    if old_path.endswith("__init__.py") or new_path.endswith("__init__.py"):
        raise PackageInit("rename-file moves a module file; to rename a package, rename its folder's modules one by one")
    workspace.read(old_path)  # a file that cannot be read as source is refused with the reason, not "not importable"
    old_name = queries.project.module_name(old_path)
    new_name = queries.project.module_name_for(new_path)
    if old_name is None or new_name is None:
        raise UsageError(f"{old_path if old_name is None else new_path} is not importable as a module (its path is not made of identifiers)")
    old_module, new_module = ModuleName(old_name, False), ModuleName(new_name, False)
    operations: list[Operation] = []
    moved = [(old_path, new_path)]
    stub = old_path[:-3] + ".pyi"
    if old_path.endswith(".py") and (workspace.root / stub).is_file():
        moved.append((stub, new_path[:-3] + ".pyi"))
    importers = _importers(workspace, queries, old_name, {p for p, _ in moved})
    for path in importers:
        source = workspace.read(path)
        here = ModuleName(queries.project.module_name_for(path) or "", path.endswith(("__init__.py", "__init__.pyi")))
        # The parent package's own binding is the module's attribute path: its chains are rewritten.
        parent = old_name.rpartition(".")[0]
        keep = here.dotted != parent and _binding_read_elsewhere(workspace, queries, path, here.dotted, old_name.rpartition(".")[2])
        rewritten = rewrite_module_references(parse(source), here, old_name, new_name, keep_binding=keep).code
        change = file_change(source, rewrite_doctest_imports(rewritten, old_name, new_name))
        if change is not None:
            operations.append(change)
    for before, after in moved:
        source = workspace.read(before)
        rewritten = rewrite_module_references(parse(source), new_module, old_name, new_name, moved_from=old_module).code
        change = file_change(source, rewrite_doctest_imports(rewritten, old_name, new_name))
        if change is not None:
            operations.append(change)
        operations.append(RenameFile(before, after))
    done = {*importers, *(before for before, _after in moved)}
    for path in sorted(p for p in queries.project.facts if p.endswith(".py") and p not in done):
        # Files that name the module only in their doctest examples.
        source = workspace.read(path)
        change = file_change(source, rewrite_doctest_imports(source.text, old_name, new_name)) if ">>>" in source.text else None
        if change is not None:
            operations.append(change)
    configured, config_notes = config_edits(workspace, old_name, new_name, old_path, new_path)
    operations.extend(configured)
    edit = retarget_dotted_strings(workspace, WorkspaceEdit(tuple(operations)), old_name, new_name, list(queries.project.facts))
    warnings = [*notes, *config_notes, *_dynamic_imports(workspace, queries, old_name)]
    documented = documentation_mentions(workspace, old_name)
    if documented:
        warnings.append(f"documentation that names {old_name} (not edited): {', '.join(documented[:10])}"
                        + (f" and {len(documented) - 10} more" if len(documented) > 10 else ""))
    if len(moved) > 1:
        warnings.append(f"moved its stub along: {moved[1][0]} -> {moved[1][1]}")
    return RefactorPlan("rename-file", edit, Source.AST, Confidence.HIGH if not notes else Confidence.MEDIUM, warnings)


def _importers(workspace: Workspace, queries: GraphQueries, module: str, exclude: set[str]) -> list[str]:
    """Python files that may import the module: they mention its last name (or import relatively)."""
    last = re.compile(rf"\b{re.escape(module.rsplit('.', 1)[-1])}\b")
    found = []
    for path in sorted(queries.project.facts):
        if path in exclude or not path.endswith((".py", ".pyi")):
            continue
        if last.search(workspace.read(path).text):
            found.append(path)
    return found


def _dynamic_imports(workspace: Workspace, queries: GraphQueries, module: str) -> list[str]:
    """Places that name the module in a way no import rewrite reaches (``__import__``, entry points)."""
    found = []
    pattern = re.compile(rf"(import_module|__import__)\(\s*[\"']{re.escape(module)}[\"']")
    for path in sorted(queries.project.facts):
        if not path.endswith(".py"):
            continue
        for number, line in enumerate(workspace.read(path).text.splitlines()):
            if pattern.search(line):
                found.append(f"{path}:{number + 1}: imports the module by name (updated in the string)")
    pyproject = workspace.root / "pyproject.toml"
    # Entry points (`pkg.mod:main`) are edited; a module named whole in a string (a tool's
    # per-module settings) is not code that imports it, and is only reported.
    if pyproject.is_file() and re.search(rf"[\"']{re.escape(module)}[\"']", pyproject.read_text(encoding="utf-8", errors="replace")):
        found.append(f"pyproject.toml names {module} in a setting: check it")
    return found
