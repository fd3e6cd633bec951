"""Answers a language server gives about code, as engine values: hover and code actions.

``hover`` asks the server (LSP ``textDocument/hover``) and, when no server answers, falls back to
the syntax tree's signature and docstring, labelled ``source: ast``. ``list_code_actions`` lists
the server's quick fixes, refactorings and source actions for lines of a file, each with an id;
``code_action_edit`` turns the action an id names into a :class:`WorkspaceEdit` that the
journaled apply writes. A server is never asked to apply an edit or run a command itself: an
action that only runs a command is listed as not applicable. Code actions have no fallback.

The functions take the engine through :class:`AnswerContext` rather than importing
``engine.api``, which sits above this module.
"""

from __future__ import annotations

import ast as python_ast
import hashlib
import inspect
import re
from dataclasses import dataclass, field, replace
from typing import Protocol

from engine.answers import CodeAction, Hover, ServerEdit
from engine.edits.model import WorkspaceEdit
from engine.errors import GraftError, Refused, ServiceUnavailable, SymbolNotFound, UsageError
from engine.extract import FileSymbols
from engine.graph import GraphQueries
from engine.languages import language_of
from engine.names import Address, PositionAddress, parse_address
from engine.ports import Answered, LanguageServices
from engine.positions import Position, Range, split_lines
from engine.refactor.corpus import Corpus
from engine.refactor.rename import _from_server as workspace_edit_of
from engine.references import Navigator
from engine.resolve import checked_position, declaration_at, name_at, symbol_at
from engine.symbols import Confidence, Source, Symbol
from engine.workspace import SourceFile, Workspace

MAX_DIAGNOSTICS = 30
"""Diagnostics of the listed lines whose quick fixes are asked for one by one (a server offers
some fixes only when asked at the diagnostic itself); the rest get the fixes offered for the lines."""


class AnswerContext(Protocol):
    """What these answers need of the engine (``engine.api.Engine`` provides it)."""

    workspace: Workspace
    services: LanguageServices | None

    @property
    def use_server(self) -> bool: ...

    @property
    def require_server(self) -> bool: ...

    def graph(self) -> GraphQueries: ...

    def outline(self, path: str) -> FileSymbols: ...

    def resolve(self, address: Address) -> Symbol: ...


# -- hover ---------------------------------------------------------------------


@dataclass(frozen=True)
class HoverAnswer:
    target: str
    """The address asked about, as given."""
    text: str
    """What the server shows (Markdown or plain text), or the fallback's signature and docstring as Markdown."""
    signature: str
    """The first code block of the text: the declaration, as the server prints it or as it is written."""
    doc: str
    """The documentation: the text without its signature block."""
    about: str | None
    """The address of the symbol the answer is about; None for a name that is no symbol of the
    workspace (a library's, a parameter, a local) or when it could not be told."""
    source: Source
    confidence: Confidence
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "target": self.target, "about": self.about, "signature": self.signature, "doc": self.doc, "text": self.text,
            "source": self.source.value, "confidence": self.confidence.value, "notes": list(self.notes),
        }


def hover(engine: AnswerContext, target: str) -> HoverAnswer:
    """The type, signature and documentation of what ``target`` names.

    ``FILE:LINE:COL`` (1-based) is the name at that column: the callee of a call, not the function
    the call is in. A name path (``[FILE:]Class/method``) is that symbol; ``FILE:LINE`` the innermost
    symbol around the line. The server's hover when it answers; else, unless the engine requires a
    server, the symbol's signature and docstring from the syntax tree (``source: ast``, confidence
    medium; low when the name could not be resolved and the answer is about the symbol around it).
    """
    address = parse_address(target)
    if isinstance(address, PositionAddress) and address.column is not None:
        return _hover_at(engine, target, address)
    notes: list[str] = []
    symbol = engine.resolve(address)
    if isinstance(address, PositionAddress):
        notes.append(f"{address} gives no column: the answer is about the innermost symbol around line {address.line}")
    source = engine.workspace.read(symbol.file)
    served = _served_hover(engine, source, symbol.selection_range.start, symbol.address, notes)
    if served is not None:
        return _server_answer(target, served, symbol.address, notes)
    return _symbol_answer(engine, target, symbol, Confidence.MEDIUM, notes)


def _hover_at(engine: AnswerContext, target: str, address: PositionAddress) -> HoverAnswer:
    source = engine.workspace.read(address.file)
    position = checked_position(source.text, address)
    notes: list[str] = []
    served = _served_hover(engine, source, position, str(address), notes)
    if served is not None:
        try:
            about: str | None = engine.resolve(address).address
        except GraftError as error:
            about = None
            notes.append(f"which symbol of the workspace this is could not be told: {error.message}")
        return _server_answer(target, served, about, notes)
    return _syntactic_hover_at(engine, target, address, source, position, notes)


def _served_hover(
    engine: AnswerContext, source: SourceFile, position: Position, where: str, notes: list[str],
) -> Answered[Hover] | None:
    """The server's hover, or None with the reason in ``notes`` (raised instead when the engine
    requires a server)."""
    fallback = "signature and documentation from the syntax tree"
    if not engine.use_server:
        notes.append(f"the source preference asks no language server: {fallback}")
        return None
    if engine.services is None:
        if engine.require_server:
            raise ServiceUnavailable("hover needs a language server, and no language-server support is installed")
        notes.append(f"no language-server support is installed: {fallback}")
        return None
    try:
        answer = engine.services.hover(source, position)
    except ServiceUnavailable as error:
        if engine.require_server:
            raise
        notes.append(f"language server unavailable: {error.message}; {fallback}")
        return None
    found = answer.value
    if found is None or not found.text.strip():
        if engine.require_server:
            raise SymbolNotFound(f"{answer.server} has no hover at {where}")
        notes.append(f"{answer.server} has no hover at {where}: {fallback}")
        return None
    return Answered(found, answer.server, answer.complete, answer.notes)


def _server_answer(target: str, answer: Answered[Hover], about: str | None, notes: list[str]) -> HoverAnswer:
    signature, doc = split_hover(answer.value.text)
    confidence = Confidence.HIGH if answer.complete else Confidence.MEDIUM
    served_notes = [f"from {answer.server}"] + ([] if answer.complete else [f"{answer.server} had not finished indexing"])
    return HoverAnswer(target, answer.value.text, signature, doc, about, Source.LSP, confidence, [*served_notes, *notes])


def _syntactic_hover_at(
    engine: AnswerContext, target: str, address: PositionAddress, source: SourceFile, position: Position, notes: list[str],
) -> HoverAnswer:
    """The fallback at a position: the declaration whose name is there, else the declaration the
    name resolves to in the project graph, else (low) the symbol around the position."""
    outline = engine.outline(address.file)
    declared = declaration_at(outline, position)
    if declared is not None:
        return _symbol_answer(engine, target, declared, Confidence.MEDIUM, [*notes, f"{address} is on the declaration's own name"])
    if name_at(source, position) is None:
        line = split_lines(source.text)[position.line]
        shown = repr(line[position.column]) if position.column < len(line) else "the end of the line"
        return _enclosing_answer(engine, target, outline, address, [*notes, f"no name at {address} (the column is on {shown})"])
    navigator = Navigator(engine.workspace, engine.graph, None, use_server=False, require_server=False)
    try:
        answer = navigator.definition(str(address))
    except SymbolNotFound as error:
        return _enclosing_answer(engine, target, outline, address, [*notes, error.message])
    for location in answer.locations:
        if not location.inside_workspace or language_of(location.file) is None:
            continue
        symbol = declaration_at(engine.outline(location.file), location.range.start)
        if symbol is not None:
            resolved = f"{address} names {symbol.address}, resolved by the project graph"
            return _symbol_answer(engine, target, symbol, Confidence.MEDIUM, [*notes, resolved])
    where = ", ".join(f"{loc.file}:{loc.range.start.line + 1}" for loc in answer.locations) or "no place"
    return _enclosing_answer(engine, target, outline, address, [*notes, f"the graph resolves the name to {where}, which is no symbol of an outline"])


def _enclosing_answer(
    engine: AnswerContext, target: str, outline: FileSymbols, address: PositionAddress, notes: list[str],
) -> HoverAnswer:
    try:
        enclosing = symbol_at(outline, address)
    except SymbolNotFound as error:
        raise SymbolNotFound(f"no hover at {address}: {'; '.join([*notes, error.message])}", error.suggestions) from None
    said = f"the name at {address} could not be resolved to a symbol: the answer is about the symbol around it, {enclosing.address}"
    return _symbol_answer(engine, target, enclosing, Confidence.LOW, [*notes, said])


def _symbol_answer(engine: AnswerContext, target: str, symbol: Symbol, confidence: Confidence, notes: list[str]) -> HoverAnswer:
    """A symbol's signature and docstring as a hover, labelled as its symbol is at best."""
    source = engine.workspace.read(symbol.file)
    doc = clean_doc(text_in(source.text, symbol.doc_range)) if symbol.doc_range is not None else ""
    signature = symbol.signature or symbol.name
    text = f"```{source.language or ''}\n{signature}\n```" + (f"\n---\n{doc}" if doc else "")
    label = Source.REGEX if symbol.source is Source.REGEX else Source.AST
    weakest = min((confidence, symbol.confidence), key=_CONFIDENCE_ORDER.index)
    return HoverAnswer(target, text, signature, doc, symbol.address, label, weakest, notes)


_CONFIDENCE_ORDER = (Confidence.LOW, Confidence.MEDIUM, Confidence.HIGH)
_FENCE = re.compile(r"```[^\n]*\n(.*?)\n?```", re.S)
_RULE = re.compile(r"(?:-{3,}|\*{3,}|_{3,})")
_COMMENT_START = re.compile(r"^(?:/\*\*|/\*!|/\*|///|//!|//|\*(?!/)|#)")


def split_hover(text: str) -> tuple[str, str]:
    """A hover's signature (its first code block) and documentation (the rest, without the
    horizontal rules around it); a hover without a code block is all documentation."""
    found = _FENCE.search(text)
    if found is None:
        return "", _strip_rules(text)
    return found.group(1).strip(), _strip_rules(text[:found.start()] + "\n" + text[found.end():])


def _strip_rules(text: str) -> str:
    lines = text.strip().splitlines()
    while lines and (not lines[0].strip() or _RULE.fullmatch(lines[0].strip())):
        lines.pop(0)
    while lines and (not lines[-1].strip() or _RULE.fullmatch(lines[-1].strip())):
        lines.pop()
    return "\n".join(lines)


def text_in(text: str, span: Range) -> str:
    lines = split_lines(text)
    start, end = span.start, span.end
    if start.line == end.line:
        return lines[start.line][start.column:end.column]
    return "\n".join([lines[start.line][start.column:], *lines[start.line + 1:end.line], lines[end.line][:end.column]])


def clean_doc(raw: str) -> str:
    """A docstring's value (a Python string literal, read as a literal, never run), or a doc
    comment without its comment markers."""
    stripped = raw.strip()
    if stripped[:1] in "\"'" or stripped[:2].lower() in ('r"', "r'", 'u"', "u'"):
        try:
            value = python_ast.literal_eval(stripped)
        except (ValueError, SyntaxError):
            value = None
        if isinstance(value, str):
            return inspect.cleandoc(value)
    lines = []
    for line in stripped.splitlines():
        line = _COMMENT_START.sub("", line.strip())
        lines.append(line.removesuffix("*/").strip())
    return "\n".join(lines).strip()


# -- code actions ----------------------------------------------------------------


class StaleCodeAction(Refused):
    """An action id from a listing of the file as it was before it changed."""

    code = "stale_code_action"


class UnknownCodeAction(Refused):
    """An action id the server's listing for those lines no longer holds."""

    code = "unknown_code_action"


class CodeActionNotApplicable(Refused):
    """An action codegraft will not apply: it only runs a server command, the server disabled it,
    or its edit creates, renames or deletes files."""

    code = "code_action_not_applicable"


class MalformedActionId(UsageError):
    code = "malformed_action_id"


@dataclass(frozen=True)
class ActionInfo:
    id: str
    """Names this action for :func:`code_action_edit` while the file is unchanged:
    ``START-END.INDEX.ACTION.FILE`` (the lines listed, the place in the listing, a hash of its
    kind, title and edit, the first 8 hex digits of the file's sha256)."""
    title: str
    kind: str
    """The LSP kind: ``quickfix``, ``refactor.extract``, ``source.organizeImports``…; ``command``
    for a bare command."""
    applicable: bool
    """Whether :func:`code_action_edit` can turn it into an edit (see ``notes`` when not)."""
    preferred: bool
    """The server marks it as the fix to choose."""
    fixes: list[str]
    """The diagnostics it was offered for (``line 13: "path" is not defined``)."""
    edits: list[str]
    """Where its edit changes files (``pkg/m.py:13`` or ``pkg/m.py:3-5``), when the listing carries the edit."""
    notes: list[str]
    server: str

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id, "title": self.title, "kind": self.kind, "applicable": self.applicable,
            "preferred": self.preferred, "fixes": list(self.fixes), "edits": list(self.edits), "notes": list(self.notes),
            "server": self.server,
        }


@dataclass
class _Offer:
    action: CodeAction
    fixes: list[str]


def list_code_actions(engine: AnswerContext, path: str, start_line: int, end_line: int) -> list[ActionInfo]:
    """The server's actions for lines ``start_line``..``end_line`` (1-based, inclusive) of a file:
    the quick fixes of each diagnostic on those lines, then what it offers for the lines as a
    whole (refactorings, source actions such as organise imports). Nothing is changed or run.
    Refused with ServiceUnavailable when no language server can answer."""
    services = _services(engine)
    source = engine.workspace.read(path)
    offers, server = _offers(services, source, start_line, end_line)
    infos = []
    for index, offer in enumerate(offers):
        details = services.code_action_details(source, offer.action)
        notes = []
        applicable = offer.action.edit is not None or details.resolvable
        if details.disabled is not None:
            applicable = False
            notes.append(f"the server says it cannot be applied now: {details.disabled}")
        if details.command is not None:
            if applicable:
                notes.append(f"the server would also run its command {details.command!r}, which codegraft does not run: "
                             "only the edit is applied")
            else:
                notes.append(f"it only runs the server command {details.command!r}, which would change files outside the "
                             "journaled apply: codegraft does not run it (not applicable)")
        elif not applicable and details.disabled is None:
            notes.append("it carries no edit, and the server does not resolve actions into edits")
        if offer.action.edit is None and details.resolvable:
            notes.append("its edit is asked of the server (codeAction/resolve) when it is applied")
        if offer.action.edit is not None and _moves_files(offer.action.edit):
            applicable = False
            notes.append("its edit creates, renames or deletes files, which a code action's edit here may not do")
        elif offer.action.edit is not None and not any(f.edits for f in offer.action.edit.files):
            applicable = False
            notes.append("its edit changes nothing")
        infos.append(ActionInfo(
            id=_action_id(source, start_line, end_line, index, offer.action), title=offer.action.title, kind=offer.action.kind,
            applicable=applicable, preferred=details.preferred, fixes=list(offer.fixes), edits=_edit_summary(offer.action.edit),
            notes=notes, server=server,
        ))
    return infos


def code_action_edit(engine: AnswerContext, path: str, action_id: str) -> WorkspaceEdit:
    """The edit of the action ``action_id`` names (from :func:`list_code_actions` of this file), as
    a plan for the journaled apply: each file change carries the hash of the file it was made
    from. The server's edit is asked for (``codeAction/resolve``) when the listing carried none;
    nothing is applied and no command is run. Refused when the file changed since the listing
    (StaleCodeAction), when the server no longer offers the action (UnknownCodeAction), and when
    the action has no edit to apply (CodeActionNotApplicable)."""
    services = _services(engine)
    action_id = action_id.strip()
    start, end, index, digest, file_hash = _parse_id(action_id)
    source = engine.workspace.read(path)
    if not source.sha256.startswith(file_hash):
        raise StaleCodeAction(
            f"{source.path} changed since action {action_id} was listed: list the actions of lines {start}-{end} again "
            "and choose from the new listing"
        )
    offers, server = _offers(services, source, start, end)
    ids = [_action_id(source, start, end, i, offer.action) for i, offer in enumerate(offers)]
    if index < len(offers) and ids[index] == action_id:
        offer = offers[index]
    else:
        # The same action at another place in the listing (a server's order can vary between asks).
        same = [o for o, i in zip(offers, ids) if i.split(".")[2] == digest]
        if len(same) != 1:
            listed = ", ".join(f"{i} ({o.action.title})" for o, i in zip(offers, ids)) or "none"
            raise UnknownCodeAction(
                f"{server or 'the server'} no longer offers action {action_id} for lines {start}-{end} of {source.path}; "
                f"it offers: {listed}"
            )
        offer = same[0]
    action = offer.action
    details = services.code_action_details(source, action)
    if details.disabled is not None:
        raise CodeActionNotApplicable(f"{action.title!r}: the server says it cannot be applied now: {details.disabled}")
    edit: ServerEdit | None = action.edit
    if edit is None:
        if not details.resolvable:
            what = f"only runs the server command {details.command!r}" if details.command else "carries no edit"
            raise CodeActionNotApplicable(
                f"{action.title!r} {what}; codegraft applies edits through its journal and never has a server "
                "change files itself, so this action is not applicable"
            )
        edit = services.code_action_edit(source, action).value
        if edit is None:
            raise CodeActionNotApplicable(f"{action.title!r}: the server resolved it to no edit")
    if _moves_files(edit):
        raise CodeActionNotApplicable(f"{action.title!r} creates, renames or deletes files, which a code action's edit here may not do")
    changed = tuple(f for f in edit.files if f.edits)
    if not changed:
        raise CodeActionNotApplicable(f"{action.title!r}: the server's edit changes nothing")
    return workspace_edit_of(Corpus(engine.workspace, []), replace(edit, files=changed))


def _services(engine: AnswerContext) -> LanguageServices:
    if not engine.use_server:
        raise ServiceUnavailable(
            "code actions come from a language server, and the source preference asks none (use auto or lsp)"
        )
    if engine.services is None:
        raise ServiceUnavailable("code actions need a language server, and no language-server support is installed")
    return engine.services


def _offers(services: LanguageServices, source: SourceFile, start_line: int, end_line: int) -> tuple[list[_Offer], str]:
    """What the server offers for the lines, in a fixed order: each diagnostic's quick fixes
    (asked at the diagnostic, where servers compute them), then the actions for the lines;
    an action offered twice is listed once."""
    lines = split_lines(source.text)
    if start_line < 1 or end_line < start_line:
        raise UsageError(f"lines {start_line}-{end_line}: give 1 <= START <= END")
    checked_position(source.text, PositionAddress(source.path, end_line, None))
    first, last = start_line - 1, end_line - 1
    span = Range(Position(first, 0), Position(last, len(lines[last])))
    diagnostics = services.diagnostics(source, when_ready=True)
    wanted = [d for d in diagnostics.value if d.range.start.line <= last and d.range.end.line >= first][:MAX_DIAGNOSTICS]
    offers: list[_Offer] = []
    server = diagnostics.server
    for diagnostic in wanted:
        answer = services.code_actions(source, diagnostic.range)
        server = answer.server or server
        quick_fixes = [a for a in answer.value if a.kind == "quickfix" or a.kind.startswith("quickfix.")]
        _add(offers, quick_fixes, f"line {diagnostic.range.start.line + 1}: {diagnostic.message}")
    answer = services.code_actions(source, span)
    _add(offers, answer.value, None)
    return offers, answer.server or server


def _add(offers: list[_Offer], actions: list[CodeAction], fix: str | None) -> None:
    for action in actions:
        known = next((offer for offer in offers if _same(offer.action, action)), None)
        if known is None:
            offers.append(_Offer(action, [fix] if fix else []))
        elif fix and fix not in known.fixes:
            known.fixes.append(fix)


def _same(a: CodeAction, b: CodeAction) -> bool:
    if (a.title, a.kind) != (b.title, b.kind):
        return False
    if a.edit is not None or b.edit is not None:
        return a.edit == b.edit
    return a.handle == b.handle


def _moves_files(edit: ServerEdit) -> bool:
    return bool(edit.created or edit.renamed or edit.deleted)


def _edit_summary(edit: ServerEdit | None) -> list[str]:
    if edit is None:
        return []
    found = []
    for file_edits in edit.files:
        if not file_edits.edits:
            continue
        first = min(e.range.start.line for e in file_edits.edits) + 1
        last = max(e.range.end.line for e in file_edits.edits) + 1
        found.append(f"{file_edits.file}:{first}" if first == last else f"{file_edits.file}:{first}-{last}")
    found += [f"creates {path}" for path in edit.created] + [f"renames {old} to {new}" for old, new in edit.renamed]
    return found + [f"deletes {path}" for path in edit.deleted]


def _action_id(source: SourceFile, start_line: int, end_line: int, index: int, action: CodeAction) -> str:
    described = "\n".join([action.kind, action.title, *_edit_summary(action.edit)])
    digest = hashlib.sha256(described.encode("utf-8")).hexdigest()[:8]
    return f"{start_line}-{end_line}.{index}.{digest}.{source.sha256[:8]}"


_ID = re.compile(r"(\d+)-(\d+)\.(\d+)\.([0-9a-f]{8})\.([0-9a-f]{8})")


def _parse_id(action_id: str) -> tuple[int, int, int, str, str]:
    found = _ID.fullmatch(action_id)
    if found is None:
        raise MalformedActionId(
            f"{action_id!r} is not a code action id (START-END.INDEX.ACTION.FILE, as list_code_actions gives them)"
        )
    return int(found.group(1)), int(found.group(2)), int(found.group(3)), found.group(4), found.group(5)
