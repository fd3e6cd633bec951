"""The real-project judges' verdict on the old name's places left after a rename (Python, Go,
TypeScript): compared with the case's expected homonyms, by place or by count."""

from __future__ import annotations

from collections import Counter


def leftover_places_verdict(old: str, left: list[str], case: dict[str, object], unit: str = "names") -> str:
    """'' when ``left`` (the places of ``old`` still in the code) is what the case expects: its
    ``remaining_at`` places (compared as a multiset) or its ``remaining`` count; else why not."""
    expected = case.get("remaining_at")
    if isinstance(expected, list):
        want = Counter(map(str, expected))
        extra, missing = sorted((Counter(left) - want).elements()), sorted((want - Counter(left)).elements())
        problems = ([f"'{old}' left at {', '.join(extra[:4])}"] if extra else []) + (
            [f"homonym '{old}' renamed at {', '.join(missing[:4])}"] if missing else [])
        return f"stale: {'; '.join(problems)}" if problems else ""
    remaining = int(str(case.get("remaining", 0)))
    if len(left) != remaining:
        return f"stale: {len(left)} '{old}' {unit} left (expected {remaining}): {', '.join(left[:4])}"
    return ""
