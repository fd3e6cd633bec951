"""Re-exports a TypeScript move would leave pointing at the old module.

tsserver's "Move to file" updates the imports of the moved declaration but not a barrel's
re-export of it (``export { parse } from "./parse"``): the result fails ``tsc`` (TS2305). A barrel
that re-exports the whole old module (``export * from "./parse"``) silently stops exporting the
name, and what imports it through the barrel breaks. Each such re-export the move's edit leaves
as it is is found here, for the policy to refuse the move with the list.
"""

from __future__ import annotations

from typing import Callable

from tree_sitter import Node

from engine.edits.model import FileChange, WorkspaceEdit
from engine.refactor.typescript.clashes import ParsedFiles, module_file
from engine.workspace import Workspace


def stale_re_exports(workspace: Workspace, edit: WorkspaceEdit, source: str, dest: str, name: str,
                     importers: Callable[[list[str]], list[str]]) -> list[str]:
    """``file:line`` of each re-export of ``name`` from ``source`` that ``edit`` leaves unchanged."""
    parsed = ParsedFiles(workspace)
    edited = {op.path: op for op in edit.operations if isinstance(op, FileChange)}
    stale = []
    for path in importers([source]):
        found = parsed.get(path)
        if found is None:
            continue
        _source, root = found
        statements = [(s, s.child_by_field_name("source")) for s in root.named_children if s.type == "export_statement"]
        targets = [(s, module_file(parsed, path, specifier)) for s, specifier in statements if specifier is not None]
        star_of_dest = any(target == dest and _is_star(s) for s, target in targets)
        for statement, target in targets:
            if target != source or _edited(edited.get(path), statement.start_point[0], statement.end_point[0]):
                continue
            line = statement.start_point[0] + 1
            if _is_star(statement):
                if not star_of_dest:
                    stale.append(f"{path}:{line} (export * from the old module: {name} would no longer be exported)")
            elif any(_exported_name(specifier) == name for specifier in _specifiers(statement)):
                stale.append(f"{path}:{line} (re-exports {name} from the old module)")
    return stale


def _is_star(statement: Node) -> bool:
    return not any(child.type in ("export_clause", "namespace_export") for child in statement.named_children)


def _specifiers(statement: Node) -> list[Node]:
    clauses = [c for c in statement.named_children if c.type == "export_clause"]
    return [s for clause in clauses for s in clause.named_children]


def _exported_name(specifier: Node) -> str:
    name = specifier.child_by_field_name("name")
    return (name.text or b"").decode("utf-8", errors="replace") if name is not None else ""


def _edited(change: FileChange | None, first: int, last: int) -> bool:
    return change is not None and any(first <= e.range.start.line <= last for e in change.edits)
