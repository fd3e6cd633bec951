"""Outside programs for the apply layer (git, the user's verify command): the engine's Tools port."""

from __future__ import annotations

import subprocess

from engine.workspace import Workspace

_OUTPUT_TAIL = 4000


class ProcessTools:
    def __init__(self, workspace: Workspace) -> None:
        self.root = workspace.root

    def dirty_files(self, paths: list[str]) -> set[str]:
        if not paths:
            return set()
        try:
            result = subprocess.run(
                ["git", "status", "--porcelain", "-z", "--", *paths],
                cwd=self.root, capture_output=True, check=False, timeout=30,
            )
        except (OSError, subprocess.TimeoutExpired):
            return set()  # no git: nothing to guard
        if result.returncode != 0:
            return set()  # not a repository
        dirty = set()
        for record in result.stdout.decode("utf-8", errors="replace").split("\0"):
            if len(record) > 3:
                dirty.add(record[3:])
        return dirty & set(paths)

    def run(self, command: str) -> tuple[int, str]:
        result = subprocess.run(command, shell=True, cwd=self.root, capture_output=True, check=False)  # noqa: S602 - the user's own command
        output = (result.stdout + result.stderr).decode("utf-8", errors="replace")
        return result.returncode, output[-_OUTPUT_TAIL:]


def create(workspace: Workspace) -> ProcessTools:
    """Entry point ``codegraft.tools``."""
    return ProcessTools(workspace)
