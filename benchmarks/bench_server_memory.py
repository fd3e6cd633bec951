"""A language server's memory over a long session: thousands of engine calls, its resident memory sampled.

Run: ``.venv/bin/python benchmarks/bench_server_memory.py [--calls 5000] [--every 250] [--modules 120]
[--memory-limit-mb N] [--json]``

A mid-size Python project is generated in a temporary folder (``--modules`` modules, 300 by default, in one package,
each with a class, methods and functions that call into earlier modules), and one engine
(``engine.opening.open_engine``, the real pool and the real default server, basedpyright) answers
a mix of calls the way a long MCP or daemon session does:

- 25 % outlines (``Engine.outline``), 25 % references (``Engine.references``), 20 % hovers
  (``server_answers.hover``), 20 % rename dry runs (``EngineClient.run_operation``) and 10 %
  diagnostics (``Engine.diagnostics``: the server type-checks the file), each on a module drawn at
  random (seeded);
- every 25 calls one module changes on disk (a comment line added or taken away), and the engine
  is brought up to date with the disk before the next call, as the MCP server does before each tool
  call; so outlines are asked again and the server re-reads files, as in a session that edits.

Every ``--every`` calls the server's resident memory (its process and its children, as ``graft
servers`` shows it) is printed with the calls made, the time taken, the answers that did not come
from the server, and the server's restarts. ``--memory-limit-mb`` writes ``server_memory_limit_mb``
into the project's ``[tool.graft]`` (0 writes none: the default ceiling applies); with a ceiling
the curve shows the restarts and the memory after them. Failures (an exception, an answer that
fell back from the server) are counted and printed, not hidden; the run is a benchmark and exits 0.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.api import Engine  # noqa: E402
from engine.client import EngineClient  # noqa: E402
from engine.opening import open_engine  # noqa: E402
from engine.refactor.operations.rename_symbol import Rename  # noqa: E402
from engine.server_answers import hover  # noqa: E402
from engine.symbols import Source  # noqa: E402

_SERVER = "basedpyright"
_CHANGE_EVERY = 25


def generate_project(root: Path, modules: int) -> None:
    """``modules`` modules in package ``mid``: module i imports two earlier ones and calls into them."""
    package = root / "mid"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""A generated package for the memory soak."""\n')
    (root / "pyproject.toml").write_text('[project]\nname = "mid"\nversion = "0"\n')
    for i in range(modules):
        earlier = sorted({max(0, i - 1), i // 2}) if i else []
        imports = "".join(f"from mid.m{j} import Model{j}, helper{j}\n" for j in earlier)
        calls = " + ".join(f"helper{j}(x)" for j in earlier) or "x"
        uses = "".join(f"        total += Model{j}({j}).combine(self).value()\n" for j in earlier)
        (package / f"m{i}.py").write_text(
            f'"""Module {i}."""\n\nfrom __future__ import annotations\n\n{imports}\n\n'
            f"class Model{i}:\n"
            f'    """A model with a number."""\n\n'
            f"    def __init__(self, number: int) -> None:\n        self.number = number\n\n"
            f"    def value(self) -> int:\n        return self.number * {i + 1}\n\n"
            f"    def combine(self, other: object) -> Model{i}:\n"
            f"        total = self.value()\n{uses}"
            f"        return Model{i}(total)\n\n\n"
            f"def helper{i}(x: int) -> int:\n"
            f'    """Helper {i}."""\n'
            f"    return {calls} + {i}\n\n\n"
            f"def use{i}() -> int:\n    return helper{i}(1) + Model{i}(2).combine(None).value()\n"
        )


@dataclass
class Tally:
    calls: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    not_from_server: int = 0


def _resident_mb(engine: object) -> tuple[float | None, int]:
    services = getattr(engine, "services", None)
    for status in services.status() if services is not None else []:
        if status.id == _SERVER:
            return (status.memory_bytes / 2**20 if status.memory_bytes else None), getattr(status, "restarts", 0)
    return None, 0


def one_call(engine: Engine, client: EngineClient, kind: str, i: int, tally: Tally) -> None:
    path = f"mid/m{i}.py"
    if kind == "outline":
        symbols = engine.outline(path)
        served = symbols.source is Source.LSP
    elif kind == "references":
        found = engine.references(f"{path}:Model{i}/combine")
        served = found.source is Source.LSP
    elif kind == "hover":
        answer = hover(engine, f"{path}:helper{i}")
        served = answer.source is Source.LSP
    elif kind == "diagnostics":
        engine.diagnostics(path)
        served = True  # only a server gives diagnostics: a failure raises
    else:
        outcome = client.run_operation(Rename(address=f"{path}:helper{i}", new_name=f"helper{i}_renamed"))
        served = outcome.source is Source.LSP
    if not served:
        tally.not_from_server += 1


def change_one(root: Path, rng: random.Random, modules: int) -> None:
    path = root / "mid" / f"m{rng.randrange(modules)}.py"
    text = path.read_text()
    marker = "# touched by the soak\n"
    path.write_text(text[: -len(marker)] if text.endswith(marker) else text + marker)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--every", type=int, default=250, help="sample the server's memory every N calls")
    parser.add_argument("--modules", type=int, default=300)
    parser.add_argument("--memory-limit-mb", type=int, default=0,
                        help="server_memory_limit_mb for the project (0: none written, the default applies)")
    parser.add_argument("--seed", type=int, default=38)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="graft-memory-soak-"))
    root = folder / "project"
    generate_project(root, args.modules)
    if args.memory_limit_mb:
        with (root / "pyproject.toml").open("a") as config:
            config.write(f"\n[tool.graft]\nserver_memory_limit_mb = {args.memory_limit_mb}\n")
    rng = random.Random(args.seed)
    engine = open_engine(root)
    client = EngineClient(engine)
    tally = Tally()
    curve: list[dict[str, object]] = []
    started = time.monotonic()
    kinds = ["outline"] * 5 + ["references"] * 5 + ["hover"] * 4 + ["rename"] * 4 + ["diagnostics"] * 2
    try:
        for number in range(1, args.calls + 1):
            if number % _CHANGE_EVERY == 0:
                change_one(root, rng, args.modules)
                engine.refresh_from_disk()
            kind = rng.choice(kinds)
            i = rng.randrange(args.modules)
            tally.by_kind[kind] = tally.by_kind.get(kind, 0) + 1
            try:
                one_call(engine, client, kind, i, tally)
            except Exception as error:  # noqa: BLE001 - counted and shown: a benchmark reports, it does not stop
                tally.failures.append(f"call {number} {kind} m{i}: {type(error).__name__}: {error}")
            tally.calls = number
            if number == 1 or number % args.every == 0:
                resident, restarts = _resident_mb(engine)
                point: dict[str, object] = {"calls": number, "seconds": round(time.monotonic() - started, 1),
                         "rss_mb": round(resident, 1) if resident is not None else None, "restarts": restarts,
                         "not_from_server": tally.not_from_server, "failures": len(tally.failures)}
                curve.append(point)
                if not args.json:
                    print(f"{number:>6} calls  {point['seconds']:>8} s  {_SERVER} {point['rss_mb']} MB  "
                          f"restarts {restarts}  not from server {tally.not_from_server}  failures {len(tally.failures)}",
                          flush=True)
    finally:
        engine.close()
        shutil.rmtree(folder, ignore_errors=True)
    summary = {"server": _SERVER, "modules": args.modules, "calls": tally.calls, "by_kind": tally.by_kind,
               "memory_limit_mb": args.memory_limit_mb or None, "curve": curve, "failures": tally.failures[:20],
               "failure_count": len(tally.failures), "not_from_server": tally.not_from_server}
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        for failure in tally.failures[:20]:
            print("failure:", failure)
        print(f"by kind: {tally.by_kind}; failures {len(tally.failures)}; answers not from the server {tally.not_from_server}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
