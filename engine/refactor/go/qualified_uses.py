"""An exported Go name's qualified uses in files outside gopls's build configuration.

A file that gopls does not load (``//go:build ignore``: a plugin a test builds, a generator; a
file for another GOOS) may still import the renamed name's package and use the name through it:
``xxhash.Sum64String(s)``. Such a use can only be the renamed symbol (a package-level name,
reached through the package's import), so it is renamed with the rest, and said. An unqualified
use there (the package's own file for another build) may be another declaration of the same
name: it is left to other_builds, which names it.
"""

from __future__ import annotations

import re
from dataclasses import replace

from engine.answers import TextEdit
from engine.edits.model import FileChange, WorkspaceEdit
from engine.positions import Position, Range
from engine.refactor.corpus import Corpus
from engine.refactor.go.other_builds import OtherBuildUse
from engine.refactor.plan import RefactorPlan

_NOT_CODE = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|`[^`]*`|'(?:\\.|[^'\\\n])*'", re.S)
_MODULE = re.compile(r"^module\s+(\S+)", re.M)
_PACKAGE = re.compile(r"^package\s+(\w+)", re.M)


def import_path(corpus: Corpus, folder: str) -> str | None:
    """The import path of the package in ``folder``: the nearest go.mod's module path and the rest."""
    parts = folder.split("/") if folder else []
    for depth in range(len(parts), -1, -1):
        base = "/".join(parts[:depth])
        data = corpus.bytes_of(f"{base}/go.mod" if base else "go.mod")
        if data is None:
            continue
        module = _MODULE.search(data.decode("utf-8", errors="replace"))
        if module is None:
            return None
        rest = "/".join(parts[depth:])
        return f"{module.group(1).strip(chr(34))}/{rest}" if rest else module.group(1).strip('"')
    return None


def _local_name(code_text: str, path: str, package: str) -> str | None:
    """The name ``code_text``'s file refers to the package at ``path`` by, or None when it does not
    import it. Only the imports count: they end at the first other declaration."""
    declaration = re.search(r"^(func|type|var|const)\b", code_text, re.M)
    imports = code_text[:declaration.start()] if declaration else code_text
    for match in re.finditer(rf'(?:^|[\s(;])(?:(?!import\b)(\w+|\.)\s+)?"{re.escape(path)}"', imports):
        alias = match.group(1)
        return None if alias in (".", "_") else alias or package
    return None


def renamed(plan: RefactorPlan, corpus: Corpus, uses: list[OtherBuildUse], declaration: str, old_name: str,
            new_name: str) -> tuple[RefactorPlan, list[OtherBuildUse]]:
    """The plan with the qualified uses of ``old_name`` (declared in the file ``declaration``) in
    ``uses``' files renamed, and the uses that are left (unqualified ones)."""
    if not old_name[:1].isupper():
        return plan, uses
    folder = declaration.rpartition("/")[0]
    path = import_path(corpus, folder)
    package = _PACKAGE.search(corpus.source(declaration).text)
    if path is None or package is None:
        return plan, uses
    changes, left, said = [], [], []
    for use in uses:
        source = corpus.source(use.path)
        text = source.text
        # Strings kept as they are: the import path is one.
        code = _NOT_CODE.sub(lambda m: m.group() if m.group().startswith('"') else re.sub(r"[^\n]", " ", m.group()), text)
        local = _local_name(code, path, package.group(1))
        if local is None:
            left.append(use)
            continue
        masked = _NOT_CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
        qualified = list(re.finditer(rf"(?<![\w.]){re.escape(local)}\s*\.\s*({re.escape(old_name)})(?!\w)", masked))
        edits = []
        for match in qualified:
            line = masked.count("\n", 0, match.start(1))
            column = match.start(1) - (masked.rfind("\n", 0, match.start(1)) + 1)
            edits.append(TextEdit(Range(Position(line, column), Position(line, column + len(old_name))), new_name))
        if edits:
            changes.append(FileChange(use.path, tuple(edits), source.sha256))
            said.append(f"{use.path}:{','.join(str(e.range.start.line + 1) for e in edits[:5])}")
        starts = {match.start(1) for match in qualified}
        rest = tuple(sorted({masked.count("\n", 0, match.start()) + 1
                             for match in re.finditer(rf"(?<![\w$]){re.escape(old_name)}(?![\w$])", masked)
                             if match.start() not in starts}))
        if rest:
            left.append(replace(use, lines=rest))
    if not changes:
        return plan, uses
    edit = WorkspaceEdit((*plan.edit.operations, *changes), plan.edit.annotations)
    note = (f"renamed {old_name} where files outside the server's build configuration use it through its package's "
            f"import: {'; '.join(said)}")
    return replace(plan, edit=edit, warnings=[*plan.warnings, note]), left
