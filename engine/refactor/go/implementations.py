"""A Go interface method's rename must reach every type that implements the interface.

gopls renames, with an interface's method, the methods of the types it finds converted to that
interface in the code (an assignment, an argument, a composite literal). A type that only meets
the interface at run time, through a type assertion from another interface value
(``f.Value.(SliceValue)`` in pflag), is not among them: its method keeps the old name, the type
quietly stops implementing the interface, and the assertion fails. The build stays green.

So a plan that renames an interface's method is checked: every method of the old name that it
leaves as it is, on a type that has the interface's other methods too (of the interface's
package; of any package when both are exported), refuses the plan, listed. It may be another method of the same name; the user decides.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.edits.model import FileChange, WorkspaceEdit
from engine.errors import ListingRefusal
from engine.refactor.corpus import Corpus

_NOT_CODE = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|`[^`]*`|'(?:\\.|[^'\\\n])*'", re.S)
_INTERFACE = re.compile(r"^type\s+(\w+)\s+interface\s*\{(.*?)^\}", re.S | re.M)
_METHOD_SPEC = re.compile(r"^\s*(\w+)\s*\(", re.M)


class ImplementationsLeftBehind(ListingRefusal):
    """The rename of an interface's method leaves types that implement the interface behind."""

    code = "implementations_left_behind"
    listed_as = "methods"


@dataclass(frozen=True)
class _Interface:
    path: str
    name: str
    line: int
    """0-based line of the renamed method's spec."""
    others: frozenset[str]
    """The interface's other method names."""


def _code(text: str) -> str:
    return _NOT_CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)


def _renamed_lines(edit: WorkspaceEdit) -> dict[str, set[int]]:
    lines: dict[str, set[int]] = {}
    for change in edit.operations:
        if isinstance(change, FileChange):
            lines.setdefault(change.path, set()).update(e.range.start.line for e in change.edits)
    return lines


def _renamed_interfaces(corpus: Corpus, renamed: dict[str, set[int]], old_name: str) -> list[_Interface]:
    """The interfaces whose method ``old_name`` the plan renames at its spec."""
    found = []
    for path, lines in renamed.items():
        if not path.endswith(".go"):
            continue
        text = corpus.source(path).text
        if "interface" not in text:
            continue  # no interface declared here: blanking the comments and strings would find none
        code = _code(text)
        for interface in _INTERFACE.finditer(code):
            body_line = code.count("\n", 0, interface.start(2))
            methods = {m.group(1): body_line + interface.group(2).count("\n", 0, m.start(1)) for m in _METHOD_SPEC.finditer(interface.group(2))}
            if methods.get(old_name) in lines:
                found.append(_Interface(path, interface.group(1), methods[old_name], frozenset(set(methods) - {old_name})))
    return found


def _methods(code: str) -> list[tuple[str, str, int]]:
    """(receiver type, method name, 0-based line) of a Go file's method declarations."""
    declared = re.finditer(r"^func\s*\(\s*(?:\w+\s+)?\*?\s*(\w+)(?:\[[^\]]*\])?\s*\)\s*(\w+)\s*[\[(]", code, re.M)
    return [(m.group(1), m.group(2), code.count("\n", 0, m.start(2))) for m in declared]


def check(edit: WorkspaceEdit, corpus: Corpus, old_name: str, new_name: str) -> None:
    """Raises ImplementationsLeftBehind when the plan renames an interface's method and leaves the
    same method of a type that has the interface's other methods as it was: a type of the
    interface's package, or of any package when the interface and the method are exported."""
    renamed = _renamed_lines(edit)
    for interface in _renamed_interfaces(corpus, renamed, old_name):
        folder = interface.path.rpartition("/")[0]
        packages = {folder}
        if interface.name[:1].isupper() and old_name[:1].isupper():
            # Another package's type may implement it too: those whose files spell the method.
            packages |= {path.rpartition("/")[0] for path in corpus.mentioning(old_name, "go")}
        declared: dict[tuple[str, str], set[str]] = {}
        candidates: list[tuple[str, str, int]] = []
        for path in corpus.paths:
            if not path.endswith(".go") or path.rpartition("/")[0] not in packages:
                continue
            for receiver, method, line in _methods(_code(corpus.source(path).text)):
                declared.setdefault((path.rpartition("/")[0], receiver), set()).add(method)
                if method == old_name and line not in renamed.get(path, set()):
                    candidates.append((path, receiver, line))
        left = [f"{path}:{line + 1} ({receiver}.{old_name})" for path, receiver, line in candidates
                if interface.others <= declared.get((path.rpartition("/")[0], receiver), set())]
        if left:
            listing = "\n  ".join(left)
            raise ImplementationsLeftBehind(
                f"renaming {interface.name}.{old_name} to {new_name} leaves {len(left)} method(s) of types that implement "
                f"{interface.name} as they are (the server renames only the types it sees converted to the interface; "
                f"these would stop implementing it, and a type assertion to {interface.name} would fail at run time):\n"
                f"  {listing}\nrename them in the same change, or rename each method first (each with its callers)", left)
