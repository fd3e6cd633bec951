"""What a rename is asked (:class:`RenameRequest`) and what completes it (:class:`RenamePass`).

A server (or jedi) renames the references it resolves; a language's hazards beyond that (Python's
``__all__`` strings, dotted paths in ``mock.patch``, doctests, keyword arguments, ...) are passes.
Each family lists its passes in order in ``engine/refactor/<family>/rename_passes.py``
(``RENAME_PASSES``); engine.refactor.rename runs that list and knows no pass by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Protocol

from engine.answers import TextEdit
from engine.edits.model import FileChange, WorkspaceEdit
from engine.errors import Refused
from engine.positions import Position
from engine.symbols import Source, Symbol

if TYPE_CHECKING:
    from engine.ports import LanguageServices
    from engine.refactor.corpus import Corpus
    from engine.refactor.mentions import FileWords
    from engine.refactor.operations.base import PlanContext
    from engine.refactor.python.keyword_arguments import Parameter
    from engine.workspace import Workspace


class RenameUnavailable(Refused):
    code = "rename_unavailable"


@dataclass(frozen=True)
class RenameTarget:
    """One declaration to rename: the symbol itself, its stub twin, an override in the hierarchy."""

    file: str
    position: Position


@dataclass(frozen=True)
class GraphFacts:
    """What the project graph knows of the renamed name, for the passes that rest on it (the
    languages whose profile says ``graph_sees_uses``)."""

    context: PlanContext
    symbol: Symbol | None = None
    """The symbol, when it is addressed by name (not a parameter or local at a position)."""
    parameter: Parameter | None = None
    """The parameter at the position, when the rename is by position and names one."""
    mirrors: bool = False
    """Whether the old name's own bindings in mirror modules are renamed too."""


@dataclass(frozen=True)
class RenameRequest:
    """One rename over every target, merged; warnings are computed once on the merged edit.

    Several targets are needed because a server renames one declaration's references: a ``.pyi``
    stub beside a module has its own references (pyright then misses every use that resolves to
    the stub), and overrides in subclasses are declarations of their own."""

    workspace: Workspace
    services: LanguageServices | None
    targets: tuple[RenameTarget, ...]
    old_name: str
    new_name: str
    use_server: bool = True
    require_server: bool = False
    """``--source lsp``: the server's answer or a refusal, never a fallback."""
    text: bool = False
    """Without a server, rename identifier-bounded occurrences in same-language files."""
    dotted: str | None = None
    """The symbol's dotted path (``pkg.mod.name``) when strings may name it."""
    files: tuple[str, ...] | None = None
    listing: Callable[[], list[str]] | None = None
    words: FileWords | None = None
    """The files' words a long-lived engine keeps (engine.refactor.mentions)."""
    include_docs: bool = False
    """Edit the documentation mentions of a Python symbol, which are otherwise only listed."""
    facts: GraphFacts | None = None
    meanwhile: Callable[[Callable[[], bool]], None] | None = None
    """Work of the language's passes that does not depend on the server's answer (reading the files
    it will edit), run while the server computes it; given a test of whether it has answered, to
    stop at once (what is left is done after, as without it)."""

    @property
    def primary(self) -> str:
        """The file of the first target: the declaration the rename starts from."""
        return self.targets[0].file


class RenamePass(Protocol):
    """One hazard a rename's server (or jedi) does not see. A new instance serves one rename."""

    @property
    def name(self) -> str: ...

    @property
    def hazards(self) -> tuple[str, ...]:
        """What it covers, in a few words each (``"__all__ strings"``)."""
        ...

    def prepare(self, corpus: Corpus, request: RenameRequest) -> None:
        """Read what the pass needs, while the server computes its rename: reads only."""
        ...

    def add(self, edit: WorkspaceEdit, source: Source) -> tuple[WorkspaceEdit, list[str]]:
        """``edit`` (from ``source``: the server's or jedi's) with what the pass adds, and notes."""
        ...


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
