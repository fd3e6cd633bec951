"""Notes said once per workspace: what codegraft did for the user, with nothing for them to do.

A rename answer carries its server's notes. One that only tells what codegraft arranged (the
whole workspace given to a server whose project config narrows its files) is news the first
time and noise on every later command, in-process or through the daemon. The notes said are
remembered under ``.graft/servers``; a note whose text changes (another config, another
setting) is news again.
"""

from __future__ import annotations

from pathlib import Path

from engine.errors import GraftError
from engine.state_folder import read_state_file, state_folder, write_new_file

_SAID = "notes-said.txt"


def first_time(root: Path, note: str) -> bool:
    """Whether ``note`` was never said for the workspace; it counts as said from now on."""
    try:
        marker = state_folder(root, "servers") / _SAID
        said = read_state_file(marker).decode("utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        said = []
    except (OSError, GraftError):
        # Not a file of ours to read (a symlink planted there, a folder, no permission): the
        # note is said every time, which is never wrong, and nothing is written there.
        return True
    if note in said:
        return False
    try:
        write_new_file(marker, "".join(f"{line}\n" for line in [*said, note]).encode())
    except OSError:
        pass  # cannot be remembered: said again next time
    return True
