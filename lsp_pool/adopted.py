"""A process started outside the event loop (:mod:`lsp_pool.early`), given the face of
``asyncio.subprocess.Process`` that :class:`lsp_pool.connection.Connection` uses.

asyncio cannot take over a ``subprocess.Popen``: its pipes are attached to the loop here, and its
exit is awaited by a thread of its own (asyncio's child watcher waits only for the processes
asyncio started).
"""

from __future__ import annotations

import asyncio
import functools
import subprocess
import threading


class AdoptedProcess:
    def __init__(self, popen: subprocess.Popen[bytes], stdin: asyncio.StreamWriter, stdout: asyncio.StreamReader,
                 stderr: asyncio.StreamReader, exited: asyncio.Future[int]) -> None:
        self._popen = popen
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self._exited = exited

    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def returncode(self) -> int | None:
        return self._exited.result() if self._exited.done() else None

    async def wait(self) -> int:
        return await asyncio.shield(self._exited)


async def adopt(popen: subprocess.Popen[bytes], limit: int) -> AdoptedProcess:
    """``popen``, which must have been started with three pipes, on the running loop."""
    if popen.stdin is None or popen.stdout is None or popen.stderr is None:
        raise ValueError(f"process {popen.pid} was not started with three pipes")
    loop = asyncio.get_running_loop()
    readers = []
    for pipe in (popen.stdout, popen.stderr):
        reader = asyncio.StreamReader(limit=limit, loop=loop)
        await loop.connect_read_pipe(functools.partial(asyncio.StreamReaderProtocol, reader), pipe)
        readers.append(reader)
    transport, protocol = await loop.connect_write_pipe(lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()),
                                                        popen.stdin)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    exited: asyncio.Future[int] = loop.create_future()

    def settle(code: int) -> None:
        if not exited.done():
            exited.set_result(code)

    def wait_for_exit() -> None:
        code = popen.wait()
        try:
            loop.call_soon_threadsafe(settle, code)
        except RuntimeError:
            pass  # the loop is closed: nobody waits any more

    threading.Thread(target=wait_for_exit, name=f"graft-wait-{popen.pid}", daemon=True).start()
    return AdoptedProcess(popen, writer, readers[0], readers[1], exited)
