"""The workspace-edit value: text edits per file plus file operations, checked when built.

Positions are engine positions (0-based lines, code-point columns). Each file
change carries the sha256 the file had when the plan was made, so that apply
can refuse a plan the disk has moved away from.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.errors import Refused
from engine.answers import TextEdit


class OverlappingEdits(Refused):
    code = "overlapping_edits"


@dataclass(frozen=True)
class FileChange:
    path: str
    edits: tuple[TextEdit, ...]
    expected_sha256: str | None = None
    """Hash of the file the plan was made from; None only for hand-written plans (checked at apply)."""

    def __post_init__(self) -> None:
        # Checked once, when the change is built: a refactoring assembles its WorkspaceEdit
        # several times over from the same changes, which need no second check.
        check_no_overlap(self.path, self.edits)


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


def check_no_overlap(path: str, edits: tuple[TextEdit, ...]) -> None:
    """Two edits may touch at a point (an insertion at the end of a replacement) but not overlap."""
    # Plain numbers throughout, sorted and compared: comparing the Position objects (their
    # generated methods run in Python) was most of this check over a rename's thousand edits.
    # The edit's index last: equal spans keep their order, as a stable sort by span would.
    spans = sorted((e.range.start.line, e.range.start.column, e.range.end.line, e.range.end.column, index)
                   for index, e in enumerate(edits))
    for (line, column, end_line, end_column, index), (next_line, next_column, next_end_line, next_end_column, next_index) \
            in zip(spans, spans[1:]):
        if (next_line, next_column) < (end_line, end_column):
            raise OverlappingEdits(
                f"{path}: edits overlap at line {next_line + 1}, column {next_column + 1}"
                f" (one ends at line {end_line + 1}, column {end_column + 1})"
            )
        if line == end_line == next_line == next_end_line and column == end_column == next_column == next_end_column \
                and edits[index] != edits[next_index]:
            raise OverlappingEdits(f"{path}: two insertions at line {next_line + 1}, column {next_column + 1} have no defined order")
