"""black, in-process, with a pinned mode: check mode compares formatted text.

Formatting dominates the build time of big projects (black runs at a few thousand lines a
second here, slower on long lines), so:

* files over ``CHUNK_LINES`` lines are cut into pieces (``chunking``: top-level statements,
  members of big classes) that black formats one by one, with the same result;
* results are cached by content, per file and per piece (same black version and mode): a
  rebuild after one operation changed formats the pieces that changed, not whole files;
* pieces still to format are spread over a process pool, one process per core.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import black
from black.mode import Mode, TargetVersion
from black.parsing import InvalidInput

from . import cache
from .chunking import Piece, join, split

MODE = Mode(
    target_versions={TargetVersion.PY311},
    line_length=100,
    string_normalization=True,
    magic_trailing_comma=True,
)
BLACK_VERSION = metadata.version("black")
PARALLEL_THRESHOLD = 2_000  # lines still to format before a process pool pays off
CHUNK_LINES = 1_000  # files this long are formatted piece by piece


class FormatError(Exception):
    """Generated code that black cannot parse: a bug in mcpgen, reported with the file."""


def format_python(source: str, path: str) -> str:
    try:
        return black.format_str(source, mode=MODE)
    except InvalidInput as exc:
        raise FormatError(f"{path}: generated code does not parse: {exc}") from None


def _key(source: str) -> str:
    salt = f"{BLACK_VERSION}|{MODE!r}|"
    return hashlib.sha256((salt + source).encode("utf-8", "surrogatepass")).hexdigest()


def _format_unit(text: str) -> str:
    return black.format_str(text, mode=MODE)


def _format_batch(batch: list[tuple[str, str]]) -> list[tuple[str, str | None]]:
    """Format (label, text) units; a unit black cannot parse comes back as None."""
    out: list[tuple[str, str | None]] = []
    for label, text in batch:
        try:
            out.append((label, _format_unit(text)))
        except InvalidInput:
            out.append((label, None))
    return out


@dataclass
class _File:
    source: str
    pieces: list[Piece] | None  # None: formatted as one unit
    units: list[str]  # texts to format, in order


class FormatJob:
    """Formatting of a set of files: big files are cut into pieces (``chunking``), each
    piece formatted once (cached by content) and glued back; cached whole files are not
    cut at all. ``units`` is how many pieces need black, for a progress bar."""

    def __init__(self, sources: Mapping[str, str], jobs: int | None = None) -> None:
        self.store = cache.cache_dir()
        self.jobs = jobs
        self.done: dict[str, str] = {}
        self.files: dict[str, _File] = {}
        self.cached_units: dict[str, str] = {}
        self.todo: dict[str, str] = {}  # unit key -> text still to format
        for path, source in sources.items():
            whole = _load(self.store, source)
            if whole is not None:
                self.done[path] = whole
                continue
            pieces = split(source) if source.count("\n") >= CHUNK_LINES else None
            units = [source] if pieces is None else [p.text for p in pieces]
            self.files[path] = _File(source, pieces, units)
            for text in units:
                key = _key(text)
                if key in self.cached_units or key in self.todo:
                    continue
                cached = _load(self.store, text) if pieces is not None else None
                if cached is None:
                    self.todo[key] = text
                else:
                    self.cached_units[key] = cached
        self.units = len(self.todo)

    def run(self, progress: Callable[[int], None] | None = None) -> dict[str, str]:
        results = dict(self.cached_units)
        failed: set[str] = set()
        items = sorted(self.todo.items(), key=lambda item: -len(item[1]))  # biggest first
        lines = sum(text.count("\n") for _, text in items)
        workers = min(self.jobs or os.cpu_count() or 1, len(items))
        batches = _batches(items, max(workers * 8, len(items) // 64))
        if workers > 1 and lines >= PARALLEL_THRESHOLD:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                for done in pool.map(_format_batch, batches):
                    self._collect(done, results, failed, progress)
        else:
            for batch in batches:
                self._collect(_format_batch(batch), results, failed, progress)
        for path, file in self.files.items():
            bad = [text for text in file.units if _key(text) in failed]
            if bad:
                # report with the whole file's error (black's line numbers)
                self.done[path] = format_python(file.source, path)
            elif file.pieces is None:
                self.done[path] = results[_key(file.source)]
            else:
                self.done[path] = join(file.pieces, [results[_key(t)] for t in file.units])
                _save(self.store, file.source, self.done[path])
        return self.done

    def _collect(
        self,
        batch: list[tuple[str, str | None]],
        results: dict[str, str],
        failed: set[str],
        progress: Callable[[int], None] | None,
    ) -> None:
        for key, formatted in batch:
            if formatted is None:
                failed.add(key)
                continue
            results[key] = formatted
            _save(self.store, self.todo[key], formatted)
        if progress is not None:
            progress(len(batch))


def _batches(items: list[tuple[str, str]], count: int) -> list[list[tuple[str, str]]]:
    """``count`` batches of about equal size (round robin keeps big units spread)."""
    batches: list[list[tuple[str, str]]] = [[] for _ in range(max(1, min(count, len(items))))]
    for index, item in enumerate(items):
        batches[index % len(batches)].append(item)
    return [b for b in batches if b]


def _load(store: Path | None, source: str) -> str | None:
    return cache.read(store / _key(source) if store is not None else None)


def _save(store: Path | None, source: str, formatted: str) -> None:
    cache.write(store / _key(source) if store is not None else None, formatted)
