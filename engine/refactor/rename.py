"""Rename a symbol (or, by position, a parameter or local) across the workspace.

Where the plan comes from, best first:
1. the language server's rename (prepareRename first), when a server answers: source lsp;
2. without a server, the language family's own rename (Python: jedi's, scope-aware): source ast;
3. other languages without a server: only with ``text=True``, identifier-bounded
   occurrences in files of the same language: source regex, low confidence.
Checks before any plan: the new name is an identifier and not a keyword, and no
symbol of that name already lives beside the target. After the plan: the family's passes
(engine/refactor/<family>/rename_passes.py, in order) add what the rename cannot see; other
occurrences in strings and comments are reported as warnings.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator

from engine.edits.model import FileChange, Operation, WorkspaceEdit
from engine.edits.verification import capped
from engine.errors import EditsOutsideWorkspace, GraftError, InvalidName, Refused, ServiceUnavailable
from engine.languages import language_of, profile
from engine.answers import ServerEdit, TextEdit
from engine.ports import Answered, LanguageServices
from engine.positions import Position, Range, split_lines
from engine.refactor import language_passes
from engine.refactor.corpus import Corpus
from engine.refactor.leftovers import Leftovers
from engine.refactor.mention_kinds import MentionKind
from engine.refactor.pass_protocol import RenamePass, RenameRequest, RenameTarget, RenameUnavailable, merge
from engine.refactor.plan import RefactorPlan
from engine.symbols import Confidence, Source, Symbol
from engine.workspace import SourceFile, Workspace

_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")


class NameClash(Refused):
    code = "name_clash"


def check_name(new_name: str, language: str | None) -> None:
    kind = profile(language)
    valid = kind.is_identifier(new_name) if kind is not None else _IDENTIFIER.fullmatch(new_name) is not None
    if not valid:
        raise InvalidName(f"{new_name!r} is not a valid identifier in {language or 'this language'}")
    if kind is not None and new_name in kind.keywords:
        raise InvalidName(f"{new_name!r} is a keyword in {language}")


class CompiledImplementation(Refused):
    code = "compiled_module"


_COMPILED_SUFFIXES = (".c", ".cc", ".cpp", ".pyx", ".so", ".pyd", ".rs")


def check_not_compiled(workspace: Workspace, file: str) -> None:
    """Refuse a rename whose symbol is declared in a stub of a compiled module (markupsafe's
    ``_speedups.pyi`` beside ``_speedups.c``): the stub and the imports can be renamed, the
    compiled symbol cannot, and the import would then fail (markupsafe would fall back to its
    pure-Python twin, silently)."""
    if not file.endswith(".pyi") or (workspace.root / file[:-1]).is_file():
        return
    stub = workspace.root / file
    stem = stub.name[: -len(".pyi")]
    compiled = sorted(p.name for p in stub.parent.iterdir()
                      if p.name.startswith(stem + ".") and p.name.endswith(_COMPILED_SUFFIXES)) if stub.parent.is_dir() else []
    if compiled:
        raise CompiledImplementation(
            f"{file} describes a compiled module ({', '.join(compiled)}): renaming the stub and its importers cannot "
            "rename the compiled symbol, and the imports would fail; rename it in the extension's source and rebuild first")


def check_clash(family: list[Symbol], siblings: list[Symbol], new_name: str) -> None:
    """``family``: the definitions being renamed (one, or an overload stack's, a property's)."""
    target = family[-1]
    for sibling in siblings:
        if all(sibling is not member for member in family) and sibling.name == new_name:
            raise NameClash(
                f"{new_name} already exists beside {target.name_path} ({sibling.address}, line {sibling.range.first_line});"
                " renaming would make one hide the other"
            )


def plan_rename(request: RenameRequest) -> RefactorPlan:
    """The rename the request asks for: the server's, else the family's own (jedi for Python),
    else, with ``text``, identifier-bounded occurrences; completed by the family's passes."""
    corpus = Corpus(request.workspace, list(request.files) if request.files is not None else None,
                    request.listing, request.words)
    notes: list[str] = []
    prepared: list[_Passes] = []  # passes prepared beside a server that then failed serve the fallback
    if request.use_server and request.services is not None:
        try:
            return _server_rename(request, request.services, corpus, prepared)
        except ServiceUnavailable as error:
            refusal = language_passes.server_refusal(request.primary, error, request.old_name, request.new_name)
            if refusal is not None:
                raise refusal from None  # the server's own check said no: not a reason to fall back
            if request.require_server:
                raise  # --source lsp: the server's answer or a refusal, never a fallback
            notes.append(f"language server unavailable: {error.message}")
    if request.require_server:
        raise ServiceUnavailable("no language server is configured to rename here, and --source lsp allows no fallback")
    family = language_passes.rename_pipeline(request.primary)
    if family is not None:
        passes = prepared[0] if prepared else _Passes(corpus, request)
        edit, extended = passes.add(family.rename_without_server(request), Source.AST)
        notes += [family.WITHOUT_SERVER, *_covered(request.targets), *extended]
        return _finish(edit, Source.AST, Confidence.MEDIUM, notes, passes.leftovers)
    return _text_rename_plan(request, corpus, notes)


def _server_rename(
    request: RenameRequest, services: LanguageServices, corpus: Corpus, prepared: list[_Passes],
) -> RefactorPlan:
    sources = [corpus.source(target.file) for target in request.targets]
    with _responsive_threads():
        # The server renames in its own process; the passes that only read files run meanwhile.
        sent = threading.Event()
        asked = _WAITING.submit(_asking, services, sources, list(request.targets), request.new_name, sent)
        # Once the request is out: begun at once, the passes shared the interpreter lock
        # with the thread sending it, and the server's start was delayed.
        sent.wait(_SENDING_SECONDS)
        prepared.append(_Passes(corpus, request))
        _read_ahead(corpus, prepared[0].leftovers.files_holding_the_name(), asked.done)
        if request.meanwhile is not None:
            request.meanwhile(asked.done)
        answers = asked.result()
    edit, others = _only_the_old_name(corpus, _merged_answers(corpus, answers), request.old_name)
    asked_again: list[str] = []
    if others:
        answers, edit, others, asked_again = _asked_again(request, services, corpus, sources, others)
    edit, extended = prepared[0].add(edit, Source.LSP)
    confidence = Confidence.HIGH if all(answer.complete for answer in answers) else Confidence.MEDIUM
    notes = [f"from {answers[-1].server}", *answers[-1].notes, *_covered(request.targets), *asked_again,
             *_other_names_note(others, request.old_name), *extended]
    return _finish(edit, Source.LSP, confidence, notes, prepared[0].leftovers)


def _merged_answers(corpus: Corpus, answers: list[Answered[ServerEdit]]) -> WorkspaceEdit:
    server_edits = [_from_server(corpus, answer.value) for answer in answers]
    # One answer is merged already: every change in it was checked for overlaps when built.
    return merge(server_edits) if len(server_edits) > 1 else server_edits[0]


class StaleServerAnswer(Refused):
    code = "stale_server_answer"


def _asked_again(
    request: RenameRequest, services: LanguageServices, corpus: Corpus, sources: list[SourceFile], first: list[_OtherName],
) -> tuple[list[Answered[ServerEdit]], WorkspaceEdit, list[_OtherName], list[str]]:
    """The rename asked again once the server is shown, as they are on disk, the files where its
    answer replaced something other than the old name: (the answers, their edit without what
    still does, what still does, a note). Such an answer may come from an older version of the
    file: tsserver reads a file it has not opened again only once its own watcher reports the
    change, which a rename sent at once overtook, and its edits then land where the old file had
    the name (a use that moved was missed). A server renaming another name on purpose
    (basedpyright, an alias's stub) does so again; anything new the second time means the
    files are still changing, and the plan is refused."""
    paths = sorted({other.path for other in first})
    services.files_changed(paths, paths)
    answers = _asking(services, sources, list(request.targets), request.new_name, threading.Event())
    edit, again = _only_the_old_name(corpus, _merged_answers(corpus, answers), request.old_name)
    new = [other for other in again if other not in first]
    if new:
        raise StaleServerAnswer(
            f"{answers[-1].server} answered the rename from older versions of {', '.join(sorted({o.path for o in new}))} "
            f"than those on disk, also once shown them as they are: the files changed while the plan was made "
            f"({_places(new)}); plan again once they stop changing")
    if len(again) == len(first):
        return answers, edit, again, []
    return answers, edit, again, [f"{answers[-1].server} first answered from an older version of "
                                  f"{', '.join(paths)} than the one on disk; asked again once shown it as it is"]


def _read_ahead(corpus: Corpus, paths: list[str], answered: Callable[[], bool]) -> None:
    """Read, while the server computes, the files its answer will edit (those that hold the old
    name), which the answer is checked against at once; stopped once it is ``answered`` (what is
    left is read as the answer names it). A file that cannot be read is left for that check, which
    reads it again and says why."""
    for path in paths:
        if answered():
            return
        try:
            corpus.source(path)
        except GraftError:
            continue


def _text_rename_plan(request: RenameRequest, corpus: Corpus, notes: list[str]) -> RefactorPlan:
    language = language_of(request.primary)
    if not request.text:
        raise RenameUnavailable(
            f"no language server can rename in {language or request.primary}"
            + (f" ({notes[0]})" if notes else "")
            + "; a text rename renames identifier-bounded occurrences in same-language files (low confidence)",
            option="text",
        )
    edit = _text_rename(corpus, language, request.old_name, request.new_name)
    leftovers = Leftovers(corpus, request.old_name, language)
    return _finish(edit, Source.REGEX, Confidence.LOW, [*notes, "text rename: check every hunk"], leftovers)


_WAITING = ThreadPoolExecutor(8, thread_name_prefix="graft-rename")
"""The threads that wait on a server's rename while the plan's own thread runs the passes: kept
from plan to plan (one each at a time; more only for plans made at once, by a daemon's clients).
A thread started for each plan took milliseconds to start on a loaded machine, before the request
could go out."""

_SENDING_SECONDS = 0.2
"""The longest the passes wait for the rename request to be sent: a bound, not a budget (the
request is out within milliseconds, or the port says sooner that it waits on something else)."""


def _asking(
    services: LanguageServices, sources: list[SourceFile], targets: list[RenameTarget], new_name: str, sent: threading.Event,
) -> list[Answered[ServerEdit]]:
    """The server's renames of every target, one after another; ``sent`` is set once the first
    is on its way, and in any case when they are done or have failed."""
    try:
        return [services.rename(source, target.position, new_name, sent=sent.set) for source, target in zip(sources, targets)]
    finally:
        sent.set()


@contextmanager
def _responsive_threads() -> Iterator[None]:
    """A short GIL switch interval while the passes run beside the server's request: the thread
    that sends the request and reads the answer otherwise waits a whole default switch interval for the GIL at each
    step (send, each chunk of the answer), which added up on every rename."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)
    try:
        yield
    finally:
        sys.setswitchinterval(previous)


class _Passes:
    """The family's passes for one rename. Everything that only reads files is done on
    construction, before the server's (or jedi's) edit is known; :meth:`add` runs them on it."""

    def __init__(self, corpus: Corpus, request: RenameRequest) -> None:
        # Looked up here, once the server's request is out: the family's passes import slowly.
        family = language_passes.rename_pipeline(request.primary)
        self.leftovers = Leftovers(corpus, request.old_name, language_of(request.primary))
        self.passes: list[RenamePass] = [made() for made in family.RENAME_PASSES] if family is not None else []
        for each in self.passes:
            each.prepare(corpus, request)

    def add(self, edit: WorkspaceEdit, source: Source) -> tuple[WorkspaceEdit, list[str]]:
        notes: list[str] = []
        for each in self.passes:
            edit, added = each.add(edit, source)
            notes += added
        return edit, notes


def _covered(targets: tuple[RenameTarget, ...]) -> list[str]:
    if len(targets) < 2:
        return []
    return [f"also renamed with it: {', '.join(f'{t.file}:{t.position.line + 1}' for t in targets[1:])}"]


def _from_server(corpus: Corpus, server_edit: ServerEdit) -> WorkspaceEdit:
    if server_edit.created or server_edit.renamed or server_edit.deleted:
        raise RenameUnavailable("the server's rename also creates, moves or deletes files; use rename-file for that")
    # The converter leaves a file outside the root absolute (a package resolved to an installed copy).
    outside = [file_edits.file for file_edits in server_edit.files if os.path.isabs(file_edits.file)]
    if outside:
        raise EditsOutsideWorkspace(outside, "the server's rename")
    changes = []
    for file_edits in server_edit.files:
        source = corpus.source(file_edits.file)  # refuses files outside the workspace
        changes.append(FileChange(source.path, file_edits.edits, source.sha256))
    if not changes:
        raise RenameUnavailable("the server found nothing to rename at that position")
    return WorkspaceEdit(tuple(changes))


@dataclass(frozen=True)
class _OtherName:
    """An edit of the server's that replaces something other than the old name."""

    path: str
    line: int
    column: int
    text: str
    """What the file holds there (the first 40 characters)."""


def _only_the_old_name(corpus: Corpus, edit: WorkspaceEdit, old_name: str) -> tuple[WorkspaceEdit, list[_OtherName]]:
    """The server's edit without the edits that replace some other name, and those. Renaming an
    alias's stub declaration (``def padnone`` in a .pyi, where the module has ``padnone = pad_none``)
    made basedpyright rename the aliased function as well: ``pad_nones = pad_nones``."""
    kept_changes: list[Operation] = []
    others: list[_OtherName] = []
    for change in edit.operations:
        if not isinstance(change, FileChange):
            kept_changes.append(change)
            continue
        source = corpus.source(change.path)
        words = corpus.words_in(old_name, source)  # the leftovers' scan, made while the server computed
        if words is not None and words.issuperset(change.spans):
            kept_changes.append(change)  # the usual case: each edit replaces a word of the old name
            continue
        text, starts = source.text, source.line_starts
        kept = []
        for text_edit, (line, column, end_line, end_column) in zip(change.edits, change.spans):
            start = starts[line] + column
            end = starts[end_line] + end_column
            if text[start:end] == old_name or start == end:
                kept.append(text_edit)
            else:
                where = text_edit.range.start
                others.append(_OtherName(change.path, where.line, where.column, text[start:end][:40]))
        if len(kept) == len(change.edits):
            kept_changes.append(change)  # the usual case: not built again
        elif kept:
            kept_changes.append(FileChange(change.path, tuple(kept), change.expected_sha256))
    if not others:
        return edit, []
    return WorkspaceEdit(tuple(kept_changes), edit.annotations), others


def _places(others: list[_OtherName]) -> str:
    return ", ".join(f"{o.path}:{o.line + 1} ({o.text!r})" for o in others[:6]) + (" …" if len(others) > 6 else "")


def _other_names_note(others: list[_OtherName], old_name: str) -> list[str]:
    if not others:
        return []
    return [f"the server also renamed other names, left as they are: {_places(others)} (only {old_name} is renamed)"]


def _text_rename(corpus: Corpus, language: str | None, old: str, new: str) -> WorkspaceEdit:
    pattern = re.compile(rf"(?<![\w$]){re.escape(old)}(?![\w$])")
    changes = []
    for path in corpus.mentioning(old, language):
        if language_of(path) != language:
            continue
        source = corpus.source(path)
        edits = [
            TextEdit(Range(Position(n, m.start()), Position(n, m.end())), new)
            for n, line in enumerate(split_lines(source.text)) for m in pattern.finditer(line)
        ]
        if edits:
            changes.append(FileChange(path, tuple(edits), source.sha256))
    return WorkspaceEdit(tuple(changes))


def _finish(edit: WorkspaceEdit, source: Source, confidence: Confidence, notes: list[str], leftovers: Leftovers) -> RefactorPlan:
    left, warnings = leftovers.found(edit)
    if any(leftover.kind is MentionKind.CODE for leftover in left):
        # A use in code the rename left is another symbol of that name or a reference it missed:
        # which one is not known, so the plan cannot claim high (the warning lists them).
        confidence = capped(confidence, Confidence.MEDIUM)
    return RefactorPlan("rename", edit, source, confidence, [*notes, *warnings])
