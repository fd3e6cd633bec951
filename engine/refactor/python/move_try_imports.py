"""Imports inside a module-level ``try:`` block, which a Python move carries whole.

A source often binds a name in a fallback block::

    try:
        from functools import lru_cache
    except ImportError:
        from backports.functools_lru_cache import lru_cache

The moved code needs the name as the source binds it, fallback included, so the destination
gets the whole block, its relative imports written from the destination. Only a block made of
imports (and ``pass``, or a name set to a constant: ``x = None``), whose handlers catch builtin
exceptions and without ``finally``, is carried: anything else runs code the move cannot judge,
and the name is imported from the source as any other global of it.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from dataclasses import dataclass

import libcst as cst

from engine.refactor.python.cst_edits import ModuleName, bound_name, dotted, import_module_of


@dataclass(frozen=True)
class CarriedTry:
    """A module-level ``try`` block of imports the moved code needs, as the destination writes it."""

    statement: cst.Try
    names: dict[str, str]
    """Each name the block binds → what its ``try`` body binds it to (``functools.lru_cache``),
    or, for a name only its handlers bind, the first binding there."""
    source_id: int
    """id() of the block in the source tree."""


def enclosing_try(node: cst.CSTNode, parents: Mapping[cst.CSTNode, cst.CSTNode]) -> cst.Try | None:
    """The module-level ``try`` statement that holds ``node``, or None."""
    current = node
    while current in parents and not isinstance(parents[current], cst.Module):
        current = parents[current]
    return current if isinstance(current, cst.Try) and current is not node else None


def carried_try(block: cst.Try, source: ModuleName, dest: ModuleName) -> CarriedTry | None:
    """The block with its imports written from ``dest``, or None when it cannot be carried as it is."""
    if block.finalbody is not None or not all(_builtin_exceptions(handler.type) for handler in block.handlers):
        return None
    suites = [block.body, *(handler.body for handler in block.handlers), *([block.orelse.body] if block.orelse else [])]
    names: dict[str, str] = {}
    for suite in suites:
        for line in getattr(suite, "body", ()):
            if not isinstance(line, cst.SimpleStatementLine):
                return None
            for small in line.body:
                bound = _binds(small, source)
                if bound is None:
                    return None
                for name, absolute in bound.items():
                    names.setdefault(name, absolute)
    if any(absolute == dest.dotted or absolute.startswith(dest.dotted + ".") for absolute in names.values()):
        return None  # it imports from the destination itself: not a block to copy there
    rewritten = block.visit(_Respell(source, dest))
    if not isinstance(rewritten, cst.Try):
        return None  # the transformer returns the block it is given
    return CarriedTry(rewritten, names, id(block))


def _builtin_exceptions(caught: cst.BaseExpression | None) -> bool:
    if caught is None:
        return True
    if isinstance(caught, cst.Tuple):
        return all(_builtin_exceptions(element.value) for element in caught.elements)
    return isinstance(caught, cst.Name) and isinstance(getattr(builtins, caught.value, None), type)


def _binds(small: cst.BaseSmallStatement, source: ModuleName) -> dict[str, str] | None:
    """What one statement of a carried block binds (name → absolute, "" for a constant), or None
    when it is not a statement such a block may hold."""
    if isinstance(small, cst.Pass):
        return {}
    if isinstance(small, cst.Import):
        return {bound_name(alias): (dotted(alias.name) or "") for alias in small.names}
    if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
        level, written = import_module_of(small)
        absolute = source.absolute(level, written)
        if absolute == "__future__":
            return None
        return {bound_name(alias): f"{absolute}.{dotted(alias.name)}" for alias in small.names}
    constant = (cst.SimpleString, cst.Integer, cst.Float)
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name) and (
        isinstance(small.value, constant) or (isinstance(small.value, cst.Name) and small.value.value in ("None", "True", "False"))
    ):
        return {small.targets[0].target.value: ""}
    return None


class _Respell(cst.CSTTransformer):
    """Relative imports written from the destination (absolute ones stay as they are)."""

    def __init__(self, source: ModuleName, dest: ModuleName) -> None:
        self.source, self.dest = source, dest

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom:
        level, written = import_module_of(original)
        if level == 0:
            return updated
        spec = self.dest.spec_for(self.source.absolute(level, written), relative=True)
        parsed = cst.parse_statement(f"from {spec} import x\n")
        template = parsed.body[0] if isinstance(parsed, cst.SimpleStatementLine) else None
        if not isinstance(template, cst.ImportFrom):
            raise TypeError("an import parsed as something else")  # cannot happen: only narrows the type
        return updated.with_changes(module=template.module, relative=template.relative)
