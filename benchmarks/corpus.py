"""The pinned large corpus shared by the benchmarks: Django's sdist, fetched from PyPI on first use."""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

DJANGO_VERSION = "5.1.4"
CACHE = Path(__file__).resolve().parent / ".corpus"


def django_source() -> Path:
    """The unpacked ``django/`` package folder of the pinned sdist."""
    target = CACHE / f"Django-{DJANGO_VERSION}"
    package = target / "django"
    if package.is_dir():
        return package
    CACHE.mkdir(parents=True, exist_ok=True)
    print(f"downloading Django {DJANGO_VERSION} sdist from PyPI (once) ...", file=sys.stderr)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
         f"django=={DJANGO_VERSION}", "--dest", str(CACHE)],
        check=True,
    )
    archive = next(CACHE.glob(f"[Dd]jango-{DJANGO_VERSION}.tar.gz"))
    with tarfile.open(archive) as tar:
        tar.extractall(CACHE, filter="data")
    unpacked = next(p for p in CACHE.iterdir() if p.is_dir() and p.name.lower() == f"django-{DJANGO_VERSION}")
    if unpacked != target:
        unpacked.rename(target)
    return package


def python_files(root: Path) -> list[Path]:
    return sorted(path for path in root.rglob("*.py") if path.is_file())
