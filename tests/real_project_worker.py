"""One real-project case judged in a process of its own (tests/test_real_projects.py runs two at a
time: most of a case's time is the project's own suite, another process, so the two cores are
both used, where one case after another left one idle).

A process per worker, not a thread: the judge keeps the project's pristine texts in a module
global (``bench_real_projects.PRISTINE``), and two engines in one interpreter would share its
caches and its lock."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING


def judge_case(project: dict[str, object], case: dict[str, object], source: Path, count: int,
               before: dict[str, str], texts: dict[str, str], root: Path) -> str:
    """Why codegraft failed the case ("" when it passed), on a fresh copy of the project at ``root``."""
    if TYPE_CHECKING:  # mypy knows benchmarks/ as the package it is
        from benchmarks import bench_real_projects as bench
    else:
        import bench_real_projects as bench  # the parent put benchmarks/ on sys.path, which spawn passes on

    shutil.copytree(source, root)
    graft, error = None, None
    try:
        graft = bench.codegraft(root, case, server=False)
    except Exception as raised:  # noqa: BLE001 - a refusal may be the expected outcome; the verdict decides
        error = raised
    bench.PRISTINE.clear()
    bench.PRISTINE.update(texts)
    why, _note = bench.codegraft_verdict(root, before, project, case, count, False, graft, error)
    return why
