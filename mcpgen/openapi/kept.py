"""The OpenAPI import kept per operation in the build cache (``openapi-v1-<digest>.marshal``):
a rebuild after one operation changed builds that one again and takes every other one's
tool, operation and problems as they were (what a file is keyed by, and when it is neither
read nor kept: docs/architecture.md). One ``marshal`` of the whole keeps the objects the
results share (definitions, bundles, plans) shared when read back."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import marshal
import os
import sys
from collections.abc import Iterator
from dataclasses import fields
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from mcpgen import cache
from mcpgen.openapi.parts import Built, Candidate, Importer
from mcpgen.openapi.result import Body, Operation, Param
from mcpgen.problems import Level

if TYPE_CHECKING:
    from mcpgen.openapi.schema import SchemaConverter

Json = Any
PREFIX = "openapi-v1-"


# the libraries whose answers make the import's output (besides Python's): pydantic's
# verdicts on defaults (``check.formats``), jsonschema's (with its metaschemas, resolver)
LIBRARIES = (
    "mcpgen",
    "pydantic",
    "pydantic-core",
    "jsonschema",
    "jsonschema-specifications",
    "referencing",
)


@functools.cache
def code_digest() -> str:
    """mcpgen's sources, Python's version (what ``marshal`` writes depends on it) and the
    installed ``LIBRARIES``' metadata, with their versions (its text: 2 ms, where parsing
    it for ``metadata.version`` takes 5)."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256(f"{sys.version}\0{marshal.version}\0".encode())
    for name in LIBRARIES:
        with contextlib.suppress(metadata.PackageNotFoundError):
            text = metadata.distribution(name).read_text("METADATA") or ""
            digest.update(f"{name}\0{text}\0".encode(errors="surrogatepass"))
    for source in sorted(root.rglob("*.py")):
        digest.update(source.relative_to(root).as_posix().encode() + b"\0")
        digest.update(source.read_bytes() + b"\0")
    return digest.hexdigest()


def _digest(value: Json) -> str | None:
    """Equal bytes only for equal values (a miss, never a wrong hit, when they differ);
    version 0: no references nor interning marks, which depend on what else holds a value."""
    try:
        return hashlib.blake2b(marshal.dumps(value, 0), digest_size=20).hexdigest()
    except ValueError:  # a value marshal does not write (a YAML date...): not kept
        return None


_NAMES = [f.name for f in fields(Operation)]
_PARAMS, _BODY = _NAMES.index("parameters"), _NAMES.index("body")


def _operation(kept: tuple[Json, ...]) -> Operation:
    """An ``Operation`` from its fields as ``_fields`` keeps them."""
    values = list(kept)
    values[_PARAMS] = [Param(*p) for p in values[_PARAMS]]
    values[_BODY] = None if values[_BODY] is None else Body(*values[_BODY])
    return Operation(*values)


def _fields(operation: Operation) -> tuple[Json, ...]:
    """An ``Operation``'s fields in order, its ``Param``s' and ``Body``'s as tuples."""
    values = list(vars(operation).values())
    values[_PARAMS] = [tuple(vars(p).values()) for p in values[_PARAMS]]
    values[_BODY] = values[_BODY] and tuple(vars(values[_BODY]).values())  # (None: None)
    return tuple(values)


@contextlib.contextmanager
def kept_as(converter: SchemaConverter, name: str, new: bool) -> Iterator[None]:
    """Met by the operation built, as a definition is: what is reported and met inside
    (``new``: converted there, an answer's schema shared by operations) kept under ``name``,
    and reported again for every operation meeting it, whichever met it first."""
    sources, heard, met = converter.sources, converter.sources.heard, converter.met
    if met is not None:
        met.add(name)
    if not new or heard is None:
        yield
        return
    converter.heard[name] = sources.heard = []
    converter.met = inside = set[str]()
    try:
        yield
    finally:
        converter.deps[name] = frozenset(inside)
        sources.heard, converter.met = heard, met


class _Importer(Importer, Protocol):
    def build(self, cand: Candidate, name: str) -> Built: ...


class Kept:
    """One import's entries: read before the operations are built, written after."""

    def __init__(self, importer: _Importer, tool_names: list[str] | None) -> None:
        """``tool_names`` None: nothing read or kept (the import as without this class)."""
        self.importer = importer
        self.converter = importer.converter
        store = cache.cache_dir() if tool_names is not None else None
        self.path: Path | None = None
        # one file only: the schemas of several are named before any is read
        if store is not None and not importer.sources.several:
            rest = {k: v for k, v in importer.data.items() if k != "paths"}
            self.base = _digest([code_digest(), importer.raw_options, tool_names, rest])
            where = _digest([str(importer.sources.items[0].path), importer.raw_options])
            self.path = store / f"{PREFIX}{where}.marshal" if self.base and where else None
        self.entries: dict[str, tuple[Json, ...]] = {}
        self.used: dict[str, tuple[Json, ...]] = {}
        self.missed = False
        self.met: set[str] = set()
        pack = self._read(self.path) if self.path is not None else None
        if pack is not None:
            defs, deps, origin, names, taken, bundles, heard, self.entries = pack
            converter = self.converter
            converter.defs, converter.deps, converter.origin = defs, deps, origin
            converter.naming.names, converter.naming.taken = names, taken
            converter._bundles, converter.heard = bundles, heard
        importer.sources.heard = [] if self.path is not None else None

    def _read(self, path: Path) -> tuple[Json, ...] | None:
        """The file's parts, if it holds this document's (any failure: a miss)."""
        try:
            base, *pack = marshal.loads(path.read_bytes())
            shapes = (dict, dict, dict, dict, set, dict, dict, dict)
            if base != self.base or not all(map(isinstance, pack, shapes)) or len(pack) != 8:
                return None
            if not all(isinstance(e, tuple) and len(e) == 4 for e in pack[7].values()):
                return None
        except Exception:  # missing, damaged or not this code's: built again
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # used now (``cache.prune``)
        return tuple(pack)

    def build(self, cand: Candidate, name: str) -> Built:
        """The operation's tool and operation: kept, or built (and kept)."""
        importer, sources = self.importer, self.importer.sources
        if self.path is None:
            return importer.build(cand, name)
        key = _digest([*vars(cand).values(), name])  # (every field of the candidate)
        if key is not None and (entry := self.entries.get(key)) is not None:
            tool, operation, heard, met = entry
            for level, src, path, message in heard:
                sources.report(Level(level), src, path, message)
            self.met.update(met)
            self.used[key] = entry
            return Built(_operation(operation), tool)
        self.missed = True
        sources.heard, self.converter.met = [], set()
        try:
            built = importer.build(cand, name)
        finally:  # (what an operation stopping the import met is reported on ``__exit__`` too)
            heard, met = sources.heard, self.converter.met
            self.met.update(met)
            sources.heard, self.converter.met = [], None
        if key is not None:
            self.used[key] = (built.tool, _fields(built.operation), heard, sorted(met))
        return built

    def __enter__(self) -> Kept:
        return self

    def __exit__(self, stopped: type[BaseException] | None, *_: object) -> None:
        """However the import ends: report what the definitions met reported when converted;
        keep the entries only if it ran to the end."""
        converter, sources = self.converter, self.importer.sources
        if self.path is None:
            return
        sources.heard = None
        todo, seen = list(self.met), set[str]()
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                todo.extend(converter.deps.get(name, ()))
        for name in sorted(seen):
            for level, src, path, message in converter.heard.get(name, ()):
                sources.report(Level(level), src, path, message)
        if not (stopped is None and self.missed) or self.importer.problems.has_errors():
            return
        if converter.xml or any(
            not isinstance(key, tuple) or key[1][:1] == ("paths",)
            for key in sources._targets.values()
        ):
            return  # a reference into paths: not what the keys cover
        naming = converter.naming
        pack = (
            self.base, converter.defs, converter.deps, converter.origin, naming.names, naming.taken,
            converter._bundles, converter.heard, self.used,
        )  # fmt: skip
        try:
            text = marshal.dumps(pack)
        except ValueError:
            return
        cache.write_bytes(self.path, text)
