"""What gopls's "Extract function" gets wrong, refused before it is shown.

gopls passes a variable the extracted statements change only through an element or a field
(``uuid[i] = v``, ``p.count++``) as a parameter, by value, and does not return it: it counts only
assignments to the variable itself. For a slice, a map or a pointer the change still reaches the
caller; for an array or a struct it lands on the copy and is lost, and the code still compiles
(found on google/uuid's Parse: every parsed UUID came back zero). So each parameter of the new
function that the span assigns through is looked up: its type, as gopls writes it in the new
signature, and a named type's declaration in the package's own files. A value type, or one that
cannot be told (another package's), is refused.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from engine.errors import Refused

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext
    from engine.refactor.plan import RefactorPlan

_NOT_CODE = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|`[^`]*`|'(?:\\.|[^'\\\n])*'", re.S)
_REFERENCE = ("*", "[]", "map[", "chan ", "chan<-", "<-chan", "func(", "func ", "interface{", "interface {")


class CopiedValue(Refused):
    """The extracted function would change a copy of a variable, not the variable."""

    code = "copies_a_value"


def refuse_copied_values(plan: RefactorPlan, context: PlanContext, span_text: str, new_name: str) -> None:
    """Refuse ``plan`` when its new function receives by value a variable ``span_text`` assigns
    through an element or a field (see the module's docstring)."""
    written = "\n".join(edit.new_text for change in plan.edit.operations for edit in getattr(change, "edits", ()))
    signature = re.search(rf"\bfunc\s+(?:\([^)]*\)\s*)?{re.escape(new_name)}\s*\(([^)]*)\)", written)
    if signature is None:
        return
    code = _NOT_CODE.sub(" ", span_text)
    for name, type_text in _parameters(signature.group(1)):
        if not _assigned_through(code, name):
            continue
        kind = _underlying(type_text, context, plan)
        if kind != "reference":
            raise CopiedValue(
                f"gopls's extracted {new_name} would receive {name} ({type_text}, {kind}) by value and assign through it "
                f"({name}[...] or {name}.field): the change would be lost to the caller, and the code would still compile. "
                "Extract fewer statements, or take its address first. Nothing was changed")


def _parameters(text: str) -> list[tuple[str, str]]:
    """(name, type) of a Go parameter list; ``a, b int`` gives both names the type."""
    pairs: list[tuple[str, str]] = []
    waiting: list[str] = []
    for part in _split_top_level(text):
        words = part.strip().split(None, 1)
        if not words:
            continue
        if len(words) == 1:
            waiting.append(words[0])
            continue
        for name in (*waiting, words[0]):
            pairs.append((name, words[1].strip()))
        waiting = []
    return pairs


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        depth += char in "([{"
        depth -= char in ")]}"
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current]


def _assigned_through(code: str, name: str) -> bool:
    """Whether ``code`` assigns to an element or field of ``name`` (``name[i] =``, ``name.f +=``,
    ``name[i]++``, ``name[i], ok =``), not to ``name`` itself."""
    target = rf"(?<![\w.]){re.escape(name)}(?:\s*\[[^\]\n]*\]|\s*\.\s*\w+)+"
    assignment = r"\s*(?:(?:[-+*/%&|^]|<<|>>|&\^)?=(?!=)|\+\+|--|,[^=\n:]*=(?!=))"
    return re.search(target + assignment, code) is not None


def _underlying(type_text: str, context: PlanContext, plan: RefactorPlan) -> str:
    """"reference" when a change through a copy reaches the original (pointer, slice, map...),
    else what the type is: "an array", "a struct", or "a type declared elsewhere"."""
    seen: set[str] = set()
    while True:
        if type_text.startswith(_REFERENCE):
            return "reference"
        if type_text.startswith("["):
            return "an array"
        if type_text.startswith("struct"):
            return "a struct"
        if not re.fullmatch(r"\w+", type_text) or type_text in seen:
            return "a type declared elsewhere"
        seen.add(type_text)
        declared = _declaration(type_text, context, plan)
        if declared is None:
            return "a type declared elsewhere"
        type_text = declared


def _declaration(name: str, context: PlanContext, plan: RefactorPlan) -> str | None:
    """What ``type NAME ...`` declares in the Go files of the edited file's folder (its package)."""
    folder = PurePosixPath(plan.edit.touched[0]).parent.as_posix() if plan.edit.touched else "."
    pattern = re.compile(rf"^\s*(?:type\s+)?{re.escape(name)}\s+(?:=\s*)?(\S.*)$", re.M)
    for path in context.workspace_files():
        if PurePosixPath(path).parent.as_posix() != folder or not path.endswith(".go"):
            continue
        code = _NOT_CODE.sub(" ", context.workspace.read(path).text)
        for block in re.finditer(r"\btype\s+(?:\(([^)]*)\)|(\w+\s+[^\n]+))", code):
            found = pattern.search(block.group(1) or block.group(2) or "")
            if found is not None:
                return found.group(1).strip()
    return None
