"""The hook through which one language's own checks see a refactoring's plan.

A language whose hazards need checks of its own (Go: gofmt, build constraints, gopls's rename
checks) keeps them in one package, ``engine/refactor/<family>/``, whose ``passes`` module the
policies reach through this one. That module defines the two functions of
:class:`LanguagePasses`. It is imported only when a plan in that language is made: the
operations' registry and the other languages' plans stay light.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Callable, Protocol, cast

from engine.edits.model import FileChange
from engine.languages import profile_of

if TYPE_CHECKING:
    from engine.edits.model import WorkspaceEdit
    from engine.errors import Refused, ServiceUnavailable
    from engine.refactor.operations.base import PlanContext, RefactorOperation
    from engine.refactor.pass_protocol import RenamePass, RenameRequest
    from engine.refactor.plan import RefactorPlan

_PASSES_BY_FAMILY: dict[str, str] = {"go": "engine.refactor.go.passes", "typescript": "engine.refactor.typescript.passes"}
"""A language family's passes module (add yours here)."""

_RENAME_PASSES_BY_FAMILY: dict[str, str] = {"python": "engine.refactor.python.rename_passes"}
"""A language family's rename pipeline (:class:`RenamePipeline`), when it has one."""


class LanguagePasses(Protocol):
    def finish(self, plan: RefactorPlan, context: PlanContext, operation: RefactorOperation) -> RefactorPlan:
        """The plan as it is to be shown: reformatted, with warnings added and the confidence
        lowered, or refused with a typed error. Never writes."""
        ...

    def server_refusal(self, error: ServiceUnavailable, old_name: str, new_name: str) -> Refused | None:
        """What a server's error on a rename means when it is the server's own check refusing
        the rename (a conflict), as a typed refusal; None when the server was only unavailable."""
        ...


def passes_for(path: str) -> LanguagePasses | None:
    """The passes of ``path``'s language family, or None when it has none."""
    kind = profile_of(path)
    module = _PASSES_BY_FAMILY.get(kind.family) if kind is not None else None
    return cast("LanguagePasses", import_module(module)) if module is not None else None


class PreparedRename(Protocol):
    """What a family's ``prepare_rename(context, old_name, new_name)`` returns (in its passes
    module, for a family with work to do before the server's answer)."""

    def meanwhile(self, answered: Callable[[], bool]) -> None:
        """What needs no answer (reading the files it will edit), until ``answered()``."""
        ...

    def finish(self, plan: RefactorPlan, context: PlanContext, operation: RefactorOperation) -> RefactorPlan:
        """:meth:`LanguagePasses.finish`, with what was done meanwhile."""
        ...


class BegunRename:
    """A family's passes for one rename, begun once the server has the request: the passes module
    is imported only then (it imports slowly, and a cold rename's request must not wait for it)."""

    def __init__(self, path: str, context: PlanContext, old_name: str, new_name: str) -> None:
        self.path, self.context, self.old_name, self.new_name = path, context, old_name, new_name
        self._prepared: PreparedRename | None = None

    def meanwhile(self, answered: Callable[[], bool]) -> None:
        prepare = getattr(passes_for(self.path), "prepare_rename", None)
        if prepare is not None:
            self._prepared = cast("PreparedRename", prepare(self.context, self.old_name, self.new_name))
            self._prepared.meanwhile(answered)

    def finish(self, plan: RefactorPlan, context: PlanContext, operation: RefactorOperation) -> RefactorPlan:
        if self._prepared is not None:
            return self._prepared.finish(plan, context, operation)
        passes = passes_for(self.path)
        return passes.finish(plan, context, operation) if passes is not None else plan


def begun_rename(path: str, context: PlanContext, old_name: str, new_name: str) -> BegunRename | None:
    """The passes of ``path``'s family for a rename of ``old_name``, to begin beside the server's
    request (:attr:`RenameRequest.meanwhile`); None for a family without passes."""
    kind = profile_of(path)
    has_passes = kind is not None and kind.family in _PASSES_BY_FAMILY
    return BegunRename(path, context, old_name, new_name) if has_passes else None


def finished(plan: RefactorPlan, context: PlanContext, operation: RefactorOperation, path: str,
             begun: BegunRename | None = None) -> RefactorPlan:
    """``plan`` through the passes of ``path``'s language (the file the operation starts from),
    ``begun`` beside the server's request when the policy began them."""
    if begun is not None:
        return begun.finish(plan, context, operation)
    passes = passes_for(path)
    return passes.finish(plan, context, operation) if passes is not None else plan


def replaced_name(plan: RefactorPlan, context: PlanContext) -> str | None:
    """The name a rename's edits replace: the text under its first edit (for the passes' messages)."""
    for change in plan.edit.operations:
        if isinstance(change, FileChange) and change.edits:
            source = context.workspace.read(change.path)
            span = change.edits[0].range
            if span.start.line == span.end.line and span.start.line < len(source.line_starts):
                start = source.line_starts[span.start.line]
                return source.text[start + span.start.column:start + span.end.column]
    return None


def server_refusal(path: str, error: ServiceUnavailable, old_name: str, new_name: str) -> Refused | None:
    passes = passes_for(path)
    return passes.server_refusal(error, old_name, new_name) if passes is not None else None


class RenamePipeline(Protocol):
    """A family's ``rename_passes`` module: its passes in order, and its rename without a server."""

    RENAME_PASSES: tuple[type[RenamePass], ...]
    WITHOUT_SERVER: str
    """The note of a rename made without a server."""

    def rename_without_server(self, request: RenameRequest) -> WorkspaceEdit: ...


def rename_pipeline(path: str) -> RenamePipeline | None:
    """The rename pipeline of ``path``'s language family, or None: the server's rename is complete
    there, and without a server only a text rename is possible."""
    kind = profile_of(path)
    module = _RENAME_PASSES_BY_FAMILY.get(kind.family) if kind is not None else None
    return cast("RenamePipeline", import_module(module)) if module is not None else None
