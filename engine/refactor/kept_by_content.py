"""What a pass works out from one file's content alone, kept by the file's path and the hash of its
content, so a long-lived engine (the CLI's daemon keeps one) works it out again only once the file
changed. Nothing kept here may depend on the request: the same content gives the same value for
every rename, so a kept value is never an answer kept for a repeated request.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

Value = TypeVar("Value")


class KeptByContent(Generic[Value]):
    """Values of recently seen contents, the least recently used dropped first past ``limit``."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._values: OrderedDict[tuple[str, str], Value] = OrderedDict()
        self._lock = threading.Lock()  # a daemon may plan for several clients at once

    def get(self, key: tuple[str, str], build: Callable[[], Value]) -> Value:
        """The value kept for ``key`` ((path or language, sha256)), else ``build()``'s, then kept."""
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return self._values[key]
        built = build()  # outside the lock: another file's value need not wait for this one
        with self._lock:
            self._values[key] = built
            self._values.move_to_end(key)
            while len(self._values) > self._limit:
                self._values.popitem(last=False)
        return built
