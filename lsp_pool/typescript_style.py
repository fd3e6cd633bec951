"""The project's style, told to typescript-language-server (engine.refactor.typescript.style says why).

- At start, ``preferences.importModuleSpecifierPreference``: "relative" unless the project's own
  imports mostly use its path aliases (the server reads preferences only from initializationOptions).
- For each document, the ``formattingOptions`` section it asks for through
  ``workspace/configuration``: the document's own indentation (``tabSize``, ``insertSpaces``), which
  tsserver formats moved code and new imports with (4 spaces when not told).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.refactor.typescript.style import import_specifier_preference, indentation
from lsp_pool.convert import uri_to_path

FORMATTING_SECTION = "formattingOptions"


def initialization_options(root: Path) -> dict[str, Any]:
    return {"preferences": {"importModuleSpecifierPreference": import_specifier_preference(root)}}


def formatting_options(root: Path, uri: str) -> dict[str, Any] | None:
    """The document's indentation as LSP formatting options, or None (the server's defaults)."""
    try:
        path = uri_to_path(uri)
        relative = path.resolve().relative_to(root.resolve()).as_posix()
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    found = indentation(root, relative, text)
    if found is None:
        return None
    return {"tabSize": found.size, "insertSpaces": not found.tabs}
