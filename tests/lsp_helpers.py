"""Shared helpers for tests that drive language servers (fake and real)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Awaitable, Callable, NoReturn, TypeVar

from engine.errors import ServiceUnavailable
from engine.extract import FileSymbols, SymbolExtractor
from engine.ports import Answered
from engine.symbols import Source, Symbol
from engine.workspace import SourceFile
from lsp_pool.config import PoolConfig
from lsp_pool.features import LanguageApi
from lsp_pool.pool import Pool
from lsp_pool.registry import ReadinessPolicy, ServerSpec
from tests.conftest import REPO

FAKE_SERVER = REPO / "fixtures" / "servers" / "fake_server.py"
T = TypeVar("T")

JOB = "class Job:\n    def run(self):\n        pass\n"
"""The one file of the fake server's workspace (:func:`job_workspace`); it answers its symbols."""


def job_workspace(folder: Path) -> Path:
    """``folder`` as a workspace holding ``job.py`` (:data:`JOB`)."""
    (folder / "pyproject.toml").write_text("")
    (folder / "job.py").write_text(JOB)
    return folder


class OutlineOnlyServices:
    """A stand-in for the LanguageServices port that outlines from the tree (labelled lsp) and
    offers nothing else; a test subclasses it with the one answer it is about."""

    def document_symbols(self, source: SourceFile) -> FileSymbols:
        from dataclasses import replace

        return replace(SymbolExtractor().extract(source), source=Source.LSP)

    def warm_up(self, paths: list[str]) -> None:
        pass  # nothing to start

    def show_importers(self, files: list[str], importers: object, same_project: object = None) -> None:
        pass  # reads the disk

    def __getattr__(self, name: str) -> NoReturn:
        raise ServiceUnavailable(f"{name} is not offered")

    def close(self) -> None:
        pass


def names(answer: Answered[list[Symbol]]) -> list[str]:
    """The name paths of a document-symbols answer, in order."""
    return [symbol.name_path for top in answer.value for symbol in top.walk()]


def fake_spec(
    mode: str, *, once: Path | None = None, readiness: ReadinessPolicy | None = None, timeout: float = 3.0,
    needs_open: bool = False,
) -> ServerSpec:
    command = (sys.executable, str(FAKE_SERVER), "--mode", mode, *(("--once", str(once)) if once else ()))
    return ServerSpec(
        id="fake",
        languages=("python",),
        command=command,
        readiness=readiness or ReadinessPolicy(budget=5.0),
        install_hint="(test fixture)",
        request_timeout=timeout,
        needs_open=needs_open,
    )


def run_with_pool(
    spec: ServerSpec, root: Path, body: Callable[[LanguageApi, Pool], Awaitable[T]], *, idle_timeout: float = 300.0,
    document_idle_timeout: float = 60.0,
) -> T:
    """Run ``body`` against a pool holding only ``spec``, then close the pool and check nothing leaked."""

    async def main() -> T:
        config = PoolConfig(
            preference={"python": (spec.id,)}, idle_timeout=idle_timeout, document_idle_timeout=document_idle_timeout
        )
        pool = Pool(config, specs=(spec,))
        api = LanguageApi(pool, root)
        pids: list[int] = []
        try:
            result = await body(api, pool)
        finally:
            pids = [s.connection.pid for s in pool.running() if s.connection is not None and s.connection.pid]
            await pool.close()
        leftover = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        if leftover:
            raise AssertionError(f"tasks left behind: {leftover}")
        for pid in pids:
            if process_alive(pid):
                raise AssertionError(f"server process {pid} outlived the pool")
        return result

    return asyncio.run(main())


def process_alive(pid: int) -> bool:
    """True for a running process; a reaped or zombie process is not alive."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def children_of(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found
