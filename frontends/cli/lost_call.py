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
import sys
from pathlib import Path
from typing import Callable

from engine.edits.journal import Journal, JournalRecord
from engine.errors import Refused
from frontends.cli import daemon_client
from frontends.cli.arguments import build_parser
from frontends.cli.output import answered, refused
from frontends.cli.parsing import ArgumentsRejected


class OutcomeUnknown(Refused):
    """The daemon may have written part or all of the call, or may still: it is not run again."""

    code = "outcome_unknown"


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
    """Whether the call may write files through the journal: an undo, or a command with ``--apply``."""
    return args.command == "undo" or bool(getattr(args, "write", False))


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
