"""The check after an apply for the Go files gopls does not answer for: compiled instead.

gopls builds one configuration. A file behind a custom tag (``//go:build integration``), or in a
folder gopls filters out, gets no diagnostics from it, and would be left unchecked. Such a file's
package is compiled with its tests by the go command (the Tools port), under a configuration
that includes the file: its name's GOOS and GOARCH, the fewest of its tags
(engine.languages.go_builds). The go command's own listing must include the file, so a run that
skipped it is never counted as a clean check of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.answers import Diagnostic
from engine.errors import GraftError
from engine.languages.go_builds import Build, default_build, including_build
from engine.ports import GoBuildCheck, Tools
from engine.positions import Position, Range
from engine.workspace import Workspace


@dataclass
class Compiled:
    """What compiling the refused files' packages found: each file's errors and the checker's
    name, or why it stays unchecked."""

    found: dict[str, list[Diagnostic]] = field(default_factory=dict)
    checker: dict[str, str] = field(default_factory=dict)
    unchecked: dict[str, str] = field(default_factory=dict)


def compiled(tools: Tools, workspace: Workspace, refused: dict[str, str]) -> Compiled:
    """``refused``: each Go file no server answered for, with the reason (kept in what stays unchecked)."""
    done = Compiled()
    default = default_build()
    groups: dict[tuple[str, Build], list[str]] = {}
    for path, reason in refused.items():
        try:
            text = workspace.read(path).text
        except GraftError as error:
            done.unchecked[path] = f"{reason}; it could not be read to compile it ({error.message})"
            continue
        build = including_build(path, text, default)
        if build is None:
            done.unchecked[path] = f"{reason}; no build configuration a check can set includes it (//go:build ignore, or too many tags)"
            continue
        groups.setdefault((path.rpartition("/")[0], build), []).append(path)
    for (folder, build), paths in groups.items():
        settings = {"GOOS": build.goos, "GOARCH": build.goarch, **({} if build.cgo else {"CGO_ENABLED": "0"})}
        check = tools.go_build(folder, settings, sorted(build.tags))
        for path in paths:
            _settle(done, path, refused[path], build, check)
    return done


def _settle(done: Compiled, path: str, reason: str, build: Build, check: GoBuildCheck) -> None:
    if check.failure:
        done.unchecked[path] = f"{reason}; `{check.command}` could not compile it: {check.failure}"
    elif path.rpartition("/")[2] not in check.included:
        done.unchecked[path] = f"{reason}; `{check.command}` does not build it"
    else:
        done.checker[path] = f"go build ({build.describe()})"
        done.found[path] = [Diagnostic(path, Range(Position(e.line - 1, e.column - 1), Position(e.line - 1, e.column - 1)),
                                       "error", e.message, "go build") for e in check.errors if e.path == path]
