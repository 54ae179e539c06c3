"""The ``$defs`` names of the schemas an OpenAPI document refers to.

A component schema (``#/components/schemas/X``, Swagger ``#/definitions/X``, or ``X`` at
the top of another file) keeps its name when it is a PascalCase class name, else it is
made one (``simple-user`` -> ``SimpleUser``). When that name is taken -- by a name the
generated models import (``Field``, ``Any``...), or by another schema: the main document's
components come first (names that needed no change before others), then other files'
schemas sorted by file and pointer -- 6 hex digits of a hash of the file and pointer are
appended (``Error69c158``). A schema referenced somewhere else
(``#/components/schemas/Pet/properties/owner``) is named after its path plus such a hash
(``PetPropertiesOwner3be1a2``). Names never depend on the order of the document.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from mcpgen import identifiers as names
from mcpgen.load import JsonPath
from mcpgen.openapi.sources import Key, Sources, pointer

_NON_SCHEMA_COMPONENTS = frozenset(
    {"parameters", "responses", "requestBodies", "headers", "examples", "links", "callbacks",
     "securitySchemes", "pathItems"}
)  # fmt: skip


def short_hash(text: str, length: int = 6) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:length]


def safe_name(raw: str) -> str:
    """A ``$defs`` name that is also a class name the model generator keeps as it is.

    ``Pet`` stays; ``simple-user`` -> ``SimpleUser``, ``v1.User`` -> ``V1User``, ``2fa`` ->
    ``N2fa``. So the definitions can be hoisted into a manifest's shared ``$defs``.
    """
    if names.CLASS_NAME.match(raw):
        return raw
    return names.pascal(raw)


class DefNames:
    """The names given so far, by the schema's (file, pointer)."""

    def __init__(
        self, sources: Sources, components: JsonPath, reserved: Iterable[str] = ()
    ) -> None:
        self.sources = sources
        self.components = components  # where the main document keeps its schemas
        self.names: dict[Key, str] = {}
        # names that would shadow the models' imports, and the ones ``reserved`` (the tools'
        # model classes): a component named so gets a suffixed name
        self.taken: set[str] = {*names.RESERVED_CLASS_NAMES, *reserved}
        self._name_components()

    def _name_components(self) -> None:
        """Name the main document's components first: they keep their names when they can."""
        node: Any = self.sources.items[0].doc.data
        for part in self.components:
            node = node.get(part) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            return
        raws = sorted(node, key=lambda raw: (safe_name(raw) != raw, raw))
        for raw in raws:
            self._assign((0, (*self.components, raw)), safe_name(raw))

    def name_external(self, keys: Iterable[Key]) -> None:
        """Name schemas in referenced files, in a fixed order, before any is converted."""
        wanted = {
            key
            for key in keys
            if key[0] != 0 and key not in self.names and _looks_like_schema(key[1])
        }
        order = sorted(wanted, key=lambda k: (self.sources.items[k[0]].relative, pointer(k[1])))
        for key in order:
            self._assign(key, self._candidate(key))

    def name_of(self, key: Key) -> str:
        """The name of the schema at ``key``, given now if it has none."""
        name = self.names.get(key)
        if name is None:
            # not named up front: a hash of where it is keeps the name order-independent
            name = self._assign(key, f"{self._candidate(key)}{short_hash(self._identity(key))}")
        return name

    def _candidate(self, key: Key) -> str:
        src, path = key
        if len(path) == 3 and path[:2] == ("components", "schemas"):
            return safe_name(str(path[2]))
        if len(path) == 2 and path[0] == "definitions":
            return safe_name(str(path[1]))
        if len(path) == 1:
            return safe_name(str(path[0]))
        if not path:
            stem = self.sources.items[src].path.name.split(".")[0]
            return safe_name(stem)
        return safe_name("_".join(str(p) for p in path if p not in ("components", "schemas")))

    def _assign(self, key: Key, candidate: str) -> str:
        name = candidate
        if name in self.taken:
            identity = self._identity(key)
            length = 6
            name = f"{candidate}{short_hash(identity, length)}"
            while name in self.taken:  # pragma: no cover - a hash collision
                length += 2
                name = f"{candidate}{short_hash(identity, length)}"
        self.taken.add(name)
        self.names[key] = name
        return name

    def _identity(self, key: Key) -> str:
        return f"{self.sources.items[key[0]].relative}#{pointer(key[1])[2:]}"


def _looks_like_schema(path: JsonPath) -> bool:
    if path[:1] == ("paths",) or path[:1] == ("webhooks",):
        return False
    if len(path) == 3 and path[0] == "components" and path[1] in _NON_SCHEMA_COMPONENTS:
        return False
    return not (len(path) == 2 and path[0] in ("parameters", "responses"))
