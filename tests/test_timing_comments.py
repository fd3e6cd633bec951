"""Comments and docstrings in library code say why, never how long something took.

Measured timings go stale with every host and every change; they live in benchmarks/RESULTS.md
with the command that produced them. A budget stays a named constant, and its comment says
what the budget is for.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

import pytest

from tests.conftest import REPO

PACKAGES = ("engine", "lsp_pool", "frontends")

TIMING = re.compile(r"\b\d+(?:[.,]\d+)?(?:\s?[-–]\s?\d+(?:[.,]\d+)?)?\s?(?:ms|µs|us|s|secs?|seconds?|min|minutes?)\b")
"""A number with a unit of time: ``0.3 s``, ``~40 ms``, ``1.0-1.5 s``, ``94 seconds``."""


def docstrings(tree: ast.AST) -> list[ast.Constant]:
    """Every string that stands alone as a statement: module, class and function docstrings,
    and the ones documenting an attribute below its assignment."""
    found = []
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        for statement in body if isinstance(body, list) else []:
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) \
                    and isinstance(statement.value.value, str):
                found.append(statement.value)
    return found


def quoted_timings(text: str) -> list[tuple[int, str]]:
    """(line, text) of each comment or docstring line of ``text`` that quotes a timing."""
    found = [(token.start[0], token.string.strip())
             for token in tokenize.generate_tokens(io.StringIO(text).readline)
             if token.type == tokenize.COMMENT and TIMING.search(token.string)]
    for string in docstrings(ast.parse(text)):
        found.extend((string.lineno + offset, line.strip())
                     for offset, line in enumerate(str(string.value).splitlines()) if TIMING.search(line))
    return sorted(found)


@pytest.mark.parametrize("package", PACKAGES)
def test_library_comments_quote_no_timings(package: str) -> None:
    offenders = [f"{path.relative_to(REPO)}:{line}: {quoted}"
                 for path in sorted((REPO / package).rglob("*.py"))
                 for line, quoted in quoted_timings(path.read_text(encoding="utf-8"))]
    assert offenders == [], "say why, not how long (figures go in benchmarks/RESULTS.md):\n" + "\n".join(offenders)


def test_the_scan_sees_timings_in_comments_and_docstrings() -> None:
    """Guard against a scan that passes because it recognises nothing."""
    sample = ('"""Module: about 0.3 s of a cold start."""\n'
              "LIMIT = 3.0\n"
              '"""Seconds a call may take: a budget, said without its value."""\n'
              "def f() -> None:\n"
              '    """Takes 1.0-1.5 s on this machine."""\n'
              "    x = '5 ms'  # ~40 ms here\n"
              "    # every 10 minutes\n"
              "    # version 3 of the protocol, 2 files\n")
    assert [line for line, _ in quoted_timings(sample)] == [1, 5, 6, 7]
