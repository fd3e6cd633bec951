"""Point every Python import of a module at the module's new dotted name (``rename-file``).

Per file, on its LibCST tree:
- ``from old import x`` and ``from old.sub import x`` (relative ones stay relative);
- ``import old`` / ``import old as y`` and the ``old.x`` attribute chains of an unaliased import;
- ``pkg.old.x`` chains through an import of a package above the module (``import pkg``,
  ``import pkg as p``, ``from pkg import sub``), when the new module stays under it;
- ``from pkg import old_last`` (the module taken from its package): the alias follows, and
  the file's uses of the bound name follow it when that name is free, else the import keeps
  the old name as an alias;
- in the renamed file itself, relative imports are recomputed from its new place.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import Scope, ScopeProvider

from engine.refactor.python.cst_edits import (
    ModuleName,
    ScopeMap,
    alias_as,
    bound_name,
    dotted,
    import_module_of,
    parse_small_statement,
)


def rewrite_module_references(
    tree: cst.Module, module: ModuleName, old: str, new: str, *, moved_from: ModuleName | None = None,
    keep_binding: bool = False,
) -> cst.Module:
    """``tree`` with its imports of module ``old`` rewritten to ``new``. ``moved_from`` is set for
    the renamed file itself: its relative imports were written from that old place.
    ``keep_binding``: other modules read this one's ``from pkg import old_last`` binding as an
    attribute (``tags._manylinux``), so it keeps its name (``from pkg import new_last as old_last``)."""
    wrapper = cst.MetadataWrapper(tree, unsafe_skip_copy=True)
    scopes = wrapper.resolve(ScopeProvider)
    global_scope = scopes[wrapper.module]
    if global_scope is None:
        raise TypeError("LibCST gave the module no scope")  # it always gives one: only narrows the type
    renamer = _Renamer(module, old, new, moved_from, global_scope, scopes, keep_binding)
    return wrapper.module.visit(renamer)


def _renamed(name: str, old: str, new: str) -> str | None:
    if name == old:
        return new
    if name.startswith(old + "."):
        return new + name[len(old):]
    return None


class _Renamer(cst.CSTTransformer):
    def __init__(
        self, module: ModuleName, old: str, new: str, moved_from: ModuleName | None, global_scope: Scope, scopes: ScopeMap,
        keep_binding: bool = False,
    ) -> None:
        self.module, self.old, self.new, self.moved_from = module, old, new, moved_from
        self.keep_binding = keep_binding
        self.global_scope = global_scope
        self.scopes = scopes
        self.renamed_names: dict[int, str] = {}
        """id(Name node that reads a renamed binding) → its new name."""
        self.unaliased: set[str] = set()
        """Dotted names of ``import old…`` statements without alias: their attribute chains follow."""
        self.ancestors: dict[str, str] = {}
        """Local name → the package an import binds it to, for packages that contain the old
        module (``import pkg``, ``import pkg as p``, ``from pkg import sub``): ``pkg.old.x``
        reaches the old module through them."""

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            imported = dotted(alias.name) or ""
            bound = bound_name(alias)
            package = imported if alias_as(alias) is not None else bound
            if self.old.startswith(package + "."):
                self.ancestors[bound] = package
            if alias_as(alias) is None and _renamed(dotted(alias.name) or "", self.old, self.new):
                self.unaliased.add(dotted(alias.name) or "")
                if "." not in self.old:
                    # `import old` binds `old` itself: its uses are names, not attribute chains.
                    self._rename_uses(node, self.old, self.new)

    def leave_Import(self, original: cst.Import, updated: cst.Import) -> cst.Import:
        names = []
        for alias in updated.names:
            target = _renamed(dotted(alias.name) or "", self.old, self.new)
            names.append(alias.with_changes(name=cst.parse_expression(target)) if target else alias)
        return updated.with_changes(names=names)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        absolute = self._absolute(node)
        new_package, _, new_last = self.new.rpartition(".")
        for alias in node.names:
            if self.old.startswith(f"{absolute}.{dotted(alias.name)}."):
                self.ancestors[bound_name(alias)] = f"{absolute}.{dotted(alias.name)}"
            if f"{absolute}.{dotted(alias.name)}" != self.old or alias_as(alias) is not None:
                continue
            if new_package == absolute and new_last not in self.global_scope and not self.keep_binding:
                self._rename_uses(node, bound_name(alias), new_last)

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom | cst.FlattenSentinel:
        level, written = import_module_of(original)
        absolute = self._absolute(original)
        relative = level > 0
        target = _renamed(absolute, self.old, self.new)
        if target is not None or (self.moved_from is not None and relative):
            spec = self.module.spec_for(target or absolute, relative=relative)
            parsed = parse_small_statement(f"from {spec} import x\n")
            if not isinstance(parsed, cst.ImportFrom):
                raise TypeError(f"not an import: {spec!r}")  # only narrows the type: the text is a from-import
            updated = updated.with_changes(module=parsed.module, relative=parsed.relative)
        if isinstance(updated.names, cst.ImportStar):
            return updated
        new_package, _, new_last = self.new.rpartition(".")
        names = []
        for alias in updated.names:
            if f"{absolute}.{dotted(alias.name)}" != self.old:
                names.append(alias)
                continue
            if new_package != absolute:
                # The module left this package: it is imported from its new one, under the same name.
                bound = bound_name(alias)
                clause = new_last if bound == new_last else f"{new_last} as {bound}"
                spec = self.module.spec_for(new_package, relative=relative) if new_package else ""
                statement = f"from {spec} import {clause}" if spec else f"import {self.new} as {bound}"
                rest = [a for a in updated.names if a is not alias]
                if rest and rest[-1].comma is not cst.MaybeSentinel.DEFAULT and alias is updated.names[-1]:
                    rest[-1] = rest[-1].with_changes(comma=alias.comma)
                return cst.FlattenSentinel([
                    *([updated.with_changes(names=rest)] if rest else []),
                    parse_small_statement(f"{statement}\n"),
                ])
            renamed_uses = alias_as(alias) is None and new_last not in self.global_scope and not self.keep_binding
            as_name = alias.asname if alias_as(alias) is not None or renamed_uses else cst.AsName(name=cst.Name(bound_name(alias)))
            names.append(alias.with_changes(name=cst.Name(new_last), asname=as_name))
        return updated.with_changes(names=names)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        # `pkg.old` inside `pkg.old.x`, bound by an unaliased `import pkg.old[.sub]`.
        chain = dotted(original) or ""
        if self.unaliased and chain == self.old:
            return cst.parse_expression(self.new)
        # `p.old.x` where `p` is a package above the old module (`import pkg [as p]`): the
        # chain follows when the new module is under that package too.
        head, _, rest = chain.partition(".")
        package = self.ancestors.get(head)
        if package is not None and rest and f"{package}.{rest}" == self.old and self.new.startswith(package + "."):
            return cst.parse_expression(f"{head}.{self.new[len(package) + 1:]}")
        return updated

    def leave_Name(self, original: cst.Name, updated: cst.BaseExpression) -> cst.BaseExpression:
        new_name = self.renamed_names.get(id(original))
        return cst.parse_expression(new_name) if new_name else updated

    def _absolute(self, node: cst.ImportFrom) -> str:
        level, written = import_module_of(node)
        return (self.moved_from or self.module).absolute(level, written)

    def _rename_uses(self, statement: cst.Import | cst.ImportFrom, bound: str, new_name: str) -> None:
        for scope in {id(s): s for s in self.scopes.values() if s is not None}.values():
            for access in scope.accesses:
                if isinstance(access.node, cst.Name) and access.node.value == bound and any(
                    getattr(r, "node", None) is statement for r in access.referents
                ):
                    self.renamed_names[id(access.node)] = new_name
