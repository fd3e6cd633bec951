"""typescript-language-server's diagnostics, asked of tsserver rather than awaited.

Its publications come in stages (syntactic, then semantic and suggestion): the first one after
opening a document whose semantic check takes longer than the server's 50 ms debounce holds the
syntax errors alone. Waiting for "the next publication" answered that part as the whole; on a
loaded CI machine a quick fix for an unused import went missing the same way.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from lsprotocol import types as t

from engine.client import EngineClient
from engine.edits.session import EditOptions
from engine.files import EditRequest
from lsp_pool.adapter import PoolServices
from lsp_pool.errors import ServerRequestFailed
from lsp_pool.features import LanguageApi
from lsp_pool.server import Reply
from lsp_pool.tsserver_diagnostics import _diagnostic, asked_diagnostics
from tests.test_lsp_e2e import require, served_engine

# A syntax error, then a semantic check slow enough (three assignability checks of
# 10,000-member template-literal unions, longer than the server's debounce) that the server
# publishes the syntax error on its own first.
SLOW_TO_CHECK = """type D = "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9";
type Four = `${D}${D}${D}${D}`;
export function pick(a: Four, b: `${D}${D}${D}${D}x`): Four { return b; }
export function pick2(a: Four, b: `${D}${D}${D}${D}y`): Four { return b; }
export function pick3(a: Four, b: `${D}${D}${D}${D}z`): Four { return b; }
const broken: number = "a";
let = ;
"""
SYNTAX_ERROR, NOT_ASSIGNABLE, UNKNOWN_NAME, UNUSED = "1109", "2322", "2304", "6133"


def test_tsserver_diagnostics_convert_as_the_server_publishes_them() -> None:
    """A body recorded from tsserver 5: lines and offsets from 1, categories to severities."""
    deprecated = _diagnostic({
        "start": {"line": 8, "offset": 1}, "end": {"line": 8, "offset": 4},
        "text": "The signature '(): void' of 'old' is deprecated.", "code": 6387, "category": "suggestion",
        "reportsDeprecated": True,
        "relatedInformation": [{"span": {"start": {"line": 7, "offset": 5}, "end": {"line": 7, "offset": 17}, "file": "/w/user.ts"},
                                "message": "The declaration was marked as deprecated here.", "category": "error", "code": 2798}],
    })
    assert deprecated.range == t.Range(t.Position(7, 0), t.Position(7, 3))
    assert (deprecated.severity, deprecated.code, deprecated.source) == (t.DiagnosticSeverity.Hint, 6387, "typescript")
    assert deprecated.related_information == [t.DiagnosticRelatedInformation(
        t.Location("file:///w/user.ts", t.Range(t.Position(6, 4), t.Position(6, 16))), "The declaration was marked as deprecated here.")]
    unused = _diagnostic({"start": {"line": 1, "offset": 10}, "end": {"line": 1, "offset": 15}, "text": "'other' is declared but its value is never read.",
                          "code": 6133, "category": "error", "reportsUnnecessary": True})
    assert (unused.severity, unused.range.start, unused.related_information) == (t.DiagnosticSeverity.Error, t.Position(0, 9), None)
    assert _diagnostic({"start": {"line": 1, "offset": 1}, "end": {"line": 1, "offset": 2}, "text": "w", "category": "warning"}).severity \
        == t.DiagnosticSeverity.Warning


class _RefusingServer:
    """What asked_diagnostics uses of a ManagedServer, answering its requests with ``answer``."""

    def __init__(self, answer: Reply | Exception) -> None:
        self.answer, self.tracker, self.restarts = answer, None, 0
        self.notes: list[str] = []

    def use_file(self, path: Path, *, open_it: bool) -> bool:
        return False

    async def request(self, method: str, params: object, *, allow_incomplete: bool = False) -> Reply:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


@pytest.mark.parametrize("answer, said", [
    (ServerRequestFailed("typescript-language-server", "workspace/executeCommand", -32601, "Unknown command"),
     "it refused typescript.tsserverRequest (typescript-language-server answered workspace/executeCommand with error -32601: Unknown command)"),
    (Reply({"type": "response", "success": False, "message": "No Project."}, True), "tsserver did not answer syntacticDiagnosticsSync (No Project.)"),
])
def test_a_refused_ask_falls_back_to_the_published_set_and_says_so(answer: Reply | Exception, said: str) -> None:
    server = _RefusingServer(answer)
    assert asyncio.run(asked_diagnostics(server, Path("/w/a.ts"), when_ready=True)) is None  # type: ignore[arg-type]
    assert server.notes == [f"diagnostics are taken as published, which may be a part of them: {said}"]


@pytest.mark.e2e
def test_a_just_opened_documents_diagnostics_are_whole_not_the_first_published_stage(tmp_path: Path) -> None:
    require("typescript-language-server")
    (tmp_path / "tsconfig.json").write_text('{"compilerOptions": {"strict": true, "noUnusedLocals": true}}', encoding="utf-8")
    (tmp_path / "slow.ts").write_text(SLOW_TO_CHECK, encoding="utf-8")
    with served_engine(tmp_path, "typescript-language-server") as engine:
        assert engine.services is not None
        answer = engine.services.diagnostics(engine.workspace.read("slow.ts"), when_ready=True)
        codes = sorted(d.code for d in answer.value)
        assert answer.complete
        assert codes == sorted([SYNTAX_ERROR] + [NOT_ASSIGNABLE] * 4 + [UNKNOWN_NAME] + [UNUSED] * 4), codes

        # The same set as the server publishes once its own check is through.
        uri = (tmp_path / "slow.ts").as_uri()

        async def published(api: LanguageApi) -> list[t.Diagnostic]:
            server = api.server_for(tmp_path / "slow.ts")
            deadline = time.monotonic() + 60.0
            while len(server.diagnostics.get(uri, [])) != len(codes) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            return list(server.diagnostics.get(uri, []))

        services = engine.services
        assert isinstance(services, PoolServices), services
        pushed = services.api.call(published)
        assert sorted((d.range.start.line, str(d.code), d.message) for d in pushed) == \
            sorted((d.range.start.line, d.code, d.message) for d in answer.value)

        # A change is seen by the next ask at once: no waiting out the server's re-check.
        (tmp_path / "slow.ts").write_text(SLOW_TO_CHECK.replace('const broken: number = "a";\n', ""), encoding="utf-8")
        after = engine.services.diagnostics(engine.workspace.read("slow.ts"), when_ready=True)
        assert sorted(d.code for d in after.value) == sorted([SYNTAX_ERROR] + [NOT_ASSIGNABLE] * 3 + [UNKNOWN_NAME] + [UNUSED] * 3)


@pytest.mark.e2e
def test_an_applys_check_reports_the_importers_a_change_broke(tmp_path: Path) -> None:
    """The differential check after an apply asks for the touched file's and its importers'
    diagnostics (recheck): each answer is the whole set for the program after the change."""
    require("typescript-language-server")
    (tmp_path / "tsconfig.json").write_text('{"compilerOptions": {"strict": true}}', encoding="utf-8")
    (tmp_path / "lib.ts").write_text("export function helper(): number {\n  return 1;\n}\n", encoding="utf-8")
    for name, expression in (("user", "helper()"), ("other", "helper() + 1")):
        (tmp_path / f"{name}.ts").write_text(f'import {{ helper }} from "./lib";\n\nexport const {name}: number = {expression};\n',
                                            encoding="utf-8")
    with served_engine(tmp_path, "typescript-language-server") as engine:
        client = EngineClient(engine)
        assert engine.graph().importing_files(["lib.ts"]) == ["other.ts", "user.ts"]
        client.read_file("lib.ts")
        change = EditRequest("lib.ts", "export function helper(): string {", old_string="export function helper(): number {")
        outcome = client.edit_file(change, apply=True, options=EditOptions()).to_json()
    assert outcome["diagnostics_complete"] is True
    new_diagnostics = outcome["new_diagnostics"]
    assert isinstance(new_diagnostics, list), new_diagnostics
    assert sorted((d["file"], d["line"], d["code"]) for d in new_diagnostics) == \
        [("lib.ts", 2, NOT_ASSIGNABLE), ("other.ts", 3, NOT_ASSIGNABLE), ("user.ts", 3, NOT_ASSIGNABLE)]
