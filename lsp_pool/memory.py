"""A server's resident memory: its process and every process below it (node servers spawn helpers)."""

from __future__ import annotations

import os
from pathlib import Path


def resident_memory(pid: int) -> int | None:
    """Bytes resident in ``pid`` and all its descendants, or None when none of them can be read."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry))
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            continue
        stack.extend(children.get(current, []))
    return total or None
