"""A TypeScript 7 project served by ``tsc --lsp``: codegraft against the raw server, same run (issue 47, item 5).

Generates a project of about 10,000 lines (``--files`` modules of ~200 lines, each calling a
function of ``src/core.ts`` through the barrel ``src/index.ts``; a lock file says TypeScript 7.0.2)
under benchmarks/.corpus/ts7, then measures:

- cold: a fresh engine's first rename plan of ``core.ts:scaleBy``, the server's start included;
- warm: plans of other renames (run i renames ``scaleBy`` or ``offsetBy``, alternately, to a name
  used nowhere before: never the cold request again), against the raw server's bare
  ``textDocument/rename`` of the same sequence (benchmarks/raw_lsp.py); each plan is one call
  of an engine kept as the CLI's daemon keeps it (reads kept between calls, each checked against
  the file's status, so a changed file is read again);
- apply with the full check: the warm plan applied with ``fail_on_new_errors`` (the whole scope
  compared), then undone (not timed);
- with ``--interleave``, the warm renames of both again, in turns (benchmarks.paired): each pair's
  ratio, which a shared machine's changing load falls on alike.

The generated files are first left to settle for engine.read_memo's RACY_SECONDS, as a project's
files are before someone refactors it: reads are kept between calls only for files whose times are
that old (a write within one tick of the clock could otherwise go unseen), so a project measured
the moment it was written would be read whole on every plan.

    .venv/bin/python benchmarks/bench_ts7.py [--files 50] [--runs 5] [--interleave] [--profile FILE]
        (cProfile of the cold plan and the last warm plan, written to FILE.cold and FILE.warm)
"""

from __future__ import annotations

import argparse
import cProfile
import os
import shutil
import statistics
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import raw_lsp  # noqa: E402
from benchmarks.paired import in_turns  # noqa: E402
from benchmarks.raw_lsp import RawClient  # noqa: E402
from engine.api import Engine, SourcePreference  # noqa: E402
from engine.edits.session import EditOptions  # noqa: E402
from engine.read_memo import RACY_SECONDS  # noqa: E402
from engine.refactor.operations.rename_symbol import Rename  # noqa: E402
from engine.workspace import Workspace  # noqa: E402
from lsp_pool.adapter import PoolServices  # noqa: E402
from lsp_pool import reader  # noqa: E402
from lsp_pool.config import PoolConfig  # noqa: E402
from lsp_pool.connection import Connection  # noqa: E402
from lsp_pool.typescript7 import INSTALL_HINT, SERVER_SETTINGS, pinned_command  # noqa: E402

CORPUS = Path(__file__).resolve().parent / ".corpus" / "ts7"

CORE = """export function scaleBy(value: number, factor: number): number {
  return value * factor;
}

export function offsetBy(value: number, offset: number): number {
  return value + offset;
}
"""


def module(index: int) -> str:
    lines = ['import { scaleBy, offsetBy } from "./index.js";', ""]
    for function in range(20):
        lines += [
            f"export function step{index}_{function}(input: number): number {{",
            f"  const scaled = scaleBy(input, {function + 1});",
            f"  const moved = offsetBy(scaled, {index});",
            "  if (moved > 1000) {",
            "    return moved - 1000;",
            "  }",
            "  return moved;",
            "}",
            "",
        ]
    while len(lines) < 200:
        lines.append(f"export const filler{index}_{len(lines)} = {len(lines)};")
    return "\n".join(lines) + "\n"


def generate(files: int, root: Path | None = None) -> Path:
    """The project in ``root`` (by default the one shared by every run with that many files), made
    afresh: each run of this bench has its own (``run-<pid>``), since its applies rewrite the files."""
    root = root or CORPUS / f"project-{files}"
    if root.exists():
        shutil.rmtree(root)
    (root / "src").mkdir(parents=True)
    (root / "package-lock.json").write_text(
        '{"lockfileVersion": 3, "packages": {"": {}, "node_modules/typescript": {"version": "7.0.2"}}}\n')
    (root / "tsconfig.json").write_text(
        '{"compilerOptions": {"strict": true, "target": "es2022", "module": "nodenext", "noEmit": true}, "include": ["src"]}\n')
    (root / "src" / "core.ts").write_text(CORE)
    exports = ", ".join(["scaleBy", "offsetBy"])
    (root / "src" / "index.ts").write_text(f'export {{ {exports} }} from "./core.js";\n')
    for index in range(files):
        (root / "src" / f"module{index}.ts").write_text(module(index))
    return root


def warm_target(run: int) -> tuple[int, str, str]:
    """(line in core.ts, address, new name) of warm run ``run``: never the cold request again."""
    if run % 2 == 0:
        return 0, "src/core.ts:scaleBy", f"multiplyBy{run}"
    return 4, "src/core.ts:offsetBy", f"shiftBy{run}"


def lines_of(root: Path) -> int:
    return sum(len(path.read_text().splitlines()) for path in root.rglob("*.ts"))


def engine_on(root: Path) -> Engine:
    """An engine as the CLI's daemon keeps one: reads kept between calls (each checked against the
    file's status, so a changed file is read again), each plan one call."""
    workspace = Workspace(root)
    workspace.keep_reads_between_calls()
    engine = Engine(workspace, services=PoolServices(workspace, PoolConfig()), source=SourcePreference.LSP)
    engine.settings = replace(engine.settings, diagnostics_budget=300.0)
    return engine


def settle(root: Path) -> None:
    """Wait until the generated files are older than the read memo's racy window (see the module's docstring)."""
    newest = max(path.stat().st_ctime for path in root.rglob("*") if path.is_file())
    wait = newest + RACY_SECONDS - time.time()
    if wait > 0:
        print(f"letting the generated files settle for {wait:.1f} s (engine.read_memo.RACY_SECONDS)")
        time.sleep(wait)


def raw_started(command: tuple[str, ...], root: Path) -> tuple[RawClient, float]:
    """The bare server, started and asked the cold rename: (its client, seconds to that first answer)."""
    started = time.perf_counter()
    # The same settings as codegraft's (a real rename through the barrel, no type acquisition).
    client = RawClient(list(command), str(root), settings=dict(SERVER_SETTINGS))
    client.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {
        "general": {"positionEncodings": ["utf-8", "utf-16"]}, "workspace": {"configuration": True}}, "workspaceFolders": [{"uri": root.as_uri(), "name": "p"}]})
    client.notify("initialized", {})
    params = {"textDocument": {"uri": (root / "src" / "core.ts").as_uri()}, "position": {"line": 0, "character": 17}, "newName": "multiplyBy"}
    first = client.request("textDocument/rename", params)
    cold = time.perf_counter() - started
    edits = sum(len(changes) for changes in (first or {}).get("changes", {}).values())
    print(f"raw rename: {len((first or {}).get('changes', {}))} files, {edits} edits")
    return client, cold


def raw_warm(client: RawClient, root: Path, run: int) -> tuple[float, float]:
    """(seconds, this process's processor seconds) of warm rename ``run`` asked of the bare server."""
    line, _, new_name = warm_target(run)
    asked = {"textDocument": {"uri": (root / "src" / "core.ts").as_uri()}, "position": {"line": line, "character": 17}, "newName": new_name}
    began, began_processor = time.perf_counter(), time.process_time()
    client.request("textDocument/rename", asked)
    return time.perf_counter() - began, time.process_time() - began_processor


def raw_rename(command: tuple[str, ...], root: Path, runs: int,
               clock: ServerClock) -> tuple[float, list[float], list[float], list[float]]:
    """(the first answer after start, seconds; each warm answer; this process's processor time
    in each warm answer; each warm answer's own time on ``clock``) of the bare server."""
    client, cold = raw_started(command, root)
    warm, processor, served = [], [], []
    for run in range(runs):
        took, used = raw_warm(client, root, run)
        warm.append(took)
        processor.append(used)
        served.append(clock.server_seconds())
    client.close()
    return cold, warm, processor, served


class ServerClock:
    """When each rename request went out and when its answer came back, on either side: the
    server answers the alternating warm renames in times that differ by several milliseconds, and
    which one is slow differs between two servers (its garbage collector's rhythm, it seems), so
    the two series' medians compare the servers as much as the clients. With each answer's own
    time, each side's own time around it is known too.

    Stamped around ``Connection.request`` and the reader's parse (codegraft) and the raw client's
    ``request`` and parse: the answer's arrival is the parse of the first body of a rename's size."""

    def __init__(self) -> None:
        self.asked = 0.0
        self.answered: float | None = None

    def ask(self) -> None:
        self.asked, self.answered = time.perf_counter(), None

    def parsing(self, body: bytes) -> None:
        if self.answered is None and len(body) >= ANSWER_BYTES:
            self.answered = time.perf_counter()

    def server_seconds(self) -> float:
        if self.answered is None:
            raise RuntimeError("no answer of a rename's size was read")
        return self.answered - self.asked


ANSWER_BYTES = 64 * 1024
"""The warm renames' answers are about 126 KB; nothing else the server sends is near that."""


@contextmanager
def clocked(clock: ServerClock) -> Iterator[None]:
    """Both sides' rename requests and answer parses stamped on ``clock`` for the block."""
    real_request, real_parsed, real_raw_request = Connection.request, reader.parsed, RawClient.request

    async def request(connection: Connection, method: str, *args: Any, **kwargs: Any) -> Any:
        if method == "textDocument/rename":
            clock.ask()
        return await real_request(connection, method, *args, **kwargs)

    def raw_request(client: RawClient, method: str, *args: Any, **kwargs: Any) -> Any:
        if method == "textDocument/rename":
            clock.ask()
        return real_raw_request(client, method, *args, **kwargs)

    def parsed(body: bytes) -> Any:
        clock.parsing(body)
        return real_parsed(body)

    Connection.request = request  # type: ignore[method-assign,assignment]
    RawClient.request = raw_request  # type: ignore[method-assign,assignment]
    reader.parsed = parsed
    raw_lsp.parsed = parsed
    try:
        yield
    finally:
        Connection.request = real_request  # type: ignore[method-assign]
        RawClient.request = real_raw_request  # type: ignore[method-assign]
        reader.parsed = raw_lsp.parsed = real_parsed


def planned_warm(engine: Engine, run: int) -> tuple[float, float]:
    """(seconds, this process's processor seconds) of codegraft's warm plan ``run``, one call."""
    began, began_processor = time.perf_counter(), time.process_time()
    _plan_warm(engine, run)
    return time.perf_counter() - began, time.process_time() - began_processor


def _plan_warm(engine: Engine, run: int) -> None:
    _, address, new_name = warm_target(run)
    with engine.workspace.remembering_reads():
        engine.plan(Rename(address, new_name))


def interleaved(command: tuple[str, ...], root: Path, runs: int) -> None:
    """The warm renames of the bare server and codegraft's plans in turns (benchmarks.paired):
    prints the median of the pairs' ratios, and each ratio."""
    client, _cold = raw_started(command, root)
    engine = engine_on(root)
    try:
        with engine.workspace.remembering_reads():
            engine.plan(Rename("src/core.ts:scaleBy", "multiplyBy"))
        pairs = in_turns(runs, lambda run: raw_warm(client, root, run)[0], lambda run: _plan_warm(engine, run))
    finally:
        engine.close()
        client.close()
    print(pairs.report(1.2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=50)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--interleave", action="store_true",
                        help="also ask the warm renames of both in turns, and print the pairs' ratios (less noise on a shared machine)")
    parser.add_argument("--profile", help="write cProfile stats of the cold and the last warm plan to PROFILE.cold|warm")
    args = parser.parse_args()
    command = pinned_command()
    if command is None:
        sys.exit(f"the pinned TypeScript 7 is not installed: {INSTALL_HINT}")
    root = generate(args.files, CORPUS / f"run-{os.getpid()}")
    try:
        measure(args, command, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


@dataclass(frozen=True)
class Series:
    """One side's warm renames: each one's seconds, this process's processor seconds in it, and
    its server's answer's own seconds (ServerClock)."""

    took: list[float]
    processor: list[float]
    served: list[float]


def report_warm(planned: Series, raw: Series) -> None:
    warm, raw_times = planned.took, raw.took
    warm_median, raw_median = statistics.median(warm), statistics.median(raw_times)
    print(f"warm rename: codegraft plan median {warm_median * 1000:.1f} ms (runs {', '.join(f'{w * 1000:.0f}' for w in warm)}); "
          f"raw rename median {raw_median * 1000:.1f} ms (runs {', '.join(f'{r * 1000:.0f}' for r in raw_times)}); "
          f"ratio {warm_median / raw_median:.2f}x (target ≤ 1.2x)")
    # The server answers the two renames in different times, and which one is slower changes from
    # server to server: each compared with itself, and the means, which the mix does not tip.
    by_name = "; ".join(f"{warm_target(parity)[1].rpartition(':')[2]} {statistics.median(warm[parity::2]) * 1000:.1f} / "
                        f"{statistics.median(raw_times[parity::2]) * 1000:.1f} ms" for parity in (0, 1) if warm[parity::2])
    print(f"  by rename, codegraft / raw medians: {by_name}; ratio of the means "
          f"{statistics.mean(warm) / statistics.mean(raw_times):.2f}x")
    # Each side's own time around its server's answer; then each plan against its own server's
    # answer plus what the raw client adds to one: the ratio under the same server's conditions.
    own = statistics.median(t - s for t, s in zip(warm, planned.served))
    raw_own = statistics.median(t - s for t, s in zip(raw_times, raw.served))
    same = statistics.median(t / (s + raw_own) for t, s in zip(warm, planned.served))
    print(f"  each side's own time around its server's answer, medians: codegraft {own * 1000:.1f} ms, the raw client "
          f"{raw_own * 1000:.1f} ms; the servers' answers {statistics.median(planned.served) * 1000:.1f} / "
          f"{statistics.median(raw.served) * 1000:.1f} ms; each plan against its own server's answer plus the raw client's "
          f"own time: median {same:.2f}x (target ≤ 1.2x)")
    # Processor time of this process (every thread: the pool's reading and converting the answer
    # included), which the machine's load does not stretch as it does the wall-clock times.
    print(f"  processor time of this process per warm rename, medians: codegraft's plan {statistics.median(planned.processor) * 1000:.1f} ms, "
          f"the raw client's {statistics.median(raw.processor) * 1000:.1f} ms")


def measure(args: argparse.Namespace, command: tuple[str, ...], root: Path) -> None:
    settle(root)
    print(f"project: {args.files + 2} files, {lines_of(root)} lines of TypeScript 7 ({root})")

    clock = ServerClock()
    with clocked(clock):
        raw_cold, raw_times, raw_processor, raw_served = raw_rename(command, root, args.runs, clock)

    engine = engine_on(root)
    try:
        profiler = cProfile.Profile() if args.profile else None
        began = time.perf_counter()
        if profiler is not None:
            profiler.enable()
        with engine.workspace.remembering_reads():
            plan = engine.plan(Rename("src/core.ts:scaleBy", "multiplyBy"))
        cold = time.perf_counter() - began
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(f"{args.profile}.cold")
        edits = sum(len(getattr(operation, "edits", ())) for operation in plan.edit.operations)
        warm, processor, served = [], [], []
        for run in range(args.runs):
            profiler = cProfile.Profile() if args.profile and run == args.runs - 1 else None
            if profiler is not None:
                profiler.enable()
            with clocked(clock):
                took, used = planned_warm(engine, run)
            warm.append(took)
            processor.append(used)
            served.append(clock.server_seconds())
            if profiler is not None:
                profiler.disable()
                profiler.dump_stats(f"{args.profile}.warm")
        applies = []
        for _ in range(args.runs):
            plan = engine.plan(Rename("src/core.ts:scaleBy", "multiplyBy"))
            began = time.perf_counter()
            outcome = engine.edits().apply(plan.edit, EditOptions(fail_on_new_errors=True))
            applies.append(time.perf_counter() - began)
            engine.edits().undo()
    finally:
        engine.close()
    print(f"plan: {len(plan.files)} files, {edits} edits; last apply: {type(outcome).__name__}")
    print(f"cold first rename plan, server start included: codegraft {cold:.3f} s; raw tsc --lsp first rename {raw_cold:.3f} s"
          " (target ≤ 1.5 s)")
    report_warm(Series(warm, processor, served), Series(raw_times, raw_processor, raw_served))
    print(f"apply with the full check: median {statistics.median(applies):.3f} s "
          f"(runs {', '.join(f'{a:.2f}' for a in applies)}) (target ≤ 0.5 s)")
    if args.interleave:
        settle(root)  # the applies and their undos wrote every file again
        interleaved(command, root, args.runs)


if __name__ == "__main__":
    main()
