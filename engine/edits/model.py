"""The workspace-edit value: text edits per file plus file operations, checked when built.

Positions are engine positions (0-based lines, code-point columns). Each file
change carries the sha256 the file had when the plan was made, so that apply
can refuse a plan the disk has moved away from.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.errors import Refused
from engine.answers import TextEdit

Span = tuple[int, int, int, int]
"""An edit's range as plain numbers: (start line, start column, end line, end column)."""


class OverlappingEdits(Refused):
    code = "overlapping_edits"


@dataclass(frozen=True)
class FileChange:
    path: str
    edits: tuple[TextEdit, ...]
    expected_sha256: str | None = None
    """Hash of the file the plan was made from; None only for hand-written plans (checked at apply)."""
    spans: tuple[Span, ...] = field(init=False, repr=False, compare=False)
    """Each edit's :data:`Span`, in the edits' order: read once, here, where the overlap check
    needs them, for the passes that compare a rename's thousand edits with where the old name
    stands (through each edit's range and positions, every pass paid those reads again)."""

    def __post_init__(self) -> None:
        spans = edit_spans(self.edits)
        object.__setattr__(self, "spans", spans)  # frozen: set once, as the dataclass's own __init__ does
        # Checked once, when the change is built: a refactoring assembles its WorkspaceEdit
        # several times over from the same changes, which need no second check.
        check_no_overlap(self.path, self.edits, spans)


@dataclass(frozen=True)
class CreateFile:
    path: str
    content: str = ""
    overwrite: bool = False
    ignore_if_exists: bool = False


@dataclass(frozen=True)
class RenameFile:
    old: str
    new: str
    overwrite: bool = False
    ignore_if_exists: bool = False


@dataclass(frozen=True)
class DeleteFile:
    path: str
    ignore_if_not_exists: bool = False


Operation = FileChange | CreateFile | RenameFile | DeleteFile


@dataclass(frozen=True)
class ChangeAnnotation:
    label: str
    needs_confirmation: bool = False
    description: str = ""


@dataclass(frozen=True)
class WorkspaceEdit:
    operations: tuple[Operation, ...]
    annotations: dict[str, ChangeAnnotation] = field(default_factory=dict)

    @property
    def touched(self) -> list[str]:
        """Every path the edit reads or writes, in order of first appearance."""
        paths: list[str] = []
        for operation in self.operations:
            for path in paths_of(operation):
                if path not in paths:
                    paths.append(path)
        return paths

    @property
    def edit_count(self) -> int:
        return sum(len(op.edits) for op in self.operations if isinstance(op, FileChange))


def paths_of(operation: Operation) -> tuple[str, ...]:
    if isinstance(operation, RenameFile):
        return (operation.old, operation.new)
    return (operation.path,)


def edit_spans(edits: tuple[TextEdit, ...]) -> tuple[Span, ...]:
    """Each edit's :data:`Span`, in order."""
    # Each range and its positions read once per edit (the one-element loops bind them).
    return tuple([(start.line, start.column, end.line, end.column)
                  for edit in edits for span in [edit.range] for start in [span.start] for end in [span.end]])


def check_no_overlap(path: str, edits: tuple[TextEdit, ...], spans: tuple[Span, ...] | None = None) -> None:
    """Two edits may touch at a point (an insertion at the end of a replacement) but not overlap.
    ``spans``: :func:`edit_spans` of ``edits``, when read already."""
    # Plain numbers throughout, sorted and compared: comparing the Position objects (their
    # generated methods run in Python) was most of this check over a rename's thousand edits.
    spans = edit_spans(edits) if spans is None else spans
    if _apart(sorted(spans)):
        return  # the usual answer: nothing touches, so neither refusal below can apply
    # The edit's index last: equal spans keep their order, as a stable sort by span would.
    ordered = sorted((*span, index) for index, span in enumerate(spans))
    for (line, column, end_line, end_column, index), (next_line, next_column, next_end_line, next_end_column, next_index) \
            in zip(ordered, ordered[1:]):
        if (next_line, next_column) < (end_line, end_column):
            raise OverlappingEdits(
                f"{path}: edits overlap at line {next_line + 1}, column {next_column + 1}"
                f" (one ends at line {end_line + 1}, column {end_column + 1})"
            )
        if line == end_line == next_line == next_end_line and column == end_column == next_column == next_end_column \
                and edits[index] != edits[next_index]:
            raise OverlappingEdits(f"{path}: two insertions at line {next_line + 1}, column {next_column + 1} have no defined order")


def _apart(ordered: list[Span]) -> bool:
    """Whether each of these spans, sorted, starts strictly after the one before it ends."""
    # Compared as plain integers: tuple comparisons, or a zip of each span with the next, cost
    # several times this loop over a rename's thousand edits.
    end_line, end_column = -1, -1
    for line, column, next_end_line, next_end_column in ordered:
        if line < end_line or (line == end_line and column <= end_column):
            return False
        end_line, end_column = next_end_line, next_end_column
    return True
