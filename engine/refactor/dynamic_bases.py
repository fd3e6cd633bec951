"""Classes whose base is a value known only at run time, that define the renamed member's name.

itsdangerous' tests write ``class Other(serializer.signer): default_key_derivation = "hmac"``
inside a test: the base is whatever the ``serializer`` fixture holds. No server, jedi or graph
resolves it, so a rename of ``Signer.default_key_derivation`` cannot know that ``Other``
overrides it, and left it (12 red tests). Such a class is named in a warning: it may be an
override, and only a person (or the suite) can tell.
"""

from __future__ import annotations

import ast
import warnings as python_warnings

from engine.refactor.corpus import Corpus
from engine.refactor.local_scopes import LocalScopes


def dynamic_base_overrides(corpus: Corpus, old: str) -> list[str]:
    """A warning per class that defines ``old`` and derives from a function's local value."""
    found = []
    for path in corpus.mentioning(old, "python"):
        text = corpus.source(path).text
        try:
            with python_warnings.catch_warnings():
                python_warnings.simplefilter("ignore", SyntaxWarning)
                tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        scopes: LocalScopes | None = None
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef) or not _defines(node, old):
                continue
            for base in node.bases:
                head = _head(base)
                if head is None:
                    continue
                scopes = scopes or LocalScopes(text)
                if scopes.binds(head, node.lineno):
                    found.append(f"{path}:{node.lineno}: class {node.name} derives from {ast.unparse(base)}, a value known "
                                 f"only at run time, and defines {old}: it may override the renamed member (left as it is; check it)")
                    break
    return found


def _defines(cls: ast.ClassDef, name: str) -> bool:
    for statement in cls.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name == name:
            return True
        targets = statement.targets if isinstance(statement, ast.Assign) else (
            [statement.target] if isinstance(statement, ast.AnnAssign) else [])
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return True
    return False


def _head(expression: ast.expr) -> str | None:
    """The name an attribute chain, call or subscript starts from (``serializer`` of ``serializer.signer``)."""
    while isinstance(expression, (ast.Attribute, ast.Call, ast.Subscript)):
        expression = expression.value if not isinstance(expression, ast.Call) else expression.func
    return expression.id if isinstance(expression, ast.Name) else None
