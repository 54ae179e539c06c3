"""Advertised definitions (``compact.advertise``) kept in the build cache, keyed by all they
are made from. A server's results are one "pack", read and written once per build: the last
build's results and up to as many older ones; definitions kept once, by digest, under
``DEFS``. A missing or unreadable pack only costs time."""

from __future__ import annotations

import hashlib
from dataclasses import astuple, dataclass, field
from functools import cached_property, partial
from pathlib import Path
from typing import Any

from mcpgen import cache
from mcpgen.check import schemas
from mcpgen.literals import compact_json  # key order kept: it is part of what is advertised
from mcpgen.model import compact, relax

Json = Any
PREFIX = "advertised-v1-"
DEFS = "$defs"  # the pack's key holding the definitions its results name by digest
_CODE = (compact, relax, schemas)  # the modules whose code makes the result


@dataclass
class Pack:
    """One server's results in the build cache (``open_pack``, ``save_pack``)."""

    path: Path | None
    kept: dict[str, Json]  # what earlier builds left
    used: dict[str, Json] = field(default_factory=dict)  # what this build used (as kept)
    computed: int = 0  # how many of those were not kept
    defs: dict[str, Json] = field(default_factory=dict)  # by digest: the kept ones, and new

    def __post_init__(self) -> None:
        found = self.kept.pop(DEFS, None)
        self.defs.update(found if isinstance(found, dict) else {})

    def packed(self, result: dict[str, Json]) -> dict[str, Json]:
        """``result`` as kept: its input schema's definitions by digest."""
        schema = result.get("inputSchema")
        if not isinstance(schema, dict) or not isinstance(schema.get(DEFS), dict):
            return result
        named = {name: _hash(compact_json(body)) for name, body in schema[DEFS].items()}
        self.defs.update({named[name]: body for name, body in schema[DEFS].items()})
        return result | {"inputSchema": schema | {DEFS: named}}

    def unpacked(self, kept: Json) -> Json:
        """A result as kept, whole (None: not one, or a definition is missing)."""
        schema = kept.get("inputSchema") if isinstance(kept, dict) else None
        if not isinstance(schema, dict) or not isinstance(schema.get(DEFS), dict):
            return kept if isinstance(kept, dict) else None
        named = schema[DEFS]
        if not all(isinstance(d, str) and d in self.defs for d in named.values()):
            return None
        return kept | {"inputSchema": schema | {DEFS: {n: self.defs[d] for n, d in named.items()}}}


def open_pack(scope: str) -> Pack:
    store = cache.cache_dir()
    path = None if store is None else store / f"{PREFIX}{_hash(scope)}.json"
    return Pack(path, cache.read_pack(path))


def save_pack(pack: Pack) -> None:
    """Keep the build's results, and up to as many older ones, when it computed any."""
    if pack.path is None or not pack.computed:
        return
    older = [key for key in pack.kept if key not in pack.used][: len(pack.used)]
    kept = {**pack.used, **{key: pack.kept[key] for key in older}}
    named = {d for result in kept.values() for d in _named(result)}
    cache.write(pack.path, compact_json(kept | {DEFS: {d: pack.defs[d] for d in sorted(named)}}))


class Advertised:
    """``compact.advertise`` with one build's options, through ``pack`` (None: computed)."""

    def __init__(self, options: compact.CompactOptions, pack: Pack | None) -> None:
        self.options = options
        self.pack = pack
        self._digests: dict[int, tuple[Json, str]] = {}

    @cached_property
    def salt(self) -> str:
        """The compacting code and the options: part of every key."""
        code = hashlib.blake2b(digest_size=20)
        for module in _CODE:
            code.update(Path(str(module.__file__)).read_bytes())
        return code.hexdigest() + compact_json(astuple(self.options))

    def __call__(self, *given: Json, wrapped: bool) -> tuple[dict[str, Json], list[Json]]:
        """``compact.advertise``'s title, text, input and output schemas and annotations,
        and the key text of each of ``given`` (``cache.schema_key``; none without a pack)."""
        make = partial(compact.advertise, *given, wrapped=wrapped, options=self.options)
        pack = self.pack
        if pack is None:
            return make(), []
        parts = [cache.schema_key(part, self._digests, compact_json) for part in given]
        key = _hash(compact_json([self.salt, *parts, wrapped]))
        kept = pack.used.get(key, pack.kept.get(key))
        found: dict[str, Json] | None = pack.unpacked(kept)
        if found is None:
            found, pack.computed = make(), pack.computed + 1
            kept = pack.packed(found)
        pack.used[key] = kept
        return found, parts


def _named(result: Json) -> list[str]:
    """The digests of the definitions a kept ``result`` names."""
    schema = result.get("inputSchema") if isinstance(result, dict) else None
    named = schema.get(DEFS) if isinstance(schema, dict) else None
    return [d for d in named.values() if isinstance(d, str)] if isinstance(named, dict) else []


def _hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()
