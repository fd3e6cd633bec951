"""The comments a server's inline does not carry to the call site, said in the plan.

gopls's "Inline call" copies the callee's statements without their comments (the callee keeps
its own, so nothing is lost from the project, but the inlined code reads as if it never had
them). The plan names each comment of the callee's body that its edit does not write, with its
line, so that whoever applies it can carry back the ones that still apply. Only the callee's body
counts (from its ``func`` line on): its doc comment describes the function, not the statements.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from engine.answers import ServerEdit
from engine.errors import GraftError
from engine.symbols import Symbol, walk_all

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext
    from engine.refactor.selection import Selection

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|`[^`]*`|'(?:\\.|[^'\\\n])*'", re.S)
"""Go's and TypeScript's comments, with quoted strings matched only so that a ``//`` inside one is skipped."""
_SHOWN = 3


def uncarried_comments(context: PlanContext, selection: Selection, edit: ServerEdit) -> list[str]:
    """A note naming the comments of the inlined callee's body that ``edit`` does not write, or none."""
    try:
        callee = _callee(context, selection)
    except GraftError as error:
        return [f"the callee's comments were not compared with the inlined code ({error.code}: {error}); "
                "check the call site for comments the server did not copy"]
    if callee is None:
        return []
    path, symbol, text = callee
    lines = text.splitlines(keepends=True)
    first = symbol.selection_range.start.line
    body = "".join(lines[first:symbol.range.end.line + 1])
    written = "".join(one.new_text for change in edit.files for one in change.edits)
    missing = [(first + body.count("\n", 0, found.start()) + 1, found.group().strip())
               for found in _COMMENT.finditer(body) if found.group().startswith(("//", "/*"))
               and found.group().strip() not in written]
    if not missing:
        return []
    shown = ", ".join(f"line {line} {comment[:60]!r}" for line, comment in missing[:_SHOWN])
    more = f" and {len(missing) - _SHOWN} more" if len(missing) > _SHOWN else ""
    return [f"the inlined code leaves out {len(missing)} comment(s) of {symbol.name}'s body in {path} ({shown}{more}): "
            "the server does not copy them; add back those that still apply"]


def _callee(context: PlanContext, selection: Selection) -> tuple[str, Symbol, str] | None:
    """The declaration the inlined name resolves to: its file, its symbol and the file's text
    (None where the server names no one place in the workspace; GraftError where it cannot answer)."""
    services = context.services
    if services is None:
        return None
    locations = services.definition(selection.source, selection.range.start).value
    if len(locations) != 1 or not locations[0].inside_workspace:
        return None
    source = context.workspace.read(locations[0].file)
    at = locations[0].range.start
    declared = [s for s in walk_all(context.extractor.extract(source).symbols) if s.selection_range.contains(at)]
    return (source.path, declared[-1], source.text) if declared else None
