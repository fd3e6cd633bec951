"""Moves outside Python: the server's move refactoring, else a Go move inside one package.

- A server that offers "Move to file" (typescript-language-server) computes the whole edit,
  importers included: source lsp.
- Go, same folder (same package): no reference names the file, so none needs rewriting;
  the declaration moves with its doc comment, the imports it uses are added to the
  destination's import block, and imports the source no longer uses are removed (Go
  refuses to compile unused imports): source ast.
- Anything else is refused with the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Callable

from engine.edits.model import CreateFile, FileChange, Operation, WorkspaceEdit
from engine.errors import DestinationMissing, Refused, ServiceUnavailable, UsageError
from engine.languages import SymbolMoves, language_of, profile_of
from engine.answers import ServerEdit, TextEdit
from engine.ports import LanguageServices
from engine.positions import Range, split_lines
from engine.refactor.plan import RefactorPlan
from engine.refactor.typescript.commonjs import commonjs_move_problem
from engine.symbols import Confidence, Source, Symbol
from engine.workspace import Workspace


class MoveUnavailable(Refused):
    code = "cannot_move"


def plan_other_move(
    workspace: Workspace, services: LanguageServices | None, use_server: bool, symbol: Symbol, dest: str, *, create: bool,
    importers: Callable[[list[str]], list[str]] | None = None,
) -> RefactorPlan:
    dest_path, absolute = workspace.resolve(dest)
    language = language_of(symbol.file)
    if language_of(dest_path) != language:
        raise UsageError(f"{dest_path} is not a {language} file like {symbol.file}")
    if dest_path == symbol.file:
        raise UsageError(f"{symbol.address} is already in {dest_path}")
    exists = absolute.is_file()
    if not exists and not create:
        raise DestinationMissing(f"{dest_path} does not exist; create it with the move", option="create")
    notes: list[str] = []
    if use_server and services is not None:
        commonjs = commonjs_move_problem((symbol.file, workspace.read(symbol.file).text),
                                         (dest_path, workspace.read(dest_path).text if exists else None))
        if commonjs is not None:
            raise MoveUnavailable(f"cannot move {symbol.address} to {dest_path}: {commonjs}")
        try:
            if importers is not None:
                services.show_importers([symbol.file], importers)  # their imports change with the move
            answer = services.move_to_file(workspace.read(symbol.file), _span(symbol), dest_path)
            edit = _from_server(workspace, answer.value, dest_path, exists)
            confidence = Confidence.HIGH if answer.complete else Confidence.MEDIUM
            return RefactorPlan("move", edit, Source.LSP, confidence, [f"from {answer.server}"])
        except ServiceUnavailable as error:
            notes.append(f"language server: {error.message}")
    moves = profile_of(symbol.file)
    same_package = moves is not None and moves.symbol_moves is SymbolMoves.SAME_PACKAGE
    if same_package and PurePosixPath(dest_path).parent == PurePosixPath(symbol.file).parent:
        return _go_move(workspace, symbol, dest_path, exists, notes)
    raise MoveUnavailable(
        f"cannot move {language} code from {symbol.file} to {dest_path} without a language server that offers a move"
        + (f" ({notes[0]})" if notes else "")
        + ("; moves within one folder (its package) need none" if same_package else "")
    )


def _span(symbol: Symbol) -> Range:
    start = symbol.doc_range.start if symbol.doc_range is not None and symbol.doc_range.start < symbol.range.start else symbol.range.start
    return Range(start, symbol.range.end)


def _from_server(workspace: Workspace, edit: ServerEdit, dest: str, dest_exists: bool) -> WorkspaceEdit:
    operations: list[Operation] = []
    if not dest_exists:
        operations.append(CreateFile(dest))
    per_file: dict[str, list[TextEdit]] = {}
    for file_edits in edit.files:
        per_file.setdefault(file_edits.file, []).extend(file_edits.edits)
    for path, edits in per_file.items():
        if path == dest and not dest_exists:
            operations.append(FileChange(path, tuple(edits), None))
            continue
        source = workspace.read(path)  # refuses anything outside the workspace
        operations.append(FileChange(source.path, tuple(edits), source.sha256))
    if edit.renamed or edit.deleted or any(c != dest for c in edit.created):
        raise MoveUnavailable("the server's move also creates, renames or deletes other files; nothing was changed")
    return WorkspaceEdit(tuple(operations))


# -- Go, inside one package ------------------------------------------------------------

_IMPORT_LINE = re.compile(r'^\s*(?:(?P<alias>[\w.]+)\s+)?"(?P<path>[^"]+)"\s*(?://.*)?$')
_PACKAGE = re.compile(r"^package\s+(\w+)", re.MULTILINE)


@dataclass(frozen=True)
class _GoImport:
    line: int
    alias: str | None
    path: str

    @property
    def name(self) -> str:
        """The identifier code uses for the package (by convention its path's last element)."""
        if self.alias:
            return self.alias
        last = self.path.rstrip("/").split("/")[-1]
        if re.fullmatch(r"v\d+", last) and "/" in self.path:
            last = self.path.rstrip("/").split("/")[-2]
        return last.replace("-", "_").split(".")[0]


_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_DECLARATION = re.compile(r"^(func|type|var|const)\b")


def _go_imports(lines: list[str]) -> tuple[list[_GoImport], int | None]:
    """The import specs of a Go file, and the line to add new specs before (a block's ``)``).
    Only the file's import declarations count: an ``import`` line inside a comment (a package
    doc showing how to import it) is text, and imports end at the first other declaration."""
    found, insert_at, inside = [], None, False
    code = _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), "\n".join(lines)).split("\n")
    for number, line in enumerate(code):
        stripped = line.strip()
        if not inside and _DECLARATION.match(line):
            break
        if inside:
            if stripped.startswith(")"):
                inside, insert_at = False, number
                continue
            match = _IMPORT_LINE.match(stripped)
            if match:
                found.append(_GoImport(number, match.group("alias"), match.group("path")))
        elif stripped.startswith("import ("):
            inside = True
        elif stripped.startswith("import "):
            match = _IMPORT_LINE.match(stripped[len("import "):])
            if match:
                found.append(_GoImport(number, match.group("alias"), match.group("path")))
    return found, insert_at


def _go_move(workspace: Workspace, symbol: Symbol, dest: str, exists: bool, notes: list[str]) -> RefactorPlan:
    source = workspace.read(symbol.file)
    lines = split_lines(source.text)
    span = _span(symbol)
    first, last = span.start.line, symbol.range.last_line
    moved = lines[first:last]
    rest = lines[:first] + lines[last:]
    package = _PACKAGE.search(source.text)
    dest_source = workspace.read(dest) if exists else None
    dest_text = dest_source.text if dest_source is not None else f"package {package.group(1) if package else 'main'}\n"
    dest_package = _PACKAGE.search(dest_text)
    if package is None or dest_package is None or package.group(1) != dest_package.group(1):
        raise MoveUnavailable(f"{dest} is not in package {package.group(1) if package else '?'}; a Go move must stay in its package")
    imports, _ = _go_imports(lines)
    code_of_moved = "\n".join(moved)
    needed = [spec for spec in imports if re.search(rf"\b{re.escape(spec.name)}\.", code_of_moved)]
    remaining_code = "\n".join(line for number, line in enumerate(rest) if not _is_import_line(rest, number))
    unused = {spec.line for spec in needed if not re.search(rf"\b{re.escape(spec.name)}\.", remaining_code)}
    # The source loses the declaration with the blank lines above it (or, first in a file, below
    # it), and the imports it no longer uses.
    if first > 0 and not lines[first - 1].strip():
        while first > 0 and not lines[first - 1].strip():
            first -= 1
    else:
        while last < len(lines) and not lines[last].strip():
            last += 1
    kept = [line for number, line in enumerate(lines) if not (first <= number < last) and number not in unused]
    new_source = "\n".join(_without_empty_import_block(kept)).rstrip("\n") + "\n"
    new_dest = _with_go_imports(dest_text, needed).rstrip("\n") + "\n\n" + "\n".join(moved).rstrip("\n") + "\n"
    # Imported here: LibCST's slow import would otherwise be paid by every TypeScript rename,
    # whose passes import this module for its refusal type.
    from engine.refactor.python.cst_edits import move_operations  # noqa: PLC0415

    operations = move_operations(source, new_source, dest, dest_source, new_dest)
    warnings = [*notes, "same Go package: no reference needs rewriting"]
    return RefactorPlan("move", WorkspaceEdit(tuple(operations)), Source.AST, Confidence.MEDIUM, warnings)


def _is_import_line(lines: list[str], number: int) -> bool:
    stripped = lines[number].strip()
    return stripped.startswith("import ") or (_IMPORT_LINE.match(stripped) is not None and stripped.startswith('"'))


def _without_empty_import_block(lines: list[str]) -> list[str]:
    out: list[str] = []
    for line in lines:
        if line.strip() == ")" and out and out[-1].strip() == "import (":
            out.pop()
            while out and not out[-1].strip() and len(out) > 1 and not out[-2].strip():
                out.pop()
            continue
        out.append(line)
    return out


def _with_go_imports(text: str, needed: list[_GoImport]) -> str:
    lines = split_lines(text)
    present, insert_at = _go_imports(lines)
    have = {(spec.alias, spec.path) for spec in present}
    specs = [f'{spec.alias + " " if spec.alias else ""}"{spec.path}"' for spec in needed if (spec.alias, spec.path) not in have]
    if not specs:
        return text
    if insert_at is not None:
        lines[insert_at:insert_at] = [f"\t{spec}" for spec in specs]
    else:
        package_line = next(i for i, line in enumerate(lines) if line.startswith("package "))
        block = ["", "import (", *[f"\t{spec}" for spec in specs], ")"]
        lines[package_line + 1:package_line + 1] = block
    return "\n".join(lines)
