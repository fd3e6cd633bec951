"""A cold index of Django's full sdist by two commits, alternated in one run, against the raw baseline.

Run: ``.venv/bin/python benchmarks/bench_index_ab.py --against COMMIT [--runs N]``

On a machine whose speed swings from minute to minute, figures from separate runs cannot be
compared: this alternates the two trees' cold index (``ProjectIndex(..., jobs=2).load()``, each
in a fresh process, ``.graft/`` removed first) with the raw tree-sitter parse and walk of the same
files (``bench_graph.py``'s own baseline), so that a slow spell hits all three. COMMIT is checked out into
a temporary git worktree; this tree is measured as it is on disk. Prints each run and the medians:
seconds, CPU seconds (the process and its workers), and the ratios. Never fails on timing.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from benchmarks.corpus import django_source  # noqa: E402

_COLD_INDEX = """
import json, resource, shutil, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from engine.graph import ProjectIndex
from engine.workspace import Workspace
root = Path(sys.argv[2])
shutil.rmtree(root / ".graft", ignore_errors=True)
index = ProjectIndex(Workspace(root), jobs=2)
stats = index.load()
index.close()
cpu = sum(getattr(resource.getrusage(who), field) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
          for field in ("ru_utime", "ru_stime"))
print(json.dumps({"seconds": stats.seconds, "files": stats.files, "cpu": cpu}))
"""

_RAW = """
import gc, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from benchmarks.bench_graph import _raw_chunk
from engine.languages import language_of, profile_of
from engine.workspace import Workspace
root = Path(sys.argv[2])
items = [(kind.grammar, str(root / path)) for path in Workspace(root).scan().files
         if language_of(path) is not None and (kind := profile_of(path)) is not None and kind.grammar is not None]
gc.disable()
start = time.perf_counter()
_raw_chunk(items)
print(time.perf_counter() - start)
"""


def _python(code: str, *argv: str) -> str:
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True).stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", required=True, help="the commit to compare this tree with")
    parser.add_argument("--runs", type=int, default=6)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="graft-index-ab-"))
    other = scratch / "other"
    corpus = scratch / "django"
    try:
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(other), args.against], cwd=REPO, check=True)
        shutil.copytree(django_source().parent, corpus, symlinks=True)
        seconds: dict[str, list[float]] = {"other": [], "this": [], "raw": []}
        cpu: dict[str, list[float]] = {"other": [], "this": []}
        for run in range(args.runs):
            for label, tree in (("other", other), ("this", REPO)):
                answer = json.loads(_python(_COLD_INDEX, str(tree), str(corpus)))
                seconds[label].append(answer["seconds"])
                cpu[label].append(answer["cpu"])
            seconds["raw"].append(float(_python(_RAW, str(REPO), str(corpus))))
            print(f"run {run + 1}: {args.against} {seconds['other'][-1]:.2f} s, this tree {seconds['this'][-1]:.2f} s, "
                  f"raw {seconds['raw'][-1]:.2f} s", flush=True)
        median = {label: statistics.median(values) for label, values in seconds.items()}
        print(f"medians: {args.against} {median['other']:.3f} s = {median['other'] / median['raw']:.2f}x raw; "
              f"this tree {median['this']:.3f} s = {median['this'] / median['raw']:.2f}x raw; raw {median['raw']:.3f} s")
        pairs = [this / other for this, other in zip(seconds["this"], seconds["other"])]
        print(f"this / {args.against}, run by run: {' '.join(f'{p:.3f}' for p in pairs)} (median {statistics.median(pairs):.3f})")
        print(f"CPU s (process and workers), medians: {args.against} {statistics.median(cpu['other']):.2f}, "
              f"this tree {statistics.median(cpu['this']):.2f}")
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(other)], cwd=REPO, check=False)
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
