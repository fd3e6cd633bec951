"""The Dask executor of a fleet run (engine.fleet through the FleetExecutor port).

Without a scheduler address it starts an embedded ``LocalCluster`` of processes (not threads:
a task starts language servers and holds the GIL while it parses), one worker per core unless
told otherwise, one thread each; with ``--scheduler tcp://host:port`` it submits to an existing
cluster (``dask scheduler`` / ``dask worker``). Tasks are submitted impure (a rerun really
reruns), and a task whose worker dies is given to another worker by Dask's own retry of lost
tasks; only a task that keeps losing its workers comes back as an error row.
"""

from __future__ import annotations

import logging
import os
from typing import Iterator

from distributed import Client, LocalCluster, as_completed, get_worker

from engine.ports import FleetTask


class DaskExecutor:
    def __init__(self, *, scheduler: str | None, workers: int | None) -> None:
        self._cluster: LocalCluster | None = None
        if scheduler is not None:
            self._client = Client(scheduler, timeout="30s")
        else:
            self._cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                                         dashboard_address=None, silence_logs=logging.ERROR)
            self._client = Client(self._cluster)
        self.workers = max(1, len(self._client.scheduler_info().get("workers", {})))

    def map(self, task: FleetTask, repos: list[str]) -> Iterator[tuple[str, dict[str, object]]]:
        futures = {self._client.submit(_on_worker, task, repo, pure=False): repo for repo in repos}
        for future in as_completed(futures):
            repo = futures[future]
            try:
                yield repo, future.result()
            except Exception as error:  # noqa: BLE001 - KilledWorker and the like: this repository's row, not the run's end
                yield repo, {"repo": repo, "status": "error", "worker": "", "reason": f"{type(error).__name__}: {error}"}

    def close(self) -> None:
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()


def _on_worker(task: FleetTask, repo: str) -> dict[str, object]:
    row = task(repo)
    row["worker"] = get_worker().address
    return row


def create(*, scheduler: str | None, workers: int | None) -> DaskExecutor:
    return DaskExecutor(scheduler=scheduler, workers=workers)
