"""black, in-process, with a pinned mode: check mode compares formatted text.

Formatting dominates the build time of big projects (black runs at a few thousand lines a
second here, slower on long lines), so:

* files over ``CHUNK_LINES`` lines are cut into pieces (``chunking``: top-level statements,
  members of big classes) that black formats one by one, with the same result;
* results are cached by content (same black version and mode), per file and, for big
  files, per piece in one "pack" per file: a rebuild after one operation changed formats
  the pieces that changed, not whole files;
* pieces still to format go to the build's process pool (``workers``), one process per
  core, queued behind the model generator's runs.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Collection, Mapping
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcpgen.format import cache
from mcpgen.format.chunking import WRAPPER, Piece, join, resplit, split
from mcpgen.format.pool import Workers
from mcpgen.format.preformatted import looks_formatted

if TYPE_CHECKING:
    from black.mode import Mode

# black's settings for generated code. black itself is imported only when something needs
# formatting: a rebuild that finds everything in the cache never loads it.
MODE_SETTINGS: dict[str, Any] = {
    "target_versions": ["PY311"],
    "line_length": 100,
    "string_normalization": True,
    "magic_trailing_comma": True,
}
BLACK_VERSION = metadata.version("black")
_SALT = f"{BLACK_VERSION}|{json.dumps(MODE_SETTINGS, sort_keys=True)}|"
PARALLEL_THRESHOLD = 2_000  # lines still to format before a process pool pays off
CHUNK_LINES = 1_000  # files this long are formatted piece by piece


@functools.cache
def mode() -> Mode:
    from black.mode import Mode, TargetVersion

    settings = dict(MODE_SETTINGS)
    targets = {TargetVersion[name] for name in settings.pop("target_versions")}
    return Mode(target_versions=targets, **settings)


class FormatError(Exception):
    """Generated code that black cannot parse: a bug in mcpgen, reported with the file."""


def format_python(source: str, path: str) -> str:
    from black.parsing import InvalidInput

    try:
        return _format_unit(source)
    except InvalidInput as exc:
        raise FormatError(f"{path}: generated code does not parse: {exc}") from None


def _key(source: str) -> str:
    return hashlib.sha256((_SALT + source).encode("utf-8", "surrogatepass")).hexdigest()


def _format_unit(text: str) -> str:
    import black

    return black.format_str(text, mode=mode())


def warm() -> None:
    """Load black (in a pool worker, before its first batch)."""
    _format_unit("x = 1\n")


def _format_batch(batch: list[tuple[str, str]]) -> list[tuple[str, str | None]]:
    """Format (label, text) units; a unit black cannot parse comes back as None."""
    from black.parsing import InvalidInput

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
    piece formatted once and glued back; cached whole files are not cut at all. Formatted
    pieces are kept per file (one "pack" per path and ``scope``, keyed by piece content),
    so a rebuild reads one cache file per big file, not thousands. ``units`` is how many
    pieces need black, for a progress bar. ``laid_out`` names files rendered by templates
    that lay code out the way black does: their pieces that ``preformatted`` recognises as
    black's output skip black.

    ``start`` hands the work to a process pool (``workers``) when there is enough of it;
    ``run`` waits for it (or formats here) and returns the formatted files."""

    def __init__(
        self,
        sources: Mapping[str, str],
        workers: Workers | None = None,
        scope: str = "",
        laid_out: Collection[str] = (),
    ) -> None:
        self.store = cache.cache_dir()
        self.workers = workers
        self.scope = scope
        self.done: dict[str, str] = {}
        self.files: dict[str, _File] = {}
        self.cached_units: dict[str, str] = {}
        self.todo: dict[str, str] = {}  # unit key -> text still to format
        self.futures: list[tuple[Future[list[tuple[str, str | None]]], list[tuple[str, str]]]] = []
        for path, source in sources.items():
            whole = _load(self.store, source)
            if whole is not None:
                self.done[path] = whole
                continue
            # laid-out files are cut even when short: their recognised pieces skip black
            cut = source.count("\n") >= CHUNK_LINES or path in laid_out
            pack = self._pack(path) if cut else {}
            pieces = _cut(source, pack.get(LAYOUT)) if cut else None
            units = [source] if pieces is None else [p.text for p in pieces]
            self.files[path] = _File(source, pieces, units)
            for text in units:
                key = _key(text)
                if key in self.cached_units or key in self.todo:
                    continue
                cached = pack.get(key)
                if isinstance(cached, str):
                    self.cached_units[key] = cached
                elif pieces is not None and path in laid_out and looks_formatted(text):
                    self.cached_units[key] = text  # black would leave it as it is
                else:
                    self.todo[key] = text
        self.units = len(self.todo)

    def start(self) -> FormatJob:
        """Send the work to the pool when it is big enough to pay for one."""
        items = self._biggest_first()
        lines = sum(text.count("\n") for _, text in items)
        workers = self.workers
        if workers is None or not workers.parallel or lines < PARALLEL_THRESHOLD:
            return self
        workers.warm(warm)
        for batch in _batches(items, max(workers.jobs * 8, len(items) // 64)):
            self.futures.append((workers.submit(_format_batch, batch), batch))
        return self

    def run(self, progress: Callable[[int], None] | None = None) -> dict[str, str]:
        results = dict(self.cached_units)
        failed: set[str] = set()
        items = self._biggest_first()
        pending: list[tuple[Future[list[tuple[str, str | None]]] | None, list[tuple[str, str]]]]
        pending = [*self.futures] or [(None, batch) for batch in _batches(items, 8)]
        for future, batch in pending:
            if future is None:
                done = _format_batch(batch)
            else:
                try:
                    done = future.result()
                except BrokenProcessPool:  # a worker died (out of memory?): format here
                    done = _format_batch(batch)
            for key, formatted in done:
                if formatted is None:
                    failed.add(key)
                else:
                    results[key] = formatted
            if progress is not None:
                progress(len(done))
        for path, file in self.files.items():
            if any(_key(text) in failed for text in file.units):
                # report with the whole file's error (black's line numbers)
                self.done[path] = format_python(file.source, path)
                continue
            if file.pieces is None:
                self.done[path] = results[_key(file.source)]
            else:
                texts = [results[_key(t)] for t in file.units]
                self.done[path] = join(file.pieces, texts)
                pack: dict[str, Any] = dict(zip(map(_key, file.units), texts, strict=True))
                pack[LAYOUT] = _layout(file.source, file.pieces)
                self._save_pack(path, pack)
            _save(self.store, file.source, self.done[path])
        return self.done

    def _biggest_first(self) -> list[tuple[str, str]]:
        return sorted(self.todo.items(), key=lambda item: -len(item[1]))

    def _pack_file(self, path: str) -> Path | None:
        if self.store is None:
            return None
        name = hashlib.sha256(f"{_SALT}{self.scope}|{path}".encode()).hexdigest()
        return self.store / f"pieces-{name}.json"

    def _pack(self, path: str) -> dict[str, Any]:
        return cache.read_pack(self._pack_file(path))

    def _save_pack(self, path: str, pack: dict[str, Any]) -> None:
        cache.write(self._pack_file(path), json.dumps(pack, ensure_ascii=False))


LAYOUT = "layout"  # in a file's pack: its last source and how it was cut (``_layout``)


def _cut(source: str, layout: Any) -> list[Piece] | None:
    """The pieces of ``source``: from how its last version was cut, when only members of
    one class changed (``chunking.resplit``), else by parsing it whole."""
    last = _from_layout(layout)
    return (last is not None and resplit(source, *last)) or split(source)


def _layout(source: str, pieces: list[Piece]) -> dict[str, Any]:
    rows = [[p.blank_before, p.first, p.after, p.member, p.start, p.end] for p in pieces]
    return {"source": source, "pieces": rows}


def _from_layout(layout: Any) -> tuple[str, list[Piece]] | None:
    """The source and pieces ``_layout`` kept; None unless they tile the source."""
    try:
        source, rows = layout["source"], layout["pieces"]
        pieces, at = [], 0
        for blank, first, after, member, start, end in rows:
            if not (isinstance(source, str) and at <= start <= end <= len(source)):
                return None
            text = (WRAPPER if member else "") + source[start:end]
            pieces.append(Piece(text, int(blank), str(first), str(after), bool(member), start, end))
            at = end
    except (KeyError, TypeError, ValueError):
        return None
    return source, pieces


def format_file(source: str, path: str, scope: str = "", laid_out: bool = False) -> str:
    """One file, formatted here (piece by piece when big, with the cache); ``laid_out``:
    see ``FormatJob``."""
    return FormatJob({path: source}, scope=scope, laid_out={path} if laid_out else ()).run()[path]


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
