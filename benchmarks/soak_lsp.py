"""bench_soak.py's LSP part: ``graft lsp`` over stdio with a pygls client, a didChange flood with
renames between (see bench_soak.py for what is measured)."""

from __future__ import annotations

import argparse
import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from lsprotocol import types as t
from pygls.lsp.client import LanguageClient

from benchmarks.soak_support import (GRAFT, REQUEST_TIMEOUT, STARTED, WARMUP_SHARE, MemoryTrack, Tally, kill_group,
                                     logged_exceptions, make_workspace, part_json)

# -- LSP part ---------------------------------------------------------------------------------


@dataclass
class LspEvents:
    """What the server sent on its own: error messages are errors (nothing here should fail)."""

    errors: list[str] = field(default_factory=list)


def make_lsp_client(events: LspEvents) -> LanguageClient:
    client = LanguageClient("graft-soak", "1")

    @client.feature(t.WINDOW_SHOW_MESSAGE)
    def show(params: t.ShowMessageParams) -> None:
        if params.type == t.MessageType.Error:
            events.errors.append(f"window/showMessage: {params.message}"[:300])

    @client.feature(t.WINDOW_LOG_MESSAGE)
    def log(params: t.LogMessageParams) -> None:
        if params.type == t.MessageType.Error:
            events.errors.append(f"window/logMessage: {params.message}"[:300])

    @client.feature(t.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: t.ApplyWorkspaceEditParams) -> t.ApplyWorkspaceEditResult:
        events.errors.append("the server asked to apply an edit nobody requested")
        return t.ApplyWorkspaceEditResult(applied=False)

    return client


async def drain_stderr(stream: asyncio.StreamReader | None, log: Path) -> None:
    """Copy the server's stderr into a file as it comes: an unread pipe would block it once full."""
    if stream is None:
        return
    with log.open("wb") as sink:
        while chunk := await stream.read(65536):
            sink.write(chunk)
            sink.flush()


@dataclass
class Buffer:
    """The editor's copy of the document, changed the way the edits say (to check the server's)."""

    lines: list[str]
    version: int = 1

    @property
    def text(self) -> str:
        return "".join(self.lines)


def rename_targets(text: str) -> list[tuple[str, t.Position]]:
    """Declarations of shop/pricing.py to rename: (name, position of the name)."""
    found = []
    for number, line in enumerate(text.splitlines()):
        for prefix in ("def apply_discount", "def with_vat", "class PriceRule"):
            if line.startswith(prefix):
                name = prefix.split()[1]
                found.append((name, t.Position(number, line.index(name))))
    return found


def change_at(buffer: Buffer, index: int, anchor_lines: tuple[int, int]) -> t.TextDocumentContentChangePartial:
    """Change ``index`` (1-based): odd ones insert a comment line, even ones remove it again, so
    after an even count the buffer equals the file on disk. The line alternates between the end
    of the file and the middle; the comment has non-ASCII and astral characters (UTF-16 columns)."""
    pair = (index - 1) // 2
    line = anchor_lines[pair % 2]
    if index % 2:
        inserted = f"# soak édit 𝄞 {pair}\n"
        buffer.lines.insert(line, inserted)
        edit = t.TextDocumentContentChangePartial(range=t.Range(t.Position(line, 0), t.Position(line, 0)), text=inserted)
    else:
        del buffer.lines[line]
        edit = t.TextDocumentContentChangePartial(range=t.Range(t.Position(line, 0), t.Position(line + 1, 0)), text="")
    buffer.version += 1
    return edit


async def timed_rename(client: LanguageClient, uri: str, position: t.Position, new_name: str,
                       timeout: float) -> tuple[float, t.WorkspaceEdit | None, str | None]:
    """(seconds, the edit or None, the refusal's message or None)."""
    start = time.perf_counter()
    try:
        with anyio.fail_after(timeout):
            edit = await client.text_document_rename_async(t.RenameParams(t.TextDocumentIdentifier(uri), position, new_name))
        return time.perf_counter() - start, edit, None
    except TimeoutError:
        raise
    except Exception as error:  # noqa: BLE001 - the server's refusal arrives as a JSON-RPC error
        return time.perf_counter() - start, None, str(error)


def check_clean_rename(edit: t.WorkspaceEdit | None, refusal: str | None, uri: str, new_name: str) -> str | None:
    """A rename with the buffer equal to the disk must give edits of this document to ``new_name``."""
    if edit is None:
        return f"rename to {new_name} on a clean buffer was refused: {refusal}"
    ours = [change for change in edit.document_changes or [] if isinstance(change, t.TextDocumentEdit) and change.text_document.uri == uri]
    texts = {getattr(e, "new_text", None) for change in ours for e in change.edits}
    if not ours or texts != {new_name}:
        return f"rename to {new_name}: edits of the document {sorted(map(str, texts))} (wanted only {new_name!r})"
    return None


async def run_lsp(args: argparse.Namespace, workdir: Path, hard_deadline: float) -> dict[str, Any]:
    root = make_workspace(workdir / "lsp", 0)
    path = root / "shop" / "pricing.py"
    uri = path.as_uri()
    disk = path.read_text()
    events = LspEvents()
    client = make_lsp_client(events)
    planned_renames = 2 * (args.changes // args.rename_every)
    tally = Tally(args.changes + planned_renames)
    started = time.monotonic()
    await client.start_io(str(GRAFT), "lsp", "--source", args.source, start_new_session=True)
    # pygls keeps the process it started on a private attribute; its pid is what we measure and kill.
    process = client._server
    assert process is not None, "start_io has started it"
    STARTED.add(process.pid)
    memory = MemoryTrack(process.pid)
    log = workdir / "lsp-server.log"
    stderr_task = asyncio.create_task(drain_stderr(process.stderr, log))
    sampler = asyncio.create_task(memory.sample_forever())
    changes_sent = 0
    try:
        with anyio.fail_after(max(1.0, min(REQUEST_TIMEOUT, hard_deadline - time.monotonic()))):
            init = await client.initialize_async(t.InitializeParams(
                capabilities=t.ClientCapabilities(workspace=t.WorkspaceClientCapabilities(
                    apply_edit=True, workspace_edit=t.WorkspaceEditClientCapabilities(document_changes=True))),
                root_uri=root.as_uri()))
        client.initialized(t.InitializedParams())
        sync = init.capabilities.text_document_sync
        kind = sync.change if isinstance(sync, t.TextDocumentSyncOptions) else sync
        if kind != t.TextDocumentSyncKind.Incremental:
            tally.error(f"the server does not take incremental changes (sync kind {kind}); changes are sent incrementally anyway")
        client.text_document_did_open(t.DidOpenTextDocumentParams(t.TextDocumentItem(uri, "python", 1, disk)))
        buffer = Buffer(disk.splitlines(keepends=True))
        targets = rename_targets(disk)
        middle = next(pos.line for name, pos in targets if name == "with_vat") - 1
        anchors = (len(buffer.lines), middle)
        block_start = time.perf_counter()
        block_changes = 0
        renames = 0
        warm_after = max(1, int(args.changes * WARMUP_SHARE))
        while changes_sent < args.changes and time.monotonic() < hard_deadline:
            changes_sent += 1
            block_changes += 1
            change = change_at(buffer, changes_sent, anchors)
            client.text_document_did_change(t.DidChangeTextDocumentParams(
                t.VersionedTextDocumentIdentifier(uri=uri, version=buffer.version), [change]))
            if changes_sent == warm_after:
                # Notifications have no answer: a round trip (documentSymbol) makes sure the server
                # has taken the warm-up's changes before its memory is read; its time is left out
                # of the changes' block.
                paused = time.perf_counter()
                await client.text_document_document_symbol_async(t.DocumentSymbolParams(t.TextDocumentIdentifier(uri)))
                memory.mark_warm()
                block_start += time.perf_counter() - paused
            # Half-way between two clean points, at an odd count: the inserted line is still there.
            dirty_point = changes_sent % args.rename_every == (args.rename_every // 2) | 1
            clean_point = changes_sent % args.rename_every == 0
            if not (clean_point or dirty_point):
                continue
            renames += 1
            name, position = targets[renames % len(targets)]
            new_name = f"{name}_soak{renames}"
            timeout = max(1.0, min(REQUEST_TIMEOUT, hard_deadline - time.monotonic()))
            try:
                seconds, edit, refusal = await timed_rename(client, uri, position, new_name, timeout)
            except TimeoutError:
                if time.monotonic() >= hard_deadline - 1:
                    tally.interrupted += 1
                    break
                tally.error(f"rename {new_name} at change {changes_sent} timed out")
                continue
            # The changes before a rename were answered once the rename is: the server reads its
            # input in order. Their per-change cost is the block's time over its changes.
            block = time.perf_counter() - block_start
            for _ in range(block_changes):
                tally.record("didChange (amortised)", block / block_changes)
            block_start, block_changes = time.perf_counter(), 0
            if clean_point:
                tally.record("rename (clean buffer)", seconds)
                problem = check_clean_rename(edit, refusal, uri, new_name)
            else:
                tally.record("rename (dirty buffer)", seconds)
                problem = None if refusal and "unsaved changes" in refusal else (
                    f"rename to {new_name} at change {changes_sent} (buffer differs from disk) was not refused as "
                    f"'unsaved changes': {refusal or 'an edit came back'}")
            if problem:
                tally.error(f"change {changes_sent}: {problem}"[:400])
        if buffer.text != disk and changes_sent % 2 == 0:
            tally.error("the benchmark's own buffer model drifted from the disk text (a benchmark bug)")
        # Changes after the last rename (none with the defaults) are still counted.
        if block_changes:
            await client.text_document_document_symbol_async(t.DocumentSymbolParams(t.TextDocumentIdentifier(uri)))
            block = time.perf_counter() - block_start
            for _ in range(block_changes):
                tally.record("didChange (amortised)", block / block_changes)
        memory.mark_end()
        with anyio.move_on_after(10):
            await client.shutdown_async(None)
            client.exit(None)
    except Exception as error:  # noqa: BLE001 - a failure of the session is a measured error
        tally.error(f"LSP session: {type(error).__name__}: {error}"[:400])
        if memory.end_kib is None:
            memory.mark_end()
    finally:
        sampler.cancel()
        with anyio.move_on_after(10):
            await client.stop()
        kill_group(process.pid)
        with anyio.move_on_after(5):
            await stderr_task
        stderr_task.cancel()
    for message in events.errors:
        tally.error(message)
    # pygls logs every request a handler refused with its traceback: the dirty-buffer renames'
    # refusals are expected there; any other exception is an error.
    logged = logged_exceptions(log)
    expected = [line for line in logged if "has unsaved changes" in line]
    for exception in logged:
        if "has unsaved changes" not in exception:
            tally.error(f"server log: {exception}")
    return part_json("lsp", tally, memory, time.monotonic() - started,
                     {"changes_sent": changes_sent, "changes_planned": args.changes, "source": args.source,
                      "refusals_logged_by_the_server": len(expected), "stopped_by_deadline": changes_sent < args.changes})


# -- report -----------------------------------------------------------------------------------
