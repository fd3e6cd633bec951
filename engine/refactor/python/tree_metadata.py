"""A module's LibCST metadata for extract and inline (scopes and expression contexts; positions are
engine.refactor.python.statement_positions') and its nodes in source order, in fewer walks of the
tree than ``MetadataWrapper.resolve_many``.

LibCST's ScopeProvider and ExpressionContextProvider are batchable providers whose whole work is a
walk of their own started from ``visit_Module``; resolving each through the wrapper also walks the
whole tree once more in a batch that does nothing else, and every LibCST walk rebuilds each node it
passes. Here the scopes are resolved by the same ``ScopeProvider.visit_Module`` from a provider
that is not batchable (no idle walk), and the one batched walk left (the contexts') records the
nodes in the order it visits them: the order ``CSTNode.children`` gives, so the module's nodes in
source order (what ``span_nodes.nodes_within(module)`` yields) come without a walk of their own.
The answers are LibCST's own, the same mappings as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Optional, cast

import libcst as cst
from libcst.metadata import (
    BaseMetadataProvider, BatchableMetadataProvider, ExpressionContext, ExpressionContextProvider, MetadataWrapper,
    Scope, ScopeProvider,
)


class _Scopes(BaseMetadataProvider[Optional[Scope]]):
    """ScopeProvider's answer from its own ``visit_Module`` (which walks the tree with LibCST's
    ScopeVisitor), without the batched walk that resolving a batchable provider adds."""

    METADATA_DEPENDENCIES = (ExpressionContextProvider,)

    def _gen_impl(self, module: cst.Module) -> None:
        ScopeProvider.visit_Module(cast(ScopeProvider, self), module)


def _node_type_names() -> frozenset[str]:
    found: set[str] = set()
    pending: list[type] = [cst.CSTNode]
    while pending:
        kind = pending.pop()
        found.add(kind.__name__)
        pending.extend(kind.__subclasses__())
    return frozenset(found)


class _VisitOrder(BatchableMetadataProvider[int]):
    """Each node's place in the batched walk's visits (a node visited twice would get its last)."""

    def get_visitors(self) -> Mapping[str, object]:  # type: ignore[override]
        return {f"visit_{name}": self._record for name in _node_type_names()}

    def _record(self, node: cst.CSTNode) -> None:
        self.set_metadata(node, len(self._computed) if node not in self._computed else -1)


@dataclass(frozen=True)
class Resolved:
    module: cst.Module
    scopes: Mapping[cst.CSTNode, Scope | None]
    contexts: Mapping[cst.CSTNode, ExpressionContext]
    source_order: Sequence[cst.CSTNode] | None
    """Every node in preorder as ``children`` lists them; None when a node is held twice in the
    tree (then a walk must list it at each place)."""


def resolve(module: cst.Module) -> Resolved:
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    # One batch: the contexts and the order (positions are worked out per statement when asked:
    # engine.refactor.python.statement_positions).
    found = wrapper.resolve_many((ExpressionContextProvider, _VisitOrder))
    # The wrapper would follow any provider that is not batchable with a batched walk, even an
    # empty one: the scopes are asked of their provider directly, the contexts above found kept.
    scopes = _Scopes()._gen(wrapper)
    order = found[_VisitOrder]
    once = all(index == place for place, index in enumerate(order.values()))
    return Resolved(wrapper.module, scopes, found[ExpressionContextProvider],  # type: ignore[arg-type]
                    list(order) if once else None)
