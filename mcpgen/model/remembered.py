"""Advertised definitions kept in the build cache, by content.

Compacting an imported operation's schemas (``compact.advertise``) is most of the model
stage for a big API: about a second for GitHub's 1,223 operations, redone for all of them
when one operation changed. Each result is kept under a key made of everything it is made
from: the operation's texts, its bundled schemas, the ``openapi.compact`` options and the
source of the code that compacts (so an edited mcpgen never reads an older result).

A server's results are kept together in one "pack" (like the formatted pieces of a file,
``format.FormatJob``): one read and at most one write per build, where a file per tool
would cost a second to create for a big API on a slow file system. A pack holds the
results of the last build and, up to as many again, older ones (``mcpgen diff`` builds two
versions of a spec side by side). A missing or unreadable pack only costs time.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import astuple
from functools import cached_property, partial
from pathlib import Path
from typing import Any

from mcpgen import cache
from mcpgen.model import compact, relax, schema_walk, share

Json = Any
PREFIX = "advertised-v1-"
_CODE = (compact, relax, share, schema_walk)  # the modules whose code makes the result


class Advertised:
    """``compact.advertise`` with one build's options, for the server ``scope``, through
    the build cache; ``save`` writes what the build made when it computed anything."""

    def __init__(self, options: compact.CompactOptions, scope: str) -> None:
        self.options = options
        store = cache.cache_dir()
        self.path = None if store is None else store / f"{PREFIX}{_hash(scope)}.json"
        self.used: dict[str, Json] = {}
        self.computed = 0
        self._digests: dict[int, tuple[Json, str]] = {}

    @cached_property
    def salt(self) -> str:
        """The compacting code and the options: part of every key."""
        return _salt(self.options)

    @cached_property
    def kept(self) -> dict[str, Json]:
        """The pack of earlier builds, read when the first imported operation needs it."""
        return cache.read_pack(self.path)

    def __call__(
        self,
        title: str | None,
        text: str | None,
        input_schema: Json,
        output_schema: Json | None,
        annotations: Json | None,
        wrapped: bool,
    ) -> dict[str, Json]:
        given = [title, text, input_schema, output_schema, annotations]
        make = partial(compact.advertise, *given, wrapped=wrapped, options=self.options)
        if self.path is None:
            return make()
        parts = [self.salt, title, text, self._part(input_schema)]
        key = _hash(_dumps([*parts, self._part(output_schema), annotations, wrapped]))
        found = self.used.get(key, self.kept.get(key))
        if not isinstance(found, dict):
            found = make()
            self.computed += 1
        self.used[key] = found
        return found

    def save(self) -> None:
        if self.path is None or not self.computed:
            return
        older = [key for key in self.kept if key not in self.used][: len(self.used)]
        cache.write(self.path, _dumps({**self.used, **{key: self.kept[key] for key in older}}))

    def _part(self, schema: Json) -> Json:
        """A bundled schema for the key: each definition by its digest (the same objects
        are bundled into many tools' schemas; each is serialized once per build)."""
        if not isinstance(schema, dict) or not isinstance(schema.get("$defs"), dict):
            return schema
        defs = {name: ["digest", self._digest(body)] for name, body in schema["$defs"].items()}
        return {key: defs if key == "$defs" else value for key, value in schema.items()}

    def _digest(self, body: Json) -> str:
        kept = self._digests.get(id(body))
        if kept is not None and kept[0] is body:
            return kept[1]
        digest = _hash(_dumps(body))
        self._digests[id(body)] = (body, digest)
        return digest


def _hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()


def _salt(options: compact.CompactOptions) -> str:
    code = hashlib.blake2b(digest_size=20)
    for module in _CODE:
        code.update(Path(str(module.__file__)).read_bytes())
    return code.hexdigest() + _dumps(astuple(options))


def _dumps(value: Json) -> str:
    # key order is kept (it is part of what is advertised); 1, 1.0 and true stay apart
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
