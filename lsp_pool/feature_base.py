"""The plumbing every request of :class:`lsp_pool.features.LanguageApi` goes through: the server
for a file, its view of the file brought up to date, readiness, and the answer converted."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Callable

from lsprotocol import types as t

from engine.errors import UnsupportedByServer
from engine.languages import language_of
from engine.ports import Answered
from engine.answers import Location
from engine.positions import Position
from lsp_pool.convert import Converter
from lsp_pool.errors import ServerNotFound
from lsp_pool.pool import Pool
from lsp_pool.server import ManagedServer


class FeatureBase:
    """One workspace root over the pool."""

    def __init__(self, pool: Pool, root: Path) -> None:
        self.pool = pool
        self.root = root.resolve()

    def server_for(self, path: Path) -> ManagedServer:
        language = language_of(path.name)
        if language is None:
            raise ServerNotFound(f"no language is known for {path.name}")
        return self.pool.server_for(language, self.root, path)

    async def _ask(
        self, path: Path, method: str, params: Any, *, allow_incomplete: bool = False,
        read: Callable[[Converter, Any], Any] | None = None,
    ) -> tuple[Any, bool, ManagedServer, Converter]:
        """(the answer, whether complete, the server, its converter); ``read``: what turns a
        workspace edit's JSON into the answer, run as it is read (Connection.request)."""
        server = self.server_for(path)
        await server.ensure_started()
        converter = Converter(self.root, server.encoding)
        server.use_file(path, open_it=server.spec.needs_open)
        read_result = functools.partial(read, converter) if read is not None else None
        reply = await server.request(method, params, allow_incomplete=allow_incomplete, read_result=read_result)
        return reply.value, reply.complete, server, converter

    async def _positional(self, path: Path, position: Position) -> tuple[t.TextDocumentIdentifier, t.Position]:
        server = self.server_for(path)
        await server.ensure_started()
        converter = Converter(self.root, server.encoding)
        return t.TextDocumentIdentifier(uri=path.as_uri()), converter.to_lsp_position(path, position)

    async def _locations(self, path: Path, position: Position, method: str, params_type: type) -> Answered[list[Location]]:
        document, lsp_position = await self._positional(path, position)
        value, complete, server, converter = await self._ask(path, method, params_type(text_document=document, position=lsp_position))
        return Answered(converter.locations(value), server.spec.id, complete)

    async def _require(self, path: Path, capability: str, method: str) -> ManagedServer:
        """The file's server, started, when it declares ``capability``; else UnsupportedByServer
        naming the server and the request, since no other source has what it would answer."""
        server = self.server_for(path)
        await server.ensure_started()
        if server.capabilities is None or not getattr(server.capabilities, capability, None):
            version = f" {server.server_version}" if server.server_version else ""
            raise UnsupportedByServer(f"{server.spec.id}{version}, which serves {path.name}, does not offer {method}")
        return server
