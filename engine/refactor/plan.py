"""What every refactoring returns: the edit, where its facts came from, and what to watch out for."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.edits.model import WorkspaceEdit
from engine.symbols import Confidence, Source


@dataclass(frozen=True)
class RefactorPlan:
    operation: str
    edit: WorkspaceEdit
    source: Source
    confidence: Confidence
    warnings: list[str] = field(default_factory=list)

    @property
    def files(self) -> list[str]:
        return self.edit.touched
