"""A module's LibCST metadata for extract and inline (scopes and expression contexts; positions are
engine.refactor.python.statement_positions') and its nodes in source order, in fewer walks of the
tree than ``MetadataWrapper.resolve_many``.

LibCST's ScopeProvider and ExpressionContextProvider are batchable providers whose whole work is a
walk of their own started from ``visit_Module``; resolving them through the wrapper adds a batched
walk of the whole tree per round that does nothing else (every LibCST walk rebuilds each node it
passes). Here each provider's ``visit_Module`` is run by a provider that is not batchable, the
scopes reading the contexts just found, so the answers are LibCST's own, with no idle walk.

The nodes in source order (what ``span_nodes.nodes_within(module)`` yields: each node, then its
``children``) are read off the nodes' fields, in the order each node type's
``_visit_and_replace_children`` visits them (``children`` is that method run with a visitor that
records), read once per type from its source; ``children`` rebuilds the node each time it is asked.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Optional, cast

import libcst as cst
from libcst.metadata import (
    BaseMetadataProvider, ExpressionContext, ExpressionContextProvider, MetadataWrapper, Scope, ScopeProvider,
)


class _Contexts(BaseMetadataProvider[ExpressionContext]):
    """ExpressionContextProvider's answer from its own ``visit_Module``, without a batched walk."""

    def _gen_impl(self, module: cst.Module) -> None:
        ExpressionContextProvider.visit_Module(cast(ExpressionContextProvider, self), module)


class _Scopes(BaseMetadataProvider[Optional[Scope]]):
    """ScopeProvider's answer from its own ``visit_Module`` (LibCST's ScopeVisitor), reading the
    contexts it depends on from ``contexts`` instead of resolving them through the wrapper again."""

    METADATA_DEPENDENCIES = (ExpressionContextProvider,)

    def __init__(self, contexts: Mapping[cst.CSTNode, ExpressionContext]) -> None:
        super().__init__()
        self._contexts = contexts

    @contextmanager
    def resolve(self, wrapper: MetadataWrapper) -> Iterator[None]:
        self.metadata = {ExpressionContextProvider: self._contexts}
        yield
        self.metadata = {}

    def _gen_impl(self, module: cst.Module) -> None:
        ScopeProvider.visit_Module(cast(ScopeProvider, self), module)


@dataclass(frozen=True)
class Resolved:
    module: cst.Module
    scopes: Mapping[cst.CSTNode, Scope | None]
    contexts: Mapping[cst.CSTNode, ExpressionContext]
    source_order: Sequence[cst.CSTNode] | None
    """Every node in preorder as ``children`` lists them; None when a node type's order of
    fields could not be read (then a walk through ``children`` must list them)."""
    parents: Mapping[cst.CSTNode, cst.CSTNode] | None = None
    """Each node's parent, read on the same walk; None with ``source_order``, or when a field the
    walk does not follow holds a node (then ``span_nodes.parents_of`` reads every field)."""


def scopes_of(module: cst.Module) -> Mapping[cst.CSTNode, Scope | None]:
    """LibCST's ScopeProvider's answer for ``module`` (as ``MetadataWrapper.resolve(ScopeProvider)``)."""
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    contexts = cast(Mapping[cst.CSTNode, ExpressionContext], _Contexts()._gen(wrapper))
    return cast(Mapping[cst.CSTNode, Optional[Scope]], _Scopes(contexts)._gen(wrapper))


def resolve(module: cst.Module) -> Resolved:
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    contexts = cast(Mapping[cst.CSTNode, ExpressionContext], _Contexts()._gen(wrapper))
    scopes = _Scopes(contexts)._gen(wrapper)
    walked = _source_order(wrapper.module)
    order, parents = walked if walked is not None else (None, None)
    return Resolved(wrapper.module, scopes, contexts, order, parents)  # type: ignore[arg-type]


_VISITED_FIELD = re.compile(r'visit_\w+\(\s*self,\s*"(\w+)"')
_FIELD_ORDERS: dict[type[cst.CSTNode], tuple[str, ...] | None] = {}


def _field_order(kind: type[cst.CSTNode]) -> tuple[str, ...] | None:
    """The fields ``kind._visit_and_replace_children`` visits, in its order (a leaf visits none);
    None when its source cannot be read."""
    if kind not in _FIELD_ORDERS:
        try:
            source = inspect.getsource(kind._visit_and_replace_children)
        except (OSError, TypeError):
            _FIELD_ORDERS[kind] = None
        else:
            # dict.fromkeys: a field visited in either branch of a condition (ImportFrom's names) once
            _FIELD_ORDERS[kind] = tuple(dict.fromkeys(_VISITED_FIELD.findall(source)))
    return _FIELD_ORDERS[kind]


_OTHER_FIELDS: dict[type[cst.CSTNode], tuple[str, ...]] = {}
"""Each node type's fields that ``_visit_and_replace_children`` does not visit (a name's string)."""


def _source_order(module: cst.Module) -> tuple[list[cst.CSTNode], dict[cst.CSTNode, cst.CSTNode] | None] | None:
    """The nodes in source order, and each node's parent read on the same walk (None when a field
    the walk does not follow holds a node: the parents must then be read off every field)."""
    found: list[cst.CSTNode] = []
    parents: dict[cst.CSTNode, cst.CSTNode] | None = {}
    pending: list[cst.CSTNode] = [module]
    while pending:
        node = pending.pop()
        found.append(node)
        kind = type(node)
        names = _field_order(kind)
        if names is None:
            return None
        children: list[cst.CSTNode] = []
        for name in names:
            value = getattr(node, name)
            if isinstance(value, cst.CSTNode):
                children.append(value)
            elif isinstance(value, (list, tuple)):
                children.extend(child for child in value if isinstance(child, cst.CSTNode))
        if parents is not None:
            if _holds_other_nodes(node, kind, names):
                parents = None
            else:
                for child in children:
                    parents[child] = node
        pending.extend(reversed(children))
    return found, parents


def _holds_other_nodes(node: cst.CSTNode, kind: type[cst.CSTNode], visited: tuple[str, ...]) -> bool:
    others = _OTHER_FIELDS.get(kind)
    if others is None:
        others = _OTHER_FIELDS[kind] = tuple(field.name for field in fields(kind) if field.name not in visited)
    for name in others:
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode) or isinstance(value, (list, tuple)) and any(isinstance(v, cst.CSTNode) for v in value):
            return True
    return False
