"""The build cache: content-keyed files under ``MCPGEN_CACHE_DIR`` (formatted pieces, models).

Entries are written atomically and never trusted to exist: a missing, unreadable or
unwritable cache only costs time. The folder is safe to delete at any time.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path | None:
    """Where results are kept (``MCPGEN_CACHE_DIR``; empty turns caching off)."""
    configured = os.environ.get("MCPGEN_CACHE_DIR")
    if configured == "":
        return None
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mcpgen" / "format"


def read(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        return path.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def write(path: Path | None, text: str) -> None:
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_suffix(f".{os.getpid()}.tmp")
        temp.write_text(text, "utf-8")
        os.replace(temp, path)
    except OSError:
        pass  # a cache that cannot be written only costs time
