"""Apply overhead: journaled, fsynced, atomic apply against a plain unsafe write loop, same run.

Run: ``.venv/bin/python benchmarks/bench_apply.py``

For edits of 1, 10, 100 and 1,000 files (each file 40 lines, every line rewritten),
times ``Transactions.apply`` (the apply lock, hash checks, syntax check, journal
with before-images, every file staged, one file-system sync, a rename per file,
another sync, commit marker, archive) and a loop that just opens and writes the same new contents. Prints
per-transaction and per-file times and the ratio. Never fails on timing.
"""

from __future__ import annotations

import hashlib
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from engine.edits.apply import Transactions  # noqa: E402
from engine.edits.model import FileChange, WorkspaceEdit  # noqa: E402
from engine.answers import TextEdit  # noqa: E402
from engine.positions import Position, Range  # noqa: E402
from engine.workspace import Workspace  # noqa: E402

LINES = 40


def prepare(root: Path, count: int) -> WorkspaceEdit:
    changes = []
    for number in range(count):
        path = root / f"m{number:04}.py"
        path.write_text("".join(f"value_{n} = {n}\n" for n in range(LINES)))
        new = "".join(f"value_{n} = {n * 2}\n" for n in range(LINES))
        changes.append(FileChange(path.name, (TextEdit(Range(Position(0, 0), Position(LINES, 0)), new),),
                                  hashlib.sha256(path.read_bytes()).hexdigest()))
    return WorkspaceEdit(tuple(changes))


def plain_loop(root: Path, count: int) -> float:
    start = time.perf_counter()
    for number in range(count):
        (root / f"m{number:04}.py").write_text("".join(f"value_{n} = {n * 3}\n" for n in range(LINES)))
    return time.perf_counter() - start


def main() -> int:
    print(f"{'files':>6} {'apply':>10} {'per file':>10} {'plain loop':>11} {'per file':>10} {'ratio':>7}")
    for count in (1, 10, 100, 1000):
        applied, plain = [], []
        for _ in range(3 if count < 1000 else 1):
            root = Path(tempfile.mkdtemp(prefix="graft-bench-"))
            try:
                edit = prepare(root, count)
                transactions = Transactions(Workspace(root))
                start = time.perf_counter()
                transactions.apply(edit)
                applied.append(time.perf_counter() - start)
                plain.append(plain_loop(root, count))
            finally:
                shutil.rmtree(root)
        a, p = statistics.median(applied), statistics.median(plain)
        print(f"{count:>6} {a * 1000:>8.1f}ms {a / count * 1000:>8.2f}ms {p * 1000:>9.2f}ms {p / count * 1000:>8.3f}ms {a / p:>6.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
