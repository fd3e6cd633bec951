"""A server's own refactorings of a span (extract function, extract constant, inline call) as
edits: listed by kind, then turned into one edit without anything written.

Servers carry such an edit in one of two ways, both handled here:
- gopls lists the action with ``data`` and fills in its edit on ``codeAction/resolve`` (the client
  declares ``resolveSupport`` for ``edit``);
- typescript-language-server lists a command, ``_typescript.applyRefactoring``, which asks tsserver
  for the edit and sends it back by ``workspace/applyEdit``: the command is run with the edit
  captured (reported applied to the server, never written), as the move to another file is.

A TypeScript 7 project's server has no refactorings: they are asked of its companion, a pinned
TypeScript 6 tsserver beside it (lsp_pool.typescript_companion), and said to come from it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types as t

from engine.answers import CodeAction, ServerEdit
from engine.languages import language_of
from engine.ports import Answered
from engine.positions import Range
from lsp_pool.errors import Unsupported

if TYPE_CHECKING:
    from lsp_pool.features import LanguageApi


async def refactorings(api: LanguageApi, path: Path, span: Range, kind: str) -> Answered[list[CodeAction]]:
    """The refactorings of ``kind`` (``refactor.extract.function``) offered for ``span``, its
    sub-kinds included, by the file's server or, where that one has none (TypeScript 7's), by its
    companion (:meth:`~lsp_pool.edit_requests.EditRequests.refactoring_server`); UnsupportedByServer
    when neither can."""
    server, said = await api.refactoring_server(path)
    offered = await api.code_actions(path, span, only=[kind], server=server)
    # A server may answer more than the kind asked for (the kinds are a filter it may ignore).
    kept = [action for action in offered.value if action.kind == kind or action.kind.startswith(kind + ".")]
    return Answered(kept, said, offered.complete)


async def refactoring_edit(api: LanguageApi, path: Path, action: CodeAction) -> Answered[ServerEdit]:
    """The edit ``action`` makes: its own, the resolved one, or the one its command sends back,
    from the server that offered it (:func:`refactorings`)."""
    server, said = await api.refactoring_server(path)
    resolved = await api.resolve_code_action(path, action, server=server)
    if resolved.value.edit is not None:
        return Answered(resolved.value.edit, said, resolved.complete)
    handle = resolved.value.handle
    command = handle if isinstance(handle, t.Command) else handle.command if isinstance(handle, t.CodeAction) else None
    if command is None:
        raise Unsupported(f"{said} offered {action.title!r} with neither an edit nor a command to compute one")
    answer = await api.execute_command(language_of(path.name) or "", command.command, list(command.arguments or []),
                                       path=path, server=server)
    _reply, edits = answer.value
    if not edits:
        raise Unsupported(f"{said} offered {action.title!r} but sent no edit for it")
    return Answered(ServerEdit.joined(edits), said, answer.complete)
