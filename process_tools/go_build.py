"""Compiling one Go package and its tests, under a build configuration, for the check after an apply.

gopls answers for the configuration it loaded; a file behind a custom tag (``//go:build
integration``) is outside it, and gopls refuses to give its diagnostics. This compiles that
file's package the way ``go test -c`` does: the package and its tests are type-checked and
compiled, and nothing runs. ``go list`` first says which files the configuration includes, so a
run that left the file out is never taken for a clean one.

Trust: compiling runs no code of the project. The go command is kept from the network
(``GOPROXY=off``: what gopls has loaded is in the module cache already) and, unless the user's
own environment says otherwise, from fetching another toolchain (``GOTOOLCHAIN=local``), which
a workspace's ``go.mod`` could otherwise ask for.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from engine.ports import CompileError, GoBuildCheck

_GO_TIMEOUT = 120
_ERROR_LINE = re.compile(r"^(?P<path>[^\s:][^:]*\.go):(?P<line>\d+):(?:(?P<column>\d+):)?\s*(?P<message>.+)$")


def go_build(root: Path, folder: str, settings: dict[str, str], tags: list[str]) -> GoBuildCheck:
    program = shutil.which("go")
    shown = " ".join([*(f"{k}={v}" for k, v in sorted(settings.items())), "go test -c",
                      *([f"-tags {','.join(tags)}"] if tags else []), f"./{folder}" if folder else "."])
    if program is None:
        return GoBuildCheck(shown, failure="go is not installed (https://go.dev/dl)")
    directory = root / folder
    environment = {"GOTOOLCHAIN": "local", **os.environ, **settings, "GOPROXY": "off"}
    tag_flags = [f"-tags={','.join(tags)}"] if tags else []
    try:
        listed = subprocess.run([program, "list", "-e", "-json=GoFiles,CgoFiles,TestGoFiles,XTestGoFiles,Error", *tag_flags, "."],
                                cwd=directory, env=environment, capture_output=True, check=False, timeout=_GO_TIMEOUT)
        package = json.loads(listed.stdout.decode("utf-8", errors="replace") or "{}")
        included = tuple(name for key in ("GoFiles", "CgoFiles", "TestGoFiles", "XTestGoFiles") for name in package.get(key) or [])
        tests = bool(package.get("TestGoFiles") or package.get("XTestGoFiles"))
        # go test -c compiles the package with its tests and writes the binary only; go build
        # when there are no tests (go test -c then compiles nothing).
        command = ([program, "test", "-c", "-vet=off"] if tests else [program, "build"]) + ["-o", os.devnull, "-gcflags=-e", *tag_flags, "."]
        compiled = subprocess.run(command, cwd=directory, env=environment, capture_output=True, check=False, timeout=_GO_TIMEOUT)
    except subprocess.TimeoutExpired:
        return GoBuildCheck(shown, failure=f"the go command took more than {_GO_TIMEOUT} s")
    except (OSError, ValueError) as error:
        return GoBuildCheck(shown, failure=f"the go command failed: {error}")
    shown = shown.replace("go test -c", "go test -c" if tests else "go build")
    output = compiled.stderr.decode("utf-8", errors="replace")
    errors = _compile_errors(root, directory, output)
    if compiled.returncode != 0 and not errors:
        first = next((line for line in output.splitlines() if line.strip() and not line.startswith("#")), "")
        return GoBuildCheck(shown, included, failure=first or f"the go command exited with status {compiled.returncode}")
    return GoBuildCheck(shown, included, tuple(errors))


def _compile_errors(root: Path, directory: Path, output: str) -> list[CompileError]:
    """``./x.go:5:2: message`` lines, each with the tab-indented lines that go on it (``have``/``want``)."""
    errors: list[CompileError] = []
    for line in output.splitlines():
        found = _ERROR_LINE.match(line)
        if found is not None:
            path = os.path.relpath(os.path.normpath(directory / found.group("path")), root)
            errors.append(CompileError(path.replace(os.sep, "/"), int(found.group("line")), int(found.group("column") or 1),
                                       found.group("message").strip()))
        elif line.startswith("\t") and errors:
            last = errors[-1]
            errors[-1] = CompileError(last.path, last.line, last.column, f"{last.message}; {line.strip()}")
    return errors
