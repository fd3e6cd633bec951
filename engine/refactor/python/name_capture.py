"""Whether a rename would change what a name means: the planned Python texts, scope by scope.

A sibling-definition check misses most clashes seen on real code: a name the module imports
(``from .i18n import _ngettext``, then renaming a function to ``_ngettext``), a builtin the scope
uses (renaming a function to ``len`` when its body calls ``len()``), a loop variable of the
function whose parameter is renamed. Python's own scope analysis (``symtable``) of each touched
file, before and after the planned edit, shows all of them:

- **merged**: in one scope both names were in use before, and the old one is gone after: two
  bindings (or a binding and a builtin) have become one name;
- **captured**: the new name was only *read* in a scope (a builtin, a global, a name from an
  enclosing function) and the rename binds it in that scope or one enclosing it: those reads
  would then mean the renamed symbol.
- **instance attributes**: a renamed method or class attribute whose class already assigns
  ``self.<new>``.

Only files whose text already holds the new name are analysed, so a fresh name costs nothing.
"""

from __future__ import annotations

import ast
import re
import symtable
from dataclasses import dataclass

from engine.edits.model import FileChange, WorkspaceEdit
from engine.edits.text import apply_text_edits
from engine.refactor.corpus import Corpus


@dataclass(frozen=True)
class Capture:
    file: str
    line: int
    """1-based line of the scope (or of the first use of the new name in it)."""
    reason: str

    def message(self) -> str:
        return f"{self.file}:{self.line}: {self.reason}"


def name_captures(corpus: Corpus, edit: WorkspaceEdit, old: str, new: str) -> list[Capture]:
    word = re.compile(rf"(?<![\w]){re.escape(new)}(?![\w])")
    found: list[Capture] = []
    for operation in edit.operations:
        if not isinstance(operation, FileChange) or not operation.path.endswith((".py", ".pyi")):
            continue
        source = corpus.source(operation.path)
        # The plain substring test first: the pattern's look-behind keeps the regex engine from
        # searching for its literal, and tried at every offset it slowed every warm rename.
        if new not in source.text or not word.search(source.text):
            continue
        after = apply_text_edits(source.text, operation.edits, source.newline, source.line_starts)
        found += _file_captures(operation.path, source.text, after, old, new)
    return found


def _file_captures(path: str, before: str, after: str, old: str, new: str) -> list[Capture]:
    try:
        before_table = symtable.symtable(before, path, "exec")
        after_table = symtable.symtable(after, path, "exec")
        before_tree = ast.parse(before, path)
    except (SyntaxError, ValueError):
        return []  # a file that does not compile is the syntax check's to refuse
    pairs = _paired(before_table, after_table)
    if pairs is None:
        return []
    found: list[Capture] = []
    for index, (was, now) in enumerate(pairs):
        names_before = set(was.get_identifiers())
        if new not in names_before:
            continue
        symbol = was.lookup(new)
        where = _first_use(before_tree, new, was.get_lineno())
        if old in names_before and old not in set(now.get_identifiers()):
            found.append(Capture(path, where, f"{new} is already {_role(symbol, was)} in {_scope(was)}; "
                                              f"renaming {old} there would make the two one name"))
        elif not _binds(symbol) and _newly_bound_around(pairs, index, new):
            found.append(Capture(path, where, f"{new} here means {_meaning(symbol)}; after the rename it would "
                                              f"mean the renamed {old} instead"))
    found += _instance_attributes(path, before_tree, pairs, old, new)
    return found


def _paired(before: symtable.SymbolTable, after: symtable.SymbolTable) -> list[tuple[symtable.SymbolTable, symtable.SymbolTable]] | None:
    """Scopes of the two texts side by side: a rename neither adds nor removes a scope, so
    their children line up; None when they do not (the edit did more than rename)."""
    pairs = [(before, after)]
    if before.get_type() != after.get_type() or len(before.get_children()) != len(after.get_children()):
        return None
    for was, now in zip(before.get_children(), after.get_children()):
        inner = _paired(was, now)
        if inner is None:
            return None
        pairs += inner
    return pairs


def _newly_bound_around(pairs: list[tuple[symtable.SymbolTable, symtable.SymbolTable]], index: int, new: str) -> bool:
    """The rename binds ``new`` in this scope or in one whose names it sees (an enclosing function or the module)."""
    scope = pairs[index][0]
    for was, now in pairs:
        if was is not scope and not _encloses(was, scope):
            continue
        if was.get_type() == "class" and was is not scope:
            continue  # a class body's names are not visible inside its methods
        bound_after = new in set(now.get_identifiers()) and _binds(now.lookup(new))
        bound_before = new in set(was.get_identifiers()) and _binds(was.lookup(new))
        if bound_after and not bound_before:
            return True
    return False


def _encloses(outer: symtable.SymbolTable, inner: symtable.SymbolTable) -> bool:
    return any(child is inner or _encloses(child, inner) for child in outer.get_children())


def _binds(symbol: symtable.Symbol) -> bool:
    return symbol.is_assigned() or symbol.is_imported() or symbol.is_parameter() or symbol.is_namespace()


def _role(symbol: symtable.Symbol, table: symtable.SymbolTable) -> str:
    if symbol.is_imported():
        return "imported"
    if symbol.is_parameter():
        return "a parameter"
    if symbol.is_namespace():
        return "a function or class defined"
    if symbol.is_assigned():
        return "a local variable" if table.get_type() == "function" else "assigned"
    return f"used as {_meaning(symbol)}"


def _meaning(symbol: symtable.Symbol) -> str:
    if symbol.is_free():
        return "a name of an enclosing function"
    return "the builtin or module-level name of that name"


def _scope(table: symtable.SymbolTable) -> str:
    if table.get_type() == "module":
        return "the module"
    return f"{table.get_type()} {table.get_name()} (line {table.get_lineno()})"


def _first_use(tree: ast.AST, name: str, from_line: int) -> int:
    lines = [
        node.lineno for node in ast.walk(tree)
        if getattr(node, "lineno", 0) >= from_line and (
            (isinstance(node, ast.Name) and node.id == name) or (isinstance(node, ast.arg) and node.arg == name)
            or (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name)
            or (isinstance(node, ast.alias) and (node.asname or node.name.split(".")[0]) == name)
        )
    ]
    return min(lines) if lines else max(from_line, 1)


def _instance_attributes(
    path: str, tree: ast.Module, pairs: list[tuple[symtable.SymbolTable, symtable.SymbolTable]], old: str, new: str
) -> list[Capture]:
    """A class member renamed to a name its methods already assign on ``self``."""
    renamed_in = {was.get_lineno() for was, now in pairs
                  if was.get_type() == "class" and old in set(was.get_identifiers()) and old not in set(now.get_identifiers())}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.lineno in renamed_in:
            for inner in ast.walk(node):
                if (isinstance(inner, ast.Attribute) and inner.attr == new and isinstance(inner.ctx, ast.Store)
                        and isinstance(inner.value, ast.Name) and inner.value.id == "self"):
                    found.append(Capture(path, inner.lineno, f"class {node.name} already sets self.{new}; renaming its "
                                                             f"{old} to {new} would make the two one attribute"))
                    break
    return found
