"""The source side of a Python move: which statements go, what they need, and what stays behind.

Scope analysis (LibCST) tells, for every name the moved code reads, what it is bound
to in the source module: a builtin, a module-level import (carried to the destination
in the destination's terms), or another global of the source module (imported from
the source). It also finds the uses of the moved name that remain in the source and
whether each runs at import time or only when a function is called, which decides
between a module-level and a function-local import when a cycle threatens.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

import libcst as cst
from libcst.metadata import (
    Access,
    Assignment,
    CodeRange,
    GlobalScope,
    ImportAssignment,
    ParentNodeProvider,
    PositionProvider,
    Scope,
    ScopeProvider,
)

from engine.errors import Refused
from engine.refactor.python.cst_edits import (
    ModuleName,
    TopLevelStatement,
    code_of,
    dotted,
    from_import,
    import_module_of,
    is_docstring,
    parse,
    plain_import,
    alias_as,
    bound_name,
)
from engine.refactor.python.move_try_imports import CarriedTry, carried_try, enclosing_try
from engine.workspace import SourceFile


class CannotMove(Refused):
    code = "cannot_move"


@dataclass(frozen=True)
class CarriedImport:
    """An import the moved code needs, as the destination writes it."""

    name: str
    """The name it binds."""
    absolute: str
    """``module`` for ``import module``; ``module.name`` for ``from module import name``."""
    statement: cst.SimpleStatementLine
    type_checking: bool = False
    line: int = 0
    """Where the source has it, so that the destination keeps the source's order."""


@dataclass
class SourceAnalysis:
    tree: cst.Module
    moved: list[TopLevelStatement]
    """The top-level statements that move: a definition (all of its overloads), or a constant
    with the docstring that follows it."""
    carried_comments: list[cst.EmptyLine]
    imports: list[CarriedImport] = field(default_factory=list)
    source_globals: list[str] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    runtime_uses: dict[int, cst.FunctionDef] = field(default_factory=dict)
    """Remaining uses in the source inside function bodies: id(function) → the function."""
    import_time_uses: list[int] = field(default_factory=list)
    """1-based lines of remaining uses that run when the module is imported."""
    unused_after: dict[int, set[str]] = field(default_factory=dict)
    """Imports only the moved code used: id(import statement) → the names it binds that go."""
    emptied_blocks: set[int] = field(default_factory=set)
    """id(``if TYPE_CHECKING:`` block) whose imports all go, or of a carried ``try`` block whose
    names only the moved code read: the block goes too."""
    try_blocks: list[CarriedTry] = field(default_factory=list)
    """Module-level ``try`` blocks of imports binding names the moved code reads: carried whole."""
    future_annotations: bool = False
    line: int = 0
    """1-based first line of the moved code in the source."""


def analyse(source: SourceFile, name: str, module: ModuleName, dest: ModuleName) -> SourceAnalysis:
    wrapper = cst.MetadataWrapper(parse(source), unsafe_skip_copy=True)
    tree = wrapper.module
    scopes = wrapper.resolve(ScopeProvider)
    positions = wrapper.resolve(PositionProvider)
    parents = wrapper.resolve(ParentNodeProvider)
    moved = _moved_statements(tree, name, source.path)
    first, last = _lines_of(moved, positions)
    analysis = SourceAnalysis(tree, moved, comments_above(moved[0]), line=first)

    def inside(node: cst.CSTNode) -> bool:
        return first <= positions[node].start.line <= last

    global_scope = scopes[tree]
    if not isinstance(global_scope, GlobalScope):
        raise CannotMove(f"cannot analyse the scopes of {source.path}")
    seen: set[str] = set()
    used_imports: dict[int, tuple[cst.CSTNode, ImportAssignment]] = {}
    for access in _all_accesses(scopes).values():
        if not inside(access.node):
            continue
        written = code_of(access.node)
        # Everything but builtins (LibCST's only other kind of binding, one without a node).
        referents = [r for r in access.referents if isinstance(r, Assignment)]
        if not access.referents:
            if written not in seen:
                seen.add(written)
                analysis.unresolved.append(written)
            continue
        module_level = [r for r in referents if r.scope is global_scope and not _is_moved_definition(r, moved)]
        # A string annotation is one access per name it reads, all with the string as their node:
        # the binding's name tells them apart ("t.Optional[te.Self]" reads `t` and `te`).
        key = module_level[0].name if module_level else written
        if not module_level or key in seen:
            continue
        seen.add(key)
        import_bindings = [r for r in module_level if isinstance(r, ImportAssignment)]
        carried = [_carried(r, parents, module, dest) for r in import_bindings]
        if len(carried) == len(module_level) and all(c is not None for c in carried):
            first_import = carried[0]
            if first_import is not None and not first_import.absolute.startswith(dest.dotted + "."):
                line = positions[module_level[0].node].start.line
                analysis.imports.append(replace(first_import, line=line))
            for r in import_bindings:
                used_imports[id(r)] = (r.node, r)
        elif (block := _try_block(module_level, parents, module, dest)) is not None:
            if all(b.source_id != block.source_id for b in analysis.try_blocks):
                analysis.try_blocks.append(block)
        else:
            analysis.source_globals.append(module_level[0].name)
    analysis.imports.sort(key=lambda carried: carried.line)
    for node, assignment in used_imports.values():
        if all(inside(reference.node) for reference in assignment.references):
            # `import a.b` binds `a` (LibCST calls the binding `a.b`).
            analysis.unused_after.setdefault(id(node), set()).add(assignment.name.split(".")[0])
    _drop_emptied_type_checking_blocks(analysis, global_scope, positions)
    _mark_emptied_try_blocks(analysis, global_scope, parents, inside)
    _remaining_uses(analysis, global_scope, name, parents, positions, inside)
    analysis.future_annotations = _has_future_annotations(tree)
    return analysis


def _lines_of(moved: list[TopLevelStatement], positions: Mapping[cst.CSTNode, CodeRange]) -> tuple[int, int]:
    """The first line (its first decorator's) and the last of the moved statements."""
    head = moved[0]
    decorators = head.decorators if isinstance(head, (cst.FunctionDef, cst.ClassDef)) else ()
    return positions[decorators[0] if decorators else head].start.line, positions[moved[-1]].end.line


def _all_accesses(scopes: Mapping[cst.CSTNode, Scope | None]) -> dict[int, Access]:
    """Every access of every scope, once each."""
    accesses: dict[int, Access] = {}
    for scope in {id(s): s for s in scopes.values() if s is not None}.values():
        for access in scope.accesses:
            accesses[id(access)] = access
    return accesses


def _mark_emptied_try_blocks(
    analysis: SourceAnalysis, global_scope: GlobalScope, parents: Mapping[cst.CSTNode, cst.CSTNode],
    inside: Callable[[cst.CSTNode], bool],
) -> None:
    """The carried ``try`` blocks in the source's order, and those whose names only the moved code read."""
    order = {id(statement): index for index, statement in enumerate(analysis.tree.body)}
    analysis.try_blocks.sort(key=lambda block: order[block.source_id])  # the source's order, not the reads'
    for block in analysis.try_blocks:
        in_block = [a for a in global_scope.assignments if isinstance(a, Assignment)
                    and id(enclosing_try(a.node, parents)) == block.source_id]
        if all(inside(reference.node) for a in in_block for reference in a.references):
            analysis.emptied_blocks.add(block.source_id)  # only the moved code read its names


def _remaining_uses(
    analysis: SourceAnalysis, global_scope: GlobalScope, name: str, parents: Mapping[cst.CSTNode, cst.CSTNode],
    positions: Mapping[cst.CSTNode, CodeRange], inside: Callable[[cst.CSTNode], bool],
) -> None:
    """The source's uses of the moved name left behind: in function bodies, or run at import time."""
    for binding in global_scope.assignments[name]:
        if not (isinstance(binding, Assignment) and _is_moved_definition(binding, analysis.moved)):
            continue
        for reference in binding.references:
            if inside(reference.node):
                continue
            function = _runtime_function(reference.node, parents)
            if function is None:
                analysis.import_time_uses.append(positions[reference.node].start.line)
            else:
                analysis.runtime_uses[id(function)] = function


def _has_future_annotations(tree: cst.Module) -> bool:
    return any(
        isinstance(small, cst.ImportFrom) and dotted(small.module) == "__future__"
        and not isinstance(small.names, cst.ImportStar) and any(a.name.value == "annotations" for a in small.names)
        for statement in tree.body if isinstance(statement, cst.SimpleStatementLine) for small in statement.body
    )


def _drop_emptied_type_checking_blocks(
    analysis: SourceAnalysis, global_scope: GlobalScope, positions: Mapping[cst.CSTNode, CodeRange]
) -> None:
    """An ``if TYPE_CHECKING:`` block left without imports goes, and with it the import of
    TYPE_CHECKING when nothing else reads it."""
    for statement in analysis.tree.body:
        if not (isinstance(statement, cst.If) and (dotted(statement.test) or "").endswith("TYPE_CHECKING")):
            continue
        if statement.orelse is not None or not isinstance(statement.body, cst.IndentedBlock):
            continue
        inner = statement.body.body
        if all(
            isinstance(line, cst.SimpleStatementLine) and all(_goes_whole(small, analysis) for small in line.body)
            for line in inner
        ):
            analysis.emptied_blocks.add(id(statement))
    if not analysis.emptied_blocks:
        return
    removed = [positions[s] for s in analysis.tree.body if id(s) in analysis.emptied_blocks]
    for assignment in global_scope.assignments["TYPE_CHECKING"]:
        if not isinstance(assignment, ImportAssignment):
            continue
        lines = [positions[reference.node].start.line for reference in assignment.references]
        if all(any(r.start.line <= line <= r.end.line for r in removed) for line in lines):
            analysis.unused_after.setdefault(id(assignment.node), set()).add("TYPE_CHECKING")


def _goes_whole(small: cst.BaseSmallStatement, analysis: SourceAnalysis) -> bool:
    """Whether ``small`` is an import all of whose names only the moved code used."""
    return (
        isinstance(small, (cst.Import, cst.ImportFrom)) and id(small) in analysis.unused_after
        # A star import binds nothing LibCST can follow, so it is never in unused_after.
        and not isinstance(small.names, cst.ImportStar)
        and {bound_name(a) for a in small.names} <= analysis.unused_after[id(small)]
    )


def _moved_statements(tree: cst.Module, name: str, path: str) -> list[TopLevelStatement]:
    """The definition of ``name`` at the top of the module: every overload of a function, or a
    single-name assignment and the docstring right after it."""
    found = [index for index, statement in enumerate(tree.body) if name in _defines(statement)]
    if not found:
        conditional = [s for s in tree.body if isinstance(s, (cst.If, cst.Try)) and name in code_of(s)]
        why = " (it is defined inside an if or try block)" if conditional else ""
        raise CannotMove(f"{name} is not defined at the top level of {path}{why}; only top-level code can move")
    if found != list(range(found[0], found[-1] + 1)):
        raise CannotMove(f"{name} is defined {len(found)} times in {path}, apart from each other; make it one definition first")
    statements = [tree.body[i] for i in found]
    for statement in statements:
        names = _defines(statement)
        if len(names) > 1:
            raise CannotMove(f"the statement defining {name} in {path} also defines {', '.join(sorted(names - {name}))}; split it first")
    after = found[-1] + 1
    if isinstance(statements[-1], cst.SimpleStatementLine) and after < len(tree.body) and is_docstring(tree.body[after]):
        statements.append(tree.body[after])
    return statements


def _defines(statement: cst.BaseStatement) -> set[str]:
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return {statement.name.value}
    if not isinstance(statement, cst.SimpleStatementLine):
        return set()
    names: set[str] = set()
    for small in statement.body:
        if isinstance(small, cst.Assign):
            for target in small.targets:
                names |= _target_names(target.target)
        elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
            names |= _target_names(small.target)
        elif isinstance(small, cst.TypeAlias):
            names.add(small.name.value)
    return names


def _target_names(target: cst.BaseExpression) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return {n for element in target.elements for n in _target_names(element.value)}
    return set()


def comments_above(statement: TopLevelStatement) -> list[cst.EmptyLine]:
    """The comment lines right above a statement (no blank line between) travel with it."""
    lines = list(statement.leading_lines)
    carried: list[cst.EmptyLine] = []
    for line in reversed(lines):
        if line.comment is None:
            break
        carried.insert(0, line)
    return carried


def _is_moved_definition(assignment: Assignment, moved: list[TopLevelStatement]) -> bool:
    node = assignment.node
    for statement in moved:
        if node is statement:
            return True
        if isinstance(statement, cst.SimpleStatementLine) and any(_contains(small, node) for small in statement.body):
            return True
    return False


def _contains(root: cst.CSTNode, node: cst.CSTNode) -> bool:
    if root is node:
        return True
    return any(_contains(child, node) for child in root.children)


def _carried(
    assignment: ImportAssignment, parents: Mapping[cst.CSTNode, cst.CSTNode], module: ModuleName, dest: ModuleName
) -> CarriedImport | None:
    """The import statement the destination needs for one import binding of the source, or None
    when it cannot simply be carried (an import under ``try``: the source's binding is used instead)."""
    statement = assignment.node
    if not isinstance(statement, (cst.Import, cst.ImportFrom)):
        return None  # LibCST types the node loosely; an import binding's is always its import statement
    line = parents[statement]
    holder = parents[line]
    type_checking = False
    if isinstance(holder, cst.IndentedBlock):
        block_owner = parents[holder]
        if isinstance(block_owner, cst.If) and (dotted(block_owner.test) or "").endswith("TYPE_CHECKING"):
            type_checking = isinstance(parents[block_owner], cst.Module)
        if not type_checking:
            return None
    elif not isinstance(holder, cst.Module):
        return None
    for alias in statement.names if not isinstance(statement.names, cst.ImportStar) else ():
        # LibCST names the binding of `import a.b` by its whole dotted name.
        if assignment.name not in (bound_name(alias), dotted(alias.name)):
            continue
        imported = dotted(alias.name) or ""
        if isinstance(statement, cst.ImportFrom):
            level, written = import_module_of(statement)
            absolute = module.absolute(level, written)
            if absolute == "__future__":
                return None
            spec = dest.spec_for(absolute, relative=level > 0)
            return CarriedImport(bound_name(alias), f"{absolute}.{imported}", from_import(spec, imported, alias_as(alias)), type_checking)
        return CarriedImport(bound_name(alias), imported, plain_import(imported, alias_as(alias)), type_checking)
    return None


def _try_block(
    bindings: list[Assignment], parents: Mapping[cst.CSTNode, cst.CSTNode], module: ModuleName, dest: ModuleName
) -> CarriedTry | None:
    """The carried block when every binding of a name the moved code reads is in one module-level
    ``try`` block that can travel whole (``move_try_imports``), else None."""
    blocks = {id(block): block for r in bindings if (block := enclosing_try(r.node, parents)) is not None}
    if len(blocks) != 1 or any(enclosing_try(r.node, parents) is None for r in bindings):
        return None
    return carried_try(next(iter(blocks.values())), module, dest)


def _runtime_function(node: cst.CSTNode, parents: Mapping[cst.CSTNode, cst.CSTNode]) -> cst.FunctionDef | None:
    """The outermost function whose body holds ``node`` (the use runs when it is called), or None
    when the use runs at import time (module level, class bodies, decorators, defaults)."""
    found: cst.FunctionDef | None = None
    child, current = node, parents[node]
    while not isinstance(current, cst.Module):
        if isinstance(current, cst.FunctionDef) and child is current.body:
            found = current
        child, current = current, parents[current]
    return found
