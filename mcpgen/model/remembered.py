"""Advertised definitions kept in the build cache, by content: ``compact.advertise`` is
most of the model stage for a big API (about a second for GitHub's 1,223 operations).
Each result's key is all it is made from: the operation's texts and bundled schemas, the
``openapi.compact`` options and the compacting code's source. A server's results are one
"pack" (a file per tool costs a second on a slow file system), read and written once per
build (``pipeline.load_document``): the last build's results and up to as many older ones
(``mcpgen diff`` builds two versions). A missing or unreadable pack only costs time.
"""

from __future__ import annotations

import hashlib
from dataclasses import astuple, dataclass, field
from functools import cached_property, partial
from pathlib import Path
from typing import Any

from mcpgen import cache
from mcpgen.check import schemas
from mcpgen.literals import compact_json  # key order kept: it is part of what is advertised
from mcpgen.model import compact, relax, share

Json = Any
PREFIX = "advertised-v1-"
_CODE = (compact, relax, share, schemas)  # the modules whose code makes the result


@dataclass
class Pack:
    """One server's results in the build cache: read and written by the build command
    (``open_pack``, ``save_pack``), looked up and added to by the model stage."""

    path: Path | None
    kept: dict[str, Json]  # what earlier builds left
    used: dict[str, Json] = field(default_factory=dict)  # what this build used
    computed: int = 0  # how many of those were not kept


def open_pack(scope: str) -> Pack:
    store = cache.cache_dir()
    path = None if store is None else store / f"{PREFIX}{_hash(scope)}.json"
    return Pack(path, cache.read_pack(path))


def save_pack(pack: Pack) -> None:
    """Keep the build's results, and up to as many older ones, when it computed any."""
    if pack.path is None or not pack.computed:
        return
    older = [key for key in pack.kept if key not in pack.used][: len(pack.used)]
    cache.write(pack.path, compact_json({**pack.used, **{key: pack.kept[key] for key in older}}))


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

    def __call__(self, *given: Json, wrapped: bool) -> dict[str, Json]:
        """``compact.advertise``'s title, text, input and output schemas and annotations."""
        make = partial(compact.advertise, *given, wrapped=wrapped, options=self.options)
        pack = self.pack
        if pack is None:
            return make()
        parts = [cache.schema_key(part, self._digests, compact_json) for part in given]
        key = _hash(compact_json([self.salt, *parts, wrapped]))
        found = pack.used.get(key, pack.kept.get(key))
        if not isinstance(found, dict):
            found = make()
            pack.computed += 1
        pack.used[key] = found
        return found


def _hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()
