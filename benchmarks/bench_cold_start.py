"""Cold and warm first rename plans in TypeScript (tsserver) and Go (gopls), against the raw server in
the same run (issue 40, item 8).

Generates a project of about 10,000 lines per language under benchmarks/.corpus/cold-start
(``--files`` modules of ~200 lines, each calling a function of a core module: TypeScript through a
barrel, Go through an import of the core package), then, per language:

- raw: the bare server (benchmarks/raw_lsp.py) started, initialised, shown the file (tsserver needs
  it open) and asked ``textDocument/rename``: the first answer after start, then warm answers;
- codegraft: a fresh engine on a workspace without ``.graft/`` (no index cache) plans the same
  rename, server start included (cold), then warm plans; each plan is one call of an engine kept
  as the CLI's daemon keeps it (reads kept between calls, each checked against the file's status).

Warm runs are never the cold request again: run i renames ``scaleBy`` (even i) or ``offsetBy``
(odd i) to a name used nowhere before (``MultiplyBy<i>``, ``ShiftBy<i>``), and the raw server is
asked the same sequence, so no answer can come from an earlier identical request.

Targets: cold TypeScript ≤ 3 s, Go ≤ 2 s; warm ≤ 1.5× the raw server's warm rename.

    .venv/bin/python benchmarks/bench_cold_start.py [--language typescript|go|both] [--files 50] [--runs 5]
        [--profile FILE]   (cProfile of the cold plan, written to FILE.<language>)
        [--interleave]     (then the warm renames of both in turns: each pair's ratio, less noise when loaded)
"""

from __future__ import annotations

import argparse
import cProfile
import os
import shutil
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_ts7 import CORE, module as ts_module  # noqa: E402
from benchmarks.paired import in_turns  # noqa: E402
from benchmarks.raw_lsp import RawClient  # noqa: E402
from engine.api import Engine, SourcePreference  # noqa: E402
from engine.refactor.operations.rename_symbol import Rename  # noqa: E402
from engine.workspace import Workspace  # noqa: E402
from lsp_pool.adapter import PoolServices  # noqa: E402
from lsp_pool.config import PoolConfig  # noqa: E402
from lsp_pool.registry import SPECS_BY_ID, locate  # noqa: E402

CORPUS = Path(__file__).resolve().parent / ".corpus" / "cold-start"


@dataclass(frozen=True)
class Case:
    language: str
    server: str
    root: Path
    file: str
    """The file the renamed function is declared in (workspace-relative)."""
    address: str
    line: int
    character: int
    language_id: str
    other: tuple[str, int, int]
    """The second function (address, line, character): warm runs alternate between the two."""

    def warm_target(self, run: int) -> tuple[str, int, int, str]:
        """(address, line, character, new name) of warm run ``run``: never the cold request again."""
        if run % 2 == 0:
            return self.address, self.line, self.character, f"MultiplyBy{run}"
        return (*self.other, f"ShiftBy{run}")


def typescript_project(files: int) -> Case:
    root = CORPUS / f"typescript-{files}"
    if root.exists():
        shutil.rmtree(root)
    (root / "src").mkdir(parents=True)
    (root / "tsconfig.json").write_text(
        '{"compilerOptions": {"strict": true, "target": "es2022", "module": "nodenext", "noEmit": true}, "include": ["src"]}\n')
    (root / "src" / "core.ts").write_text(CORE)
    (root / "src" / "index.ts").write_text('export { scaleBy, offsetBy } from "./core.js";\n')
    for index in range(files):
        (root / "src" / f"module{index}.ts").write_text(ts_module(index))
    return Case("typescript", "typescript-language-server", root, "src/core.ts", "src/core.ts:scaleBy", 0, 17, "typescript",
                ("src/core.ts:offsetBy", 4, 17))


GO_CORE = """package core

// ScaleBy multiplies.
func ScaleBy(value, factor int) int {
	return value * factor
}

// OffsetBy adds.
func OffsetBy(value, offset int) int {
	return value + offset
}
"""


def go_module(index: int) -> str:
    lines = [f"package module{index}", "", 'import "example.com/cold/core"', ""]
    for function in range(20):
        lines += [
            f"// Step{function} scales and moves.",
            f"func Step{function}(input int) int {{",
            f"\tscaled := core.ScaleBy(input, {function + 1})",
            f"\tmoved := core.OffsetBy(scaled, {index})",
            "\tif moved > 1000 {",
            "\t\treturn moved - 1000",
            "\t}",
            "\treturn moved",
            "}",
            "",
        ]
    while len(lines) < 200:
        lines.append(f"var filler{len(lines)} = {len(lines)}")
    return "\n".join(lines) + "\n"


def go_project(files: int) -> Case:
    root = CORPUS / f"go-{files}"
    if root.exists():
        shutil.rmtree(root)
    (root / "core").mkdir(parents=True)
    (root / "go.mod").write_text("module example.com/cold\n\ngo 1.22\n")
    (root / "core" / "core.go").write_text(GO_CORE)
    for index in range(files):
        folder = root / f"module{index}"
        folder.mkdir()
        (folder / f"module{index}.go").write_text(go_module(index))
    return Case("go", "gopls", root, "core/core.go", "core/core.go:ScaleBy", 3, 5, "go", ("core/core.go:OffsetBy", 8, 5))


def lines_of(case: Case) -> int:
    suffix = ".ts" if case.language == "typescript" else ".go"
    return sum(len(path.read_text().splitlines()) for path in case.root.rglob(f"*{suffix}"))


def tree_processor(pids: list[int]) -> float:
    """Processor seconds used so far by these processes and all their descendants (tsserver under
    typescript-language-server), read from /proc (Linux; 0 elsewhere): what the machine's load
    does not stretch as it does wall-clock time."""
    parents: dict[int, int] = {}
    used: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # exited meanwhile
        parents[int(entry)] = int(fields[1])
        used[int(entry)] = (int(fields[11]) + int(fields[12])) / tick
    total, stack, seen = 0.0, list(pids), set()
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        total += used.get(pid, 0.0)
        stack += [child for child, parent in parents.items() if parent == pid]
    return total


def raw_rename(case: Case, runs: int) -> tuple[float, list[float], int, list[float], float]:
    """(the first answer after start, seconds; each warm answer; edits; this process's processor
    time in each warm answer; the server's processor time up to its first whole answer) of the bare
    server, with the initialisation options codegraft sends."""
    client, uri, cold, edits, cold_server = _raw_started(case)
    warm, processor = [], []
    for run in range(runs):
        took, used = _raw_warm(client, case, uri, run)
        warm.append(took)
        processor.append(used)
    client.close()
    return cold, warm, edits, processor, cold_server


def _raw_started(case: Case) -> tuple[RawClient, str, float, int, float]:
    """The bare server started and asked the cold rename: (client, the file's URI, the first whole
    answer's seconds, its edits, the server's processor time up to it)."""
    spec = SPECS_BY_ID[case.server]
    found = locate(spec)
    if found is None:
        sys.exit(f"{case.server} is not installed: {spec.install_hint}")
    started = time.perf_counter()
    client = RawClient(list(found), str(case.root))
    initialize: dict[str, Any] = {
        "processId": None, "rootUri": case.root.as_uri(), "workspaceFolders": [{"uri": case.root.as_uri(), "name": "p"}],
        "capabilities": {"general": {"positionEncodings": ["utf-16"]}, "workspace": {"configuration": True}},
        "initializationOptions": dict(spec.initialization_options or {}),
    }
    client.request("initialize", initialize)
    client.notify("initialized", {})
    uri = (case.root / case.file).as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": case.language_id, "version": 1, "text": (case.root / case.file).read_text()}})
    params = {"textDocument": {"uri": uri}, "position": {"line": case.line, "character": case.character}, "newName": "MultiplyBy"}
    first = client.request("textDocument/rename", params, timeout=300)
    # tsserver answers before its project has loaded with the declaring file's edits alone: the
    # raw cold time is that of the first whole answer (asked again until it reaches other files).
    while _files(first) < 2 and time.perf_counter() - started < 300:
        time.sleep(0.02)
        first = client.request("textDocument/rename", params, timeout=300)
    cold = time.perf_counter() - started
    return client, uri, cold, _edits(first), tree_processor([client.process.pid])


def _raw_warm(client: RawClient, case: Case, uri: str, run: int) -> tuple[float, float]:
    """(seconds, this process's processor seconds) of warm rename ``run`` asked of the bare server."""
    _, line, character, new_name = case.warm_target(run)
    asked = {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}, "newName": new_name}
    began, began_processor = time.perf_counter(), time.process_time()
    client.request("textDocument/rename", asked)
    return time.perf_counter() - began, time.process_time() - began_processor


def _files(answer: Any) -> int:
    return len((answer or {}).get("changes") or {}) or len((answer or {}).get("documentChanges") or [])


def _edits(answer: Any) -> int:
    if not answer:
        return 0
    if answer.get("changes"):
        return sum(len(edits) for edits in answer["changes"].values())
    return sum(len(change.get("edits", [])) for change in answer.get("documentChanges") or [])


@dataclass(frozen=True)
class Planned:
    cold: float
    warm: list[float]
    edits: int
    processor: list[float]
    """This process's processor seconds in each warm plan (every thread)."""
    cold_processor: float
    """This process's processor seconds in the cold plan."""
    servers_processor: float
    """The servers' processor seconds up to the cold plan's end (their start included)."""


def codegraft_rename(case: Case, runs: int, profile: str | None) -> Planned:
    shutil.rmtree(case.root / ".graft", ignore_errors=True)
    workspace = Workspace(case.root)
    workspace.keep_reads_between_calls()  # as the CLI's daemon does: a changed file is read again
    services = PoolServices(workspace, PoolConfig())
    engine = Engine(workspace, services=services, source=SourcePreference.AUTO)
    operation = Rename(case.address, "MultiplyBy")
    try:
        profiler = cProfile.Profile() if profile else None
        began, began_processor = time.perf_counter(), time.process_time()
        if profiler is not None:
            profiler.enable()
        with workspace.remembering_reads():  # one call, as the CLI's client makes it
            plan = engine.plan(operation)
        cold, cold_processor = time.perf_counter() - began, time.process_time() - began_processor
        servers = tree_processor([server.connection.pid for server in services.api.pool.running()
                                  if server.connection is not None and server.connection.pid is not None])
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(f"{profile}.{case.language}.cold")
        edits = sum(len(getattr(change, "edits", ())) for change in plan.edit.operations)
        warm, processor = [], []
        for run in range(runs):
            profiler = cProfile.Profile() if profile and run == runs - 1 else None
            address, _, _, new_name = case.warm_target(run)
            began, began_processor = time.perf_counter(), time.process_time()
            if profiler is not None:
                profiler.enable()
            with workspace.remembering_reads():
                engine.plan(Rename(address, new_name))
            warm.append(time.perf_counter() - began)
            processor.append(time.process_time() - began_processor)
            if profiler is not None:
                profiler.disable()
                profiler.dump_stats(f"{profile}.{case.language}.warm")
    finally:
        engine.close()
    return Planned(cold, warm, edits, processor, cold_processor, servers)


def interleaved(case: Case, runs: int) -> None:
    """Warm renames asked of the bare server and planned by codegraft in turns (benchmarks.paired):
    prints the median of the pairs' ratios, and each ratio."""
    client, uri, _cold, _edits_count, _cold_server = _raw_started(case)
    shutil.rmtree(case.root / ".graft", ignore_errors=True)
    workspace = Workspace(case.root)
    workspace.keep_reads_between_calls()
    engine = Engine(workspace, services=PoolServices(workspace, PoolConfig()), source=SourcePreference.AUTO)

    def planned(run: int) -> None:
        address, _, _, new_name = case.warm_target(run)
        with workspace.remembering_reads():
            engine.plan(Rename(address, new_name))

    try:
        with workspace.remembering_reads():
            engine.plan(Rename(case.address, "MultiplyBy"))
        pairs = in_turns(runs, lambda run: _raw_warm(client, case, uri, run)[0], planned)
    finally:
        engine.close()
        client.close()
    print(f"  {pairs.report(1.5)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--language", choices=["typescript", "go", "both"], default="both")
    parser.add_argument("--files", type=int, default=50)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--profile", help="write cProfile stats of the cold and last warm plan to PROFILE.<language>.cold|warm")
    parser.add_argument("--interleave", action="store_true",
                        help="also ask the warm renames of both in turns, and print the pairs' ratios (less noise on a shared machine)")
    args = parser.parse_args()
    makers = {"typescript": typescript_project, "go": go_project}
    targets = {"typescript": 3.0, "go": 2.0}
    for language in (["typescript", "go"] if args.language == "both" else [args.language]):
        case = makers[language](args.files)
        print(f"{language}: {lines_of(case)} lines in {args.files + 1} files ({case.root}), served by {case.server}")
        raw_cold, raw_warm, raw_edits, raw_processor, raw_servers = raw_rename(case, args.runs)
        planned = codegraft_rename(case, args.runs, args.profile)
        cold, warm, edits, processor = planned.cold, planned.warm, planned.edits, planned.processor
        warm_median, raw_median = statistics.median(warm), statistics.median(raw_warm)
        print(f"  edits: raw {raw_edits}, codegraft {edits}")
        print(f"  cold first rename, server start included: codegraft {cold:.2f} s, raw {raw_cold:.2f} s "
              f"(target ≤ {targets[language]:g} s: {'met' if cold <= targets[language] else 'not met'})")
        print(f"  warm: codegraft median {warm_median * 1000:.0f} ms (runs {', '.join(f'{w * 1000:.0f}' for w in warm)}), "
              f"raw median {raw_median * 1000:.0f} ms (runs {', '.join(f'{w * 1000:.0f}' for w in raw_warm)}); "
              f"{warm_median / raw_median:.2f}x "
              f"(target ≤ 1.5x: {'met' if warm_median <= 1.5 * raw_median else 'not met'})")
        # Every thread of this process (the pool's reading of the answer included): what the
        # machine's load does not stretch as it does the wall-clock times.
        print(f"  processor time of this process per warm rename, medians: codegraft's plan "
              f"{statistics.median(processor) * 1000:.0f} ms (runs {', '.join(f'{p * 1000:.0f}' for p in processor)}), "
              f"the raw client's {statistics.median(raw_processor) * 1000:.1f} ms")
        print(f"  processor time of the cold plan in this process: {planned.cold_processor:.2f} s; of the server (its "
              f"start included) up to the cold plan: {planned.servers_processor:.2f} s, up to the raw first whole answer: "
              f"{raw_servers:.2f} s")
        if args.interleave:
            interleaved(case, args.runs)


if __name__ == "__main__":
    main()
