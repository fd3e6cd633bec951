"""Starting a server process so that it cannot outlive codegraft.

Two guards: the server gets its own process group (so that shutdown can
signal everything it spawned), and a tiny launcher sets Linux's parent-death
signal before exec'ing the server, so the kernel kills it if codegraft dies
without a chance to clean up (SIGKILL, a crash). The launcher replaces itself
with the server, so no extra process stays around. Elsewhere than Linux the
launcher just execs. (``preexec_fn`` could set the signal without a launcher,
but it is unsafe in a process with threads, and the pool runs in one.)
"""

from __future__ import annotations

import shutil
import sys

# Runs in `python -S -c`: no site import, so it starts as fast as Python can.
_LAUNCHER = """
import os, sys
parent = int(sys.argv[1])
if sys.platform.startswith("linux"):
    import ctypes
    PR_SET_PDEATHSIG, SIGKILL = 1, 9
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(70)
try:
    os.execvp(sys.argv[2], sys.argv[2:])
except OSError as error:
    sys.stderr.write(f"cannot start {sys.argv[2]}: {error.strerror}\\n")
    os._exit(127)
"""


_SETPRIV = shutil.which("setpriv") if sys.platform.startswith("linux") else None


def guarded_command(command: tuple[str, ...], parent_pid: int) -> tuple[str, ...]:
    """``command`` wrapped so that it dies with us.

    util-linux's ``setpriv`` (on every Debian system) sets the signal and execs far
    sooner than the Python launcher, which does the same and also
    closes the small race where codegraft dies before the signal is set.
    """
    if _SETPRIV is not None:
        return (_SETPRIV, "--pdeathsig", "SIGKILL", "--", *command)
    return (sys.executable, "-S", "-c", _LAUNCHER, str(parent_pid), *command)
