"""A server's own refactorings of a span (extract function, extract constant, inline call) as
edits: listed by kind, then turned into one edit without anything written.

Servers carry such an edit in one of two ways, both handled here:
- gopls lists the action with ``data`` and fills in its edit on ``codeAction/resolve`` (the client
  declares ``resolveSupport`` for ``edit``);
- typescript-language-server lists a command, ``_typescript.applyRefactoring``, which asks tsserver
  for the edit and sends it back by ``workspace/applyEdit``: the command is run with the edit
  captured (reported applied to the server, never written), as the move to another file is.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types as t

from engine.answers import CodeAction, ServerEdit
from engine.errors import UnsupportedByServer
from engine.languages import language_of
from engine.ports import Answered
from engine.positions import Range
from lsp_pool.errors import Unsupported

if TYPE_CHECKING:
    from lsp_pool.features import LanguageApi


async def refactorings(api: LanguageApi, path: Path, span: Range, kind: str) -> Answered[list[CodeAction]]:
    """The refactorings of ``kind`` (``refactor.extract.function``) the server offers for ``span``,
    its sub-kinds included; UnsupportedByServer when the serving server has no refactorings at all."""
    server = api.server_for(path)
    await server.ensure_started()
    if server.spec.no_refactor_actions:
        raise UnsupportedByServer(f"{server.spec.id} {server.server_version or ''}: {server.spec.no_refactor_actions}")
    offered = await api.code_actions(path, span, only=[kind])
    # A server may answer more than the kind asked for (the kinds are a filter it may ignore).
    kept = [action for action in offered.value if action.kind == kind or action.kind.startswith(kind + ".")]
    return Answered(kept, offered.server, offered.complete)


async def refactoring_edit(api: LanguageApi, path: Path, action: CodeAction) -> Answered[ServerEdit]:
    """The edit ``action`` makes: its own, the resolved one, or the one its command sends back."""
    resolved = await api.resolve_code_action(path, action)
    server = resolved.server or api.server_for(path).spec.id
    if resolved.value.edit is not None:
        return Answered(resolved.value.edit, server, resolved.complete)
    handle = resolved.value.handle
    command = handle if isinstance(handle, t.Command) else handle.command if isinstance(handle, t.CodeAction) else None
    if command is None:
        raise Unsupported(f"{server} offered {action.title!r} with neither an edit nor a command to compute one")
    answer = await api.execute_command(language_of(path.name) or "", command.command, list(command.arguments or []), path=path)
    _reply, edits = answer.value
    if not edits:
        raise Unsupported(f"{answer.server} offered {action.title!r} but sent no edit for it")
    return Answered(ServerEdit.joined(edits), answer.server, answer.complete)
