"""Rewrite one importer of a moved Python name so that it takes the name from its new module.

Handled forms (anywhere in the file, function-local imports included, each serving its own scope):
- ``from a import f`` and ``from a import f as g``, also inside parenthesised lists and
  relative imports: the alias leaves the statement, ``from d import f [as g]`` follows it;
- ``import a`` with ``a.f``, ``import a as x`` with ``x.f``, ``from pkg import a`` with
  ``a.f``, and ``import pkg.mod`` with ``pkg.f`` when ``pkg`` is the source: the attribute is
  rewritten to the new module, which is imported beside;
- ``from a import *`` where the file uses ``f``: an explicit ``from d import f`` follows.
In the destination module itself the name is local: its import goes and ``a.f`` becomes ``f``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import ScopeProvider

from engine.errors import Refused
from engine.refactor.python.cst_edits import (
    ModuleName,
    ScopeMap,
    alias_as,
    bound_name,
    dotted,
    from_import,
    import_module_of,
    plain_import,
    without_aliases,
)


class ImporterClash(Refused):
    code = "name_clash"


@dataclass(frozen=True)
class SourceBinding:
    """A name the importer binds to the source module."""

    expression: str
    """How the file names the module: ``a.b`` (``import a.b``), ``x`` (``import a.b as x``)."""
    statement: cst.CSTNode
    bound: str
    relative: bool
    imports_more: bool = False
    """``import pkg.mod`` naming the package ``pkg``: the statement also imports ``pkg.mod``, so it stays."""


@dataclass(frozen=True)
class MoveNames:
    name: str
    source: ModuleName
    dest: ModuleName
    star_exported: bool
    """Whether ``from source import *`` handed out the name before the move."""


@dataclass
class ImporterPlan:
    drops: dict[int, set[str]] = field(default_factory=dict)
    """id(import statement) → names whose aliases leave it."""
    after: dict[int, list[cst.SimpleStatementLine]] = field(default_factory=dict)
    """id(import statement) → statements to add right after its line."""
    attributes: dict[int, cst.BaseExpression] = field(default_factory=dict)
    """id(attribute or string-annotation node) → its replacement."""


def rewrite_importer(tree: cst.Module, module: ModuleName, names: MoveNames, *, is_dest: bool) -> cst.Module:
    """The file with every import of the moved name pointed at the new module (unchanged when
    it does not import it)."""
    scope_cache: list[ScopeMap] = []

    def scopes() -> ScopeMap:
        """Scope analysis is the costly part: only files that need it (attribute uses, star
        imports) pay for it. The wrapper keeps the tree's nodes, so ids stay valid."""
        if not scope_cache:
            scope_cache.append(cst.MetadataWrapper(tree, unsafe_skip_copy=True).resolve(ScopeProvider))
        return scope_cache[0]

    plan = ImporterPlan()
    module_bindings: list[SourceBinding] = []
    dest_imports: list[tuple[str, cst.CSTNode]] = []
    """How an import names the destination module, and that import."""
    for node in _imports(tree):
        if isinstance(node, cst.ImportFrom):
            level, written = import_module_of(node)
            absolute = module.absolute(level, written)
            if isinstance(node.names, cst.ImportStar):
                if absolute == names.source.dotted and names.star_exported and not is_dest and _reads_unbound(scopes(), names.name):
                    spec = module.spec_for(names.dest.dotted, relative=level > 0)
                    plan.after.setdefault(id(node), []).append(from_import(spec, names.name))
                continue
            for alias in node.names:
                imported = dotted(alias.name) or ""
                if absolute == names.source.dotted and imported == names.name:
                    plan.drops.setdefault(id(node), set()).add(bound_name(alias))
                    if is_dest:
                        if alias_as(alias) not in (None, names.name):
                            raise ImporterClash(
                                f"{names.dest.dotted} imports {names.name} as {alias_as(alias)}; after the move it is "
                                f"local there under its own name: rename that alias first"
                            )
                        continue
                    spec = module.spec_for(names.dest.dotted, relative=level > 0)
                    plan.after.setdefault(id(node), []).append(from_import(spec, names.name, alias_as(alias)))
                elif f"{absolute}.{imported}" == names.source.dotted:
                    module_bindings.append(SourceBinding(bound_name(alias), node, bound_name(alias), level > 0))
                elif f"{absolute}.{imported}" == names.dest.dotted and alias_as(alias) is None:
                    dest_imports.append((imported, node))
        else:
            for alias in node.names:
                imported = dotted(alias.name) or ""
                if imported == names.source.dotted:
                    module_bindings.append(SourceBinding(alias_as(alias) or imported, node, bound_name(alias), False))
                elif alias_as(alias) is None and imported.startswith(names.source.dotted + "."):
                    # `import pkg.parser` binds the package `pkg` as well: `pkg.name` reads the source.
                    module_bindings.append(SourceBinding(names.source.dotted, node, bound_name(alias), False, imports_more=True))
                if imported == names.dest.dotted:
                    dest_imports.append((alias_as(alias) or imported, node))
    if module_bindings:
        _rewrite_attributes(tree, scopes(), module, names, module_bindings, dest_imports, plan, is_dest)
    if not (plan.drops or plan.after or plan.attributes):
        return tree
    return tree.visit(_Apply(plan))


def _imports(tree: cst.Module) -> list[cst.Import | cst.ImportFrom]:
    found: list[cst.Import | cst.ImportFrom] = []

    class Collect(cst.CSTVisitor):
        def visit_Import(self, node: cst.Import) -> None:
            found.append(node)

        def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
            found.append(node)

    tree.visit(Collect())
    return found


def _reads_unbound(scopes: ScopeMap, name: str) -> bool:
    """Whether the file reads ``name`` without binding it itself (so it came from a star import)."""
    for scope in {id(s): s for s in scopes.values() if s is not None}.values():
        for access in scope.accesses:
            if isinstance(access.node, cst.Name) and access.node.value == name and not access.referents:
                return True
    return False


def _rewrite_attributes(
    tree: cst.Module, scopes: ScopeMap, module: ModuleName, names: MoveNames,
    bindings: list[SourceBinding], dest_imports: list[tuple[str, cst.CSTNode]], plan: ImporterPlan, is_dest: bool,
) -> None:
    """``owner.name`` (and ``"owner.name"`` in string annotations) → the destination's. Each binding
    of the source module is followed to its own uses, so an import inside one function serves
    that function only: the destination is named through an import its scope sees."""
    attributes: list[cst.Attribute] = []

    class Find(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            if node.attr.value == names.name:
                attributes.append(node)

    tree.visit(Find())
    accesses = [
        access for scope in {id(s): s for s in scopes.values() if s is not None}.values()
        for access in scope.accesses
    ]
    named_in: dict[int, str] = {}
    """id(scope) → how the destination is named there, by an import this plan adds."""
    for binding in bindings:
        owner, statement, bound = binding.expression, binding.statement, binding.bound
        # `import a.b` is referred to as `a.b` by the uses of `a.b.x`, and as `a` by those of `a.x`.
        uses = [a for a in accesses if any(getattr(r, "node", None) is statement and getattr(r, "name", None) in (bound, owner)
                                           for r in a.referents)]
        used = {id(a.node) for a in uses}
        in_strings = re.compile(rf"\b{re.escape(owner)}\.{re.escape(names.name)}\b")
        strings = [a.node for a in uses if isinstance(a.node, cst.SimpleString) and in_strings.search(a.node.value)]
        found = [a for a in attributes if id(a.value) in used and dotted(a.value) == owner and id(a) not in plan.attributes]
        if not found and not strings:
            continue
        if is_dest:
            replacement = names.name
        else:
            scope = scopes[statement]
            dest_expression = _dest_in_scope(scopes, tree, scope, statement, dest_imports) or named_in.get(id(scope))
            if dest_expression is None:
                dest_expression, added = _dest_binding(tree, scopes, module, names, owner, binding.relative)
                plan.after.setdefault(id(statement), []).append(added)
                named_in[id(scope)] = dest_expression
            replacement = f"{dest_expression}.{names.name}"
        for attribute in found:
            plan.attributes[id(attribute)] = cst.parse_expression(replacement)
        rewritten = {id(a.value) for a in found}
        for string in strings:
            text = in_strings.sub(replacement, string.value)
            plan.attributes[id(string)] = string.with_changes(value=text)
            if not re.search(rf"\b{re.escape(owner.split('.')[0])}\b", text[1:-1]):
                rewritten.add(id(string))
        if not binding.imports_more and all(id(use.node) in rewritten for use in uses):
            plan.drops.setdefault(id(statement), set()).add(bound)


def _dest_in_scope(
    scopes: ScopeMap, tree: cst.Module, scope: object, statement: cst.CSTNode, dest_imports: list[tuple[str, cst.CSTNode]]
) -> str | None:
    """How the file already names the destination where ``statement`` binds the source: the same
    statement (`import pkg.parser`), an import in the same scope, or one at module level."""
    for expression, node in dest_imports:
        if node is statement:
            return expression
    for expression, node in dest_imports:
        if scopes[node] is scope or scopes[node] is scopes[tree]:
            return expression
    return None


def _dest_binding(
    tree: cst.Module, scopes: ScopeMap, module: ModuleName, names: MoveNames, owner: str, relative: bool
) -> tuple[str, cst.SimpleStatementLine]:
    """How the file will name the destination module, and the import that binds it: the full
    dotted name beside ``import a.b.source``, else the module's own name beside ``from a.b import``."""
    global_scope = scopes[tree]
    if global_scope is None:
        raise TypeError("LibCST gave the module no scope")  # it always gives one: only narrows the type
    if owner == names.source.dotted:
        head = names.dest.dotted.split(".")[0]
        if head != owner.split(".")[0] and head in global_scope:
            raise ImporterClash(
                f"{module.dotted} already uses the name {head}; `import {names.dest.dotted}` would rebind it. "
                f"Import {names.dest.dotted} there yourself (under any name) and run the move again"
            )
        return names.dest.dotted, plain_import(names.dest.dotted)
    package, _, last = names.dest.dotted.rpartition(".")
    if last in global_scope:
        raise ImporterClash(
            f"{module.dotted} already uses the name {last}; it cannot import module {names.dest.dotted} under it. "
            f"Import {names.dest.dotted} there yourself (under any name) and run the move again"
        )
    if not package:
        return last, plain_import(last)
    return last, from_import(module.spec_for(package, relative=relative), last)


class _Apply(cst.CSTTransformer):
    def __init__(self, plan: ImporterPlan) -> None:
        self.plan = plan

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        replacement = self.plan.attributes.get(id(original))
        if replacement is None:
            return updated
        if isinstance(replacement, cst.Attribute):
            return updated.with_changes(value=replacement.value)
        return replacement

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString) -> cst.BaseExpression:
        return self.plan.attributes.get(id(original), updated)

    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement] | cst.RemovalSentinel:
        additions: list[cst.SimpleStatementLine] = []
        body: list[cst.BaseSmallStatement] = []
        for before, after in zip(original.body, updated.body):
            additions += self.plan.after.get(id(before), [])
            drop = self.plan.drops.get(id(before))
            if drop and isinstance(after, (cst.Import, cst.ImportFrom)):
                kept = without_aliases(after, drop)
                if isinstance(kept, cst.RemovalSentinel):
                    continue
                after = kept
            body.append(after)
        if not additions and len(body) == len(updated.body) and all(a is b for a, b in zip(body, updated.body)):
            return updated
        if not body:
            if not additions:
                return cst.RemovalSentinel.REMOVE
            first, *rest = additions
            return cst.FlattenSentinel([first.with_changes(leading_lines=updated.leading_lines), *rest])
        line = updated.with_changes(body=[*body[:-1], body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)])
        return cst.FlattenSentinel([line, *additions]) if additions else line
