"""go/build's rules as engine.languages.go_builds reads them: which files a build
configuration leaves out, by name and by ``//go:build`` line."""

from __future__ import annotations

import pytest

from engine.languages.go_builds import (
    Build, NameConstraint, build_expression, excluded_by, including_build, name_constraint, satisfied,
)
from engine.refactor.go.build_constraints import BuildsChange, checked_file_rename

LINUX = Build("linux", "amd64")


@pytest.mark.parametrize(("expression", "expected"), [
    ("linux", True), ("!windows", True), ("linux && !cgo", False), ("(darwin || freebsd) && amd64", False),
    ("unix", True), ("go1.21", True), ("ignore", False), ("windows || (linux && amd64)", True), ("!(linux || darwin)", False),
])
def test_build_expressions_are_evaluated_as_go_build_does(expression: str, expected: bool) -> None:
    assert satisfied(expression, LINUX.has_tag) is expected


def test_android_builds_linux_files_and_ios_darwin_files() -> None:
    assert Build("android", "arm64").has_tag("linux") and Build("ios", "arm64").has_tag("darwin")
    assert not Build("linux", "amd64").has_tag("android")


@pytest.mark.parametrize(("path", "expected"), [
    ("a/x_windows.go", NameConstraint("windows", None, False)),
    ("x_linux_amd64_test.go", NameConstraint("linux", "amd64", True)),
    ("windows.go", NameConstraint(None, None, False)),  # a name without an underscore says nothing
    ("x_amd64.go", NameConstraint(None, "amd64", False)),
    ("foo_bar.go", NameConstraint(None, None, False)),
])
def test_file_names_are_read_as_go_build_reads_them(path: str, expected: NameConstraint) -> None:
    assert name_constraint(path) == expected


def test_old_plus_build_lines_are_and_ed_and_stop_at_the_package_clause() -> None:
    text = "// +build linux,386 darwin\n// +build !cgo\n\npackage x\n\n// +build windows\n"
    assert build_expression(text) == "((linux && 386) || (darwin)) && ((!cgo))"
    assert build_expression("//go:build experimental\n\npackage x\n") == "experimental"
    assert build_expression("package x\n\n//go:build windows\n") is None


def test_a_file_is_left_out_by_its_name_or_its_build_line() -> None:
    assert excluded_by("p/x_windows.go", "package p\n", LINUX) == "its name builds it only for GOOS=windows"
    assert excluded_by("p/x.go", "//go:build experimental\n\npackage p\n", LINUX) == "//go:build experimental"
    assert excluded_by("p/x_linux.go", "//go:build !windows\n\npackage p\n", LINUX) is None


def test_a_file_rename_that_changes_its_builds_is_refused_unless_allowed() -> None:
    assert checked_file_rename("p/x.go", "p/y.go", allowed=False) is None
    for new in ("p/x_windows.go", "p/x_test.go", "p/x_linux_amd64.go"):
        with pytest.raises(BuildsChange) as refused:
            checked_file_rename("p/x.go", new, allowed=False)
        assert refused.value.code == "build_constraints_change" and refused.value.option == "build_change"
    assert "tests only" in (checked_file_rename("p/x.go", "p/x_test.go", allowed=True) or "")


@pytest.mark.parametrize(("path", "text", "expected"), [
    ("a.go", "package a\n", "GOOS=linux GOARCH=amd64"),
    ("a_windows.go", "package a\n", "GOOS=windows GOARCH=amd64"),
    ("a_darwin_arm64.go", "package a\n", "GOOS=darwin GOARCH=arm64"),
    ("b.go", "//go:build integration\n\npackage a\n", "GOOS=linux GOARCH=amd64 -tags integration"),
    ("c.go", "//go:build !cgo && darwin\n\npackage a\n", "GOOS=darwin GOARCH=amd64 CGO_ENABLED=0"),
    ("e_arm64.go", "//go:build linux && (foo || bar)\n\npackage a\n", "GOOS=linux GOARCH=arm64 -tags bar"),
    ("f.go", "//go:build windows || plan9\n\npackage a\n", "GOOS=windows GOARCH=amd64"),
    ("g.go", "//go:build ignore\n\npackage main\n", None),
    ("h.go", "//go:build a && b && c && d && e && f && g\n\npackage x\n", None),
])
def test_a_configuration_that_includes_the_file_is_the_nearest_to_the_default(path: str, text: str, expected: str | None) -> None:
    """What the check after an apply compiles a file gopls does not build under (engine.edits.go_compiled)."""
    build = including_build(path, text, LINUX)
    assert (build.describe() if build is not None else None) == expected
    assert build is None or excluded_by(path, text, build) is None
