"""``graft mcp`` starts the language servers of the workspace's main languages while the client
connects, lists the tools and thinks: an agent's first question then does not wait for a
server's start (gopls, basedpyright: about a second; tsserver loading a project: several). A
language is main when it has at least a fifth of the workspace's source files, so a Python
project with a few JavaScript assets starts basedpyright alone. Nothing is opened that a
request would not open (``LanguageServices.warm_up``); a server that fails to start is met,
with its reason, by the first request that needs it."""

from __future__ import annotations

import threading
from collections import Counter

from engine.api_surface import Engine, language_of

MAIN_SHARE = 0.2
"""The share of the workspace's source files a language needs for its server to start early."""


def main_languages(files: list[str]) -> dict[str, str]:
    """Each main language of ``files`` (a workspace's paths), with its first file."""
    languages = {path: language for path in files if (language := language_of(path)) is not None}
    counts = Counter(languages.values())
    total = sum(counts.values())
    first: dict[str, str] = {}
    for path, language in languages.items():
        if counts[language] >= MAIN_SHARE * total:
            first.setdefault(language, path)
    return first


def warm_up_in_background(engine: Engine, lock: threading.Lock) -> threading.Thread | None:
    """Start the main languages' servers without holding up the connection: the workspace is
    scanned on a thread, under the tools' lock (the engine serves one call at a time), and the
    servers are only asked to start. None when this engine asks no server."""
    services = engine.services
    if services is None or not engine.use_server:
        return None

    def run() -> None:
        with lock:
            files = engine.workspace.scan().files
        services.warm_up(sorted(main_languages(files).values()))

    thread = threading.Thread(target=run, name="graft-mcp-warm-up", daemon=True)
    thread.start()
    return thread
