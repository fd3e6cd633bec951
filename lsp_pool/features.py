"""The typed LSP feature API over the pool: engine positions in, engine values out.

Every call picks the server for the file's language, brings the server's view
of the file up to date, waits for readiness within the server's budget, and
converts the answer in :mod:`lsp_pool.convert`. ``Answered.complete`` is False
when the server had not finished indexing (only where a partial answer is
still worth having, such as diagnostics).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from lsprotocol import types as t

from engine.extract import finalize
from engine.ports import Answered
from engine.answers import CallEdge, HierarchyItem, Hover, Location
from engine.positions import Position
from engine.symbols import Symbol

from lsp_pool.edit_requests import EditRequests


class LanguageApi(EditRequests):
    """Every request, by concern: navigation here, changes in lsp_pool.edit_requests, plumbing in lsp_pool.feature_base."""

    async def document_symbols(self, path: Path) -> Answered[list[Symbol]]:
        params = t.DocumentSymbolParams(text_document=t.TextDocumentIdentifier(uri=path.as_uri()))
        value, complete, server, converter = await self._ask(path, t.TEXT_DOCUMENT_DOCUMENT_SYMBOL, params)
        return Answered(finalize(converter.symbols(value, path, complete=complete)), server.spec.id, complete)

    async def definition(self, path: Path, position: Position) -> Answered[list[Location]]:
        return await self._locations(path, position, t.TEXT_DOCUMENT_DEFINITION, t.DefinitionParams)

    async def declaration(self, path: Path, position: Position) -> Answered[list[Location]]:
        return await self._locations(path, position, t.TEXT_DOCUMENT_DECLARATION, t.DeclarationParams)

    async def references(self, path: Path, position: Position, *, include_declaration: bool = True) -> Answered[list[Location]]:
        document, lsp_position = await self._positional(path, position)
        params = t.ReferenceParams(
            text_document=document, position=lsp_position,
            context=t.ReferenceContext(include_declaration=include_declaration),
        )
        value, complete, server, converter = await self._ask(path, t.TEXT_DOCUMENT_REFERENCES, params)
        return Answered(converter.locations(value), server.spec.id, complete)

    async def implementation(self, path: Path, position: Position) -> Answered[list[Location]]:
        """``textDocument/implementation``: the types that implement an interface, the methods
        that implement an interface's method (UnsupportedByServer when the server has none)."""
        await self._require(path, "implementation_provider", t.TEXT_DOCUMENT_IMPLEMENTATION)
        return await self._locations(path, position, t.TEXT_DOCUMENT_IMPLEMENTATION, t.ImplementationParams)

    async def hover(self, path: Path, position: Position) -> Answered[Hover | None]:
        document, lsp_position = await self._positional(path, position)
        params = t.HoverParams(text_document=document, position=lsp_position)
        value, complete, server, converter = await self._ask(path, t.TEXT_DOCUMENT_HOVER, params)
        return Answered(converter.hover(value, path), server.spec.id, complete)

    async def prepare_call_hierarchy(self, path: Path, position: Position) -> Answered[list[HierarchyItem]]:
        await self._require(path, "call_hierarchy_provider", t.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY)
        return await self._hierarchy_items(path, t.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY, position=position)

    async def incoming_calls(self, path: Path, item: HierarchyItem) -> Answered[list[CallEdge]]:
        params = t.CallHierarchyIncomingCallsParams(item=_server_item(item))
        value, complete, server, converter = await self._ask(path, t.CALL_HIERARCHY_INCOMING_CALLS, params)
        return Answered(converter.call_edges(value, incoming=True), server.spec.id, complete)

    async def outgoing_calls(self, path: Path, item: HierarchyItem) -> Answered[list[CallEdge]]:
        params = t.CallHierarchyOutgoingCallsParams(item=_server_item(item))
        value, complete, server, converter = await self._ask(path, t.CALL_HIERARCHY_OUTGOING_CALLS, params)
        asked = _server_item(item).uri
        return Answered(converter.call_edges(value, incoming=False, asked_uri=asked), server.spec.id, complete)

    async def prepare_type_hierarchy(self, path: Path, position: Position) -> Answered[list[HierarchyItem]]:
        return await self._hierarchy_items(path, t.TEXT_DOCUMENT_PREPARE_TYPE_HIERARCHY, position=position)

    async def supertypes(self, path: Path, item: HierarchyItem) -> Answered[list[HierarchyItem]]:
        return await self._hierarchy_items(path, t.TYPE_HIERARCHY_SUPERTYPES, item=item)

    async def subtypes(self, path: Path, item: HierarchyItem) -> Answered[list[HierarchyItem]]:
        return await self._hierarchy_items(path, t.TYPE_HIERARCHY_SUBTYPES, item=item)

    async def _hierarchy_items(
        self, path: Path, method: str, *, position: Position | None = None, item: HierarchyItem | None = None
    ) -> Answered[list[HierarchyItem]]:
        """A prepare request (at a position) or a follow-up (from an item) that answers hierarchy items."""
        params_type: Any = t.METHOD_TO_TYPES[method][2]  # the request's params class, chosen by method at run time
        if position is not None:
            document, lsp_position = await self._positional(path, position)
            params = params_type(text_document=document, position=lsp_position)
        elif item is not None:
            params = params_type(item=item.handle)
        else:
            raise ValueError("a hierarchy request needs a position or an item")
        value, complete, server, converter = await self._ask(path, method, params)
        return Answered([converter.hierarchy_item(i) for i in value or []], server.spec.id, complete)


def _server_item(item: HierarchyItem) -> t.CallHierarchyItem:
    """The server's own item behind ``item``, as the follow-up request sends it back.
    ``HierarchyItem.handle`` is typed ``object`` to keep the engine free of lsprotocol;
    it holds the item the server sent (see ``Converter.hierarchy_item``)."""
    return cast(t.CallHierarchyItem, item.handle)
