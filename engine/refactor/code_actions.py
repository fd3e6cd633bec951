"""Extract and inline outside Python: the language server's own refactorings, as a plan.

TypeScript and JavaScript (tsserver, through typescript-language-server) and Go (gopls) compute
extract function, extract constant or variable, and inline themselves. The policy names the
kind of code action; the server's actions of that kind for the span are listed, one is chosen
(:func:`choose_extraction`), and its edit becomes the plan (source ``lsp``), through the same
preview, journaled apply and verification as every edit. Nothing here asks a server to write.

A server picks the new symbol's name (``newFunction``, ``newLocal``, ``newVar``), a name that
occurs nowhere in the file. The name asked for replaces it wherever the server's edit writes it,
which is a rename of that new symbol: the server's name is new to the file, so each of its
occurrences in the edit is the new symbol. It is refused when the asked name is already a word
of the file's code, comments and quoted strings aside (it could capture or shadow another), or
when the edit's new symbol cannot be found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable

from engine.answers import CodeAction, ServerEdit, TextEdit
from engine.edits.model import FileChange, WorkspaceEdit
from engine.errors import Refused, ServiceUnavailable
from engine.languages import language_of, profile_of
from engine.refactor.inlined_comments import uncarried_comments
from engine.refactor.language_passes import finished
from engine.refactor.plan import RefactorPlan
from engine.refactor.rename import NameClash, check_name
from engine.refactor.selection import Selection
from engine.symbols import Confidence, Source

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext, RefactorOperation

SERVED_FAMILIES = ("typescript", "go")
"""Language families whose servers' refactorings codegraft plans with (the kinds below are theirs)."""

_SERVER_NAME = re.compile(r"(?:new[A-Z][A-Za-z]*|extracted[A-Za-z]*)(?:_?\d+)?")
"""The names servers give what they extract: tsserver's newFunction, newLocal, newMethod (with
_1 for a second), gopls's newFunction, newVar, newConst (with 1 for a second)."""
_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_COMMENT_OR_QUOTED = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)
"""Comments and quoted strings of TypeScript, JavaScript and Go, where a name is no binding; a
template literal is kept (its ``${...}`` is code), and a Go raw string with it."""


class NotOffered(Refused):
    """The server offers no refactoring of that kind for the span: it cannot do it there."""

    code = "not_offered"


class CannotName(Refused):
    """The server's edit has no new symbol whose name could be replaced by the one asked for."""

    code = "cannot_name"


@dataclass(frozen=True)
class Wanted:
    """What a policy asks a server for."""

    kind: str
    """The code action kind, ``refactor.extract.function``; its sub-kinds count too."""
    description: str
    """What it does, for messages: "extract a function"."""
    scope: str = "innermost"
    """Which of several scopes the server offers: "innermost" (a variable where the expression
    is), "outermost" (a function at module level, or a method when one is offered), or "module"
    (a constant at module level, refused where the server offers none)."""
    hint: str = "select whole statements or a whole expression"
    """What to try instead, when the server offers nothing."""
    accepted: tuple[str, ...] = ()
    """Of the kinds offered, those that do what is asked (``refactor.extract`` also lists
    extract type, for instance); empty: every kind asked for."""


def is_served(selection: Selection) -> bool:
    """Whether the selection's language is one whose server's refactorings are planned here."""
    language = profile_of(selection.source.path)
    return language is not None and language.family in SERVED_FAMILIES


def plan_server_refactoring(context: PlanContext, operation: RefactorOperation, selection: Selection, wanted: Wanted,
                            new_name: str = "", notes: Callable[[ServerEdit], list[str]] | None = None) -> RefactorPlan:
    """The plan of ``wanted`` on ``selection``, from the server, with its new symbol named ``new_name``,
    and what ``notes`` says of the server's edit among its warnings."""
    services = context.services
    path = selection.source.path
    if services is None or not context.use_server:
        raise ServiceUnavailable(f"{operation.name} on {path} is its language server's refactoring, and no server "
                                 "may answer here (none installed, or the source preference rules servers out)")
    if new_name:
        check_name(new_name, language_of(path))
    offered = services.refactorings(selection.source, selection.range, wanted.kind)
    fitting = [a for a in offered.value if not wanted.accepted or a.kind in wanted.accepted]
    action = choose_extraction(fitting, wanted.scope)
    if action is None:
        raise NotOffered(f"{offered.server} offers no way to {wanted.description} at {selection.describe()} "
                         f"(no {' or '.join(wanted.accepted or (wanted.kind,))} code action there): {wanted.hint}. Nothing was changed")
    answer = services.refactoring_edit(selection.source, action)
    edit = answer.value
    if new_name:
        edit = renamed_new_symbol(edit, selection, new_name)
    plan = RefactorPlan(operation.name, _workspace_edit(context, edit), Source.LSP,
                        Confidence.HIGH if answer.complete else Confidence.MEDIUM,
                        [f"from {answer.server}: {action.title}", *answer.notes, *(notes(edit) if notes else []),
                         *_ignored_options(operation, answer.server)])
    return finished(plan, context, operation, path)


def _ignored_options(operation: RefactorOperation, server: str) -> list[str]:
    """What the user asked that a server's refactoring cannot honour, said rather than dropped."""
    if getattr(operation, "allow_reordering", False):
        return [f"allow_reordering has no effect here: {server}'s refactoring decides what it may reorder, "
                "and codegraft's evaluation-order checks are Python's"]
    return []


def choose_extraction(actions: list[CodeAction], scope: str) -> CodeAction | None:
    """The action to take among those offered: the innermost scope (the server lists it first),
    or the outermost, where a method in the enclosing class is preferred to a module function."""
    if scope == "module":
        return next((a for a in actions if re.search(r"\b(module|global) scope\b", a.title)), None)
    if not actions:
        return None
    if scope == "innermost":
        return actions[0]
    # tsserver's "Extract to method in class 'C'", gopls's "Extract method" (tsserver's "inner
    # function in method 'm'" is no method).
    methods = [a for a in actions if re.match(r"Extract (?:to )?method\b", a.title) or a.kind.endswith(".method")]
    if methods:
        return methods[0]
    return actions[-1]


def renamed_new_symbol(edit: ServerEdit, selection: Selection, new_name: str) -> ServerEdit:
    """``edit`` with the server's name for its new symbol replaced by ``new_name`` wherever the
    edit writes it; refused when that cannot be done safely (see the module's docstring)."""
    text = selection.source.text
    words = set(_IDENTIFIER.findall(text))
    code_words = set(_IDENTIFIER.findall(_COMMENT_OR_QUOTED.sub(" ", text)))
    written = {word for change in edit.files for one in change.edits for word in _IDENTIFIER.findall(one.new_text)}
    fresh = sorted(word for word in written - words if _SERVER_NAME.fullmatch(word))
    if len(fresh) != 1:
        found = f"it writes {', '.join(fresh)}" if fresh else "it writes no name of its own"
        raise CannotName(f"cannot give the new symbol the name {new_name!r}: the server's edit has no single new name "
                         f"to replace ({found}); nothing was changed")
    server_name = fresh[0]
    if new_name == server_name:
        return edit
    if new_name in code_words:
        code = _COMMENT_OR_QUOTED.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
        lines = [str(number + 1) for number, line in enumerate(code.splitlines()) if _word(new_name).search(line)]
        raise NameClash(f"{new_name!r} already occurs in {selection.source.path} (line {', '.join(lines[:5])}): the new "
                        "symbol would clash with it or hide it; choose another name. Nothing was changed")
    pattern = _word(server_name)
    files = tuple(replace(change, edits=tuple(TextEdit(one.range, pattern.sub(new_name, one.new_text)) for one in change.edits))
                  for change in edit.files)
    return replace(edit, files=files)


def _word(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9_$]){re.escape(name)}(?![A-Za-z0-9_$])")


def _workspace_edit(context: PlanContext, edit: ServerEdit) -> WorkspaceEdit:
    if edit.created or edit.renamed or edit.deleted:
        raise NotOffered("the server's refactoring also creates, renames or deletes files; nothing was changed")
    per_file: dict[str, list[TextEdit]] = {}
    for change in edit.files:
        per_file.setdefault(change.file, []).extend(change.edits)
    operations = []
    for path, edits in per_file.items():
        source = context.workspace.read(path)  # refuses anything outside the workspace
        operations.append(FileChange(source.path, tuple(edits), source.sha256))
    return WorkspaceEdit(tuple(operations))




def _family(selection: Selection) -> str:
    language = profile_of(selection.source.path)
    return language.family if language is not None else ""


def extract_function(context: PlanContext, operation: RefactorOperation, selection: Selection, new_name: str) -> RefactorPlan:
    """tsserver's "Extract to function" (module scope, or a method of the enclosing class), gopls's
    "Extract function" (or "Extract method" inside a method)."""
    wanted = Wanted("refactor.extract", "extract a function", "outermost",
                    accepted=("refactor.extract.function", "refactor.extract.method"))
    return plan_server_refactoring(context, operation, selection, wanted, new_name)


def extract_variable(context: PlanContext, operation: RefactorOperation, selection: Selection, new_name: str, *,
                     constant: bool) -> RefactorPlan:
    """tsserver's "Extract to constant" (a ``const`` in the enclosing scope, or at module level for
    ``constant``), gopls's "Extract variable" (or "Extract constant" for ``constant``)."""
    if _family(selection) == "go":
        kind = "refactor.extract.constant" if constant else "refactor.extract.variable"
        wanted = Wanted(kind, "extract a constant" if constant else "extract a variable")
    else:
        wanted = Wanted("refactor.extract.constant", "extract a module-level constant" if constant else "extract a constant",
                        "module" if constant else "innermost",
                        hint="a module-level constant cannot read the function's own names" if constant else Wanted.hint)
    return plan_server_refactoring(context, operation, selection, wanted, new_name)


def inline(context: PlanContext, operation: RefactorOperation, selection: Selection) -> RefactorPlan:
    """tsserver's "Inline variable" at a variable; gopls's "Inline call" at a call (or its
    "Inline variable", where it offers one), saying which of the callee's comments it leaves out."""
    wanted = Wanted("refactor.inline", "inline here", hint="point at a variable (TypeScript, JavaScript) or a call (Go)")
    return plan_server_refactoring(context, operation, selection, wanted,
                                   notes=lambda edit: uncarried_comments(context, selection, edit))
