"""Load and soak: the MCP server under concurrent real clients, the LSP server under a didChange flood.

Run: ``.venv/bin/python benchmarks/bench_soak.py [--json] [--deadline 600] [--protocol auto|legacy]``

Two parts, each against a real server process started here, on its own copy of
``fixtures/sample`` in a temporary folder (the repository's copy is never touched):

- **MCP**: ``graft mcp --http`` on 127.0.0.1 (a free port, its bearer token read from its
  banner), 8 concurrent clients of the official ``mcp`` SDK over streamable HTTP, each its own
  session, each making 200 mixed tool calls: reads (files, symbols, outlines, searches),
  references, dry-run edits, edits applied to a module only that client touches
  (``shop/client_N.py``), undo of its own transactions, and ledger-isolation probes. A probe
  is an edit of another client's ``shop/probe_M.py``, a file only its owner M has read: the
  server must refuse it with ``not_read``; an edit that goes through is a cross-session leak.
- **LSP**: ``graft lsp`` over stdio with a pygls client: one open document, 2,000 incremental
  ``textDocument/didChange`` notifications (a comment line inserted, then removed), with a rename
  every 100 changes (buffer equal to the disk: a WorkspaceEdit is expected) and one at the 51st
  change of every hundred (buffer dirty: the server's "unsaved changes" refusal is expected, which
  also shows it applied every change it was sent).

Measured: latency per request kind (p50, p99), errors (exceptions, timeouts, unexpected error
answers, files on disk differing from what the edits and undos should have left, tracebacks in the
server's log), cross-session leaks, and the growth of each server's resident memory from the end of
the warm-up (the first 10 % of the requests) to the end of the run (for MCP, once every client
has closed its session: what the server keeps). A global deadline (``--deadline``,
600 s) stops the run and it reports what it did: the MCP clients start no request after 60 % of
it (``--mcp-share``), leaving the rest to the LSP part; every request has its own timeout, and
every process the run started is killed on exit, on SIGINT/SIGTERM too. Prints PASS/FAIL against
0 errors, 0 leaks and memory growth <= 10 %, and exits 0 either way: a benchmark, not a test.

``--protocol`` is the MCP client's negotiation mode: ``auto`` (the SDK's default, which speaks
the 2026-07-28 protocol when the server offers it) or ``legacy`` (the initialize handshake).
``--source ast`` (the default) keeps language servers out, so the figures are the engine's own.
The LSP part is in soak_lsp.py; what both parts share (processes, memory, the tally, the
workspace) in soak_support.py.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.soak_lsp import run_lsp  # noqa: E402 - after the path
from benchmarks.soak_support import (GRAFT, MEMORY_TARGET_PCT, REQUEST_TIMEOUT, STARTED, WARMUP_SHARE, MemoryTrack,  # noqa: E402
                                     Tally, kill_everything_started, kill_group, logged_exceptions, make_workspace, part_json)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# -- MCP part ---------------------------------------------------------------------------------


@dataclass
class McpServer:
    process: subprocess.Popen[bytes]
    url: str
    token: str
    log: Path


def start_mcp_server(root: Path, source: str, log: Path, deadline: float) -> McpServer:
    """``graft mcp --http`` in its own process group, its stderr (banner, logs) into a file."""
    port = free_port()
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [str(GRAFT), "mcp", "--root", str(root), "--source", source, "--http", "--port", str(port)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=sink,
            env={**os.environ, "PYTHONUNBUFFERED": "1"}, start_new_session=True,
        )
    STARTED.add(process.pid)
    token = ""
    while not token:
        if time.monotonic() > deadline or process.poll() is not None:
            raise RuntimeError(f"the MCP server did not start: {log.read_text(errors='replace')[-2000:]}")
        banner = log.read_text(errors="replace")
        if "Bearer " in banner:
            token = banner.split("Bearer ", 1)[1].split(")", 1)[0].strip()
        else:
            time.sleep(0.1)
    # The banner is printed before uvicorn binds: wait until the port takes connections.
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError(f"the MCP server never listened: {log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.1)
    return McpServer(process, f"http://127.0.0.1:{port}/mcp", token, log)


def error_code(result: CallToolResult) -> str:
    """The engine's refusal code of a tool error (structured content first, else the text's prefix)."""
    structured = result.structured_content
    if isinstance(structured, dict) and isinstance(structured.get("error"), dict):
        return str(structured["error"].get("code", ""))
    text = result.content[0].text if result.content and hasattr(result.content[0], "text") else ""
    return text.split(":", 1)[0]


def text_of(result: CallToolResult) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


class Unexpected(Exception):
    """An answer that is not what this request must give (counted as an error)."""


@dataclass
class ClientState:
    """What client n's own module should hold, and the transactions it may undo (newest last)."""

    n: int
    revision: int = 0
    label: int = 0
    fresh: bool = False
    """Whether the server's ledger holds the module's current bytes for this client (an undo
    rewrites the file without recording it, so the client reads again before its next edit)."""
    undo_stack: list[tuple[str, int, int]] = field(default_factory=list)
    """(transaction, revision before, label before)."""
    renames: int = 0

    @property
    def path(self) -> str:
        return f"shop/client_{self.n}.py"


#: Request kinds and their weights in each client's mix.
MIX: dict[str, int] = {
    "read_file": 18, "read_symbol": 8, "file_outline": 6, "workspace_symbols": 4, "search": 4,
    "references": 10,
    "dry_edit_file": 6, "dry_replace": 5, "dry_rename": 3, "dry_insert": 2,
    "apply_edit_file": 8, "apply_replace": 6,
    "undo": 8,
    "probe": 8,
}
CATEGORY = {
    "read_file": "read", "read_symbol": "read", "file_outline": "read", "workspace_symbols": "read", "search": "read",
    "references": "references",
    "dry_edit_file": "dry-run edit", "dry_replace": "dry-run edit", "dry_rename": "dry-run edit", "dry_insert": "dry-run edit",
    "apply_edit_file": "applied edit", "apply_replace": "applied edit",
    "undo": "undo", "probe": "isolation probe",
}
#: Tools whose outcome the clients read as data (the transaction to undo, the diff): by default an
#: edit's structured content holds only what a script branches on, and the rest is in its text.
EDIT_TOOLS = frozenset({"edit_file", "write_file", "replace_symbol_body", "rename_symbol", "insert_after_symbol",
                        "insert_before_symbol", "undo_edit"})
SHARED_FILES = ("shop/pricing.py", "shop/util.py", "shop/models.py")
SHARED_SYMBOLS = ("shop/pricing.py:apply_discount", "shop/util.py:round_cents", "shop/pricing.py:PriceRule/apply")


class SoakClient:
    """One MCP session making its share of the mixed requests, checking every answer."""

    def __init__(self, n: int, clients: int, root: Path, client: Client, tally: Tally, rng: random.Random) -> None:
        self.state = ClientState(n)
        self.clients = clients
        self.root = root
        self.client = client
        self.tally = tally
        self.rng = rng
        self.calls = 0
        """Tool calls this client made (the tally's count is every client's)."""

    async def call(self, kind: str, tool: str, arguments: dict[str, Any], hard_deadline: float) -> CallToolResult:
        """One timed tool call; only a completed call's latency is recorded."""
        timeout = max(1.0, min(REQUEST_TIMEOUT, hard_deadline - time.monotonic()))
        start = time.perf_counter()
        self.calls += 1
        if tool in EDIT_TOOLS:
            arguments = {**arguments, "structured": True}
        with anyio.fail_after(timeout):
            result = await self.client.call_tool(tool, arguments)
        self.tally.record(CATEGORY.get(kind, kind), time.perf_counter() - start)
        return result

    def ok(self, result: CallToolResult, what: str) -> dict[str, Any]:
        if result.is_error:
            raise Unexpected(f"{what}: {text_of(result)[:300]}")
        return result.structured_content if isinstance(result.structured_content, dict) else {}

    def check_disk(self, what: str) -> None:
        """Client n's module must hold exactly what its applies and undos should have left."""
        text = (self.root / self.state.path).read_text()
        wanted = [f"REVISION = {self.state.revision}  #", f'"client {self.state.n} label {self.state.label}"']
        missing = [w for w in wanted if w not in text]
        if missing:
            raise Unexpected(f"{what}: {self.state.path} on disk lacks {missing}")

    # -- the requests --------------------------------------------------------------------

    async def read_own(self, deadline: float) -> None:
        payload = self.ok(await self.call("read_file", "read_file", {"path": self.state.path}, deadline), "read own module")
        if payload.get("path") != self.state.path or not payload.get("sha256"):
            raise Unexpected(f"read own module: answer names {payload.get('path')!r}, sha256 {payload.get('sha256')!r}")
        self.state.fresh = True

    async def step(self, kind: str, deadline: float) -> None:
        s, n = self.state, self.state.n
        arguments: dict[str, Any]
        if kind == "read_file":
            if self.rng.random() < 0.5:
                await self.read_own(deadline)
            else:
                path = self.rng.choice(SHARED_FILES)
                self.ok(await self.call(kind, "read_file", {"path": path, "outline": self.rng.random() < 0.3}, deadline), f"read {path}")
        elif kind == "read_symbol":
            address = self.rng.choice([f"{s.path}:compute_{n}", f"{s.path}:Tally{n}/bump", "shop/pricing.py:with_vat"])
            result = await self.call(kind, "read_symbol", {"address": address}, deadline)
            self.ok(result, f"read_symbol {address}")
            if address.rsplit("/", 1)[-1].rsplit(":", 1)[-1] not in text_of(result):
                raise Unexpected(f"read_symbol {address}: the source does not name the symbol")
        elif kind == "file_outline":
            path = self.rng.choice([s.path, *SHARED_FILES])
            self.ok(await self.call(kind, "file_outline", {"path": path}, deadline), f"file_outline {path}")
        elif kind == "workspace_symbols":
            result = await self.call(kind, "workspace_symbols", {"query": f"compute_{n}"}, deadline)
            self.ok(result, "workspace_symbols")
            if f"compute_{n}" not in text_of(result):
                raise Unexpected(f"workspace_symbols compute_{n}: not found")
        elif kind == "search":
            payload = self.ok(await self.call(kind, "search_in_files", {"query": f"compute_{n}", "glob": "*.py"}, deadline), "search")
            if not payload.get("total"):
                raise Unexpected(f"search compute_{n}: no hit")
        elif kind == "references":
            address = self.rng.choice([f"{s.path}:compute_{n}", *SHARED_SYMBOLS])
            payload = self.ok(await self.call(kind, "find_references", {"address": address}, deadline), f"find_references {address}")
            if address.endswith(f"compute_{n}") and not payload.get("total"):  # the count; the locations are in the text
                raise Unexpected(f"find_references {address}: no location (total_{n} calls it)")
        elif kind in ("dry_edit_file", "apply_edit_file") and not s.fresh:
            # Read before write, as an agent must after its undo: the edit comes next time round.
            await self.read_own(deadline)
        elif kind == "dry_edit_file":
            arguments = {"path": s.path, "old_string": "self.count += 1", "new_string": "self.count += 2"}
            self.dry(await self.call(kind, "edit_file", arguments, deadline), "dry edit_file")
        elif kind == "dry_replace":
            text = f"def label_{n}() -> str:\n    return 'dry'\n"
            self.dry(await self.call(kind, "replace_symbol_body", {"address": f"{s.path}:label_{n}", "text": text}, deadline), "dry replace")
        elif kind == "dry_rename":
            s.renames += 1
            arguments = {"address": f"{s.path}:compute_{n}", "new_name": f"compute_{n}_v{s.renames}"}
            result = await self.call(kind, "rename_symbol", arguments, deadline)
            self.dry(result, "dry rename")
            if f"compute_{n}_v{s.renames}" not in str((result.structured_content or {}).get("diff", "")):
                raise Unexpected("dry rename: the new name is not in the diff")
        elif kind == "dry_insert":
            arguments = {"address": f"{s.path}:Tally{n}", "text": f"def extra_{n}():\n    return {n}\n"}
            self.dry(await self.call(kind, "insert_after_symbol", arguments, deadline), "dry insert")
        elif kind == "apply_edit_file":
            arguments = {"path": s.path, "old_string": f"REVISION = {s.revision}  #", "new_string": f"REVISION = {s.revision + 1}  #", "apply": True}
            await self.applied(kind, "edit_file", arguments, deadline, revision=s.revision + 1, label=s.label)
        elif kind == "apply_replace":
            text = f'def label_{n}() -> str:\n    return "client {n} label {s.label + 1}"\n'
            arguments = {"address": f"{s.path}:label_{n}", "text": text, "apply": True}
            await self.applied(kind, "replace_symbol_body", arguments, deadline, revision=s.revision, label=s.label + 1)
        elif kind == "undo":
            await self.undo(deadline)
        elif kind == "probe":
            await self.probe(deadline)
        else:
            raise ValueError(kind)

    def dry(self, result: CallToolResult, what: str) -> None:
        payload = self.ok(result, what)
        if payload.get("applied") is not False or not payload.get("diff"):
            raise Unexpected(f"{what}: applied={payload.get('applied')!r}, diff of {len(str(payload.get('diff', '')))} chars")
        if (self.root / self.state.path).exists():
            self.check_disk(f"{what} (a dry run must not write)")

    async def applied(self, kind: str, tool: str, arguments: dict[str, Any], deadline: float, *, revision: int, label: int) -> None:
        s = self.state
        payload = self.ok(await self.call(kind, tool, arguments, deadline), f"applied {tool}")
        transaction = payload.get("transaction")
        if payload.get("applied") is not True or not transaction:
            raise Unexpected(f"applied {tool}: applied={payload.get('applied')!r}, transaction={transaction!r}")
        s.undo_stack.append((str(transaction), s.revision, s.label))
        s.revision, s.label, s.fresh = revision, label, True
        self.check_disk(f"after applied {tool}")

    async def undo(self, deadline: float) -> None:
        s = self.state
        if not s.undo_stack:
            # Nothing of ours to undo yet: apply something instead, so the mix keeps its writes.
            await self.step("apply_replace", deadline)
            return
        transaction, revision, label = s.undo_stack[-1]
        # Always by id: a bare undo_edit undoes the workspace's last transaction, whoever made it.
        payload = self.ok(await self.call("undo", "undo_edit", {"transaction": transaction}, deadline), f"undo {transaction}")
        if payload.get("applied") is not True or s.path not in [f.get("path") for f in payload.get("files", [])]:
            raise Unexpected(f"undo {transaction}: applied={payload.get('applied')!r}, files={payload.get('files')!r}")
        s.undo_stack.pop()
        s.revision, s.label, s.fresh = revision, label, False
        self.check_disk(f"after undo {transaction}")

    async def probe(self, deadline: float) -> None:
        """Edit a file only another client has read: anything but ``not_read`` breaks isolation."""
        owner = self.rng.choice([m for m in range(self.clients) if m != self.state.n])
        path = f"shop/probe_{owner}.py"
        if self.rng.random() < 0.5:
            tool, arguments = "edit_file", {"path": path, "old_string": f"OWNER = {owner}", "new_string": f"OWNER = {self.state.n}"}
        else:
            tool, arguments = "write_file", {"path": path, "content": f"OWNER = {self.state.n}\n"}
        # A dry run is enough (the ledger is checked while planning) and leaves the file alone.
        result = await self.call("probe", tool, arguments, deadline)
        self.tally.leak_probes += 1
        if not result.is_error:
            self.tally.leak(f"client {self.state.n}: {tool} of {path} (read only by client {owner}) was planned, not refused")
        elif error_code(result) != "not_read":
            raise Unexpected(f"probe {tool} {path}: refused as {error_code(result)!r}, expected 'not_read': {text_of(result)[:200]}")

    async def run(self, requests: int, barrier: "Barrier", soft_deadline: float, hard_deadline: float) -> None:
        # The owner reads its probe file (and its module) before anyone probes it.
        try:
            payload = self.ok(await self.call("read_file", "read_file", {"path": f"shop/probe_{self.state.n}.py"}, hard_deadline), "read own probe")
            if payload.get("path") != f"shop/probe_{self.state.n}.py":
                raise Unexpected(f"read own probe: answer names {payload.get('path')!r}")
            await self.read_own(hard_deadline)
        finally:
            await barrier.arrive(hard_deadline)
        kinds = list(MIX)
        weights = [MIX[k] for k in kinds]
        while self.calls < requests and time.monotonic() < soft_deadline:
            kind = self.rng.choices(kinds, weights)[0]
            try:
                await self.step(kind, hard_deadline)
            except Unexpected as problem:
                self.tally.error(f"client {self.state.n}: {problem}")
            except TimeoutError:
                if time.monotonic() >= hard_deadline - 1:
                    self.tally.interrupted += 1
                    return
                self.tally.error(f"client {self.state.n}: {kind} timed out after {REQUEST_TIMEOUT:.0f} s")
            except Exception as error:  # noqa: BLE001 - a failed request is counted, and the session goes on
                self.tally.error(f"client {self.state.n}: {kind}: {type(error).__name__}: {error}"[:400])


class Barrier:
    """Every client arrives (its probe file read) before any client starts its mix."""

    def __init__(self, parties: int) -> None:
        self.parties = parties
        self.arrived = 0
        self.event = asyncio.Event()

    async def arrive(self, deadline: float) -> None:
        self.arrived += 1
        if self.arrived >= self.parties:
            self.event.set()
        try:
            await asyncio.wait_for(self.event.wait(), max(1.0, deadline - time.monotonic()))
        except asyncio.TimeoutError:
            pass


async def run_one_client(n: int, args: argparse.Namespace, server: McpServer, root: Path, tally: Tally,
                         barrier: Barrier, soft_deadline: float, hard_deadline: float) -> None:
    """Client n's own session over its own HTTP connection pool, bearer token included."""
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.token}"}, timeout=httpx2.Timeout(30, read=300))
    will_arrive = False
    try:
        # No timeout around entering the client: the transport opens a task group there, and an
        # anyio cancel scope must not end while a task group opened inside it is still running.
        # The HTTP client's own timeouts bound the handshake.
        async with http, Client(streamable_http_client(server.url, http_client=http), mode=args.protocol) as client:
            soak = SoakClient(n, args.clients, root, client, tally, random.Random(args.seed * 1000 + n))
            will_arrive = True
            await soak.run(args.requests, barrier, soft_deadline, hard_deadline)
    except Exception as error:  # noqa: BLE001 - any failure of a session is a measured error, never a crash
        tally.error(f"client {n}: {type(error).__name__}: {error}"[:400])
        if not will_arrive:
            await barrier.arrive(hard_deadline)


async def run_mcp(args: argparse.Namespace, workdir: Path, soft_deadline: float, hard_deadline: float) -> dict[str, Any]:
    root = make_workspace(workdir / "mcp", args.clients)
    server = start_mcp_server(root, args.source, workdir / "mcp-server.log", hard_deadline)
    memory = MemoryTrack(server.process.pid)
    planned = args.clients * args.requests
    tally = Tally(planned)
    warm_after = max(1, int(planned * WARMUP_SHARE))
    tally.on_progress = lambda done: memory.mark_warm() if done >= warm_after else None
    sampler = asyncio.create_task(memory.sample_forever())
    started = time.monotonic()
    try:
        barrier = Barrier(args.clients)
        await asyncio.gather(*(run_one_client(n, args, server, root, tally, barrier, soft_deadline, hard_deadline)
                               for n in range(args.clients)))
        memory.mark_end()
    finally:
        sampler.cancel()
        kill_group(server.process.pid)
    for exception in logged_exceptions(server.log):
        tally.error(f"server log: {exception}")
    return part_json("mcp", tally, memory, time.monotonic() - started,
                     {"clients": args.clients, "protocol": args.protocol, "source": args.source,
                      "stopped_by_deadline": tally.done < planned and time.monotonic() >= soft_deadline})





def verdict(parts: list[dict[str, Any]]) -> dict[str, Any]:
    errors = sum(p["errors"] for p in parts)
    leaks = sum(p["leaks"] for p in parts)
    growths = [p["memory"]["growth_pct"] for p in parts]
    worst = max((g for g in growths if g is not None), default=None)
    memory_ok = worst is not None and all(g is not None for g in growths) and worst <= MEMORY_TARGET_PCT
    probes_ok = any(p["leak_probes"] for p in parts if p["part"] == "mcp") or not any(p["part"] == "mcp" for p in parts)
    return {
        "errors": errors, "leaks": leaks, "worst_memory_growth_pct": worst,
        "errors_ok": errors == 0, "leaks_ok": leaks == 0 and probes_ok, "memory_ok": memory_ok,
        "pass": errors == 0 and leaks == 0 and probes_ok and memory_ok,
    }


def print_table(report: dict[str, Any]) -> None:
    print(f"soak run: {report['run_seconds']:.0f} s of a {report['deadline_seconds']:.0f} s deadline; "
          f"workspace {report['workspace']}")
    for part in report["parts"]:
        extra = (f"{part['clients']} clients, protocol {part['protocol']}" if part["part"] == "mcp"
                 else f"{part['changes_sent']}/{part['changes_planned']} didChange")
        print(f"\n[{part['part']}] {extra}, source {part['source']}: {part['requests_done']}/{part['requests_planned']} requests "
              f"in {part['seconds']:.0f} s" + ("  (stopped by the deadline)" if part["stopped_by_deadline"] else ""))
        print(f"  {'request kind':<24}{'count':>7}{'p50':>11}{'p99':>11}")
        for kind, row in part["latency"].items():
            print(f"  {kind:<24}{row['count']:>7}{row['p50_ms']:>9.1f}ms{row['p99_ms']:>9.1f}ms")
        memory = part["memory"]
        growth = "n/a" if memory["growth_pct"] is None else f"{memory['growth_pct']:+.1f} %"
        print(f"  server RSS: {memory['warm_kib']} KiB after warm-up -> {memory['end_kib']} KiB at the end "
              f"(peak {memory['peak_kib']} KiB): {growth}")
        print(f"  errors: {part['errors']}" + (f"   cross-session leaks: {part['leaks']} of {part['leak_probes']} probes"
                                                 if part["part"] == "mcp" else ""))
        for sample in part["error_samples"]:
            print(f"    error: {sample}")
        for sample in part["leak_samples"]:
            print(f"    leak: {sample}")
    v = report["verdict"]
    worst = "n/a" if v["worst_memory_growth_pct"] is None else f"{v['worst_memory_growth_pct']:+.1f} %"
    print("\nverdict:")
    print(f"  {'PASS' if v['errors_ok'] else 'FAIL'}  errors: {v['errors']} (target 0)")
    print(f"  {'PASS' if v['leaks_ok'] else 'FAIL'}  cross-session leaks: {v['leaks']} (target 0)")
    print(f"  {'PASS' if v['memory_ok'] else 'FAIL'}  memory growth: worst {worst} (target <= {MEMORY_TARGET_PCT:.0f} %)")
    print(f"  overall: {'PASS' if v['pass'] else 'FAIL'}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print the report as JSON instead of the table")
    parser.add_argument("--deadline", type=float, default=600.0, help="seconds for the whole run (default 600)")
    parser.add_argument("--mcp-share", type=float, default=0.6, help="share of the deadline the MCP part may use (default 0.6)")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--requests", type=int, default=200, help="requests per MCP client")
    parser.add_argument("--changes", type=int, default=2000, help="didChange notifications")
    parser.add_argument("--rename-every", type=int, default=100, help="changes between renames")
    parser.add_argument("--protocol", default="auto", choices=("auto", "legacy"), help="the MCP client's negotiation mode")
    parser.add_argument("--source", default="ast", choices=("ast", "auto", "lsp", "regex"), help="the servers' --source")
    parser.add_argument("--parts", default="mcp,lsp", help="which parts to run (mcp, lsp or both)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the temporary workspace and server log")
    args = parser.parse_args(argv)
    if args.clients < 2:
        parser.error("--clients must be at least 2 (the isolation probes need another session)")
    if args.rename_every < 4 or args.rename_every % 2:
        parser.error("--rename-every must be even and at least 4 (changes come in insert/remove pairs)")
    return args


def stop_on_signals() -> None:
    """SIGINT/SIGTERM/SIGHUP: kill the servers at once (a client whose server is gone cannot hang
    on it), then cancel the run so every ``finally`` runs."""
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()

    def stop(number: int) -> None:
        print(f"signal {number}: stopping", file=sys.stderr, flush=True)
        kill_everything_started()
        if task is not None:
            task.cancel()

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(sig, stop, int(sig))


def start_watchdog(seconds: float) -> None:
    """The last bound on the run's time: should cleanup itself hang past the deadline and its
    grace, kill the servers and leave without a report."""
    def expire() -> None:
        print(f"soak: still running {seconds:.0f} s after the start; killing the servers and exiting", file=sys.stderr, flush=True)
        kill_everything_started()
        os._exit(3)

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()


async def run(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    stop_on_signals()
    start = time.monotonic()
    hard_deadline = start + args.deadline
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    results = []
    if "mcp" in parts:
        soft = start + args.deadline * (args.mcp_share if "lsp" in parts else 1.0)
        print(f"MCP: {args.clients} clients x {args.requests} requests ...", file=sys.stderr, flush=True)
        results.append(await run_mcp(args, workdir, soft, hard_deadline))
    if "lsp" in parts:
        print(f"LSP: {args.changes} didChange, renames every {args.rename_every} changes on a clean and on a dirty buffer ...",
              file=sys.stderr, flush=True)
        results.append(await run_lsp(args, workdir, hard_deadline))
    return {"run_seconds": round(time.monotonic() - start, 1), "deadline_seconds": args.deadline,
            "workspace": str(workdir) if args.keep else "(removed)", "parts": results, "verdict": verdict(results)}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    atexit.register(kill_everything_started)
    start_watchdog(args.deadline + 120)
    workdir = Path(tempfile.mkdtemp(prefix="graft-soak-"))
    try:
        report = asyncio.run(run(args, workdir))
    except asyncio.CancelledError:
        print("soak: interrupted; no report", file=sys.stderr)
        return 130
    finally:
        kill_everything_started()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_table(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
