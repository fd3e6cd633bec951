"""Where a Python project's imports resolve from, besides its root: the folder of a ``src/`` layout."""

from __future__ import annotations

from pathlib import Path


def source_roots(root: Path) -> list[Path]:
    """``src`` when it holds the project's importable code (a package or module) and is no
    package itself. Tools that are not told about it (a language server, jedi) resolve
    ``import pkg`` in the tests to typeshed's stubs of a same-named distribution, or to nothing."""
    src = root / "src"
    if not src.is_dir() or src.is_symlink() or (src / "__init__.py").exists():
        return []
    try:
        holds_code = any(child.suffix in (".py", ".pyi") or (child / "__init__.py").is_file() for child in src.iterdir())
    except OSError:
        return []
    return [src] if holds_code else []
