"""A call the daemon was told to run and never answered: settled from the journal, never guessed.

The thin client (frontends.cli.entry) gives every call a request id, and every transaction the
call writes records it (engine.edits.journal). When the daemon is killed, or stops answering,
after it was told to run the call, a read simply runs again here. A call that writes asks the
journal what became of its request first:

- a transaction of it committed: that outcome is reported (exit 0), and nothing runs again;
- nothing of it committed and nothing can any more (the daemon closed the connection: it is
  gone, or done with the call, and a transaction its death left uncommitted is rolled back by
  recovery): it runs here, with the same id;
- otherwise (a live process still holds one of its transactions, or the daemon is silent but
  may wake up and write, or a batch committed some of its steps): refused as
  ``outcome_unknown``, saying what to check.

This module reads the journal: it is imported on that path only, never on a call's usual one.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import sys
import threading
from pathlib import Path
from typing import Callable

from engine.api_surface import Journal, JournalRecord, open_state_file, Refused, state_folder
from frontends.cli import daemon_client
from frontends.cli.arguments import build_parser
from frontends.cli.output import answered, refused
from frontends.cli.parsing import ArgumentsRejected


class OutcomeUnknown(Refused):
    """The daemon may have written part or all of the call, or may still: it is not run again."""

    code = "outcome_unknown"


class WorkspaceHeld(Refused):
    """A daemon that does not answer holds the workspace's apply lock: a write here would wait for it forever."""

    code = "workspace_held"


LOCK_WAIT_SECONDS = 5.0
"""How long a write given up on by its daemon waits for the workspace's apply lock before it is
refused: a live writer holds it for the length of one apply (its checks and verify command included)."""


def run_without_daemon(root: str, argv: list[str], unavailable: Exception, run_here: Callable[[], int]) -> int:
    """A call whose daemon did not answer in time (it was never told to run it): run here, and
    said so. A write first makes sure the apply lock is not held by that daemon, stopped in the
    middle of another call's apply: the write would otherwise wait for it with no end."""
    print(f"graft: {unavailable}; running in this process", file=sys.stderr)
    try:
        args = build_parser().parse_args(argv)
    except ArgumentsRejected:
        return run_here()
    if writes(args) and not _apply_lock_free_within(Path(root), LOCK_WAIT_SECONDS):
        return refused(args.command, WorkspaceHeld(
            f"the workspace's apply lock has been held for {LOCK_WAIT_SECONDS:.0f} s, likely by {_daemon_named(root)}, which "
            "does not answer (stopped or hung?); nothing was written. Resume it (kill -CONT PID) or end it, then run the "
            "call again; `graft recover` rolls back what an ended daemon left unfinished."), as_json=bool(args.json))
    return run_here()


def _apply_lock_free_within(root: Path, seconds: float) -> bool:
    """Whether the workspace's apply lock (engine.edits.apply) could be taken within ``seconds``;
    released at once: the call's own apply takes it again. The wait is a thread's blocking
    flock, left behind when it times out (this process then refuses, and ends)."""
    try:
        handle = open_state_file(state_folder(root, "locks") / "apply.lock", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    except OSError:
        return True  # the call's own apply meets the same failure, and reports it
    taken = threading.Event()

    def take() -> None:
        fcntl.flock(handle, fcntl.LOCK_EX)
        taken.set()

    threading.Thread(target=take, name="graft-apply-lock-probe", daemon=True).start()
    if not taken.wait(seconds):
        return False
    os.close(handle)
    return True


def settle(root: str, argv: list[str], lost: daemon_client.DaemonLost, run_here: Callable[[], int]) -> int:
    """What the client answers for a call whose daemon gave no exit status; ``run_here`` runs it
    in this process (with the same request id)."""
    try:
        args = build_parser().parse_args(argv)
    except ArgumentsRejected:
        return run_here()  # a line the daemon refused too (it says why): nothing was written
    if not writes(args):
        print(f"graft: {lost}; running the command in this process instead", file=sys.stderr)
        return run_here()
    try:
        state = Journal(Path(root)).request_state(lost.request)
    except OSError as error:
        return _refuse(args, f"{lost}, and the journal could not be read ({error.strerror}), so whether this call wrote "
                             "anything is not known; it was not run again. Check `graft history`.")
    several = args.command == "batch" and bool(getattr(args, "each", False))
    if state.committed and not several:
        return _report(args, state.committed, lost)
    daemon = _daemon_named(root)
    if state.committed:
        return _refuse(args, f"{lost} after it committed {_listed(state.committed)} of this batch (--each: a transaction "
                             "per step); whether every step ran is not known, so it was not run again. Check `graft "
                             "history`, and run the steps left as a batch of their own.")
    if state.in_progress:
        return _refuse(args, f"{lost}, and a transaction of this call is still held by a live process ({daemon}, stopped "
                             "or hung?): whether it commits is not known, so the call was not run again. Check `graft "
                             "history` once that process has ended or resumed; `graft recover` then rolls back what it "
                             "left unfinished.")
    if lost.silent:
        return _refuse(args, f"{lost}; nothing of this call is committed yet, but {daemon} may still run it, so it was "
                             "not run here. Check `graft history` once it answers again (`graft daemon status`) or has "
                             "ended, and run the call again only if it is not there.")
    print(f"graft: {lost}, before it committed anything of this call (the journal holds none of request "
          f"{lost.request}); running the command in this process instead", file=sys.stderr)
    return run_here()


def writes(args: argparse.Namespace) -> bool:
    """Whether the call may write files through the journal: an undo or redo, or a command with ``--apply``."""
    return args.command in ("undo", "redo") or bool(getattr(args, "write", False))


def _report(args: argparse.Namespace, committed: list[JournalRecord], lost: daemon_client.DaemonLost) -> int:
    """The committed outcome, as the command's own answer: exit 0, the transaction, the files."""
    last = committed[-1].id
    files: dict[str, str] = {}
    for record in committed:
        for entry in record.entries:
            status = "created" if entry.before_sha256 is None else "deleted" if entry.after_sha256 is None else "modified"
            files[entry.path] = status
    note = (f"graft: {lost} after it committed {_listed(committed)} for this call; that outcome is reported, and the "
            "command was not run again (`graft history` lists it)")
    if lost.printed:
        print(note, file=sys.stderr)  # the daemon's own answer reached stdout already
        return 0
    text = "\n".join([f"applied as transaction {last} (committed by the daemon before it stopped; not run again)",
                      *(f"  {status} {path}" for path, status in files.items())])
    payload: dict[str, object] = {
        "operation": args.command, "applied": True, "transaction": last, "transactions": [r.id for r in committed],
        "files": [{"path": path, "status": status} for path, status in files.items()], "daemon_lost": True,
        "request": lost.request, "note": note.removeprefix("graft: "),
    }
    return answered(args.command, payload, text, note, as_json=bool(args.json))


def _refuse(args: argparse.Namespace, message: str) -> int:
    return refused(args.command, OutcomeUnknown(message), as_json=bool(args.json))


def _listed(records: list[JournalRecord]) -> str:
    ids = [record.id for record in records]
    return f"transaction {ids[0]}" if len(ids) == 1 else "transactions " + ", ".join(ids)


def _daemon_named(root: str) -> str:
    info = daemon_client.read_info(root)
    pid = info.get("pid") if info else None
    return f"the daemon (pid {pid})" if isinstance(pid, int) else "the daemon"
