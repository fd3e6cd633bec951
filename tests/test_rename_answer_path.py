"""The path of a server's rename from the request to its answer's values (issue 40, the warm
rename's critical path): the waiting thread is kept from plan to plan; a large answer is parsed
in one piece with the collector paused; line indexes and the tsconfig reading are kept between
plans, and read again once a file changes; the overlap check compares plain numbers."""

from __future__ import annotations

import asyncio
import gc
import json
import threading
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import given, settings, strategies as st
from lsprotocol.types import Position as LspPosition, RenameParams, TextDocumentIdentifier

import engine.refactor.rename as rename
from engine.answers import FileEdits, ServerEdit, TextEdit
from engine.api import Engine, SourcePreference
from engine import read_memo
from engine.edits.model import FileChange, OverlappingEdits, check_no_overlap
from engine.ports import Answered
from engine.positions import LineIndex, Position, PositionEncoding, Range
from engine.refactor import leftovers
from engine.refactor.corpus import Corpus
from engine.refactor.operations.rename_symbol import Rename
from engine.refactor.typescript import configs as typescript_configs
from engine.refactor.typescript.visibility import project_configs
from engine.workspace import SourceFile, Workspace
from lsp_pool import convert
from lsp_pool.connection import Connection, ServerEvents
from lsp_pool.convert import Converter
from lsp_pool.reader import collection_paused
from tests.test_lsp_e2e import require, served_engine


# -- the thread that waits on the server ---------------------------------------------------------

class Port:
    """A port whose rename records the thread it was asked from."""

    def __init__(self) -> None:
        self.threads: list[threading.Thread] = []

    def rename(self, source: SourceFile, position: Position, new_name: str,
               sent: Callable[[], None] | None = None) -> Answered[ServerEdit]:
        self.threads.append(threading.current_thread())
        if sent is not None:
            sent()
        edit = TextEdit(Range(Position(0, 6), Position(0, 9)), new_name)
        return Answered(ServerEdit(files=(FileEdits(source.path, (edit,)),)), "fake", True)


def test_the_thread_that_waits_on_the_server_is_kept_from_plan_to_plan(tmp_path: Path) -> None:
    """Started for each plan, it took milliseconds to start on a loaded machine before the
    request could go out."""
    (tmp_path / "mod.py").write_text("class Old:\n    pass\n\n\nvalue = Old()\n")
    port = Port()
    for new_name in ("New", "Newer"):
        request = rename.RenameRequest(Workspace(tmp_path), port, (rename.RenameTarget("mod.py", Position(0, 6)),),  # type: ignore[arg-type]
                                       "Old", new_name, dotted="mod.Old")
        assert rename.plan_rename(request).edit.edit_count == 1
    assert len(port.threads) == 2 and port.threads[0] is port.threads[1] is not threading.current_thread()


# -- reading a large answer ------------------------------------------------------------------------

def _framed(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_a_large_answer_is_structured_once_and_parsed_with_the_collector_paused(tmp_path: Path) -> None:
    """pygls's reader gave Python's parser its ``structure_message`` as the hook, called for each
    of the answer's thousands of objects, and the collector ran a dozen times over them."""
    edits = [{"range": {"start": {"line": n, "character": 4}, "end": {"line": n, "character": 9}}, "newText": "after"}
             for n in range(3000)]
    answer = {"jsonrpc": "2.0", "id": 7, "result": {"changes": {"file:///tmp/a.ts": edits}}}
    connection = Connection("fake", ("true",), str(tmp_path), ServerEvents())
    protocol = connection._client.protocol
    structured: list[tuple[Any, bool]] = []
    handled: list[Any] = []
    structure = protocol.structure_message

    def recording(data: Any) -> Any:
        structured.append((data, gc.isenabled()))
        return structure(data)

    protocol.structure_message = recording  # type: ignore[method-assign]
    protocol.handle_message = handled.append  # type: ignore[method-assign,assignment]

    async def read() -> None:
        stream = asyncio.StreamReader()
        stream.feed_data(_framed(answer))
        stream.feed_eof()
        await connection._read_messages(stream)

    assert gc.isenabled()
    asyncio.run(read())
    assert len(structured) == 1, f"structure_message called {len(structured)} times, once per object"
    assert structured[0][0] == answer and structured[0][1] is False, "the collector ran while the answer was parsed"
    assert gc.isenabled(), "the collector runs again after"
    assert len(handled) == 1 and handled[0].result == answer["result"]


def _answered(tmp_path: Path, read_result: Callable[[Any], Any], size: int = 3000) -> tuple[Connection, Any]:
    """A rename asked through a connection whose server answers ``size`` edits: (the connection,
    what the request returned or the error it raised)."""
    connection = Connection("fake", ("true",), str(tmp_path), ServerEvents())
    protocol = connection._client.protocol
    written: list[bytes] = []

    class Writer:
        def write(self, data: bytes) -> None:
            written.append(data)

    protocol.set_writer(Writer())  # type: ignore[arg-type]
    edits = [{"range": {"start": {"line": n, "character": 4}, "end": {"line": n, "character": 9}}, "newText": "after"}
             for n in range(size)]
    params = RenameParams(text_document=TextDocumentIdentifier(uri="file:///tmp/a.ts"), position=LspPosition(line=0, character=4),
                          new_name="after")

    async def ask() -> Any:
        asking = asyncio.ensure_future(connection.request("textDocument/rename", params, timeout=30, read_result=read_result))
        await asyncio.sleep(0)  # the request is written
        msg_id = json.loads(b"".join(written).split(b"\r\n\r\n", 1)[1])["id"]
        stream = asyncio.StreamReader()
        stream.feed_data(_framed({"jsonrpc": "2.0", "id": msg_id, "result": {"changes": {"file:///tmp/a.ts": edits}}}))
        stream.feed_eof()
        await connection._read_messages(stream)
        try:
            return await asking
        except Exception as error:  # noqa: BLE001 - returned for the test to look at
            return error

    return connection, asyncio.run(ask())


def test_a_renames_answer_is_read_into_its_value_as_it_is_parsed_with_the_collector_still_paused(tmp_path: Path) -> None:
    """Read into JSON, then into the engine's values a few turns of the loop later, its thousands
    of objects were all walked by the collector in between."""
    seen: list[tuple[int, bool]] = []

    def read(result: Any) -> str:
        seen.append((len(result["changes"]["file:///tmp/a.ts"]), gc.isenabled()))
        return "read"

    connection, value = _answered(tmp_path, read)
    assert value == "read" and seen == [(3000, False)]
    assert gc.isenabled()


def test_a_reader_that_fails_raises_to_the_caller_and_the_session_reads_on(tmp_path: Path) -> None:
    def read(result: Any) -> str:
        raise UnicodeDecodeError("utf-8", b"", 0, 1, "the file changed")

    connection, value = _answered(tmp_path, read, size=3)
    assert isinstance(value, UnicodeDecodeError)
    assert connection.failure is None, "not the server's fault: the connection stays usable"


def test_pauses_of_the_collector_in_several_threads_resume_it_when_the_last_ends() -> None:
    assert gc.isenabled()
    inside, release = threading.Event(), threading.Event()

    def other() -> None:
        with collection_paused():
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=other)
    with collection_paused():
        thread.start()
        inside.wait(10)
    assert not gc.isenabled(), "the other thread's pause still holds"
    release.set()
    thread.join(10)
    assert gc.isenabled()
    gc.disable()
    try:
        with collection_paused():
            pass
        assert not gc.isenabled(), "a collector that was off stays off"
    finally:
        gc.enable()


# -- line indexes kept between requests ---------------------------------------------------------

def test_line_indexes_are_kept_between_requests_and_read_again_once_the_file_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(read_memo, "RACY_SECONDS", 0.0)  # kept at once (each change below changes the size)
    path = tmp_path / "a.ts"
    path.write_text("const é = 1; const b = 2;\n")
    reads: list[str] = []
    real = convert.read_bytes

    def counted(name: str) -> bytes:
        reads.append(name)
        return real(name)

    monkeypatch.setattr(convert, "read_bytes", counted)
    edit = {"changes": {path.as_uri(): [{"range": {"start": {"line": 0, "character": 19},
                                                    "end": {"line": 0, "character": 20}}, "newText": "c"}]}}
    first = Converter(tmp_path, PositionEncoding.UTF16).workspace_edit(edit)
    second = Converter(tmp_path, PositionEncoding.UTF16).workspace_edit(edit)
    assert first == second and first.files[0].edits[0].range.start == Position(0, 19)
    assert len(reads) == 1, "the second request's converter read the unchanged file again"
    path.write_text("const éé = 1; const b = 2;\n")  # same line, one more code point: another column
    changed = Converter(tmp_path, PositionEncoding.UTF16).workspace_edit(
        {"changes": {path.as_uri(): [{"range": {"start": {"line": 0, "character": 20},
                                                 "end": {"line": 0, "character": 21}}, "newText": "c"}]}})
    assert len(reads) == 2 and changed.files[0].edits[0].range.start == Position(0, 20)


def test_an_edit_before_its_lines_start_is_clamped_to_it() -> None:
    """A server's negative character (none should send one) ends at the line's start, as before."""
    index = LineIndex(b"abc\n")
    assert index.edit_range(0, -1, 0, -2, PositionEncoding.UTF16) == Range(Position(0, 0), Position(0, 0))


# -- tsconfig reading kept between plans --------------------------------------------------------

def test_the_tsconfig_reading_is_kept_between_plans_and_read_again_once_a_config_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "tsconfig.json").write_text('{"include": ["src"]}\n')
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.ts").write_text("export const a = 1;\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "t.ts").write_text("export const t = 1;\n")
    made: list[int] = []
    real = typescript_configs.ProjectConfigs.__init__

    def counted(self: typescript_configs.ProjectConfigs, *args: Any) -> None:
        made.append(1)
        real(self, *args)

    monkeypatch.setattr(typescript_configs.ProjectConfigs, "__init__", counted)
    engine = Engine(Workspace(tmp_path), source=SourcePreference.AST)
    first = project_configs(engine)
    assert first.owner("tests/t.ts") is None and first.owner("src/a.ts") is not None
    assert project_configs(engine) is first and len(made) == 1, "the configs were read and parsed again, unchanged"
    (tmp_path / "tsconfig.json").write_text('{"include": ["src", "tests"]}\n')
    again = project_configs(engine)
    assert len(made) == 2 and again.owner("tests/t.ts") is not None


# -- the leftovers scan kept between plans --------------------------------------------------------

def test_the_old_names_scan_is_kept_between_plans_and_made_again_for_a_changed_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.ts").write_text("export const scaleBy = 1;\n// scaleBy\n")
    (tmp_path / "b.ts").write_text('import { scaleBy } from "./a";\nexport const b = scaleBy;\n')
    scanned: list[int] = []
    real = leftovers.Leftovers._scanned

    def counted(self: leftovers.Leftovers, data: bytes) -> Any:
        scanned.append(1)
        return real(self, data)

    monkeypatch.setattr(leftovers.Leftovers, "_scanned", counted)
    workspace = Workspace(tmp_path)
    first = leftovers.Leftovers(Corpus(workspace), "scaleBy", "typescript")
    assert len(scanned) == 2 and first.files_holding_the_name() == ["a.ts", "b.ts"]
    again = leftovers.Leftovers(Corpus(workspace), "scaleBy", "typescript")
    assert len(scanned) == 2, "the unchanged files were scanned again"
    assert again._lines_now == first._lines_now
    (tmp_path / "b.ts").write_text('import { scaleBy } from "./a";\n\nexport const b = scaleBy + scaleBy;\n')
    changed = leftovers.Leftovers(Corpus(workspace), "scaleBy", "typescript")
    assert len(scanned) == 3 and changed._lines_now["b.ts"] == [(0, 'import { scaleBy } from "./a";'),
                                                                   (2, "export const b = scaleBy + scaleBy;")]
    assert changed._words_now["b.ts"] == {(0, 9, 0, 16), (2, 17, 2, 24), (2, 27, 2, 34)}


# -- the overlap check --------------------------------------------------------------------------

def test_the_overlap_check_compares_no_position_objects(monkeypatch: pytest.MonkeyPatch) -> None:
    """Their generated comparisons run in Python: most of the check over a thousand edits."""
    edits = tuple(TextEdit(Range(Position(n, 4), Position(n, 9)), "x") for n in range(50))
    compared: list[int] = []
    for method in ("__lt__", "__eq__"):
        real = getattr(Position, method)

        def counting(self: Position, other: object, real: Any = real) -> Any:
            compared.append(1)
            return real(self, other)

        monkeypatch.setattr(Position, method, counting)
    check_no_overlap("a.ts", edits)
    assert not compared


def _reference_check(path: str, edits: tuple[TextEdit, ...]) -> None:
    """The check as it was, comparing positions."""
    ordered = sorted(edits, key=lambda e: (e.range.start.line, e.range.start.column, e.range.end.line, e.range.end.column))
    for before, after in zip(ordered, ordered[1:]):
        if after.range.start < before.range.end:
            raise OverlappingEdits(
                f"{path}: edits overlap at line {after.range.start.line + 1}, column {after.range.start.column + 1}"
                f" (one ends at line {before.range.end.line + 1}, column {before.range.end.column + 1})")
        if after.range.start == before.range.start == after.range.end == before.range.end and before != after:
            raise OverlappingEdits(f"{path}: two insertions at line {after.range.start.line + 1}, column "
                                   f"{after.range.start.column + 1} have no defined order")


_SPANS = st.tuples(st.integers(0, 3), st.integers(0, 4), st.integers(0, 1), st.integers(0, 4), st.sampled_from(["a", "b"]))


@given(st.lists(_SPANS, max_size=6))
@settings(max_examples=400, deadline=None)
def test_the_overlap_check_refuses_exactly_what_it_refused(spans: list[tuple[int, int, int, int, str]]) -> None:
    edits = tuple(TextEdit(Range(Position(line, column), Position(line + more, end if more else max(column, end))), text)
                  for line, column, more, end, text in spans)
    expected: str | None = None
    try:
        _reference_check("a.ts", edits)
    except OverlappingEdits as refusal:
        expected = str(refusal)
    try:
        check_no_overlap("a.ts", edits)
        found = None
    except OverlappingEdits as refusal:
        found = str(refusal)
    assert found == expected


# -- a file changed between two warm plans ------------------------------------------------------

CORE = "export function scaleBy(value: number, factor: number): number {\n  return value * factor;\n}\n"


@pytest.mark.e2e
def test_a_file_edited_between_two_warm_plans_is_planned_as_it_now_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every read kept between plans (the workspace's, the converter's line indexes, the configs)
    sees the change: the second plan edits the use added in between, at its new place."""
    require("typescript-language-server")
    (tmp_path / "tsconfig.json").write_text('{"compilerOptions": {"strict": true, "noEmit": true}, "include": ["src"]}\n')
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "core.ts").write_text(CORE)
    user = tmp_path / "src" / "a.ts"
    user.write_text('import { scaleBy } from "./core";\nexport const a = scaleBy(1, 2);\n')
    monkeypatch.setattr(read_memo, "RACY_SECONDS", 0.0)  # every read kept at once (the edit below changes the size)
    with served_engine(tmp_path, "typescript-language-server") as engine:
        engine.workspace.keep_reads_between_calls()
        with engine.workspace.remembering_reads():
            first = engine.plan(Rename("src/core.ts:scaleBy", "timesBy"))
        assert {op.path: len(op.edits) for op in first.edit.operations if isinstance(op, FileChange)} == {"src/core.ts": 1, "src/a.ts": 2}
        user.write_text('import { scaleBy } from "./core";\n// é moves nothing\nexport const a = scaleBy(1, 2);\n'
                        "export const éb = scaleBy(3, 4);\n")
        with engine.workspace.remembering_reads():
            second = engine.plan(Rename("src/core.ts:scaleBy", "timesBy"))
        changes = {op.path: op for op in second.edit.operations if isinstance(op, FileChange)}
        edits = changes["src/a.ts"].edits
        assert [(e.range.start.line, e.range.start.column) for e in edits] == [(0, 9), (2, 17), (3, 18)]
