"""black, in-process, with a pinned mode: check mode compares formatted text.

Formatting dominates the build time of big projects (black runs at roughly a thousand lines
a second), so results are cached by content: a file whose unformatted text was formatted
before (by any build on this machine, same black version and mode) is not formatted again.
Big cold builds format their files in parallel, one process per core.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor
from importlib import metadata
from pathlib import Path

import black
from black.mode import Mode, TargetVersion
from black.parsing import InvalidInput

MODE = Mode(
    target_versions={TargetVersion.PY311},
    line_length=100,
    string_normalization=True,
    magic_trailing_comma=True,
)
BLACK_VERSION = metadata.version("black")
PARALLEL_THRESHOLD = 20_000  # lines still to format before a process pool pays off


class FormatError(Exception):
    """Generated code that black cannot parse: a bug in mcpgen, reported with the file."""


def format_python(source: str, path: str) -> str:
    try:
        return black.format_str(source, mode=MODE)
    except InvalidInput as exc:
        raise FormatError(f"{path}: generated code does not parse: {exc}") from None


def cache_dir() -> Path | None:
    """Where formatted results are kept (``MCPGEN_CACHE_DIR``; empty turns caching off)."""
    configured = os.environ.get("MCPGEN_CACHE_DIR")
    if configured == "":
        return None
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mcpgen" / "format"


def _key(source: str) -> str:
    salt = f"{BLACK_VERSION}|{MODE!r}|"
    return hashlib.sha256((salt + source).encode("utf-8", "surrogatepass")).hexdigest()


def _format_one(item: tuple[str, str]) -> tuple[str, str]:
    path, source = item
    return path, format_python(source, path)


def format_many(
    sources: Mapping[str, str],
    jobs: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, str]:
    """Format every file of ``sources`` (path -> source); cached, and parallel when big."""
    store = cache_dir()
    done: dict[str, str] = {}
    todo: dict[str, str] = {}
    for path, source in sources.items():
        cached = _load(store, source)
        if cached is None:
            todo[path] = source
        else:
            done[path] = cached
    lines = sum(source.count("\n") for source in todo.values())
    workers = min(jobs or os.cpu_count() or 1, len(todo))
    if workers > 1 and lines >= PARALLEL_THRESHOLD:
        # Biggest first, so the longest file does not start last.
        items = sorted(todo.items(), key=lambda item: -len(item[1]))
        results = {}
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for path, formatted in pool.map(_format_one, items):
                results[path] = formatted
                if progress is not None:
                    progress(1)
    else:
        results = {}
        for item in sorted(todo.items()):
            path, formatted = _format_one(item)
            results[path] = formatted
            if progress is not None:
                progress(1)
    if progress is not None:
        progress(len(done))  # cached files count as done at once
    for path, formatted in results.items():
        _save(store, todo[path], formatted)
    done.update(results)
    return done


def _load(store: Path | None, source: str) -> str | None:
    if store is None:
        return None
    try:
        return (store / _key(source)).read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _save(store: Path | None, source: str, formatted: str) -> None:
    if store is None:
        return
    try:
        store.mkdir(parents=True, exist_ok=True)
        target = store / _key(source)
        temp = target.with_suffix(f".{os.getpid()}.tmp")
        temp.write_text(formatted, "utf-8")
        os.replace(temp, target)
    except OSError:
        pass  # a cache that cannot be written only costs time
