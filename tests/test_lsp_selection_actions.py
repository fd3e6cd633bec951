"""``graft lsp`` offers the editor's selection to extract and inline (frontends/lsp_server.py):
a non-empty selection gets "Extract function" and "Extract variable", the cursor on a name gets
"Inline", each a command running the registry's operation on the span. A real pygls client
asks, runs the command, and applies the edit the server sends as an editor would."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Union, cast

from lsprotocol import types as t
from pygls.lsp.client import LanguageClient

from tests.test_extract_servers import GO_SOURCE, GO_TEST, TS_SOURCE, go_checks, type_checks
from tests.test_lsp_e2e import require
from tests.test_lsp_server import _write_edit, session, uri

SOURCE = '''\
def report(orders, limit):
    header = "Orders"
    big = 0
    for order in orders:
        if order > limit:
            big += 1
    return f"{header}: {big}"


def total(prices):
    rate = 1.2
    return sum(prices) * rate
'''


def _project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "orders.py").write_text(SOURCE)
    return tmp_path


def _read_code_actions_whole(client: LanguageClient) -> None:
    """lsprotocol reads every code action that carries a command as a bare Command (its hook looks
    only for a ``command`` key), losing the kind: read a Command only when ``command`` is its name."""
    converter = client.protocol._converter

    def structure(value: Any, _: type) -> t.Command | t.CodeAction:
        if isinstance(value.get("command"), str):
            return cast(t.Command, converter.structure(value, t.Command))
        return cast(t.CodeAction, converter.structure(value, t.CodeAction))

    converter.register_structure_hook(Union[t.Command, t.CodeAction], structure)


async def _actions(client: LanguageClient, document: str, start: tuple[int, int], end: tuple[int, int]) -> list[t.CodeAction]:
    _read_code_actions_whole(client)
    answer = await client.text_document_code_action_async(t.CodeActionParams(
        t.TextDocumentIdentifier(document), t.Range(t.Position(*start), t.Position(*end)), t.CodeActionContext(diagnostics=[])))
    return [a for a in answer or [] if isinstance(a, t.CodeAction)]


async def _run(client: LanguageClient, action: t.CodeAction) -> Any:
    assert action.command is not None
    return await client.workspace_execute_command_async(t.ExecuteCommandParams(action.command.command, action.command.arguments))


def test_a_selection_is_offered_extract_function_and_variable_and_the_command_extracts_it(tmp_path: Path) -> None:
    project = _project(tmp_path)
    document = uri(project, "orders.py")

    async def steps(client: LanguageClient) -> Any:
        client.text_document_did_open(t.DidOpenTextDocumentParams(t.TextDocumentItem(document, "python", 1, SOURCE)))
        statements = await _actions(client, document, (2, 4), (5, 20))  # big = 0 ... big += 1
        expression = await _actions(client, document, (11, 11), (11, 22))  # sum(prices)
        by_title = {a.title: a for a in statements}
        outcome = await _run(client, by_title["Extract function (graft)"])
        return statements, expression, outcome

    (statements, expression, outcome), edits, _ = asyncio.run(session(project, steps))
    assert {a.title: a.kind for a in statements}["Extract function (graft)"] == "refactor.extract.function"
    assert "Extract variable (graft)" in {a.title for a in expression}
    arguments = next(a for a in expression if a.title == "Extract variable (graft)").command
    assert arguments is not None and list(arguments.arguments or []) == [{"address": "orders.py:12:12-12:23", "new_name": "extracted_value"}]
    assert outcome["applied"] is True, outcome
    _write_edit(project, edits[0].edit)
    text = (project / "orders.py").read_text()
    assert "    big = extracted_function(orders, limit)\n" in text and "\ndef extracted_function(orders, limit):\n" in text


def test_the_cursor_on_a_name_is_offered_inline_and_an_empty_place_nothing(tmp_path: Path) -> None:
    project = _project(tmp_path)
    document = uri(project, "orders.py")

    async def steps(client: LanguageClient) -> Any:
        client.text_document_did_open(t.DidOpenTextDocumentParams(t.TextDocumentItem(document, "python", 1, SOURCE)))
        on_name = await _actions(client, document, (10, 6), (10, 6))  # rate = 1.2
        blank = await _actions(client, document, (8, 0), (8, 0))  # the blank line between the functions
        outcome = await _run(client, next(a for a in on_name if a.title == "Inline (graft)"))
        return on_name, blank, outcome

    (on_name, blank, outcome), edits, _ = asyncio.run(session(project, steps))
    assert [a.kind for a in on_name if a.title == "Inline (graft)"] == ["refactor.inline"]
    assert blank == []
    assert outcome["applied"] is True, outcome
    _write_edit(project, edits[0].edit)
    assert "def total(prices):\n    return sum(prices) * 1.2\n" in (project / "orders.py").read_text()


# -- TypeScript and Go: the same actions, done by the servers' own refactorings ------------------


def _server_session(project: Path, document: str, language: str, selection: tuple[tuple[int, int], tuple[int, int]],
                    cursor_at: str) -> None:
    """Extract a function from ``selection``, then inline at the first ``cursor_at`` in the file as
    it then is: each command's edit written and saved as an editor would, in a session of its own."""
    path = project / document

    def run_action(start: tuple[int, int], end: tuple[int, int], title: str) -> None:
        text = path.read_text()

        async def steps(client: LanguageClient) -> Any:
            client.text_document_did_open(t.DidOpenTextDocumentParams(t.TextDocumentItem(uri(project, document), language, 1, text)))
            offered = await _actions(client, uri(project, document), start, end)
            return await _run(client, next(a for a in offered if a.title == title))

        outcome, edits, _ = asyncio.run(session(project, steps, source="auto"))
        assert outcome["applied"] is True and len(edits) == 1, outcome
        _write_edit(project, edits[0].edit)

    run_action(*selection, "Extract function (graft)")
    lines = path.read_text().splitlines()
    line = next(n for n, text in enumerate(lines) if cursor_at in text)
    cursor = (line, lines[line].index(cursor_at))
    run_action(cursor, cursor, "Inline (graft)")


def test_typescript_selection_actions_run_tsservers_refactorings(tmp_path: Path) -> None:
    require("typescript-language-server")
    (tmp_path / "tsconfig.json").write_text('{"compilerOptions": {"strict": true, "target": "es2020", "noEmit": true}}')
    (tmp_path / "lib.ts").write_text(TS_SOURCE)
    _server_session(tmp_path, "lib.ts", "typescript", ((2, 2), (3, 30)), "value = 21")  # the inner lines
    text = (tmp_path / "lib.ts").read_text()
    assert "  const inner = extractedFunction(width, margin, height);\n" in text
    assert "\nfunction extractedFunction(width: number, margin: number, height: number) {\n" in text
    assert "export function useDouble(): number {\n  return double(21) + 21;\n}\n" in text
    type_checks(tmp_path)


def test_go_selection_actions_run_gopls_refactorings(tmp_path: Path) -> None:
    require("gopls")
    (tmp_path / "go.mod").write_text("module example.com/shapes\n\ngo 1.21\n")
    (tmp_path / "shapes.go").write_text(GO_SOURCE)
    (tmp_path / "shapes_test.go").write_text(GO_TEST)
    _server_session(tmp_path, "shapes.go", "go", ((5, 1), (7, 28)), "double(value)")  # the inner lines
    text = (tmp_path / "shapes.go").read_text()
    assert "\tinner := extractedFunction(width, height)\n" in text and "\nfunc extractedFunction(width int, height int) int {\n" in text
    assert "\tvalue := 21\n\treturn value*2 + value\n}\n" in text
    go_checks(tmp_path)
