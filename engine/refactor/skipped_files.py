"""Source files a refactoring could not search, that may hold what it changes.

A rename, a move and a file rename search the files of the project graph (and the server
sees what it sees). A source file the graph skipped (over the size limit, binary, not
decodable, unreadable) is searched by nobody: a reference there is left as it was, and the
plan would say nothing of it. So every such file of the target's language family is searched
for the names the refactoring changes, as bytes (it need not decode; a large one is read in
chunks), and each that holds one is named: as a warning with the confidence lowered, or, with
``strict``, as a refusal.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Collection, Iterable

from engine.errors import GraftError, Refused
from engine.languages import profile_of
from engine.refactor.plan import RefactorPlan
from engine.symbols import Confidence
from engine.workspace import Skipped, Workspace

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext

_CHUNK = 1 << 20

_LOWER = {Confidence.HIGH: Confidence.MEDIUM, Confidence.MEDIUM: Confidence.LOW, Confidence.LOW: Confidence.LOW}


class SkippedFiles(Refused):
    """``strict``: files the refactoring could not search hold a name it changes."""

    code = "skipped_files"

    def __init__(self, what: str, names: list[str], skipped: list[Skipped]) -> None:
        listing = "\n".join(f"  {s.path}: {s.reason}" for s in skipped)
        super().__init__(
            f"{what} is refused (strict): {len(skipped)} file(s) it could not search mention {' or '.join(names)} "
            f"and may hold a reference it would leave behind:\n{listing}\n"
            "raise the size limit so they are read, or plan without strict to see the plan with these files named",
            option="max_file_bytes",
        )
        self.files = list(skipped)

    def to_json(self) -> dict[str, object]:
        return {**super().to_json(), "files": [{"path": s.path, "reason": s.reason} for s in self.files]}


def checked(
    context: PlanContext, like: str, names: Iterable[str], what: str, strict: bool, make_plan: Callable[[], RefactorPlan],
) -> RefactorPlan:
    """The plan ``make_plan`` computes, with each skipped file of ``like``'s language family that
    mentions one of ``names`` named in a warning and the confidence lowered a step; with
    ``strict``, refused (before anything is planned) when there is one."""
    wanted = [name for name in dict.fromkeys(names) if name]
    skipped = unsearched_mentions(context.workspace, context.graph().project.facts, context.workspace_files(), like, wanted)
    if skipped and strict:
        raise SkippedFiles(what, wanted, skipped)
    planned = make_plan()
    if not skipped:
        return planned
    warnings = [f"not searched: {s.path} ({s.reason}) mentions {' or '.join(wanted)}; a reference there is left as it is "
                "(raise the size limit, or check it by hand)" for s in skipped]
    return replace(planned, confidence=_LOWER[planned.confidence], warnings=[*planned.warnings, *warnings])


def unsearched_mentions(
    workspace: Workspace, searched: Collection[str], listing: Iterable[str], like: str, names: list[str],
) -> list[Skipped]:
    """The files of ``listing`` in ``like``'s language family that are not among ``searched``
    and whose bytes hold one of ``names`` (or cannot be read, so might), each with why it was
    skipped."""
    kind = profile_of(like)
    if kind is None or not names:
        return []
    needles = [name.encode("utf-8") for name in names]
    found = []
    for path in listing:
        if path in searched:
            continue
        other = profile_of(path)
        if other is None or other.family != kind.family:
            continue
        reason = _why_skipped(workspace, path)
        try:
            holds = _holds_any(os.path.join(workspace.root, path), needles)
        except OSError as error:
            holds, reason = True, f"cannot be read: {error.strerror or error}"
        if holds:
            found.append(Skipped(path, reason))
    return found


def _why_skipped(workspace: Workspace, path: str) -> str:
    """The reason the graph left a listed source file out, as the read that refused it gives it."""
    limit = workspace.config.max_file_bytes
    try:
        size = os.stat(os.path.join(workspace.root, path)).st_size
        if size > limit:
            return f"{size:,} bytes, over the {limit:,}-byte limit for source files"
        workspace.read(path)
    except GraftError as error:
        return str(getattr(error, "reason", error.message))
    except OSError as error:
        return f"cannot be read: {error.strerror or error}"
    return "not in the project graph"


def _holds_any(path: str, needles: list[bytes]) -> bool:
    """Whether the file's bytes hold one of ``needles``, read a chunk at a time (a file skipped
    for its size may be of any size); each chunk keeps the tail of the one before, so a needle
    across the boundary is found."""
    keep = max(len(needle) for needle in needles) - 1
    descriptor = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        tail = b""
        while chunk := os.read(descriptor, _CHUNK):
            window = tail + chunk
            if any(needle in window for needle in needles):
                return True
            tail = window[-keep:] if keep else b""
        return False
    finally:
        os.close(descriptor)
