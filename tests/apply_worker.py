"""A separate process that applies an edit to N files, for crash tests.

    python -m tests.apply_worker ROOT N exit-at STEP   # os._exit(9) right after STEP
    python -m tests.apply_worker ROOT N exit-at STEP copies  # the same, before-images copied, not linked
    python -m tests.apply_worker ROOT N fork-kill      # per line DELAY: apply in a child, SIGKILL it after DELAY s
    python -m tests.apply_worker ROOT N race LABEL     # plan, wait for a line, apply; print the outcome
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

from engine.edits.apply import Transactions
from engine.edits.model import FileChange, WorkspaceEdit
from engine.errors import Refused
from engine.answers import TextEdit
from engine.positions import Position, Range
from engine.workspace import Workspace


def make_files(root: Path, count: int) -> None:
    for number in range(count):
        (root / f"f{number:03}.txt").write_text(f"old {number}\n" * 20)


def whole_file_edit(root: Path, count: int, label: str = "new") -> WorkspaceEdit:
    import hashlib

    changes = []
    for number in range(count):
        path = root / f"f{number:03}.txt"
        data = path.read_bytes()
        replacement = TextEdit(Range(Position(0, 0), Position(20, 0)), f"{label} {number}\n" * 20)
        changes.append(FileChange(path.name, (replacement,), hashlib.sha256(data).hexdigest()))
    return WorkspaceEdit(tuple(changes))


def main() -> None:
    root, count, mode = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    workspace = Workspace(root)
    if mode == "exit-at":
        step = sys.argv[4]
        if sys.argv[5:] == ["copies"]:  # as on a file system without hard links
            import engine.edits.journal

            engine.edits.journal._link_before_image = lambda *_: False

        def hook(reached: str) -> None:
            if reached == step:
                os._exit(9)

        Transactions(workspace, hook=hook).apply(whole_file_edit(root, count))
    elif mode == "fork-kill":
        # One interpreter for many crashes: starting one per kill spent most of the test's time
        # importing. Each apply runs in a forked child, killed by this parent, which has not
        # reaped it yet (so the pid cannot be someone else's). A negative delay: no kill.
        for line in sys.stdin:
            delay = float(line)
            edit = whole_file_edit(root, count)  # the files as the test left them
            started = time.monotonic()
            child = os.fork()
            if child == 0:
                code = 1
                try:
                    Transactions(workspace).apply(edit)
                    code = 0
                finally:
                    os._exit(code)
            if delay >= 0:
                time.sleep(delay)
                os.kill(child, signal.SIGKILL)
            _pid, status = os.waitpid(child, 0)
            print(f"{time.monotonic() - started:.6f} {status}", flush=True)
    elif mode == "race":
        edit = whole_file_edit(root, count, sys.argv[4])
        print("ready", flush=True)
        sys.stdin.readline()
        try:
            Transactions(workspace).apply(edit)
            print("applied", flush=True)
        except Refused as error:
            print(f"refused: {error.message}", flush=True)


if __name__ == "__main__":
    main()
