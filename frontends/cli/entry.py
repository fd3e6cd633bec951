"""``graft``, the thin client: the installed entry point.

It imports nothing heavy (no LibCST, networkx, pygls, tree-sitter: the standard library, the
argument grammar and the daemon protocol), then either

- answers ``--help`` from the grammar alone;
- hands the call to the workspace's warm daemon (frontends.cli.daemon_server), starting one
  for a command that may use a language server; the daemon's output, exit status, colours
  and progress are those of the in-process run, streamed here;
- or runs it in this process (frontends.cli.main): with ``--no-daemon`` or ``GRAFT_DAEMON=0``,
  for ``graft mcp``/``lsp``/``daemon``, and whenever no daemon can answer (none runs, it does
  not answer within daemon_client.ANSWER_SECONDS, it runs other code). Each of those fallbacks
  that was not asked for is said on stderr, never silent.

A daemon that was told to run the call and gave no exit status (killed, or silent past
daemon_client.SILENCE_SECONDS) may have written: a call that writes is then settled from the
journal by its request id (frontends.cli.lost_call: the committed outcome reported, run here
only when nothing of it committed and nothing can, else refused as ``outcome_unknown``); a
read runs here again.
"""

from __future__ import annotations

import os
import sys

from engine.api_surface import find_root_folder
from frontends.cli import daemon_client
from frontends.cli.startup import may_use_server, scan_call, start_early

#: Commands that always run here: the long-lived front ends, the daemon's own control, and the doctor
#: (which servers this machine has now: a daemon's pool keeps what it found when it started).
_HERE = frozenset({"mcp", "lsp", "daemon", "doctor"})


def run() -> int:
    """The installed ``graft`` script: :func:`main`, then, for a call the daemon answered, the
    process ends without the interpreter's teardown (paid on every call otherwise): nothing of the
    engine ran here, so nothing is left to close but the two streams, flushed first."""
    code = main()
    if not _answered_by_daemon:
        return code
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        code = 141
    os._exit(code)


_answered_by_daemon = False


def main() -> int:
    try:
        return _main(sys.argv[1:])
    except BrokenPipeError:
        # The reader went away (`graft … | head`): not a failure to report with a traceback. Point
        # stdout at /dev/null so that the interpreter's own flush at exit does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # what a program killed by SIGPIPE reports to the shell


def _main(argv: list[str]) -> int:
    command, options = scan_call(argv)
    if _asks_for_help(argv) and command not in ("mcp", "lsp"):
        _print_help(argv)  # exits when the grammar printed the help; returns when it refused the line
    if command == "daemon" and "--no-daemon" not in argv:
        from frontends.cli import daemon_commands

        code = daemon_commands.main(argv)
        if code >= 0:
            return code
    fleet = command == "batch" and any(word == "--repos" or word.startswith("--repos=") for word in argv)
    # --trust runs here too: the daemon's servers are shared by every call, and follow the setting alone.
    if (command is None or command in _HERE or fleet or "--no-daemon" in argv or "--trust" in argv
            or os.environ.get("GRAFT_DAEMON") == "0"):
        return _in_process(argv)
    root = options["--root"] if "--root" in options else find_root_folder(os.getcwd())
    if not os.path.isdir(root):
        return _in_process(argv)  # which says what is wrong with --root, as it always does
    return _through_daemon(os.path.realpath(root), argv, may_use_server(command, options))


def _through_daemon(root: str, argv: list[str], may_start: bool) -> int:
    global _answered_by_daemon  # read by run(): an answered call ends without the teardown
    call = daemon_client.Call(argv, os.getcwd(), dict(os.environ), sys.stdout.isatty(), sys.stderr.isatty(), _stdin_for(argv))
    for attempt in range(2):
        try:
            code = daemon_client.run(root, call, sys.stdout, sys.stderr)
            _answered_by_daemon = True
            return code
        except daemon_client.DaemonLost as lost:
            from frontends.cli.lost_call import settle  # the journal's reader: on this rare path only

            return settle(root, argv, lost, lambda: _in_process(argv, stdin=call.stdin, request=call.request))
        except daemon_client.DaemonUnavailable as unavailable:
            stale = unavailable.stale
            if unavailable.unresponsive:  # another daemon would find the workspace taken: not started
                from frontends.cli.lost_call import run_without_daemon

                return run_without_daemon(root, argv, unavailable, lambda: _in_process(argv, stdin=call.stdin, request=call.request))
            if not (may_start or stale) or attempt == 1:
                if not unavailable.absent or attempt == 1:  # no daemon at all is the usual case, not worth a note
                    print(f"graft: the daemon could not answer ({unavailable}); running in this process", file=sys.stderr)
                return _in_process(argv, stdin=call.stdin)
            try:
                if stale:
                    daemon_client.stop(root)
                info = daemon_client.start(root)
                if info.get("started_now"):
                    print(daemon_client.started_note(info), file=sys.stderr)
            except daemon_client.DaemonUnavailable as failed:
                print(f"graft: could not start the workspace's daemon ({failed}); running in this process", file=sys.stderr)
                return _in_process(argv, stdin=call.stdin)
    return _in_process(argv, stdin=call.stdin)


def _in_process(argv: list[str], stdin: str | None = None, request: str | None = None) -> int:
    """The call run here; ``request``: its id, when it was first handed to a daemon (the
    transactions it writes here carry the same one)."""
    if stdin is not None:  # already read for the daemon: the command reads it again from here
        import io
        sys.stdin = io.StringIO(stdin)
    _files, discard_early_servers = start_early(argv)  # before the heavy import: the servers boot meanwhile
    from frontends.cli.main import main as run_here  # the heavy import, paid only on this path
    try:
        return run_here(argv, request=request)
    finally:
        discard_early_servers()


def _asks_for_help(argv: list[str]) -> bool:
    words = argv[: argv.index("--")] if "--" in argv else argv
    return "-h" in words or "--help" in words


def _print_help(argv: list[str]) -> None:
    from frontends.cli.arguments import build_parser  # the grammar alone: light
    from frontends.cli.parsing import ArgumentsRejected
    try:
        build_parser().parse_args(argv)
    except ArgumentsRejected:
        return  # the in-process run says what is wrong with the line, as it always does


def _stdin_for(argv: list[str]) -> str | None:
    """What a ``-`` argument (a body or a plan from stdin) will read, sent along with the call."""
    if "-" in argv and not sys.stdin.isatty():
        return sys.stdin.read()
    return None


if __name__ == "__main__":
    sys.exit(main())
