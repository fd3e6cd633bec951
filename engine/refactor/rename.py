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

import keyword
import re
from dataclasses import dataclass
from typing import Callable
from pathlib import Path

from engine.edits.model import FileChange, WorkspaceEdit
from engine.edits.plan import materialize
from engine.errors import Refused, ServiceUnavailable, UsageError
from engine.languages import language_of
from engine.navigation import ServerEdit, TextEdit
from engine.ports import LanguageServices
from engine.positions import Position, Range, split_lines
from engine.refactor.corpus import Corpus
from engine.refactor.plan import RefactorPlan
from engine.refactor.pysource import line_edits
from engine.symbols import Confidence, Source, Symbol
from engine.workspace import Workspace

_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
_KEYWORDS: dict[str, frozenset[str]] = {
    "python": frozenset(keyword.kwlist),  # soft keywords (match, case, type) are valid names
    "typescript": frozenset("break case catch class const continue debugger default delete do else enum export extends false finally for function if import in instanceof new null return super switch this throw true try typeof var void while with let static yield await implements interface package private protected public".split()),
    "go": frozenset("break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var".split()),
    "rust": frozenset("as break const continue crate else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while async await dyn".split()),
}
_KEYWORDS["typescriptreact"] = _KEYWORDS["javascript"] = _KEYWORDS["javascriptreact"] = _KEYWORDS["typescript"]


class NameClash(Refused):
    code = "name_clash"


class RenameUnavailable(Refused):
    code = "rename_unavailable"


def check_name(new_name: str, language: str | None) -> None:
    if language == "python":
        valid = new_name.isidentifier()
    else:
        valid = _IDENTIFIER.fullmatch(new_name) is not None
    if not valid:
        raise UsageError(f"{new_name!r} is not a valid identifier in {language or 'this language'}")
    if new_name in _KEYWORDS.get(language or "", frozenset()):
        raise UsageError(f"{new_name!r} is a keyword in {language}")


def check_clash(target: Symbol, siblings: list[Symbol], new_name: str) -> None:
    for sibling in siblings:
        if sibling is not target and sibling.name == new_name:
            raise NameClash(
                f"{new_name} already exists beside {target.name_path} ({sibling.address}, line {sibling.range.first_line});"
                " renaming would make one hide the other"
            )


@dataclass(frozen=True)
class RenameTarget:
    """One declaration to rename: the symbol itself, its stub twin, an override in the hierarchy."""

    file: str
    position: Position


Extension = Callable[[WorkspaceEdit, Corpus], tuple[WorkspaceEdit, list[str]]]


def plan_rename(
    workspace: Workspace, services: LanguageServices | None, use_server: bool, targets: list[RenameTarget],
    old_name: str, new_name: str, *, text: bool = False, dotted: str | None = None, extend: Extension | None = None,
    files: list[str] | None = None,
) -> RefactorPlan:
    """One rename over every target, merged; warnings are computed once on the merged edit.
    ``dotted`` is the symbol's dotted path (``pkg.mod.name``) when strings may name it;
    ``extend`` adds what the rename itself cannot see (keyword arguments of unresolved calls).

    Several targets are needed because a server renames one declaration's references: a
    ``.pyi`` stub beside a module has its own references (pyright then misses every use
    that resolves to the stub), and overrides in subclasses are declarations of their own.
    """
    primary = targets[0].file
    language = language_of(primary)
    notes: list[str] = []
    corpus = Corpus(workspace, files)
    if use_server and services is not None:
        try:
            edits, complete, server = [], True, ""
            for target in targets:
                answer = services.rename(workspace.read(target.file), target.position, new_name)
                edits.append(_from_server(workspace, answer.value))
                complete, server = complete and answer.complete, answer.server
            edit = with_all_entries(workspace, merge(edits), primary, old_name, new_name)
            edit = with_dotted_strings(workspace, edit, dotted, old_name, new_name, corpus)
            edit, extended = extend(edit, corpus) if extend is not None else (edit, [])
            confidence = Confidence.HIGH if complete else Confidence.MEDIUM
            notes = [f"from {server}", *_covered(targets), *extended]
            return _finish(workspace, "rename", edit, Source.LSP, confidence, notes, old_name, language, corpus)
        except ServiceUnavailable as error:
            notes.append(f"language server unavailable: {error.message}")
    if language == "python":
        edit = merge([_jedi_rename(workspace, t.file, t.position, new_name) for t in targets])
        edit = with_all_entries(workspace, edit, primary, old_name, new_name)
        edit = with_dotted_strings(workspace, edit, dotted, old_name, new_name, corpus)
        edit, extended = extend(edit, corpus) if extend is not None else (edit, [])
        notes += ["scope-aware rename by jedi", *_covered(targets), *extended]
        return _finish(workspace, "rename", edit, Source.AST, Confidence.MEDIUM, notes, old_name, language, corpus)
    if not text:
        raise RenameUnavailable(
            f"no language server can rename in {language or primary}"
            + (f" ({notes[0]})" if notes else "")
            + "; pass --text to rename identifier-bounded occurrences in same-language files (low confidence)"
        )
    edit = _text_rename(workspace, corpus, language, old_name, new_name)
    return _finish(workspace, "rename", edit, Source.REGEX, Confidence.LOW, [*notes, "text rename: check every hunk"], old_name, language, corpus)


def _covered(targets: list[RenameTarget]) -> list[str]:
    if len(targets) < 2:
        return []
    return [f"also renamed with it: {', '.join(f'{t.file}:{t.position.line + 1}' for t in targets[1:])}"]


def merge(edits: list[WorkspaceEdit]) -> WorkspaceEdit:
    """Several renames as one edit: the same change twice is kept once; two different changes
    of the same text are a conflict, refused when the merged edit is built."""
    per_file: dict[str, list[TextEdit]] = {}
    hashes: dict[str, str | None] = {}
    for edit in edits:
        for operation in edit.operations:
            if not isinstance(operation, FileChange):
                continue
            known = per_file.setdefault(operation.path, [])
            hashes.setdefault(operation.path, operation.expected_sha256)
            known.extend(e for e in operation.edits if e not in known)
    return WorkspaceEdit(tuple(FileChange(path, tuple(found), hashes[path]) for path, found in per_file.items()))


_ALL = re.compile(r"^__all__\s*\+?=\s*[\[(]", re.MULTILINE)


def with_all_entries(workspace: Workspace, edit: WorkspaceEdit, defining_file: str, old: str, new: str) -> WorkspaceEdit:
    """Add the ``__all__`` strings naming the old name, in the defining module and in every module
    the rename already touches (re-exporters), unless the plan already edits them."""
    files = [defining_file] + [op.path for op in edit.operations if isinstance(op, FileChange) and op.path != defining_file]
    by_file = {op.path: op for op in edit.operations if isinstance(op, FileChange)}
    changes: dict[str, FileChange] = dict(by_file)
    for path in files:
        if language_of(path) != "python":
            continue
        source = workspace.read(path)
        starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", source.text)]
        existing = list(by_file[path].edits) if path in by_file else []
        added = []
        for match in _ALL.finditer(source.text):
            closing = source.text.find("]" if source.text[match.end() - 1] == "[" else ")", match.end())
            region = source.text[match.end():closing if closing != -1 else len(source.text)]
            for entry in re.finditer(rf"([\"']){re.escape(old)}\1", region):
                offset = match.end() + entry.start() + 1
                line = max(i for i, start in enumerate(starts) if start <= offset)
                span = Range(Position(line, offset - starts[line]), Position(line, offset - starts[line] + len(old)))
                if not any(e.range.start <= span.start < e.range.end or e.range.start == span.start for e in existing):
                    added.append(TextEdit(span, new))
        if added:
            changes[path] = FileChange(path, tuple(existing + added), source.sha256)
    ordered = [changes.pop(op.path) if isinstance(op, FileChange) and op.path in changes else op for op in edit.operations]
    return WorkspaceEdit(tuple(ordered + list(changes.values())), edit.annotations)


def with_dotted_strings(
    workspace: Workspace, edit: WorkspaceEdit, dotted: str | None, old: str, new: str, corpus: Corpus | None = None
) -> WorkspaceEdit:
    """Update strings that name the symbol by its dotted path, such as ``mock.patch("pkg.mod.old")``
    or ``monkeypatch.setattr("pkg.mod.old", ...)``: they are code references a server does not see."""
    if not dotted:
        return edit
    pattern = re.compile(rf"([\"']){re.escape(dotted)}(?=(?:\.[\w.]*)?\1)")
    additions = []
    for path in (corpus or Corpus(workspace)).mentioning(dotted, "python"):
        source = workspace.read(path)
        spans = []
        for number, line in enumerate(split_lines(source.text)):
            for match in pattern.finditer(line):
                start = match.end() - len(old)
                spans.append(TextEdit(Range(Position(number, start), Position(number, match.end())), new))
        if spans:
            additions.append(WorkspaceEdit((FileChange(path, tuple(spans), source.sha256),)))
    return merge([edit, *additions]) if additions else edit


def _from_server(workspace: Workspace, server_edit: ServerEdit) -> WorkspaceEdit:
    if server_edit.created or server_edit.renamed or server_edit.deleted:
        raise RenameUnavailable("the server's rename also creates, moves or deletes files; use rename-file for that")
    changes = []
    for file_edits in server_edit.files:
        source = workspace.read(file_edits.file)  # refuses files outside the workspace
        changes.append(FileChange(source.path, file_edits.edits, source.sha256))
    if not changes:
        raise RenameUnavailable("the server found nothing to rename at that position")
    return WorkspaceEdit(tuple(changes))


def _jedi_rename(workspace: Workspace, file: str, position: Position, new_name: str) -> WorkspaceEdit:
    import jedi  # the fallback only: loading jedi costs time the server path does not need

    source = workspace.read(file)
    project = jedi.Project(str(workspace.root))
    script = jedi.Script(code=source.text, path=str(workspace.root / file), project=project)
    try:
        refactoring = script.rename(position.line + 1, position.column, new_name=new_name)
    except Exception as error:  # noqa: BLE001 - jedi raises its own RefactoringError and others
        raise RenameUnavailable(f"jedi cannot rename at {file}:{position.line + 1}:{position.column + 1}: {error}") from None
    changes = []
    for path, changed in sorted(refactoring.get_changed_files().items()):
        relative = Path(path).resolve().relative_to(workspace.root).as_posix()
        before = workspace.read(relative)
        changes.append(FileChange(relative, line_edits(before.text, changed.get_new_code()), before.sha256))
    if refactoring.get_renames():
        raise RenameUnavailable("jedi's rename would also move files; use rename-file for that")
    if not changes:
        raise RenameUnavailable(f"nothing to rename at {file}:{position.line + 1}:{position.column + 1}")
    return WorkspaceEdit(tuple(changes))


def _text_rename(workspace: Workspace, corpus: Corpus, language: str | None, old: str, new: str) -> WorkspaceEdit:
    pattern = re.compile(rf"(?<![\w$]){re.escape(old)}(?![\w$])")
    changes = []
    for path in corpus.mentioning(old, language):
        if language_of(path) != language:
            continue
        source = workspace.read(path)
        edits = [
            TextEdit(Range(Position(n, m.start()), Position(n, m.end())), new)
            for n, line in enumerate(split_lines(source.text)) for m in pattern.finditer(line)
        ]
        if edits:
            changes.append(FileChange(path, tuple(edits), source.sha256))
    return WorkspaceEdit(tuple(changes))


_DYNAMIC = (
    (r"getattr\([^)]*[\"']{name}[\"']", "getattr with the old name"),
    (r"setattr\([^)]*[\"']{name}[\"']", "setattr with the old name"),
    (r"hasattr\([^)]*[\"']{name}[\"']", "hasattr with the old name"),
    (r"globals\(\)\s*\[\s*[\"']{name}[\"']", "globals() lookup"),
    (r"f[\"'][^\"'{{]*\b{name}\b", "a name built in an f-string"),
)


def _finish(
    workspace: Workspace, operation: str, edit: WorkspaceEdit, source: Source, confidence: Confidence,
    warnings: list[str], old_name: str, language: str | None, corpus: Corpus,
) -> RefactorPlan:
    """Report occurrences of the old name the edit leaves (strings, comments, dynamic lookups),
    read from the files as they will be after the edit."""
    after = {state.path: state.after for state in materialize(edit, workspace)}
    word = re.compile(rf"(?<![\w$]){re.escape(old_name)}(?![\w$])")
    dynamic = [(re.compile(p.format(name=re.escape(old_name))), why) for p, why in _DYNAMIC]
    leftovers: list[str] = []
    for path in corpus.mentioning(old_name, language):
        try:
            text = after[path].decode("utf-8", errors="replace") if after.get(path) is not None else workspace.read(path).text
        except Refused:
            continue
        for number, line in enumerate(split_lines(text)):
            if not word.search(line):
                continue
            for pattern, why in dynamic:
                if pattern.search(line):
                    warnings.append(f"{path}:{number + 1}: {why} may break: {line.strip()[:80]}")
            leftovers.append(f"{path}:{number + 1}")
    if leftovers:
        shown = ", ".join(leftovers[:10]) + (f" and {len(leftovers) - 10} more" if len(leftovers) > 10 else "")
        warnings.append(f"{len(leftovers)} other occurrence(s) of {old_name!r} left as they are (strings, comments, other scopes): {shown}")
    warnings += _built_names(corpus, language, old_name)
    return RefactorPlan(operation, edit, source, confidence, warnings)


_F_STRING_PREFIX = re.compile(r"""f["'][^"']*?([A-Za-z_]\w*)\{""")


def _built_names(corpus: Corpus, language: str | None, old_name: str) -> list[str]:
    """f-strings that build a name starting like the old one (``f"handle_{action}"`` for
    ``handle_save``): a lookup by such a name breaks silently after the rename."""
    head = old_name.split("_")[0]
    if language != "python" or "_" not in old_name.strip("_") or len(head) < 3:
        return []
    found = []
    for path in corpus.mentioning(head + "_{", language):
        try:
            text = corpus.workspace.read(path).text
        except Refused:
            continue
        for number, line in enumerate(split_lines(text)):
            for match in _F_STRING_PREFIX.finditer(line):
                prefix = match.group(1)
                if len(prefix) >= 3 and old_name.startswith(prefix) and prefix != old_name:
                    found.append(f"{path}:{number + 1}: a name built in an f-string may have meant {old_name}: {line.strip()[:80]}")
    return found


