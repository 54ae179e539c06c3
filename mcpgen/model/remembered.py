"""Advertised definitions kept in the build cache, by content.

Compacting an imported operation's schemas (``compact.advertise``) is most of the model
stage for a big API: about a second for GitHub's 1,223 operations, redone for all of them
when one operation changed. Each result is kept under a key made of everything it is made
from: the operation's texts, its bundled schemas, the ``openapi.compact`` options and the
source of the code that compacts (so an edited mcpgen never reads an older result). A
missing or unreadable entry is computed again (``format.cache``); entries are JSON.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import astuple
from pathlib import Path
from typing import Any

from mcpgen.format import cache
from mcpgen.model import compact, relax, schema_walk, share

Json = Any
PREFIX = "advertised-v1-"
_CODE = (compact, relax, share, schema_walk)  # the modules whose code makes the result


class Advertised:
    """``compact.advertise`` for one build's options, through the build cache."""

    def __init__(self, options: compact.CompactOptions) -> None:
        self.options = options
        self.store = cache.cache_dir()
        self.salt = _salt(options) if self.store is not None else ""
        self._digests: dict[int, tuple[Json, str]] = {}

    def __call__(
        self,
        title: str | None,
        text: str | None,
        input_schema: Json,
        output_schema: Json | None,
        annotations: Json | None,
        wrapped: bool,
    ) -> dict[str, Json]:
        def make() -> dict[str, Json]:
            return compact.advertise(
                title,
                text,
                input_schema,
                output_schema,
                annotations,
                wrapped=wrapped,
                options=self.options,
            )

        if self.store is None:
            return make()
        given = [self.salt, title, text, self._part(input_schema)]
        given += [self._part(output_schema), annotations, wrapped]
        path = self.store / f"{PREFIX}{_hash(_dumps(given))}.json"
        kept = cache.read(path)
        if kept is not None:
            try:
                found = json.loads(kept)
            except ValueError:
                found = None
            if isinstance(found, dict):
                return found
        made = make()
        cache.write(path, _dumps(made))
        return made

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
