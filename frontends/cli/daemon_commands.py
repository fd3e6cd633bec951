"""``graft daemon start|stop|status``: the workspace's warm service, as a command."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from engine.api_surface import find_root, GraftError, Refused, UsageError
from frontends.cli import daemon_client
from frontends.cli.output import answered, refused
from frontends.cli.parsing import ArgumentsRejected

Result = tuple[dict[str, object], str, str]


class DaemonNotStarted(Refused):
    code = "daemon_not_started"


class DaemonUnresponsive(Refused):
    """A daemon holds the workspace's socket and does not answer (stopped, hung)."""

    code = "daemon_unresponsive"


def main(argv: list[str]) -> int:
    """``graft daemon …`` in the thin client: the grammar, the control call and the printing,
    with no engine imported (``status`` answers in milliseconds)."""
    from frontends.cli.arguments import build_parser  # the grammar alone: light

    try:
        args = build_parser().parse_args(argv)
    except ArgumentsRejected:
        return -1  # the caller runs the full CLI, which says what is wrong as it always does
    root = Path(args.root) if args.root else find_root(Path.cwd())
    try:
        if not root.is_dir():
            raise UsageError(f"--root {root} is not a folder")
        payload, text, notes = run_daemon(root.resolve(), args)
    except GraftError as error:
        return refused(args.command, error, as_json=args.json)
    return answered(args.command, payload, text, notes, as_json=args.json)


def run_daemon(root: Path, args: argparse.Namespace) -> Result:
    try:
        return _run_daemon(root, args)
    except daemon_client.DaemonUnavailable as silent:  # only a daemon that does not answer gets here
        info = daemon_client.read_info(root)
        pid = info.get("pid") if info else None
        raise DaemonUnresponsive(f"{silent}: pid {pid}; resume it (kill -CONT {pid}) or end it (kill {pid}); commands run "
                                 "in-process meanwhile, after that wait") from None


def _run_daemon(root: Path, args: argparse.Namespace) -> Result:
    if args.action == "start":
        try:
            info = daemon_client.start(root)
        except daemon_client.DaemonUnavailable as error:
            raise DaemonNotStarted(f"{error}; commands run in-process meanwhile") from None
        return {"running": True, **info}, f"daemon running for {root} (pid {info.get('pid')})", ""
    if args.action == "stop":
        pid = daemon_client.stop(root)
        text = f"daemon stopped (pid {pid})" if pid is not None else f"no daemon was running for {root}"
        return {"running": False, "stopped": pid}, text, ""
    found = daemon_client.status(root)
    if found is None:
        return {"running": False}, f"no daemon is running for {root}", ""
    return {"running": True, **found}, _status_text(root, found), ""


def _status_text(root: Path, status: dict[str, object]) -> str:
    started = status.get("started")
    uptime = f"{time.time() - started:.0f} s" if isinstance(started, (int, float)) else "?"
    engines = status.get("engines")
    lines = [f"daemon running for {root}", f"  pid {status.get('pid')}, up {uptime}, {status.get('calls')} call(s) answered",
             f"  memory {status.get('rss_mb')} MB resident (language servers apart), idle stop after {status.get('idle_seconds')} s",
             f"  engines: {', '.join(str(e) for e in engines) if isinstance(engines, list) and engines else 'none yet'}"]
    housekeeping = status.get("housekeeping")
    if isinstance(housekeeping, dict) and housekeeping.get("calls_since"):
        # The memory above is then more than the daemon holds at rest.
        lines.insert(3, f"  its own work after {housekeeping['calls_since']} call(s) (garbage collection, words) is not done yet: "
                        "it waits until no call comes")
    elif isinstance(housekeeping, dict) and housekeeping.get("heap_held"):
        lines.insert(3, f"  the heap its calls freed goes back to the system after {housekeeping.get('give_back_seconds', '?')} s "
                        "without a call (the memory above is more than it holds at rest)")
    servers = status.get("servers")
    if isinstance(servers, list):
        lines += [f"  server {s}" for s in servers]
    return "\n".join(lines)
