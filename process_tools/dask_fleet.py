"""The Dask executor of a fleet run (engine.fleet through the FleetExecutor port).

Without a scheduler address it starts an embedded ``LocalCluster`` of processes (not threads:
a task starts language servers and holds the GIL while it parses), one worker per core unless
told otherwise, one thread each; with ``--scheduler tcp://host:port`` it submits to an existing
cluster (``dask scheduler`` / ``dask worker``). Tasks are submitted impure (a rerun really
reruns), and a task whose worker dies is given to another worker by Dask's own retry of lost
tasks; only a task that keeps losing its workers comes back as an error row.

Each result is let go as soon as the driver has it, so the scheduler forgets the task: a worker
that dies later holds nothing Dask would compute again. (A task that does run twice finds its
run's transaction in the repository's journal and reports it instead of applying it again.)

The run's lease is the driver's own client: a task asks the scheduler, just before it commits,
whether that client is still connected. A driver that dies closes its connection, the scheduler
drops the client, and its tasks still running roll back instead of committing.
"""

from __future__ import annotations

import hashlib
import logging
import os
from typing import Any, Callable, Iterator

from distributed import Client, LocalCluster, Lock, as_completed, get_client, get_worker

from engine.fleet import kept_scratch
from engine.ports import FleetTask, RunAlive

_WAIT_LIMIT = 1800
"""Seconds a task waits for another task on the same repository (a duplicate, or the task of a
driver that has gone, whose verify may run for minutes) before it runs anyway."""

_log = logging.getLogger(__name__)


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
        for future in as_completed(list(futures)):
            repo = futures.pop(future)
            try:
                row = future.result()
            except Exception as error:  # noqa: BLE001 - KilledWorker and the like: this repository's row, not the run's end
                row = {"repo": repo, "status": "error", "worker": "", "reason": f"{type(error).__name__}: {error}"}
            future.release()  # the driver has the row: nothing on a worker is kept, or computed again, for it
            del future
            yield repo, row

    def run_alive(self) -> RunAlive:
        return DriverConnected(self._client.id)

    def close(self) -> None:
        try:  # the servers each worker kept between its repositories stop with the run
            self._client.run(kept_scratch.release_all)
        except Exception as error:  # noqa: BLE001 - a worker gone has nothing left to stop; the close goes on
            _log.warning("could not stop the workers' kept language servers: %s: %s", type(error).__name__, error)
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()


class DriverConnected:
    """The lease: whether the driver's client is still connected to the scheduler, asked of the
    scheduler from the task's worker. A scheduler that cannot be asked counts as a driver gone:
    the task rolls back rather than commit for a run nobody records."""

    def __init__(self, client_id: str) -> None:
        self.client_id = client_id

    def __call__(self) -> bool:
        try:
            return bool(get_client().run_on_scheduler(_connected_check(), self.client_id))
        except Exception as error:  # noqa: BLE001 - any failure to ask means the lease cannot be confirmed
            _log.warning("the fleet run's lease could not be confirmed with the scheduler: %s: %s", type(error).__name__, error)
            return False


def _connected_check() -> Callable[..., bool]:
    # Made here, so that it is pickled by value: the scheduler runs it without importing codegraft.
    def connected(client_id: str, dask_scheduler: Any = None) -> bool:
        return client_id in dask_scheduler.clients

    return connected


def _on_worker(task: FleetTask, repo: str) -> dict[str, object]:
    # One task per repository at a time, across runs and drivers: a duplicate Dask started, or a
    # resumed run's task while the task of a driver that has gone still verifies, waits here for
    # the other to finish (or its worker's lease to lapse), then finds its outcome in the journal.
    # Waiting too long, it runs anyway, and finding the other still writing, says so in its row.
    lock = Lock(f"graft-fleet:{hashlib.sha256(repo.encode()).hexdigest()}")
    held = lock.acquire(timeout=_WAIT_LIMIT)
    try:
        row = task(repo)
    finally:
        if held:
            lock.release()
    row["worker"] = get_worker().address
    return row


def create(*, scheduler: str | None, workers: int | None) -> DaskExecutor:
    return DaskExecutor(scheduler=scheduler, workers=workers)
