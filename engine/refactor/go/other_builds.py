"""A Go rename's uses in files that gopls's build configuration leaves out.

gopls answers from one build configuration. A file under another GOOS or GOARCH (by its name or
its ``//go:build`` line) or behind a custom tag is not in its view, and the uses there are not
renamed. Those files are searched for the old name in code (comments and strings left out),
and each that holds it is named: a warning with the confidence at most medium, or, with
``strict``, a refusal. They are not renamed by text: a name there may be another symbol's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from engine.errors import Refused
from engine.languages.go_builds import Build, excluded_by
from engine.refactor.corpus import Corpus
from engine.refactor.plan import RefactorPlan
from engine.symbols import Confidence


_NOT_CODE = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|`[^`]*`|'(?:\\.|[^'\\\n])*'", re.S)


@dataclass(frozen=True)
class OtherBuildUse:
    path: str
    lines: tuple[int, ...]
    """1-based."""
    why: str
    """Why the configuration leaves the file out."""

    def describe(self) -> str:
        return f"{self.path}:{','.join(map(str, self.lines[:5]))}{' …' if len(self.lines) > 5 else ''} ({self.why})"


class OtherBuildConfigurations(Refused):
    """``strict``: files outside the server's build configuration use the name being renamed."""

    code = "other_build_configurations"

    def __init__(self, message: str, uses: list[OtherBuildUse]) -> None:
        super().__init__(message)
        self.uses = uses

    def to_json(self) -> dict[str, object]:
        return {**super().to_json(), "files": [{"path": u.path, "lines": list(u.lines), "why": u.why} for u in self.uses]}


def uses_outside(corpus: Corpus, old_name: str, folders: set[str] | None, build: Build) -> list[OtherBuildUse]:
    """Go files ``build`` leaves out that use ``old_name`` in code; ``folders``: only those (an
    unexported name is seen by its own package only), None for all."""
    found = []
    pattern = re.compile(rf"(?<![\w$]){re.escape(old_name)}(?![\w$])")
    for path in corpus.mentioning(old_name, "go"):
        if folders is not None and path.rpartition("/")[0] not in folders:
            continue
        text = corpus.source(path).text
        why = excluded_by(path, text, build)
        if why is None:
            continue
        code = _NOT_CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
        lines = tuple(number + 1 for number, line in enumerate(code.split("\n")) if pattern.search(line))
        if lines:
            found.append(OtherBuildUse(path, lines, why))
    return found


def checked(plan: RefactorPlan, uses: list[OtherBuildUse], old_name: str, new_name: str, build: Build, strict: bool) -> RefactorPlan:
    if not uses:
        return plan
    listing = "\n  ".join(use.describe() for use in uses)
    what = (f"{len(uses)} Go file(s) outside the server's build configuration (GOOS={build.goos} GOARCH={build.goarch}, "
            f"no tags) use {old_name}, and the rename does not reach them")
    if strict:
        raise OtherBuildConfigurations(
            f"renaming {old_name} to {new_name} is refused (strict): {what}:\n  {listing}\n"
            "rename there by hand after checking each is this symbol, or plan without strict to see the plan with them named",
            uses)
    # At most medium: the leftovers' own check may have lowered it already for these same uses.
    confidence = Confidence.MEDIUM if plan.confidence is Confidence.HIGH else plan.confidence
    return replace(plan, confidence=confidence,
                   warnings=[*plan.warnings, f"{what} (rename them by hand if they are this symbol): {'; '.join(u.describe() for u in uses)}"])
