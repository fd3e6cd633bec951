"""The peers of benchmarks/bench_real_projects.py, each applying a case as its own API does:
rope, jedi, and basedpyright's rename behind a bare client. Each takes the workspace copy, the
case, and the target's (file, 1-based line, 0-based column); a refusal or a failure raises."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def rope_tool(root: Path, case: dict[str, object], file: str, line: int, column: int) -> None:
    import rope.base.project
    from rope.refactor.move import create_move
    from rope.refactor.rename import Rename

    project = rope.base.project.Project(str(root), ropefolder=None)
    try:
        resource = project.get_resource(file)
        if case["op"] == "rename-file":
            project.do(_rope_module_changes(project, resource, str(case["dest"])))
            return
        text = resource.read()
        offset = sum(len(l) for l in text.splitlines(keepends=True)[: line - 1]) + column
        if case["op"] == "rename":
            changes = Rename(project, resource, offset).get_changes(str(case["new_name"]), in_hierarchy=True)
        else:
            changes = create_move(project, resource, offset).get_changes(project.get_resource(str(case["dest"])))
        project.do(changes)
    finally:
        project.close()


def _rope_module_changes(project: Any, resource: Any, dest: str) -> Any:
    """rope's rename-module (same folder) or move-module (same name, another folder); it has
    no single refactoring for both, so a case needing both is one rope cannot do."""
    from rope.refactor.move import MoveModule
    from rope.refactor.rename import Rename

    old, new = Path(str(resource.path)), Path(dest)
    if old.parent == new.parent:
        return Rename(project, resource).get_changes(new.stem)
    if old.name == new.name:
        return MoveModule(project, resource).get_changes(project.get_resource(new.parent.as_posix()))
    raise NotImplementedError("rope renames a module or moves it, not both at once")


def raw_server_tool(root: Path, case: dict[str, object], file: str, line: int, column: int) -> None:
    """basedpyright's own rename behind a bare client (benchmarks/raw_lsp.py), applied as it
    answers: what a client that trusts the server gets. Ready when the server has listed its
    source files; prepareRename first, as an editor does."""
    from lsp_pool.registry import SPECS_BY_ID, locate
    from benchmarks.raw_lsp import RawClient

    if case["op"] != "rename":
        raise NotImplementedError("only renames go through the raw server (its file rename leaves relative imports)")
    client = RawClient(list(locate(SPECS_BY_ID["basedpyright"]) or ()), str(root))
    try:
        client.request("initialize", {
            "processId": None, "rootUri": root.as_uri(), "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
            "capabilities": {"window": {"workDoneProgress": True}, "workspace": {"configuration": True}},
        })
        client.notify("initialized", {})
        client.wait_for_log("source file", timeout=120)
        place = {"textDocument": {"uri": (root / file).as_uri()}, "position": {"line": line - 1, "character": column}}
        if client.request("textDocument/prepareRename", place) is None:
            raise LookupError("prepareRename: nothing to rename here")
        edit = client.request("textDocument/rename", {**place, "newName": str(case["new_name"])}) or {}
    finally:
        client.close()
    _apply_lsp_edit(edit)


def _apply_lsp_edit(edit: dict[str, Any]) -> None:
    """A WorkspaceEdit's text edits written as given (changes or documentChanges; UTF-16 columns
    are taken as code points: these projects' touched lines are ASCII)."""
    from urllib.parse import unquote, urlparse

    per_file: dict[str, list[dict[str, Any]]] = {}  # JSON as the server sent it
    for uri, edits in (edit.get("changes") or {}).items():
        per_file.setdefault(uri, []).extend(edits)
    for change in edit.get("documentChanges") or []:
        if isinstance(change, dict) and "edits" in change:
            per_file.setdefault(change["textDocument"]["uri"], []).extend(change["edits"])
    for uri, edits in per_file.items():
        path = Path(unquote(urlparse(uri).path))
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line))
        text = "".join(lines)
        spans = sorted(((starts[e["range"]["start"]["line"]] + e["range"]["start"]["character"],
                         starts[e["range"]["end"]["line"]] + e["range"]["end"]["character"], e["newText"]) for e in edits), reverse=True)
        for start, end, new in spans:
            text = text[:start] + str(new) + text[end:]
        path.write_text(text, encoding="utf-8")


def jedi_tool(root: Path, case: dict[str, object], file: str, line: int, column: int) -> None:
    import jedi

    if case["op"] != "rename":
        raise NotImplementedError("jedi has no move or file-rename refactoring")
    script = jedi.Script(path=str(root / file), project=jedi.Project(str(root)))
    script.rename(line, column, new_name=str(case["new_name"])).apply()
