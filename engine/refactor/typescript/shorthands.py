"""Object-literal shorthands (``{ height }``), which name a property and a variable at once.

Told not to keep old names as aliases (a real rename through barrels,
``providePrefixAndSuffixTextForRename: false``), tsserver renames ``{ height }`` to ``{ tall }``
whichever of the two is renamed: renaming the variable changed the object's key, which its
readers do not follow (a type error in TypeScript, silent in JavaScript); renaming the property
left ``{ tall }`` naming a variable that does not exist. Such a shorthand is written
``{ height: tall }`` when the variable is renamed and ``{ tall: height }`` when the property is.
"""

from __future__ import annotations

from engine.answers import TextEdit
from engine.edits.model import FileChange, Operation, WorkspaceEdit
from engine.refactor.typescript.clashes import ParsedFiles
from engine.refactor.typescript.scopes import FileScopes, Use
from engine.workspace import SourceFile, Workspace


def keep_shorthand_keys(workspace: Workspace, edit: WorkspaceEdit, old: str, new: str,
                        parsed: ParsedFiles | None = None) -> tuple[WorkspaceEdit, list[str]]:
    parsed = parsed or ParsedFiles(workspace)
    operations: list[Operation] = []
    notes: list[str] = []
    for operation in edit.operations:
        table = parsed.table(operation.path) if isinstance(operation, FileChange) else None
        # No shorthand in the file: its tree is not needed.
        found = parsed.get(operation.path) if isinstance(operation, FileChange) and table is not None and table.shorthands else None
        if not isinstance(operation, FileChange) or found is None:
            operations.append(operation)
            continue
        source, root = found
        edits = []
        for text_edit in operation.edits:
            start = source.line_starts[text_edit.range.start.line] + text_edit.range.start.column
            offset = len(source.text[:start].encode("utf-8"))
            node = root.descendant_for_byte_range(offset, offset + len(old.encode("utf-8")))
            if node is None or node.type != "shorthand_property_identifier" or text_edit.new_text != new:
                edits.append(text_edit)
                continue
            # Only a shorthand needs the file's scopes (which binding it names): walked then.
            scopes = parsed.scopes(operation.path, root)
            use = next((u for u in scopes.uses if u.node.start_byte == node.start_byte), None)
            if use is None:
                edits.append(text_edit)
                continue
            renamed_bindings = {b.node.start_byte for b in scopes.bindings if b.name == old}
            # The variable renamed: the key stays. The property renamed: the variable stays.
            written = f"{old}: {new}" if _renamed_variable(scopes, use, renamed_bindings, operation, source) else f"{new}: {old}"
            edits.append(TextEdit(text_edit.range, written))
            notes.append(f"{operation.path}:{text_edit.range.start.line + 1}: the shorthand {{ {old} }} is written "
                         f"{{ {written} }}, so that only the {'variable' if written.startswith(old) else 'property'} is renamed")
        operations.append(FileChange(operation.path, tuple(edits), operation.expected_sha256))
    return (WorkspaceEdit(tuple(operations), edit.annotations), notes) if notes else (edit, [])


def _renamed_variable(scopes: FileScopes, use: Use, renamed_bindings: set[int], change: FileChange, source: SourceFile) -> bool:
    """Whether the shorthand's variable is the binding the edit renames (its declaration is edited)."""
    binding = scopes.resolve(use.name, use.scope, use.namespace)
    if binding is None or binding.node.start_byte not in renamed_bindings:
        return False
    line, byte_column = binding.node.start_point
    text = source.text[source.line_starts[line]:]
    return any(e.range.start.line == line and len(text[:e.range.start.column].encode("utf-8")) == byte_column
               for e in change.edits)


def destructured_local_reaches(workspace: Workspace, edit: WorkspaceEdit, file: str, line: int, column: int) -> list[str]:
    """When the name at ``file:line:column`` (1-based) is a local bound by a destructuring
    shorthand (``const { height } = box``), the places ``edit`` renames beyond that local and its
    uses: tsserver renames the property itself then, everywhere. Empty otherwise."""
    parsed = ParsedFiles(workspace)
    found = parsed.get(file)
    if found is None:
        return []
    source, root = found
    scopes = parsed.scopes(file, root)
    if not 0 < line <= len(source.line_starts):
        return []
    text = source.text[source.line_starts[line - 1]:]
    offset = len(source.text[:source.line_starts[line - 1]].encode("utf-8")) + len(text[:column - 1].encode("utf-8"))
    binding = next((b for b in scopes.bindings if b.node.start_byte <= offset < b.node.end_byte), None)
    if binding is None:
        use = next((u for u in scopes.uses if u.node.start_byte <= offset < u.node.end_byte), None)
        binding = scopes.resolve(use.name, use.scope, use.namespace) if use is not None else None
    if binding is None or binding.node.type != "shorthand_property_identifier_pattern":
        return []
    own = {binding.node.start_byte} | {u.node.start_byte for u in scopes.uses
                                       if u.name == binding.name and scopes.resolve(u.name, u.scope, u.namespace) is binding}
    beyond = []
    for change in edit.operations:
        if not isinstance(change, FileChange):
            continue
        for text_edit in change.edits:
            if change.path == file:
                start = source.line_starts[text_edit.range.start.line] + text_edit.range.start.column
                if len(source.text[:start].encode("utf-8")) in own:
                    continue
            beyond.append(f"{change.path}:{text_edit.range.start.line + 1}")
    return beyond
