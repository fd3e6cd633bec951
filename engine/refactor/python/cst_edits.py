"""LibCST helpers for Python refactorings that rewrite imports: module-name arithmetic,
import statements, ``__all__`` lists, and the edit that turns one text into another.

LibCST round-trips a file exactly, so a change made on its tree touches only the
lines it must; the result becomes line-level text edits, which the diff shows as
they are.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeAlias

import libcst as cst
from libcst.metadata import Scope

from engine.edits.model import CreateFile, FileChange, Operation
from engine.edits.text import line_edits
from engine.errors import Refused
from engine.workspace import SourceFile


class UnparsablePython(Refused):
    code = "unparsable_python"


_EMPTY = cst.Module(body=[])

TopLevelStatement: TypeAlias = cst.SimpleStatementLine | cst.BaseCompoundStatement
"""What a module's body holds (LibCST's ``BaseStatement`` does not declare ``leading_lines``)."""

ScopeMap: TypeAlias = Mapping[cst.CSTNode, Scope | None]
"""What ``MetadataWrapper.resolve(ScopeProvider)`` returns."""


def parse(source: SourceFile) -> cst.Module:
    try:
        return cst.parse_module(source.text)
    except cst.ParserSyntaxError as error:
        # Where Python itself puts the error (LibCST's position is its own parser's, often a line off).
        where, message = f"{error.raw_line}:{error.raw_column + 1}", error.message
        try:
            compile(source.text, source.path, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
        except SyntaxError as python_error:
            where, message = f"{python_error.lineno}:{python_error.offset}", python_error.msg
        except ValueError:
            pass
        raise UnparsablePython(
            f"{source.path}:{where}: not valid Python ({message}); fix the syntax error first, nothing was changed"
        ) from None


def code_of(node: cst.CSTNode) -> str:
    return _EMPTY.code_for_node(node)


def dotted(node: cst.BaseExpression | cst.ImportFrom | None) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = dotted(node.value)
        return f"{head}.{node.attr.value}" if head is not None else None
    return None


def bound_name(alias: cst.ImportAlias) -> str:
    """The name an import alias binds: ``c`` for ``a.b as c``, ``a`` for ``import a.b``."""
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return (dotted(alias.name) or "").split(".")[0]


def alias_as(alias: cst.ImportAlias) -> str | None:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return None


# -- module names ---------------------------------------------------------------


@dataclass(frozen=True)
class ModuleName:
    """A module's dotted name and whether it is a package (``__init__``), for relative imports."""

    dotted: str
    is_package: bool

    @property
    def package(self) -> list[str]:
        parts = self.dotted.split(".")
        return parts if self.is_package else parts[:-1]

    def absolute(self, level: int, module: str | None) -> str:
        """The module a (possibly relative) ``from`` import in this module names."""
        if level == 0:
            return module or ""
        package = self.package
        base = package[: len(package) - (level - 1)] if level > 1 else package
        return ".".join([*base, *([module] if module else [])])

    def spec_for(self, target: str, *, relative: bool) -> str:
        """How this module writes ``from <spec> import …`` for ``target`` (a module or a package):
        relative when asked and both share a package, else absolute."""
        if not relative:
            return target
        package, parts = self.package, target.split(".")
        common = 0
        while common < min(len(package), len(parts)) and package[common] == parts[common]:
            common += 1
        if common == 0:
            return target
        return "." * (len(package) - common + 1) + ".".join(parts[common:])


def import_module_of(statement: cst.ImportFrom) -> tuple[int, str | None]:
    level = len(statement.relative)
    return level, dotted(statement.module) if statement.module is not None else None


# -- statements -----------------------------------------------------------------


def from_import(spec: str, name: str, alias: str | None = None) -> cst.SimpleStatementLine:
    clause = f"{name} as {alias}" if alias else name  # `X as X` kept: an explicit re-export, in stubs above all
    return parse_simple_statement(f"from {spec} import {clause}\n")


def plain_import(module: str, alias: str | None = None) -> cst.SimpleStatementLine:
    return parse_simple_statement(f"import {module}{f' as {alias}' if alias else ''}\n")


def parse_simple_statement(
    code: str, config: cst.PartialParserConfig | None = None
) -> cst.SimpleStatementLine:
    """``code``, one line of simple statements (``cst.parse_statement`` may also answer a compound one)."""
    statement = cst.parse_statement(code) if config is None else cst.parse_statement(code, config)
    if not isinstance(statement, cst.SimpleStatementLine):
        raise TypeError(f"not a simple statement: {code!r}")
    return statement


def parse_small_statement(code: str) -> cst.BaseSmallStatement:
    """The one small statement ``code`` holds (an import, an assignment…)."""
    line = parse_simple_statement(code)
    if len(line.body) != 1:
        raise TypeError(f"not a single statement: {code!r}")
    return line.body[0]


def without_aliases(
    statement: cst.Import | cst.ImportFrom, drop: set[str]
) -> cst.Import | cst.ImportFrom | cst.RemovalSentinel:
    """The import without the aliases that bind the names in ``drop``; removed when none is left."""
    if isinstance(statement.names, cst.ImportStar):
        return statement
    kept = [alias for alias in statement.names if bound_name(alias) not in drop]
    if len(kept) == len(statement.names):
        return statement
    if not kept:
        return cst.RemovalSentinel.REMOVE
    if statement.names[-1] not in kept:
        # The last alias went: its successor at the end takes its (absent) trailing comma.
        kept[-1] = kept[-1].with_changes(comma=statement.names[-1].comma)
    if isinstance(statement, cst.ImportFrom):
        return statement.with_changes(names=kept)
    return statement.with_changes(names=kept)


def pruned_import_line(
    line: cst.SimpleStatementLine, drops: list[set[str] | None]
) -> cst.SimpleStatementLine | cst.RemovalSentinel:
    """``line`` with, from each import among its statements, the aliases binding the names of
    the matching entry of ``drops`` (None: left as it is); an import left with none goes, and
    the line with it when nothing is left. The line itself when nothing changed."""
    body: list[cst.BaseSmallStatement] = []
    for small, drop in zip(line.body, drops):
        if drop and isinstance(small, (cst.Import, cst.ImportFrom)):
            kept = without_aliases(small, drop)
            if isinstance(kept, cst.RemovalSentinel):
                continue
            small = kept
        body.append(small)
    if not body:
        return cst.RemovalSentinel.REMOVE
    if len(body) == len(line.body) and all(a is b for a, b in zip(body, line.body)):
        return line
    return line.with_changes(body=[*body[:-1], body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)])


def is_import_line(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
    )


def is_docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def import_insertion_index(body: Sequence[cst.BaseStatement]) -> int:
    """Where new module-level imports go: after the imports at the top of the module (and any
    ``if TYPE_CHECKING`` or ``try`` blocks among them), else after the docstring."""
    index = 1 if body and is_docstring(body[0]) else 0
    position = index
    for number in range(index, len(body)):
        statement = body[number]
        if is_import_line(statement):
            position = number + 1
        elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            break
    return position


def insert_top_level(module: cst.Module, statements: Sequence[TopLevelStatement]) -> cst.Module:
    if not statements:
        return module
    body = list(module.body)
    index = import_insertion_index(body)
    follower = body[index] if index < len(body) else None
    if follower is not None and not is_import_line(follower):
        # Imports before code: keep the blank lines PEP 8 asks for between them.
        body[index] = blank_lines_above(follower, 2 if is_definition(follower) else 1)
    if index > 0 and not is_import_line(body[index - 1]) and not statements[0].leading_lines:
        statements = [statements[0].with_changes(leading_lines=[cst.EmptyLine()]), *statements[1:]]
    return module.with_changes(body=[*body[:index], *statements, *body[index:]])


def is_definition(statement: cst.CSTNode) -> bool:
    """A top-level def or class: PEP 8 wants two blank lines around it."""
    return isinstance(statement, (cst.FunctionDef, cst.ClassDef))


def blank_lines_above(statement: TopLevelStatement, count: int) -> TopLevelStatement:
    """``statement`` with at least ``count`` blank lines above it (above its comments, which stay with it)."""
    lines = list(statement.leading_lines)
    blank = 0
    while blank < len(lines) and lines[blank].comment is None:
        blank += 1
    if blank >= count:
        return statement
    return statement.with_changes(leading_lines=[*(cst.EmptyLine() for _ in range(count - blank)), *lines])


# -- __all__ --------------------------------------------------------------------


def all_names(module: cst.Module) -> list[str] | None:
    """The strings of a module-level ``__all__ = [...]`` / ``(...)``, or None without one."""
    for statement in module.body:
        value = _all_value(statement)
        if value is not None:
            return [e.value.evaluated_value for e in value.elements if isinstance(e.value, cst.SimpleString)
                    and isinstance(e.value.evaluated_value, str)]
    return None


def _all_value(statement: cst.CSTNode) -> cst.List | cst.Tuple | None:
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    value: cst.BaseExpression | None
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and dotted(small.targets[0].target) == "__all__":
        value = small.value
    elif isinstance(small, (cst.AnnAssign, cst.AugAssign)) and dotted(small.target) == "__all__":
        value = small.value
    else:
        return None
    return value if isinstance(value, (cst.List, cst.Tuple)) else None


class AllEditor(cst.CSTTransformer):
    """Removes ``remove`` from and appends ``add`` to every module-level ``__all__`` list."""

    def __init__(self, remove: str | None = None, add: str | None = None) -> None:
        self.remove, self.add = remove, add
        self.changed = False
        self._target: cst.CSTNode | None = None

    def visit_Module(self, node: cst.Module) -> bool:
        for statement in node.body:
            value = _all_value(statement)
            if value is not None:
                self._target = value
        return True

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def leave_List(self, original: cst.List, updated: cst.List) -> cst.BaseExpression:
        return self._edit(original, updated)

    def leave_Tuple(self, original: cst.Tuple, updated: cst.Tuple) -> cst.BaseExpression:
        return self._edit(original, updated)

    def _edit(self, original: cst.List | cst.Tuple, updated: cst.List | cst.Tuple) -> cst.BaseExpression:
        if original is not self._target:
            return updated
        elements = list(updated.elements)
        if self.remove is not None:
            kept = [e for e in elements if not (isinstance(e.value, cst.SimpleString) and e.value.evaluated_value == self.remove)]
            if len(kept) != len(elements):
                if kept and elements[-1] not in kept:
                    kept[-1] = kept[-1].with_changes(comma=elements[-1].comma)
                elements = kept
        if self.add is not None and not any(
            isinstance(e.value, cst.SimpleString) and e.value.evaluated_value == self.add for e in elements
        ):
            quote = elements[0].value.value[0] if elements and isinstance(elements[0].value, cst.SimpleString) else '"'
            new = cst.Element(cst.SimpleString(f"{quote}{self.add}{quote}"))
            if elements:
                last = elements[-1]
                separator = _separator_of(elements)
                trailing = last.comma
                elements[-1] = last.with_changes(comma=separator)
                new = new.with_changes(comma=trailing)
            elif isinstance(updated, cst.Tuple):
                new = new.with_changes(comma=cst.Comma())
            elements.append(new)
        self.changed = self.changed or list(updated.elements) != elements
        return updated.with_changes(elements=elements)



def _separator_of(elements: Sequence[cst.BaseElement]) -> cst.Comma:
    """The comma style between a list's elements (``", "`` or a comma and a new line)."""
    for element in elements[:-1]:
        if isinstance(element.comma, cst.Comma):
            return element.comma
    return cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


# -- text edits -----------------------------------------------------------------


def file_change(source: SourceFile, new_text: str) -> FileChange | None:
    """Line-level edits turning the file into ``new_text``, or None when nothing changed."""
    if new_text == source.text:
        return None
    return FileChange(source.path, line_edits(source.text, new_text), source.sha256)


def move_operations(
    source: SourceFile, new_source: str, dest_path: str, dest_source: SourceFile | None, new_dest: str
) -> list[Operation]:
    """A move's edit of its source and its destination (created when it does not exist yet),
    leaving out a file the move does not change."""
    operations: list[Operation] = []
    source_change = file_change(source, in_line_style(new_source, source.newline))
    if source_change is not None:
        operations.append(source_change)
    if dest_source is None:
        # A new module takes the source's line endings (the moved code brings them), and ends a line.
        operations.append(CreateFile(dest_path, in_line_style(new_dest, source.newline)))
    else:
        dest_change = file_change(dest_source, in_line_style(new_dest, dest_source.newline))
        if dest_change is not None:
            operations.append(dest_change)
    return operations


_IMPORT_LINE = re.compile(r"^(?:from\s+(\.*)([\w.]*)\s+import\b|import\s+([\w.]+))")


def grouped_imports(text: str, package: str) -> str:
    """The file's leading import block with a blank line between groups (``__future__``, the
    standard library, third-party, this project: ``package``'s own and relative imports), as
    isort and most projects write them. Only blank lines are added; order is left alone."""
    lines = text.split("\n")
    out: list[str] = []
    previous: int | None = None
    in_block, open_parens = True, 0
    for line in lines:
        if in_block and open_parens == 0:
            match = _IMPORT_LINE.match(line)
            if match is not None:
                group = _import_group(match.group(1) or "", match.group(2) or match.group(3) or "", package)
                if previous is not None and group != previous and out and out[-1].strip():
                    out.append("")
                previous = group
                open_parens = line.count("(") - line.count(")")
            elif line.strip() and not line.lstrip().startswith("#") and previous is not None:
                in_block = False  # the first statement after the imports ends the block
        elif open_parens:
            open_parens += line.count("(") - line.count(")")
        out.append(line)
    return "\n".join(out)


def _import_group(dots: str, module: str, package: str) -> int:
    top = module.split(".")[0]
    if top == "__future__":
        return 0
    if dots or (package and top == package):
        return 3
    return 1 if top in sys.stdlib_module_names else 2


def in_line_style(text: str, newline: str) -> str:
    """``text`` with every line break ``newline`` and a final one: code moved between files with
    different endings (or a docstring's CRLF carried into an LF file) must not leave them mixed."""
    unified = text.replace("\r\n", "\n").replace("\r", "\n")
    if unified and not unified.endswith("\n"):
        unified += "\n"
    return unified if newline == "\n" else unified.replace("\n", newline)


def spliced(source: SourceFile, edits: Sequence[tuple[int, int, str]]) -> FileChange:
    """``source`` with each (start offset, end offset, text) put in place, as a change of its lines."""
    text = source.text
    after = text
    for start, end, replacement in sorted(edits, reverse=True):
        after = after[:start] + replacement + after[end:]
    return FileChange(source.path, line_edits(text, after), source.sha256)
