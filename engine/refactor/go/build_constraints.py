"""Go's build constraints: which files one build configuration (GOOS, GOARCH, tags) includes.

gopls loads one configuration, this machine's by default: a file behind ``//go:build windows``,
a custom tag or a ``_windows.go`` name is not in its view, and a rename leaves its uses as they
are, silently. The rules here are go/build's (file-name suffixes, ``//go:build`` expressions,
the ``unix`` tag and the ports that imply another's), written out so that the engine can tell
which files a server's answer cannot have covered, and which file renames change a file's
builds.
"""

from __future__ import annotations

import os
import platform
import re
import sys
from dataclasses import dataclass
from typing import Callable

from engine.errors import Refused

KNOWN_OS = frozenset("aix android darwin dragonfly freebsd hurd illumos ios js linux nacl netbsd openbsd plan9 solaris "
                     "wasip1 windows zos".split())
KNOWN_ARCH = frozenset("386 amd64 amd64p32 arm armbe arm64 arm64be loong64 mips mipsle mips64 mips64le mips64p32 "
                       "mips64p32le ppc ppc64 ppc64le riscv riscv64 s390 s390x sparc sparc64 wasm".split())
UNIX_OS = frozenset("aix android darwin dragonfly freebsd hurd illumos ios linux netbsd openbsd solaris".split())
_IMPLIED = {"android": "linux", "illumos": "solaris", "ios": "darwin"}
"""A port that also satisfies another's tag (GOOS=android builds files for linux)."""

_MACHINES = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64", "i386": "386", "i686": "386",
             "armv7l": "arm", "armv6l": "arm", "ppc64le": "ppc64le", "s390x": "s390x", "riscv64": "riscv64"}


@dataclass(frozen=True)
class Build:
    """One build configuration: what ``go build`` (and gopls) with no flags includes here."""

    goos: str
    goarch: str

    def has_tag(self, tag: str) -> bool:
        if tag in (self.goos, self.goarch, "gc") or _IMPLIED.get(self.goos) == tag:
            return True
        if tag == "unix":
            return self.goos in UNIX_OS
        if tag == "cgo":
            return True  # CGO_ENABLED is on by default where a C compiler is: a cgo file is taken as loaded
        return re.fullmatch(r"go1\.\d+", tag) is not None  # a release tag: the installed toolchain is the newest


def default_build() -> Build:
    """The configuration gopls loads when nothing sets one: GOOS and GOARCH from the environment
    it inherits, else this machine's."""
    goos = os.environ.get("GOOS") or {"win32": "windows", "cygwin": "windows"}.get(sys.platform, sys.platform.rstrip("0123456789"))
    goarch = os.environ.get("GOARCH") or _MACHINES.get(platform.machine().lower(), platform.machine().lower())
    return Build(goos, goarch)


@dataclass(frozen=True)
class NameConstraint:
    """What a Go file's name alone says about the builds that include it."""

    goos: str | None
    goarch: str | None
    test: bool

    def describe(self) -> str:
        parts = [f"GOOS={self.goos}" if self.goos else "", f"GOARCH={self.goarch}" if self.goarch else "",
                 "tests only (_test)" if self.test else ""]
        return ", ".join(part for part in parts if part) or "every build"


def name_constraint(path: str) -> NameConstraint:
    """go/build's reading of a file name: ``x_windows.go``, ``x_linux_amd64_test.go``."""
    name = path.rpartition("/")[2].partition(".")[0]
    test = name.endswith("_test")
    if test:
        name = name[: -len("_test")]
    underscore = name.find("_")
    if underscore < 0:
        return NameConstraint(None, None, test)
    parts = name[underscore:].split("_")
    if len(parts) >= 2 and parts[-2] in KNOWN_OS and parts[-1] in KNOWN_ARCH:
        return NameConstraint(parts[-2], parts[-1], test)
    if parts[-1] in KNOWN_OS:
        return NameConstraint(parts[-1], None, test)
    if parts[-1] in KNOWN_ARCH:
        return NameConstraint(None, parts[-1], test)
    return NameConstraint(None, None, test)


def name_allows(constraint: NameConstraint, build: Build) -> bool:
    return ((constraint.goos is None or build.has_tag(constraint.goos))
            and (constraint.goarch is None or build.has_tag(constraint.goarch)))


_BUILD_LINE = re.compile(r"^//go:build\s+(.+?)\s*$")
_PLUS_BUILD = re.compile(r"^//\s*\+build\s+(.+?)\s*$")


def build_expression(text: str) -> str | None:
    """The file's ``//go:build`` expression (or its ``// +build`` lines joined as one), read from
    the comments before the package clause, as go/build reads it; None when it has none."""
    plus: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("package ") or stripped == "package":
            break
        found = _BUILD_LINE.match(stripped)
        if found:
            return found.group(1)
        old = _PLUS_BUILD.match(stripped)
        if old:
            # `// +build a,b c` is (a && b) || c; several lines are and-ed.
            plus.append("(" + " || ".join("(" + " && ".join(term.split(",")) + ")" for term in old.group(1).split()) + ")")
    return " && ".join(plus) if plus else None


_TOKEN = re.compile(r"\s*(\|\||&&|!|\(|\)|[\w.]+)")


def satisfied(expression: str, has_tag: Callable[[str], bool]) -> bool:
    """A build expression's value; one that does not parse is taken as satisfied (the file is
    then counted as loaded, as go vet would complain of it anyway)."""
    tokens = _TOKEN.findall(expression)
    if "".join(tokens).replace(" ", "") != expression.replace(" ", ""):
        return True
    position = 0

    def peek() -> str | None:
        return tokens[position] if position < len(tokens) else None

    def take() -> str:
        nonlocal position
        position += 1
        return tokens[position - 1]

    def either() -> bool:
        value = both()
        while peek() == "||":
            take()
            value = both() or value
        return value

    def both() -> bool:
        value = negated()
        while peek() == "&&":
            take()
            value = negated() and value
        return value

    def negated() -> bool:
        if peek() == "!":
            take()
            return not negated()
        if peek() == "(":
            take()
            value = either()
            if peek() == ")":
                take()
            return value
        token = take() if peek() is not None else ""
        return has_tag(token)

    try:
        return either()
    except IndexError:
        return True


def excluded_by(path: str, text: str, build: Build) -> str | None:
    """Why ``build`` leaves the file out (its name's suffix, its ``//go:build`` line), or None when it includes it."""
    constraint = name_constraint(path)
    if not name_allows(constraint, build):
        return f"its name builds it only for {constraint.describe()}"
    expression = build_expression(text)
    if expression is not None and not satisfied(expression, build.has_tag):
        return f"//go:build {expression}"
    return None


class BuildsChange(Refused):
    """A Go file rename whose new name changes which builds include the file."""

    code = "build_constraints_change"


def renamed_builds(old: str, new: str) -> str | None:
    """What a rename from ``old`` to ``new`` changes about the builds that include the file, or
    None when its name says the same (``x.go`` to ``x_windows.go``: Windows builds only)."""
    before, after = name_constraint(old), name_constraint(new)
    if before == after:
        return None
    return f"{old} is built for {before.describe()}, {new} would be built for {after.describe()}"


def checked_file_rename(old: str, new: str, allowed: bool) -> str | None:
    """Refuses a rename that changes the file's builds unless ``allowed``; then returns the warning."""
    change = renamed_builds(old, new)
    if change is None:
        return None
    if not allowed:
        raise BuildsChange(f"renaming {old} to {new} changes which builds include it: {change}; the other builds would "
                           "lose (or gain) its code with no error on this machine. Choose a name without a _GOOS, _GOARCH "
                           "or _test suffix change, or allow the build change", option="build_change")
    return f"the file's builds change: {change}"
