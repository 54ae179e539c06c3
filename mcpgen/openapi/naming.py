"""Tool names for operations, argument names that do not clash, and the ``$defs`` names of
the schemas a document refers to (``docs/openapi.md``): never depending on its order."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from mcpgen import identifiers as names
from mcpgen.check.schemas import pointer
from mcpgen.load import JsonPath
from mcpgen.openapi.sources import Key, Sources

MAX_TOOL_NAME = 64
TEMPLATE = re.compile(r"\{([^{}]*)\}")  # a path template's parameter
_NON_SCHEMA_COMPONENTS = frozenset(
    {"parameters", "responses", "requestBodies", "headers", "examples", "links", "callbacks",
     "securitySchemes", "pathItems"}
)  # fmt: skip


def short_hash(text: str, length: int = 6) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:length]


def safe_name(raw: str) -> str:
    """A ``$defs`` name the model generator keeps as a class name (``simple-user`` ->
    ``SimpleUser``), so definitions can be hoisted into a manifest's shared ``$defs``."""
    return raw if names.CLASS_NAME.match(raw) else names.pascal(raw)


class DefNames:
    """The names given so far, by the schema's (file, pointer)."""

    def __init__(
        self, sources: Sources, components: JsonPath, reserved: Iterable[str] = ()
    ) -> None:
        self.sources = sources
        self.names: dict[Key, str] = {}
        # the models' imports and ``reserved`` (the tools' classes): a component gets a suffix
        self.taken: set[str] = {*names.RESERVED_CLASS_NAMES, *reserved}
        # the main document's schemas are named first: they keep their names when they can
        node: Any = self.sources.items[0].doc.data
        for part in components:
            node = node.get(part) if isinstance(node, dict) else None
        for raw in sorted(
            node if isinstance(node, dict) else {}, key=lambda r: (r != safe_name(r), r)
        ):
            self._assign((0, (*components, raw)), safe_name(raw))

    def name_external(self, keys: Iterable[Key]) -> None:
        """Name schemas in referenced files, in a fixed order, before any is converted."""
        wanted = {k for k in keys if k[0] and k not in self.names and _looks_like_schema(k[1])}
        for key in sorted(wanted, key=lambda k: (self.sources.items[k[0]].relative, pointer(k[1]))):
            self._assign(key, self._candidate(key))

    def name_of(self, key: Key, wanted: str = "") -> str:
        """The name of the schema at ``key``, given now if it has none (``wanted`` if free)."""
        name = self.names.get(key)
        if name is None:
            # not named up front: a hash of where it is keeps the name order-independent
            candidate = wanted or f"{self._candidate(key)}{short_hash(self._identity(key))}"
            name = self._assign(key, candidate)
        return name

    def _candidate(self, key: Key) -> str:
        src, path = key
        if not path:  # a whole file: its name
            return safe_name(self.sources.items[src].path.name.split(".")[0])
        if path in (("components", "schemas", path[-1]), ("definitions", path[-1]), path[-1:]):
            return safe_name(str(path[-1]))  # a component: its own name
        return safe_name("_".join(str(p) for p in path if p not in ("components", "schemas")))

    def _assign(self, key: Key, candidate: str) -> str:
        name, length = candidate, 4
        while name in self.taken:  # taken: a hash of where it is (longer on a hash collision)
            length += 2
            name = f"{candidate}{short_hash(self._identity(key), length)}"
        self.taken.add(name)
        self.names[key] = name
        return name

    def _identity(self, key: Key) -> str:
        return f"{self.sources.items[key[0]].relative}#{pointer(key[1])[2:]}"


def _looks_like_schema(path: JsonPath) -> bool:
    return not (
        path[:1] in (("paths",), ("webhooks",))
        or (len(path) == 3 and path[0] == "components" and path[1] in _NON_SCHEMA_COMPONENTS)
        or (len(path) == 2 and path[0] in ("parameters", "responses"))
    )


def base_name(method: str, path: str, operation_id: str | None) -> str:
    """The name an operation wants, before clashes are resolved (at most 64 characters)."""
    words = names.words(operation_id) if operation_id else []
    if words:
        return fit("_".join(words))
    segments = path.split("/")  # (a parameter is within one segment)
    spaced = " ".join(TEMPLATE.sub(lambda m: f" by {m.group(1)} ", s) for s in segments)
    return fit("_".join([method.lower(), *names.words(spaced)]))


def fit(name: str, suffix: str = "") -> str:
    """``name + suffix`` in at most 64 characters: too long, it ends in a hash of itself."""
    if len(name) + len(suffix) <= MAX_TOOL_NAME:
        return name + suffix
    keep = MAX_TOOL_NAME - len(suffix) - 9
    return f"{name[:keep].rstrip('_-')}_{short_hash(name, 8)}{suffix}"


def _idents(name: str) -> set[str]:
    """The Python identifier and class name a tool name becomes: both must be unique."""
    return {names.snake(name), names.pascal(name)}


def unique_names(wanted: Sequence[tuple[str, str, str]]) -> list[str]:
    """Unique names for operations given as (base name, method, path), in the same order."""
    reserved = set().union(*(_idents(base) for base, _, _ in wanted))
    taken: set[str] = set()
    last: dict[str, int] = {}  # the suffix number a base name got last (no quadratic search)
    result = [""] * len(wanted)
    for index in sorted(range(len(wanted)), key=wanted.__getitem__):
        name = base = wanted[index][0]
        number = last.get(base, 1)
        while taken & _idents(name) or (name != base and reserved & _idents(name)):
            number += 1
            name = fit(base, f"_{number}")
        last[base] = number
        taken.update(_idents(name))
        result[index] = name
    return result


def argument_names(inputs: Sequence[tuple[str, str]]) -> list[str]:
    """Argument names for inputs given as (location, wire name), in the same order."""
    counts = Counter(names.snake(wire) for _, wire in inputs)
    wanted = [
        f"{location}_{wire}" if counts[names.snake(wire)] > 1 else wire for location, wire in inputs
    ]
    taken: set[str] = set()
    result: list[str] = []
    for name in wanted:
        final, number = name, 1
        while (ident := names.snake(final)) in taken:
            number += 1
            final = f"{name}_{number}"
        taken.add(ident)
        result.append(final)
    return result
