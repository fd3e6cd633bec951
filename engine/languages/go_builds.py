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
    """One build configuration: what ``go build`` with these settings includes here (with none
    set, what gopls loads)."""

    goos: str
    goarch: str
    tags: frozenset[str] = frozenset()
    cgo: bool = True
    """CGO_ENABLED: on by default where a C compiler is, so a cgo file is taken as loaded."""

    def has_tag(self, tag: str) -> bool:
        if tag in (self.goos, self.goarch, "gc") or tag in self.tags or _IMPLIED.get(self.goos) == tag:
            return True
        if tag == "unix":
            return self.goos in UNIX_OS
        if tag == "cgo":
            return self.cgo
        return re.fullmatch(r"go1\.\d+", tag) is not None  # a release tag: the installed toolchain is the newest

    def describe(self) -> str:
        """As a user would set it: ``GOOS=windows GOARCH=amd64 -tags integration``."""
        settings = [f"GOOS={self.goos}", f"GOARCH={self.goarch}", *([] if self.cgo else ["CGO_ENABLED=0"])]
        return " ".join([*settings, *([f"-tags {','.join(sorted(self.tags))}"] if self.tags else [])])


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


_NEVER_CHOSEN = frozenset({"ignore", "gccgo"})
"""Tags no check sets: ``ignore`` marks files no build includes (generators run by hand), and
gccgo is another compiler."""

_MOST_TAGS = 6
"""A file's custom tags tried together, at most: every subset of them is a configuration."""


def including_build(path: str, text: str, default: Build) -> Build | None:
    """A configuration that includes the file: ``default`` when it does, else the nearest one
    (its name's GOOS and GOARCH, the fewest of its ``//go:build`` tags, cgo as by default), or
    None when none does that a check could set (``//go:build ignore``, more tags than are tried)."""
    constraint = name_constraint(path)
    expression = build_expression(text)
    words = [w for w in _TOKEN.findall(expression or "") if w.strip() not in ("||", "&&", "!", "(", ")")]
    words = [w.strip() for w in words]
    systems = _candidates(constraint.goos, default.goos, [w for w in words if w in KNOWN_OS])
    machines = _candidates(constraint.goarch, default.goarch, [w for w in words if w in KNOWN_ARCH])
    custom = sorted({w for w in words if w not in KNOWN_OS and w not in KNOWN_ARCH and w not in _NEVER_CHOSEN
                     and w not in ("unix", "cgo", "gc") and not re.fullmatch(r"go1\.\d+", w)})
    if len(custom) > _MOST_TAGS:
        return None
    subsets = sorted((frozenset(t for bit, t in enumerate(custom) if mask >> bit & 1) for mask in range(1 << len(custom))), key=len)
    for tags in subsets:
        for cgo in (True, False):
            for goos in systems:
                for goarch in machines:
                    build = Build(goos, goarch, tags, cgo)
                    if excluded_by(path, text, build) is None:
                        return build
    return None


def _candidates(named: str | None, default: str, mentioned: list[str]) -> list[str]:
    """The values to try for GOOS or GOARCH: the file name's, else the default then those its expression mentions."""
    if named is not None:
        return [named]
    return list(dict.fromkeys([default, *mentioned]))
