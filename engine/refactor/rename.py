"""Rename a symbol (or, by position, a parameter or local) across the workspace.

Where the plan comes from, best first:
1. the language server's rename (prepareRename first), when a server answers: source lsp;
2. Python without a server: jedi's scope-aware rename: source ast;
3. other languages without a server: only with ``text=True``, identifier-bounded
   occurrences in files of the same language: source regex, low confidence.
Checks before any plan: the new name is an identifier and not a keyword, and no
symbol of that name already lives beside the target. After the plan: other
occurrences in strings and comments, and dynamic lookups, are reported as warnings.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from bisect import bisect_right
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator

from engine.edits.model import FileChange, Operation, WorkspaceEdit
from engine.edits.verification import capped
from engine.errors import EditsOutsideWorkspace, InvalidName, Refused, ServiceUnavailable
from engine.languages import language_of, profile
from engine.answers import ServerEdit, TextEdit
from engine.ports import Answered, LanguageServices
from engine.positions import Position, Range, split_lines
from engine.refactor import language_passes
from engine.refactor.corpus import Corpus
from engine.refactor.mentions import FileWords
from engine.refactor.python.doctests import DoctestPass
from engine.refactor.python.inferred_receivers import (
    Declaration, FixtureMember, attribute_uses, inferred_receiver_uses, without_self_homonyms,
)
from engine.refactor.python.jedi_rename import RenameUnavailable, jedi_rename
from engine.refactor.leftovers import Leftovers
from engine.refactor.mention_kinds import MentionKind
from engine.refactor.python.local_twins import keep_local_twins, possible_twins
from engine.refactor.python.name_capture import name_captures
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


@dataclass(frozen=True)
class RenameTarget:
    """One declaration to rename: the symbol itself, its stub twin, an override in the hierarchy."""

    file: str
    position: Position


Extension = Callable[[Corpus], Callable[[WorkspaceEdit], tuple[WorkspaceEdit, list[str]]]]
"""Adds what the rename itself cannot see. Called with the corpus while the server computes its
rename (scan files then); returns what to do with the server's edit once it is known."""


def plan_rename(
    workspace: Workspace, services: LanguageServices | None, use_server: bool, targets: list[RenameTarget],
    old_name: str, new_name: str, *, text: bool = False, dotted: str | None = None, extend: Extension | None = None,
    files: list[str] | None = None, require_server: bool = False, fixtures: Callable[[Corpus], FixtureMember] | None = None,
    listing: Callable[[], list[str]] | None = None, words: FileWords | None = None, include_docs: bool = False,
) -> RefactorPlan:
    """One rename over every target, merged; warnings are computed once on the merged edit.
    ``dotted`` is the symbol's dotted path (``pkg.mod.name``) when strings may name it;
    ``extend`` adds what the rename itself cannot see (keyword arguments of unresolved calls);
    ``fixtures`` tells what a test's fixture parameters hold (a member's uses on them);
    ``words`` are the files' words a long-lived engine keeps (engine.refactor.mentions);
    ``include_docs`` edits the documentation mentions of a Python symbol, which are otherwise only listed.

    Several targets are needed because a server renames one declaration's references: a
    ``.pyi`` stub beside a module has its own references (pyright then misses every use
    that resolves to the stub), and overrides in subclasses are declarations of their own.
    """
    primary = targets[0].file
    language = language_of(primary)
    notes: list[str] = []
    corpus = Corpus(workspace, files, listing, words)
    passes: _Passes | None = None
    if use_server and services is not None:
        try:
            sources = [corpus.source(target.file) for target in targets]
            with ThreadPoolExecutor(1, thread_name_prefix="graft-rename") as waiting, _responsive_threads():
                # The server renames in its own process; the passes that only read files run meanwhile.
                sent = threading.Event()
                asked = waiting.submit(_asking, services, sources, targets, new_name, sent)
                # Once the request is out: begun at once, the passes shared the interpreter lock
                # with the thread sending it, and the server's start was delayed.
                sent.wait(_SENDING_SECONDS)
                passes = _Passes(corpus, dotted, old_name, new_name, language, extend, primary, targets[0].position.line, include_docs)
                answers = asked.result()
            server_edits = [_from_server(corpus, answer.value) for answer in answers]
            # One answer is merged already: every change in it was checked for overlaps when built.
            edit = merge(server_edits) if len(server_edits) > 1 else server_edits[0]
            edit, other_names = _only_the_old_name(corpus, edit, old_name)
            edit, extended = passes.add(edit, primary)
            if language == "python":
                declarations = [Declaration(t.file, t.position) for t in targets]
                if fixtures is not None:
                    edit, homonyms = without_self_homonyms(corpus, edit, old_name, declarations, fixtures(corpus))
                    extended = [*extended, *homonyms]
                edit, inferred = inferred_receiver_uses(workspace, corpus, edit, old_name, new_name, declarations,
                                                        passes.attribute_uses, fixture_member=fixtures(corpus) if fixtures else None)
                # Last: a module with a twin of its own keeps its name, whatever a pass added there.
                edit, twins = keep_local_twins(corpus, edit, primary, old_name, new_name, passes.possible_twins)
                extended = [*extended, *inferred, *twins]
            extended = [*other_names, *extended]
            complete = all(answer.complete for answer in answers)
            confidence = Confidence.HIGH if complete else Confidence.MEDIUM
            notes = [f"from {answers[-1].server}", *answers[-1].notes, *_covered(targets), *extended]
            return _finish("rename", edit, Source.LSP, confidence, notes, passes.leftovers, new_name)
        except ServiceUnavailable as error:
            refusal = language_passes.server_refusal(primary, error, old_name, new_name)
            if refusal is not None:
                raise refusal from None  # the server's own check said no: not a reason to fall back
            if require_server:
                raise  # --source lsp: the server's answer or a refusal, never a fallback
            notes.append(f"language server unavailable: {error.message}")
    if require_server:
        raise ServiceUnavailable("no language server is configured to rename here, and --source lsp allows no fallback")
    if language == "python":
        passes = passes or _Passes(corpus, dotted, old_name, new_name, language, extend, primary, targets[0].position.line,
                                   include_docs)
        edit = merge([jedi_rename(workspace, t.file, t.position, new_name) for t in targets])
        edit, extended = passes.add(edit, primary)
        if fixtures is not None:
            declarations = [Declaration(t.file, t.position) for t in targets]
            edit, inferred = inferred_receiver_uses(workspace, corpus, edit, old_name, new_name, declarations,
                                                    passes.attribute_uses, ask_jedi=False, fixture_member=fixtures(corpus))
            extended = [*extended, *inferred]
        edit, twins = keep_local_twins(corpus, edit, primary, old_name, new_name, passes.possible_twins)
        extended = [*extended, *twins]
        notes += ["scope-aware rename by jedi", *_covered(targets), *extended]
        return _finish("rename", edit, Source.AST, Confidence.MEDIUM, notes, passes.leftovers, new_name)
    if not text:
        raise RenameUnavailable(
            f"no language server can rename in {language or primary}"
            + (f" ({notes[0]})" if notes else "")
            + "; a text rename renames identifier-bounded occurrences in same-language files (low confidence)",
            option="text",
        )
    edit = _text_rename(corpus, language, old_name, new_name)
    leftovers = Leftovers(corpus, old_name, language)
    return _finish("rename", edit, Source.REGEX, Confidence.LOW, [*notes, "text rename: check every hunk"], leftovers, new_name)


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
    """What completes a rename beyond the server's (or jedi's) edit. Everything that only reads
    files is done on construction, before that edit is known; :meth:`add` merges it in."""

    def __init__(
        self, corpus: Corpus, dotted: str | None, old: str, new: str, language: str | None, extend: Extension | None,
        defining_file: str, declared_at: int | None = None, include_docs: bool = False,
    ) -> None:
        self.corpus, self.old, self.new = corpus, old, new
        self.dotted_strings = dotted_strings(corpus, dotted, old, new)
        self.extension = extend(corpus) if extend is not None else None
        self.leftovers = Leftovers(corpus, old, language)
        # Every file a rename edits mentions the old name; their __all__ entries are looked up now.
        python_files = corpus.mentioning(old, "python") if language == "python" else []
        self.all_entries = {path: all_entries(corpus.source(path), old) for path in python_files}
        self.possible_twins = possible_twins(corpus, python_files, old)
        self.attribute_uses = attribute_uses(corpus, old) if language == "python" else []
        # Symbols only (they have a dotted path): a parameter's or local's name on an example line
        # is as likely another function's keyword (`pred=` in a sibling's doctest) as this one.
        self.doctests = DoctestPass(corpus, defining_file, old, new, declared_at, include_docs, dotted) if language == "python" and dotted is not None else None
        self.lookups = dynamic_module_lookups(corpus, defining_file, old) if language == "python" else []

    def add(self, edit: WorkspaceEdit, defining_file: str) -> tuple[WorkspaceEdit, list[str]]:
        edit = with_all_entries(self.corpus, edit, defining_file, self.old, self.new, self.all_entries)
        edit = merge([edit, *self.dotted_strings]) if self.dotted_strings else edit
        edit, notes = self.extension(edit) if self.extension is not None else (edit, [])
        if self.doctests is not None:
            examples, example_notes = self.doctests.add(edit)
            edit = merge([edit, WorkspaceEdit(tuple(examples))]) if examples else edit
            notes = [*notes, *example_notes]
        return edit, [*notes, *self.lookups]


def _covered(targets: list[RenameTarget]) -> list[str]:
    if len(targets) < 2:
        return []
    return [f"also renamed with it: {', '.join(f'{t.file}:{t.position.line + 1}' for t in targets[1:])}"]


def merge(edits: list[WorkspaceEdit]) -> WorkspaceEdit:
    """Several renames as one edit: the same change twice is kept once; two different changes
    of the same text are a conflict, refused when the merged edit is built."""
    per_file: dict[str, dict[TextEdit, None]] = {}  # ordered, and each edit looked up by hash
    hashes: dict[str, str | None] = {}
    for edit in edits:
        for operation in edit.operations:
            if not isinstance(operation, FileChange):
                continue
            known = per_file.setdefault(operation.path, {})
            hashes.setdefault(operation.path, operation.expected_sha256)
            known.update(dict.fromkeys(operation.edits))
    return WorkspaceEdit(tuple(FileChange(path, tuple(found), hashes[path]) for path, found in per_file.items()))


_MODULE_GETATTR = re.compile(r"^def __getattr__\s*\(", re.MULTILINE)
_GLOBALS_LOOKUP = re.compile(r"\bglobals\(\)\s*\[\s*(?![\"'])")


def dynamic_module_lookups(corpus: Corpus, defining_file: str, old: str) -> list[str]:
    """Warnings for lookups by computed name in the defining module or its package: a module
    ``__getattr__`` (deprecation shims, lazy imports) or ``globals()[…]`` with a computed key
    may hand out the old name, which no rename can see; listed with the places that still
    name it in a string."""
    package_init = defining_file.rsplit("/", 1)[0] + "/__init__.py" if "/" in defining_file else "__init__.py"
    warnings = []
    for path in dict.fromkeys([defining_file, package_init]):
        if path not in corpus.paths:
            continue
        text = corpus.source(path).text
        for pattern, what in ((_MODULE_GETATTR, "a module-level __getattr__"), (_GLOBALS_LOOKUP, "a globals()[…] lookup by computed name")):
            for match in pattern.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                warnings.append(f"{path}:{line} has {what}: code reaching {old} through it by name is not renamed; check it")
    if warnings:
        quoted = re.compile(rf"[\"']{re.escape(old)}[\"']")
        strings = [f"{path}:{n + 1}" for path in corpus.mentioning(old, "python")
                   for n, line in enumerate(corpus.source(path).text.splitlines()) if quoted.search(line)]
        if strings:
            warnings.append(f"places naming {old} in a string, which such a lookup may serve: {', '.join(strings[:10])}")
    return warnings


_ALL = re.compile(r"^__all__\s*\+?=\s*[\[(]", re.MULTILINE)


def with_all_entries(
    corpus: Corpus, edit: WorkspaceEdit, defining_file: str, old: str, new: str, found: dict[str, list[Range]] | None = None,
) -> WorkspaceEdit:
    """Add the ``__all__`` strings naming the old name, in the defining module and in every module
    the rename already touches (re-exporters), unless the plan already edits them. ``found``
    holds files' entries already looked up (:func:`all_entries`)."""
    files = [defining_file] + [op.path for op in edit.operations if isinstance(op, FileChange) and op.path != defining_file]
    by_file = {op.path: op for op in edit.operations if isinstance(op, FileChange)}
    changes: dict[str, FileChange] = dict(by_file)
    for path in files:
        if language_of(path) != "python":
            continue
        spans = found[path] if found is not None and path in found else all_entries(corpus.source(path), old)
        existing = list(by_file[path].edits) if path in by_file else []
        added = [TextEdit(span, new) for span in spans
                 if not any(e.range.start <= span.start < e.range.end or e.range.start == span.start for e in existing)]
        if added:
            changes[path] = FileChange(path, tuple(existing + added), corpus.source(path).sha256)
    ordered = [changes.pop(op.path) if isinstance(op, FileChange) and op.path in changes else op for op in edit.operations]
    return WorkspaceEdit(tuple(ordered + list(changes.values())), edit.annotations)


def all_entries(source: SourceFile, old: str) -> list[Range]:
    """Where the file's ``__all__`` lists name ``old`` (the name inside the quotes)."""
    text = source.text
    if "__all__" not in text:
        return []
    starts = source.line_starts
    spans = []
    for match in _ALL.finditer(text):
        closing = text.find("]" if text[match.end() - 1] == "[" else ")", match.end())
        region = text[match.end():closing if closing != -1 else len(text)]
        for entry in re.finditer(rf"([\"']){re.escape(old)}\1", region):
            offset = match.end() + entry.start() + 1
            line = bisect_right(starts, offset) - 1
            spans.append(Range(Position(line, offset - starts[line]), Position(line, offset - starts[line] + len(old))))
    return spans


def dotted_strings(corpus: Corpus, dotted: str | None, old: str, new: str) -> list[WorkspaceEdit]:
    """Edits of strings that name the symbol by its dotted path, such as ``mock.patch("pkg.mod.old")``
    or ``monkeypatch.setattr("pkg.mod.old", ...)``: they are code references a server does not see."""
    if not dotted:
        return []
    pattern = re.compile(rf"([\"']){re.escape(dotted)}(?=(?:\.[\w.]*)?\1)")
    additions = []
    for path in corpus.mentioning(dotted, "python"):
        source = corpus.source(path)
        spans = []
        for number, line in enumerate(split_lines(source.text)):
            for match in pattern.finditer(line):
                start = match.end() - len(old)
                spans.append(TextEdit(Range(Position(number, start), Position(number, match.end())), new))
        if spans:
            additions.append(WorkspaceEdit((FileChange(path, tuple(spans), source.sha256),)))
    return additions


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


def _only_the_old_name(corpus: Corpus, edit: WorkspaceEdit, old_name: str) -> tuple[WorkspaceEdit, list[str]]:
    """The server's edit without the edits that replace some other name. Renaming an alias's stub
    declaration (``def padnone`` in a .pyi, where the module has ``padnone = pad_none``) made
    basedpyright rename the aliased function as well: ``pad_nones = pad_nones``."""
    kept_changes: list[Operation] = []
    dropped: list[str] = []
    for change in edit.operations:
        if not isinstance(change, FileChange):
            kept_changes.append(change)
            continue
        source = corpus.source(change.path)
        text, starts = source.text, source.line_starts
        kept = []
        for text_edit in change.edits:
            start = starts[text_edit.range.start.line] + text_edit.range.start.column
            end = starts[text_edit.range.end.line] + text_edit.range.end.column
            if text[start:end] == old_name or start == end:
                kept.append(text_edit)
            else:
                dropped.append(f"{change.path}:{text_edit.range.start.line + 1} ({text[start:end][:40]!r})")
        if len(kept) == len(change.edits):
            kept_changes.append(change)  # the usual case: not built again
        elif kept:
            kept_changes.append(FileChange(change.path, tuple(kept), change.expected_sha256))
    if not dropped:
        return edit, []
    note = (f"the server also renamed other names, left as they are: {', '.join(dropped[:6])}"
            + (" …" if len(dropped) > 6 else "") + f" (only {old_name} is renamed)")
    return WorkspaceEdit(tuple(kept_changes), edit.annotations), [note]


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


def _finish(
    operation: str, edit: WorkspaceEdit, source: Source, confidence: Confidence, notes: list[str], leftovers: Leftovers,
    new_name: str,
) -> RefactorPlan:
    """The plan, once it is known not to change what any Python name means (else NameClash)."""
    old_name = leftovers.old_name
    captures = name_captures(leftovers.corpus, edit, old_name, new_name)
    if captures:
        listing = "\n  ".join(capture.message() for capture in captures)
        raise NameClash(f"renaming {old_name} to {new_name} would change what names mean:\n  {listing}\n"
                        "choose another name, or rename the other binding first")
    left, warnings = leftovers.found(edit)
    if any(leftover.kind is MentionKind.CODE for leftover in left):
        # A use in code the rename left is another symbol of that name or a reference it missed:
        # which one is not known, so the plan cannot claim high (the warning lists them).
        confidence = capped(confidence, Confidence.MEDIUM)
    return RefactorPlan(operation, edit, source, confidence, [*notes, *warnings])
