"""The build cache: content-keyed files under ``MCPGEN_CACHE_DIR`` (model modules,
advertised tool definitions, compiled templates, the runtime's imports, the search
index's terms, the tests' examples, the OpenAPI import: ``openapi.kept``), written
atomically and never trusted to exist: a missing or broken cache only costs time.

It is kept under ``MCPGEN_CACHE_SIZE`` megabytes (``prune``): every build with changes adds
entries, so a CI job rebuilding a big API on every commit would otherwise grow it forever.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2

Json = Any
# model modules (``render.model_parts``), formatted
MODELS_PREFIX = "models-v7-"
SIZE_ENV = "MCPGEN_CACHE_SIZE"
DEFAULT_SIZE_MB = 512
PRUNE_EVERY = 3600.0  # seconds between two looks at the folder
STAMP = ".pruned"  # its modification time is the last look


def cache_dir() -> Path | None:
    """Where results are kept (``MCPGEN_CACHE_DIR``; empty turns caching off)."""
    configured = os.environ.get("MCPGEN_CACHE_DIR")
    if configured is not None:
        return Path(configured) if configured else None
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mcpgen"


def digest(value: Json, dumps: Callable[[Json], str]) -> str:
    return hashlib.sha256(dumps(value).encode("utf-8", "surrogatepass")).hexdigest()


def schema_key(
    schema: Json, digests: dict[int, tuple[Json, str]], dumps: Callable[[Json], str]
) -> Json:
    """Text that equal schemas share, each bundled definition in it by its digest (the same
    definitions are bundled into many tools' schemas: ``digests`` serializes each once, by
    its id, kept with its body so the id stays the body's). Not a dict: ``schema`` itself."""
    defs = schema.get("$defs") if isinstance(schema, dict) else None
    if not isinstance(defs, dict):
        return dumps(schema) if isinstance(schema, dict) else schema
    named = {}
    for name, body in defs.items():
        kept = digests.get(id(body))
        if kept is None or kept[0] is not body:
            kept = digests[id(body)] = (body, digest(body, dumps))
        named[name] = ["digest", kept[1]]
    return dumps({**schema, "$defs": named})


def read(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    with contextlib.suppress(OSError):  # used now (a read-only cache stays as it is)
        os.utime(path)
    return text


def read_pack(path: Path | None) -> dict[str, Any]:
    """A JSON object kept in the cache; empty when missing or unreadable."""
    try:
        pack = json.loads(read(path) or "{}")
    except ValueError:
        return {}
    return pack if isinstance(pack, dict) else {}


def write(path: Path | None, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def write_bytes(path: Path | None, data: bytes) -> None:
    if path is None:
        return
    with contextlib.suppress(OSError):  # a cache that cannot be written only costs time
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_suffix(f".{os.getpid()}.tmp")
        temp.write_bytes(data)
        os.replace(temp, path)


def template_cache() -> jinja2.BytecodeCache | None:
    """Jinja's compiled templates, kept in the cache (by each template's source)."""
    import jinja2

    class Compiled(jinja2.FileSystemBytecodeCache):
        def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            try:
                super().load_bytecode(bucket)
            except Exception:  # unreadable or damaged: compiled again
                bucket.reset()

        def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            with contextlib.suppress(OSError):
                super().dump_bytecode(bucket)

    store = cache_dir()
    if store is None:
        return None
    with contextlib.suppress(OSError):
        store.mkdir(parents=True, exist_ok=True)
    return Compiled(str(store), "jinja-%s.cache") if store.is_dir() else None


def size_limit() -> int:
    """``MCPGEN_CACHE_SIZE`` (megabytes; unset or bad: the default) in bytes."""
    try:
        megabytes = float(os.environ.get(SIZE_ENV, DEFAULT_SIZE_MB))
    except ValueError:
        megabytes = DEFAULT_SIZE_MB
    return max(0, int(megabytes * 1024 * 1024))


def prune(now: float | None = None) -> int:
    """Keep the cache under its size limit: at most once an hour (else one ``stat``), when
    over the limit, delete the least recently used entries (a read marks one used) down to
    four fifths of it. Returns how many entries were deleted."""
    store = cache_dir()
    if store is None:
        return 0
    now = time.time() if now is None else now
    stamp = store / STAMP
    try:
        if now - stamp.stat().st_mtime < PRUNE_EVERY:
            return 0
    except OSError:
        if not store.is_dir():
            return 0
    entries: list[tuple[float, int, str]] = []
    deleted = 0
    try:
        with os.scandir(store) as found:
            for entry in found:
                if entry.name.startswith(".") or not entry.is_file(follow_symlinks=False):
                    continue
                info = entry.stat(follow_symlinks=False)
                if entry.name.endswith(".tmp") and now - info.st_mtime > PRUNE_EVERY:
                    with contextlib.suppress(OSError):  # left by a build that was killed
                        os.unlink(entry.path)
                        deleted += 1
                    continue
                entries.append((info.st_mtime, info.st_size, entry.path))
    except OSError:
        return deleted
    limit = size_limit()
    total = sum(size for _, size, _ in entries)
    goal = limit * 0.8 if total > limit else total  # (under the limit: nothing to delete)
    for _, size, path in sorted(entries):
        if total <= goal:
            break
        with contextlib.suppress(OSError):
            os.unlink(path)
            total -= size
            deleted += 1
    with contextlib.suppress(OSError):
        stamp.touch()
        os.utime(stamp, (now, now))
    return deleted
