"""gofmt is part of Go: a plan leaves every Go file it touches as gofmt-clean as it found it.

gopls's renames are not formatted: a name of another length in aligned struct fields or one-line
methods leaves the column misaligned, and ``gofmt -l`` lists the file. So each Go file a plan
changes is run through gofmt (the ``Tools`` port) twice: as it is, to know whether it was clean,
and as the plan leaves it. A file that was clean gets the formatter's alignment as part of the
plan; one that was not is left as the edit makes it, and the plan says so. The edits stay as
small as the result allows: a line gofmt leaves as the edit made it keeps the edit's own
changes, and a line it realigns gets one change, from the line before to the line gofmt prints.
"""

from __future__ import annotations

from dataclasses import replace

from engine.answers import TextEdit
from engine.edits.model import CreateFile, FileChange, Operation, WorkspaceEdit
from engine.edits.text import apply_text_edits, line_edits
from engine.languages import profile_of
from engine.ports import Tools
from engine.positions import Position, Range, split_lines
from engine.refactor.plan import RefactorPlan
from engine.workspace import Workspace


def is_go(path: str) -> bool:
    kind = profile_of(path)
    return kind is not None and kind.family == "go"


def keep_gofmt(plan: RefactorPlan, workspace: Workspace, tools: Tools | None) -> RefactorPlan:
    """``plan`` with its Go files formatted where they were gofmt-clean before (a file the plan
    creates is formatted), and a warning for each file left unformatted, with the reason."""
    changes = [op for op in plan.edit.operations if isinstance(op, FileChange) and is_go(op.path) and op.edits]
    created = [op for op in plan.edit.operations if isinstance(op, CreateFile) and is_go(op.path) and op.content]
    if not changes and not created:
        return plan
    if tools is None:
        return replace(plan, warnings=[*plan.warnings, "gofmt was not run (no tools here): check the touched Go files with gofmt -l"])
    befores = [workspace.read(change.path) for change in changes]
    afters = [apply_text_edits(source.text, change.edits, source.newline, source.line_starts)
              for source, change in zip(befores, changes)]
    answers = tools.gofmt([*(source.text for source in befores), *afters, *(op.content for op in created)])
    count = len(changes)
    was, now, new_files = answers[:count], answers[count:2 * count], answers[2 * count:]
    replaced: dict[int, Operation] = {}
    warnings: list[str] = []
    formatted: list[str] = []
    for change, source, after, before_answer, after_answer in zip(changes, befores, afters, was, now):
        if before_answer.text is None or after_answer.text is None:
            warnings.append(f"{change.path} was not formatted: {before_answer.error or after_answer.error}")
        elif before_answer.text != source.text:
            warnings.append(f"{change.path} was not gofmt-clean before the change: left as the change makes it (gofmt -l lists it)")
        elif after_answer.text != after:
            edits = formatted_edits(source.text, change.edits, after, after_answer.text)
            replaced[id(change)] = FileChange(change.path, edits, change.expected_sha256)
            formatted.append(change.path)
    for create, answer in zip(created, new_files):
        if answer.text is None:
            warnings.append(f"{create.path} was not formatted: {answer.error}")
        elif answer.text != create.content:
            replaced[id(create)] = replace(create, content=answer.text)
            formatted.append(create.path)
    if formatted:
        warnings.insert(0, f"gofmt's alignment kept in {', '.join(formatted)}")
    if not replaced:
        return replace(plan, warnings=[*plan.warnings, *warnings]) if warnings else plan
    operations = tuple(replaced.get(id(op), op) for op in plan.edit.operations)
    return replace(plan, edit=WorkspaceEdit(operations, plan.edit.annotations), warnings=[*plan.warnings, *warnings])


def formatted_edits(before: str, edits: tuple[TextEdit, ...], after: str, formatted: str) -> tuple[TextEdit, ...]:
    """Edits that turn ``before`` into ``formatted``, where ``edits`` turned it into ``after``.

    When every edit stays within its line (a rename's), lines keep their numbers: a line gofmt
    prints as the edit left it keeps the edit's changes; another gets one change from its
    first to its last differing character. Otherwise (a move's new lines) the changed lines
    are replaced whole."""
    old_lines, after_lines, new_lines = split_lines(before), split_lines(after), split_lines(formatted)
    within_lines = all(e.range.start.line == e.range.end.line and "\n" not in e.new_text and "\r" not in e.new_text for e in edits)
    if not within_lines or not len(old_lines) == len(after_lines) == len(new_lines):
        return line_edits(before, formatted)
    kept = [edit for edit in edits if after_lines[edit.range.start.line] == new_lines[edit.range.start.line]]
    realigned = [_line_change(number, old_lines[number], new_lines[number])
                 for number, (made, printed) in enumerate(zip(after_lines, new_lines)) if made != printed]
    return tuple(sorted([*kept, *realigned], key=lambda e: (e.range.start, e.range.end)))


def _line_change(number: int, old: str, new: str) -> TextEdit:
    """One edit of line ``number`` from ``old`` to ``new``: the span between their common start and end."""
    shorter = min(len(old), len(new))
    prefix = 0
    while prefix < shorter and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < shorter - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    return TextEdit(Range(Position(number, prefix), Position(number, len(old) - suffix)), new[prefix:len(new) - suffix])
