"""``graft lsp`` end to end: a pygls client, and a real editor (headless Neovim) renaming through it."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest
from lsprotocol import types as t
from pygls.lsp.client import LanguageClient

from tests.conftest import SAMPLE

GRAFT = shutil.which("graft", path=str(Path(sys.executable).parent))


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".graft"))
    return root


async def session(project: Path, steps: Any, choose: str | None = None, source: str = "ast") -> tuple[Any, list[t.ApplyWorkspaceEditParams], list[Any]]:
    client = LanguageClient("graft-test", "1")
    edits: list[t.ApplyWorkspaceEditParams] = []
    progress: list[Any] = []

    @client.feature(t.WINDOW_SHOW_MESSAGE_REQUEST)
    def pick(params: t.ShowMessageRequestParams) -> t.MessageActionItem | None:
        progress.append({"kind": "asked", "choices": [a.title for a in params.actions or []]})
        return t.MessageActionItem(choose) if choose else None

    @client.feature(t.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: t.ApplyWorkspaceEditParams) -> t.ApplyWorkspaceEditResult:
        edits.append(params)
        return t.ApplyWorkspaceEditResult(applied=True)

    @client.feature(t.WINDOW_WORK_DONE_PROGRESS_CREATE)
    def create_progress(params: t.WorkDoneProgressCreateParams) -> None:
        return None

    @client.feature(t.PROGRESS)
    def on_progress(params: t.ProgressParams) -> None:
        progress.append(params.value)

    assert GRAFT is not None, "graft is installed with the package"
    await client.start_io(GRAFT, "lsp", "--source", source)
    await client.initialize_async(t.InitializeParams(
        capabilities=t.ClientCapabilities(
            workspace=t.WorkspaceClientCapabilities(apply_edit=True, workspace_edit=t.WorkspaceEditClientCapabilities(document_changes=True)),
            window=t.WindowClientCapabilities(work_done_progress=True),
        ),
        root_uri=project.as_uri(),
    ))
    client.initialized(t.InitializedParams())
    try:
        result = await steps(client)
    finally:
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
    return result, edits, progress


def uri(project: Path, path: str) -> str:
    return (project / path).as_uri()


def test_code_actions_and_a_rename_command_reach_the_editor_through_apply_edit(project: Path) -> None:
    pricing = uri(project, "shop/pricing.py")
    line = next(n for n, text in enumerate((project / "shop/pricing.py").read_text().splitlines()) if text.startswith("def apply_discount"))

    async def steps(client: LanguageClient) -> Any:
        text = (project / "shop/pricing.py").read_text()
        client.text_document_did_open(t.DidOpenTextDocumentParams(t.TextDocumentItem(pricing, "python", 1, text)))
        actions = await client.text_document_code_action_async(t.CodeActionParams(
            t.TextDocumentIdentifier(pricing), t.Range(t.Position(line, 6), t.Position(line, 6)), t.CodeActionContext(diagnostics=[])))
        outcome = await client.workspace_execute_command_async(t.ExecuteCommandParams(
            "graft.rename", ["shop/pricing.py:apply_discount", "discounted_total"]))
        symbols = await client.text_document_document_symbol_async(t.DocumentSymbolParams(t.TextDocumentIdentifier(pricing)))
        return actions, outcome, symbols

    (actions, outcome, symbols), edits, progress = asyncio.run(session(project, steps))
    titles = [a.title for a in actions]
    assert any(title.startswith("Rename across workspace (graft)") for title in titles)
    assert any(title.startswith("Move to module…") for title in titles)
    assert any(title.startswith("Safe delete") for title in titles) and any(title.startswith("Replace body…") for title in titles)
    assert outcome["applied"] is True and outcome["source"] == "ast"
    assert len(edits) == 1 and (edits[0].label or "").startswith("graft rename (ast")
    changed = {change.text_document.uri for change in _text_document_edits(edits[0].edit)}
    assert changed == {pricing, uri(project, "shop/__init__.py")}
    assert "graft" in (edits[0].edit.change_annotations or {})
    assert [p["kind"] if isinstance(p, dict) else getattr(p, "kind", None) for p in progress] == ["begin", "report", "end"]
    assert any(s.name == "apply_discount" for s in symbols)
    # The server never writes: the editor applies the edit (here the test client only recorded it).
    assert "def apply_discount" in (project / "shop/pricing.py").read_text()


def test_a_refused_command_says_why_and_sends_no_edit(project: Path) -> None:
    async def steps(client: LanguageClient) -> Any:
        return await client.workspace_execute_command_async(t.ExecuteCommandParams("graft.safeDelete", ["shop/pricing.py:with_vat"]))

    outcome, edits, _ = asyncio.run(session(project, steps))
    assert outcome["applied"] is False and outcome["error"]["code"] == "references_remain"
    assert edits == []


@pytest.mark.skipif(shutil.which("nvim") is None, reason="Neovim is not installed here (.ci/install-servers installs Debian's neovim)")
def test_headless_neovim_renames_through_the_server(project: Path, tmp_path: Path) -> None:
    """A real editor client: Neovim starts `graft lsp`, renames at the cursor, writes the buffers."""
    script = tmp_path / "rename.lua"
    script.write_text(f"""
local root = {str(project)!r}
local id = vim.lsp.start_client({{ name = "graft", cmd = {{ {GRAFT!r}, "lsp", "--source", "ast" }}, root_dir = root }})
vim.cmd("edit " .. root .. "/shop/pricing.py")
vim.lsp.buf_attach_client(0, id)
vim.wait(20000, function() local c = vim.lsp.get_client_by_id(id); return c ~= nil and c.initialized end, 50)
vim.fn.search("def apply_discount")
vim.cmd("normal! w")
vim.lsp.buf.rename("discounted_total")
vim.wait(20000, function() return vim.fn.getline(vim.fn.search("def discounted_total", "nw")) ~= "" and vim.fn.search("def discounted_total", "nw") > 0 end, 50)
vim.wait(500)
vim.cmd("silent! wall")
vim.cmd("qall!")
""")
    ran = subprocess.run(["nvim", "--headless", "--clean", "-u", "NONE", "-c", f"luafile {script}"],
                         cwd=project, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert "def discounted_total" in (project / "shop/pricing.py").read_text(), ran.stderr + ran.stdout
    assert "discounted_total as discount" in (project / "shop/__init__.py").read_text()
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project, capture_output=True, text=True)
    assert tests.returncode == 0, tests.stdout


def test_move_without_a_destination_asks_which_module(project: Path) -> None:
    async def steps(client: LanguageClient) -> Any:
        return await client.workspace_execute_command_async(t.ExecuteCommandParams("graft.move", ["shop/pricing.py:PriceRule"]))

    outcome, edits, events = asyncio.run(session(project, steps, choose="shop/util.py"))
    asked = next(e for e in events if isinstance(e, dict) and e.get("kind") == "asked")
    assert asked["choices"] == ["shop/__init__.py", "shop/models.py", "shop/util.py"]
    assert outcome["applied"] is True and "shop/util.py" in outcome["files"]
    moved = {change.text_document.uri for change in edits[0].edit.document_changes or [] if isinstance(change, t.TextDocumentEdit)}
    assert uri(project, "shop/util.py") in moved and uri(project, "shop/pricing.py") in moved


def _rename_with_open_buffers(project: Path, buffers: dict[str, str]) -> tuple[Any, list[t.ApplyWorkspaceEditParams]]:
    """Rename ``apply_discount`` in shop/pricing.py with these files open in the editor (path: its
    buffer's text); what the server answered ("renamed", or its refusal) and the edits it sent."""
    pricing = uri(project, "shop/pricing.py")
    text = (project / "shop/pricing.py").read_text()
    line = next(n for n, row in enumerate(text.splitlines()) if row.startswith("def apply_discount"))

    async def steps(client: LanguageClient) -> Any:
        for path, buffer in buffers.items():
            client.text_document_did_open(t.DidOpenTextDocumentParams(t.TextDocumentItem(uri(project, path), "python", 1, buffer)))
        try:
            await client.text_document_rename_async(t.RenameParams(t.TextDocumentIdentifier(pricing), t.Position(line, 6), "discounted"))
        except Exception as error:  # noqa: BLE001 - the server's refusal arrives as a JSON-RPC error
            return str(error)
        return "renamed"

    outcome, edits, _ = asyncio.run(session(project, steps))
    return outcome, edits


def test_a_buffer_with_unsaved_changes_is_not_renamed_from_stale_disk(project: Path) -> None:
    outcome, edits = _rename_with_open_buffers(project, {"shop/pricing.py": (project / "shop/pricing.py").read_text() + "\n# typing…\n"})
    assert "unsaved changes" in outcome and edits == []


def test_a_rename_that_would_edit_another_open_buffer_with_unsaved_changes_is_refused(project: Path) -> None:
    """The request's own file is saved; the package's __init__ that re-exports the function is
    open with unsaved changes, and the rename would edit it from the stale disk (check_plan_saved)."""
    outcome, edits = _rename_with_open_buffers(project, {
        "shop/pricing.py": (project / "shop/pricing.py").read_text(),
        "shop/__init__.py": (project / "shop/__init__.py").read_text() + "\n# typing…\n",
    })
    assert "shop/__init__.py has unsaved changes" in outcome and edits == []


def test_edits_carry_the_open_buffers_versions(project: Path) -> None:
    """The plan is checked against open buffers; its edit names each one's version, so an editor
    whose buffer moved on since refuses it. Files not open carry none (null: the disk)."""
    pricing = uri(project, "shop/pricing.py")
    text = (project / "shop/pricing.py").read_text()
    line = next(n for n, row in enumerate(text.splitlines()) if row.startswith("def apply_discount"))

    async def steps(client: LanguageClient) -> Any:
        client.text_document_did_open(t.DidOpenTextDocumentParams(t.TextDocumentItem(pricing, "python", 7, text)))
        return await client.text_document_rename_async(t.RenameParams(t.TextDocumentIdentifier(pricing), t.Position(line, 6), "discounted"))

    renamed, _edits, _ = asyncio.run(session(project, steps))
    versions = {change.text_document.uri: change.text_document.version
                for change in renamed.document_changes if hasattr(change, "text_document")}
    assert versions[pricing] == 7
    assert len(versions) > 1 and all(version is None for document, version in versions.items() if document != pricing)


def test_a_file_written_behind_the_server_is_in_the_next_impact(project: Path) -> None:
    async def steps(client: LanguageClient) -> Any:
        run = client.workspace_execute_command_async
        before = await run(t.ExecuteCommandParams("graft.impact", ["shop/pricing.py:with_vat"]))
        (project / "shop" / "invoices.py").write_text("from shop.pricing import with_vat\n\n\ndef invoice(x):\n    return with_vat(x)\n")
        after = await run(t.ExecuteCommandParams("graft.impact", ["shop/pricing.py:with_vat"]))
        return before, after

    (before, after), _edits, _ = asyncio.run(session(project, steps))
    assert "shop/invoices.py" not in json.dumps(before) and "shop/invoices.py" in json.dumps(after)


def test_the_other_commands_outline_impact_insert_and_replace(project: Path) -> None:
    async def steps(client: LanguageClient) -> Any:
        run = client.workspace_execute_command_async
        outline = await run(t.ExecuteCommandParams("graft.outline", ["shop/pricing.py"]))
        impact = await run(t.ExecuteCommandParams("graft.impact", ["shop/pricing.py:with_vat"]))
        inserted = await run(t.ExecuteCommandParams("graft.insertAfter", ["shop/pricing.py:with_vat", "def net(x):\n    return x\n"]))
        before = await run(t.ExecuteCommandParams("graft.insertBefore", ["shop/pricing.py:with_vat", "TAX_NOTE = 'vat'\n"]))
        replaced = await run(t.ExecuteCommandParams("graft.replaceSymbolBody", ["shop/util.py:money", "def money(x):\n    return x\n"]))
        return outline, impact, inserted, before, replaced

    (outline, impact, inserted, before, replaced), edits, _ = asyncio.run(session(project, steps))
    assert any(entry["name_path"] == "with_vat" for entry in outline)
    assert any("tests/test_shop.py" in json.dumps(entry) for entry in impact)
    assert inserted["applied"] and before["applied"] and replaced["applied"]
    labels = [e.label or "" for e in edits]
    assert labels[0].startswith("graft insert-after (") and labels[1].startswith("graft insert-before (")
    assert labels[2].startswith("graft replace (")
    new_texts = [_new_text(edit) for e in edits for change in _text_document_edits(e.edit) for edit in change.edits]
    assert any("def net(x):" in text for text in new_texts) and any("def money(x):" in text for text in new_texts)


def test_refusals_in_requests_are_request_failed_errors_with_the_engines_code(project: Path) -> None:
    """rename, prepareRename, documentSymbol and codeAction: an engine refusal is RequestFailed
    (-32803) carrying the engine's sentence and code, never an internal error or an empty answer."""
    from pygls.exceptions import JsonRpcException

    pricing = uri(project, "shop/pricing.py")
    line = next(n for n, text in enumerate((project / "shop/pricing.py").read_text().splitlines()) if text.startswith("def apply_discount"))
    (project / "blob.py").write_bytes(b"\x00\x01 not text")
    outside = (project.parent / "outside.py")
    outside.write_text("x = 1\n")

    async def steps(client: LanguageClient) -> Any:
        failures: dict[str, Any] = {}
        requests = {
            "rename": lambda: client.text_document_rename_async(t.RenameParams(
                t.TextDocumentIdentifier(pricing), t.Position(line, 6), "class")),
            "documentSymbol": lambda: client.text_document_document_symbol_async(t.DocumentSymbolParams(
                t.TextDocumentIdentifier(uri(project, "blob.py")))),
            "prepareRename": lambda: client.text_document_prepare_rename_async(t.PrepareRenameParams(
                t.TextDocumentIdentifier(outside.as_uri()), t.Position(0, 0))),
            "codeAction": lambda: client.text_document_code_action_async(t.CodeActionParams(
                t.TextDocumentIdentifier(uri(project, "blob.py")), t.Range(t.Position(0, 0), t.Position(0, 0)),
                t.CodeActionContext(diagnostics=[]))),
        }
        for name, request in requests.items():
            try:
                failures[name] = await request()
            except JsonRpcException as error:
                failures[name] = error
        return failures

    (failures, edits, _progress) = asyncio.run(session(project, steps))
    expected = {"rename": "invalid_name", "documentSymbol": "unreadable_file", "prepareRename": "unsafe_path", "codeAction": "unreadable_file"}
    for name, code in expected.items():
        error = failures[name]
        assert isinstance(error, JsonRpcException), (name, error)
        assert error.code == -32803, (name, error.code, error.message)
        assert isinstance(error.data, dict), (name, error.data)
        assert error.data["code"] == code, (name, error.data)
        assert "Traceback" not in error.message and error.message == error.data["message"]
    assert edits == []


class RawLsp:
    """``graft lsp`` over raw pipes: frames written byte for byte (broken ones too) and the
    server's frames read back by a thread, so a missing answer fails after a generous budget
    instead of hanging the test."""

    BUDGET = 120.0

    def __init__(self, project: Path) -> None:
        import queue
        import threading

        self.process = subprocess.Popen([str(GRAFT), "lsp", "--source", "ast"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.frames: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.send({"jsonrpc": "2.0", "id": "init", "method": "initialize",
                   "params": {"capabilities": {}, "rootUri": project.as_uri()}})
        self.answer("init")
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = None
            while (line := stream.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if not line or length is None:
                self.frames.put(None)
                return
            self.frames.put(json.loads(stream.read(length)))

    def write(self, raw: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(raw)
        self.process.stdin.flush()

    def send(self, message: Any) -> None:
        body = json.dumps(message).encode()
        self.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def answer(self, request_id: Any) -> dict[str, Any]:
        """The server's answer to ``request_id`` (its own notifications and requests are passed over)."""
        import queue

        while True:
            try:
                frame = self.frames.get(timeout=self.BUDGET)
            except queue.Empty:
                raise AssertionError(f"no answer to request {request_id!r} within {self.BUDGET:.0f} s") from None
            assert frame is not None, f"the server closed its output before answering {request_id!r}"
            if "method" not in frame and frame.get("id") == request_id:
                return frame

    def close(self) -> tuple[int, str]:
        assert self.process.stdin is not None
        self.process.stdin.close()
        code = self.process.wait(timeout=self.BUDGET)
        assert self.process.stderr is not None
        return code, self.process.stderr.read().decode(errors="replace")


def _error(answer: dict[str, Any]) -> dict[str, Any]:
    assert "error" in answer, answer
    error: dict[str, Any] = answer["error"]
    assert "Traceback" not in json.dumps(error) and "traceback" not in (error.get("data") or {}), error
    return error


def test_bad_requests_get_typed_errors_never_a_traceback_or_silence(project: Path) -> None:
    """Issue 38: `graft.impact ":Foo"` was -32603 with a traceback; a rename with missing or
    out-of-range params, or a body that is not JSON, got no answer at all."""
    pricing = uri(project, "shop/pricing.py")
    server = RawLsp(project)
    try:
        asked = {
            "malformed": ("workspace/executeCommand", {"command": "graft.impact", "arguments": [":Foo"]}),
            "no-argument": ("workspace/executeCommand", {"command": "graft.impact", "arguments": []}),
            "outline-no-argument": ("workspace/executeCommand", {"command": "graft.outline"}),
            "no-params": ("textDocument/rename", None),
            "no-position": ("textDocument/rename", {"textDocument": {"uri": pricing}, "newName": "x"}),
            "negative": ("textDocument/rename", {"textDocument": {"uri": pricing}, "position": {"line": -1, "character": -5},
                                                 "newName": "x"}),
            "past-the-end": ("textDocument/rename", {"textDocument": {"uri": pricing}, "position": {"line": 9999, "character": 0},
                                                     "newName": "x"}),
        }
        for request_id, (method, params) in asked.items():
            server.send({"jsonrpc": "2.0", "id": request_id, "method": method, **({"params": params} if params is not None else {})})
        errors = {request_id: _error(server.answer(request_id)) for request_id in asked}
        server.write(b"Content-Length: 5\r\n\r\n{bad}")
        server.send([{"jsonrpc": "2.0", "id": "batched", "method": "shutdown"}])
        server.send({"id": "no-version", "method": "shutdown"})
        server.send({"jsonrpc": "2.0", "id": "numeric-method", "method": 7})
        parse_error, batch, no_version, numeric_method = (_error(server.answer(None)), _error(server.answer(None)),
                                                          _error(server.answer("no-version")), _error(server.answer("numeric-method")))
        server.send({"jsonrpc": "2.0", "id": "after", "method": "workspace/executeCommand",
                     "params": {"command": "graft.outline", "arguments": ["shop/util.py"]}})
        after = server.answer("after")
        server.send({"jsonrpc": "2.0", "id": "shutdown", "method": "shutdown"})
        server.answer("shutdown")
        server.send({"jsonrpc": "2.0", "id": "late", "method": "workspace/executeCommand",
                     "params": {"command": "graft.outline", "arguments": ["shop/util.py"]}})
        late = _error(server.answer("late"))
        server.send({"jsonrpc": "2.0", "method": "exit"})
    finally:
        code, _stderr = server.close()
    assert errors["malformed"]["code"] == -32602 and "expected a file path" in errors["malformed"]["message"]
    assert errors["malformed"]["data"]["code"] == "malformed_address"
    assert errors["no-argument"]["code"] == -32602 and "argument 1" in errors["no-argument"]["message"]
    assert errors["outline-no-argument"]["code"] == -32602
    for request_id in ("no-params", "no-position", "negative"):
        assert errors[request_id]["code"] == -32602, (request_id, errors[request_id])
        assert "textDocument/rename" in errors[request_id]["message"], errors[request_id]
    assert errors["past-the-end"]["code"] == -32803  # clamped to the last line, as the protocol says, then refused
    assert parse_error["code"] == -32700 and batch["code"] == -32600
    assert no_version["code"] == -32600 and "jsonrpc" in no_version["message"]
    assert numeric_method["code"] == -32600 and "method" in numeric_method["message"]
    assert any(entry["name_path"] == "money" for entry in after["result"])
    assert late["code"] == -32600 and "shutting down" in late["message"]  # LSP: after shutdown, only exit
    assert code == 0  # exit after shutdown


def test_a_frame_without_content_length_is_skipped_and_the_stream_resynchronises(project: Path) -> None:
    """Issue 38: one frame without Content-Length left the server deaf for good (every later
    header was read as part of a body). The broken frame is answered when its request can be
    read (-32600 with its id), skipped otherwise, and the next well-formed frame is served."""
    server = RawLsp(project)
    outline = {"command": "graft.outline", "arguments": ["shop/util.py"]}
    try:
        headless = json.dumps({"jsonrpc": "2.0", "id": "headless", "method": "workspace/executeCommand", "params": outline})
        server.write(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + headless.encode())
        broken = _error(server.answer("headless"))
        server.send({"jsonrpc": "2.0", "id": "next", "method": "workspace/executeCommand", "params": outline})
        next_one = server.answer("next")
        server.write(headless.replace('"headless"', '"bare"').encode())  # no header at all
        bare = _error(server.answer("bare"))
        server.write(b"hello there\r\n\r\nnot json either")  # garbage: nothing to answer, skipped
        lower = json.dumps({"jsonrpc": "2.0", "id": "lowercase", "method": "workspace/executeCommand", "params": outline}).encode()
        server.write(b"content-length: %d\r\n\r\n" % len(lower) + lower)  # header names are case-insensitive
        lowercase = server.answer("lowercase")
    finally:
        code, stderr = server.close()
    assert broken["code"] == -32600 and "Content-Length" in broken["message"]
    assert bare["code"] == -32600
    assert any(entry["name_path"] == "money" for entry in next_one["result"])
    assert any(entry["name_path"] == "money" for entry in lowercase["result"])
    assert "without a Content-Length" in stderr and "Traceback" not in stderr, stderr
    assert code == 0


def test_frames_read_the_same_however_the_input_is_split() -> None:
    """The frame reader over a stream of good and broken frames: the same frames and skips
    whether the bytes come at once or a few at a time (a pipe splits them anywhere)."""
    import random

    from frontends.lsp_stdio import Frame, FrameReader

    def frame(message: Any) -> bytes:
        body = json.dumps(message).encode()
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    good = [frame({"jsonrpc": "2.0", "id": n, "method": "m"}) for n in range(3)]
    stream = (b"\r\n" + good[0] + b"Content-Type: x\r\n\r\n" + json.dumps({"jsonrpc": "2.0", "id": "h", "method": "m"}).encode()
              + good[1] + b"garbage line\r\n\r\nmore garbage" + b"content-length: 2\r\n\r\n{}" + b'{"jsonrpc":"2.0","id":"bare"}'
              + good[2] + b"Content-Length: 99999999999\r\n\r\n{\"a\":1}" + b"{unterminated" + good[0] + b"X" * 20000 + good[1]
              + b"junk" + good[2] + b"Content-Length: 10\r\n\r\n{}")

    def read_all(chunk_size: Any) -> list[Any]:
        data = bytearray(stream)

        def read() -> bytes:
            size = chunk_size()
            chunk = bytes(data[:size])
            del data[:size]
            return chunk

        reader = FrameReader(read)
        items: list[bytes | tuple[str, Any]] = []
        while (item := reader.next()) is not None:
            assert len(items) < 100, "the reader never reached the end"
            items.append(item.body if isinstance(item, Frame) else (item.reason.split(" (")[0], item.message if item.readable else None))
        return items

    whole = read_all(lambda: 1 << 16)
    bodies = [item for item in whole if isinstance(item, bytes)]
    assert [json.loads(body).get("id") for body in bodies] == [0, 1, None, 2, 0, 1, 2]
    skipped = [item for item in whole if not isinstance(item, bytes)]
    assert ("a message without a Content-Length header", {"jsonrpc": "2.0", "id": "h", "method": "m"}) in skipped
    assert ("a message without a Content-Length header", {"jsonrpc": "2.0", "id": "bare"}) in skipped
    assert skipped[-1] == ("the input ended inside a body of 10 bytes", None)
    for seed in range(200):
        split = random.Random(seed)
        assert read_all(lambda: split.randint(1, 40)) == whole, seed


def _text_document_edits(edit: t.WorkspaceEdit) -> list[t.TextDocumentEdit]:
    """The edit's document changes, which here are all text edits (no file created, renamed or deleted)."""
    changes = list(edit.document_changes or [])
    text_edits = [change for change in changes if isinstance(change, t.TextDocumentEdit)]
    assert text_edits == changes, changes
    return text_edits


def _new_text(edit: t.TextEdit | t.AnnotatedTextEdit | t.SnippetTextEdit) -> str:
    """The text an edit puts in: graft sends plain text, never a snippet."""
    assert not isinstance(edit, t.SnippetTextEdit), edit
    return edit.new_text


def _write_edit(project: Path, edit: t.WorkspaceEdit) -> list[str]:
    """What an editor does on save: the edit's text changes written to the files (ASCII text here:
    UTF-16 columns are characters). The URIs of the files written."""
    written = []
    for change in edit.document_changes or []:
        if not isinstance(change, t.TextDocumentEdit):
            continue
        path = Path(unquote(urlparse(change.text_document.uri).path))
        lines = path.read_text().split("\n")
        starts = [0]
        for line in lines[:-1]:
            starts.append(starts[-1] + len(line) + 1)
        text = "\n".join(lines)
        for text_edit in sorted(change.edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
            start = starts[text_edit.range.start.line] + text_edit.range.start.character
            end = starts[text_edit.range.end.line] + text_edit.range.end.character
            text = text[:start] + _new_text(text_edit) + text[end:]
        path.write_text(text)
        written.append(change.text_document.uri)
    return written


def _plain(value: Any) -> Any:
    """A custom notification's params as JSON values (pygls hands them over as named tuples)."""
    if hasattr(value, "_asdict"):
        return {key: _plain(item) for key, item in value._asdict().items()}
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def test_a_command_checks_its_edit_once_the_editor_saves_it_and_says_so(tmp_path: Path) -> None:
    """Issue 39: a refactoring command's edit is checked like an apply's. The errors before are
    taken before the edit is sent; the answer says nothing is compared yet (and is not high);
    once the editor has saved the files, the server compares them and notifies graft/checkFinished
    with the whole check, and shows a message for the new error two imports away (c.py)."""
    from tests.test_lsp_e2e import require
    from tests.test_verification import _two_hops

    require("basedpyright")
    _two_hops(tmp_path)
    client = LanguageClient("graft-test", "1")
    edits: list[t.ApplyWorkspaceEditParams] = []
    shown: list[str] = []
    finished: list[Any] = []
    arrived = asyncio.Event()

    @client.feature(t.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: t.ApplyWorkspaceEditParams) -> t.ApplyWorkspaceEditResult:
        edits.append(params)
        return t.ApplyWorkspaceEditResult(applied=True)

    @client.feature(t.WINDOW_SHOW_MESSAGE)
    def show(params: t.ShowMessageParams) -> None:
        shown.append(params.message)

    @client.feature("graft/checkFinished")
    def check_finished(params: Any) -> None:
        finished.append(params)
        arrived.set()

    async def run() -> Any:
        assert GRAFT is not None, "graft is installed with the package"
        await client.start_io(GRAFT, "lsp", "--source", "auto")
        await client.initialize_async(t.InitializeParams(
            capabilities=t.ClientCapabilities(workspace=t.WorkspaceClientCapabilities(
                apply_edit=True, workspace_edit=t.WorkspaceEditClientCapabilities(document_changes=True))),
            root_uri=tmp_path.as_uri()))
        client.initialized(t.InitializedParams())
        try:
            outcome = await client.workspace_execute_command_async(t.ExecuteCommandParams(
                "graft.replaceSymbolBody", [{"address": "a.py:f", "text": "def f() -> str:\n    return 'one'\n", "check": "full"}]))
            before_save = list(finished)
            for written in _write_edit(tmp_path, edits[0].edit):
                client.text_document_did_save(t.DidSaveTextDocumentParams(t.TextDocumentIdentifier(written)))
            await asyncio.wait_for(arrived.wait(), timeout=240)
            await asyncio.sleep(0.5)  # the message is sent right after the notification
            return outcome, before_save
        finally:
            await client.shutdown_async(None)
            client.exit(None)
            await client.stop()

    outcome, before_save = asyncio.run(run())
    assert outcome["applied"] is True and before_save == []
    sent = outcome["verified"]
    assert sent["mode"] == "full" and sent["files_checked"] == 0 and sent["scope"] == ["a.py", "b.py", "c.py", "tests/test_c.py"]
    assert outcome["confidence"] != "high" and "has not saved" in sent["reason"]
    assert "return 'one'" in (tmp_path / "a.py").read_text()
    notified = _plain(finished[0])
    verified = notified["verified"]
    assert notified["transaction"].startswith("editor-") and verified["files_checked"] == 4 and verified["pending"] == []
    assert [error["file"] for error in verified["new_errors"]] == ["c.py"] and verified["confidence"] == "low"
    assert notified["summary"].startswith("checked 4 of 4 file(s): 1 new error(s)")
    assert any("graft: the last edit checked 4 of 4 file(s): 1 new error(s)" in message and "c.py:5" in message for message in shown), shown
