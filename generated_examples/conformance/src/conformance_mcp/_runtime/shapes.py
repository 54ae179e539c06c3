"""JSON Schemas to short Python-like type strings: what code mode shows a model.

``owner: str, per_page: int = None`` and ``-> {id: int, name: str, owner: {login: str, ...}}``
say in a line what a model needs to write a call; the full schemas stay on the server
(arguments are still validated against them). Every rendering is bounded: depth, the
number of properties and union members shown, and the characters of an enum.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Json = Any

_SCALARS = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "null": "None",
    "array": "list",
    "object": "dict",
}


@dataclass(frozen=True)
class Budget:
    """How much of a schema one rendering may show."""

    depth: int = 2  # nested objects shown with their properties
    properties: int = 8  # properties of one object before "..."
    members: int = 4  # members of a union before "..."
    literal: int = 6  # enum values shown as a Literal
    optional: int = 8  # optional parameters in a signature before "..."


SHORT = Budget()  # parameters in a search answer
RESULT = Budget(depth=1)  # results in a search answer: nested objects are "dict"
FULL = Budget(
    depth=2, properties=16, members=6, literal=12, optional=1000
)  # one operation in detail


class Shapes:
    """Renders the schemas of one root (whose ``$defs`` its ``$ref``s point into)."""

    def __init__(self, root: Mapping[str, Json] | None, budget: Budget = SHORT) -> None:
        self.root: Mapping[str, Json] = root or {}
        self.budget = budget

    def resolve(self, schema: Json) -> Json:
        """``schema`` with a local ``$ref`` (``#/$defs/X``, ``#/definitions/X``) followed."""
        seen = 0
        while isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str) and seen < 8:
            target = self._target(schema["$ref"])
            if target is None:
                return {}
            schema = target
            seen += 1
        return schema

    def _target(self, ref: str) -> Json:
        if not ref.startswith("#/"):
            return None
        node: Json = self.root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, Mapping) or part not in node:
                return None
            node = node[part]
        return node

    def type(self, schema: Json, depth: int = 0) -> str:
        """The Python-like type of ``schema``."""
        if schema is True or schema is None or schema == {}:
            return "Any"
        if not isinstance(schema, Mapping):
            return "Any"
        if isinstance(schema.get("$ref"), str):
            name = schema["$ref"].rsplit("/", 1)[-1]
            if depth > self.budget.depth:
                return _ident(name) or "dict"
            return self.type(self.resolve(schema), depth)
        if "const" in schema:
            return f"Literal[{_literal(schema['const'])}]"
        enum = schema.get("enum")
        if isinstance(enum, list) and enum:
            return self._enum(enum, schema)
        for key in ("oneOf", "anyOf"):
            options = schema.get(key)
            if isinstance(options, list) and options:
                return self._union([self.type(o, depth) for o in options])
        parts = schema.get("allOf")
        if isinstance(parts, list) and parts:
            return self._all_of(parts, schema, depth)
        kind = schema.get("type")
        if isinstance(kind, list):
            names = [self._typed({**schema, "type": k}, depth) for k in kind]
            return self._union(names)
        return self._typed(schema, depth)

    def _typed(self, schema: Mapping[str, Json], depth: int) -> str:
        kind = schema.get("type")
        if kind == "array":
            items = schema.get("items")
            return f"list[{self.type(items, depth)}]" if items else "list"  # same depth
        if kind == "object" or (kind is None and "properties" in schema):
            return self._object(schema, depth)
        if isinstance(kind, str):
            return _SCALARS.get(kind, "Any")
        return "Any"

    def _object(self, schema: Mapping[str, Json], depth: int) -> str:
        properties = schema.get("properties")
        if not isinstance(properties, Mapping) or not properties:
            extra = schema.get("additionalProperties")
            if isinstance(extra, Mapping) and extra:
                return f"dict[str, {self.type(extra, depth + 1)}]"
            return "dict"
        if depth >= self.budget.depth:
            return "dict"
        required = set(schema.get("required") or ())
        order = {name: i for i, name in enumerate(properties)}
        names = sorted(properties, key=lambda n: (_link(n), n not in required, order[n]))
        shown = []
        for name in names[: self.budget.properties]:
            mark = "" if name in required else "?"
            shown.append(f"{name}{mark}: {self.type(properties[name], depth + 1)}")
        if len(names) > self.budget.properties:
            shown.append("...")
        return "{" + ", ".join(shown) + "}"

    def _all_of(self, parts: Sequence[Json], schema: Mapping[str, Json], depth: int) -> str:
        merged: dict[str, Json] = {"type": "object", "properties": {}, "required": []}
        for part in [*parts, {k: v for k, v in schema.items() if k != "allOf"}]:
            part = self.resolve(part)
            if not isinstance(part, Mapping):
                continue
            if "properties" not in part and len(parts) == 1:
                return self.type(part, depth)
            merged["properties"].update(part.get("properties") or {})
            merged["required"].extend(part.get("required") or ())
        if not merged["properties"]:
            return self.type(self.resolve(parts[0]), depth)
        return self._object(merged, depth)

    def _enum(self, values: list[Json], schema: Mapping[str, Json]) -> str:
        shown = [_literal(v) for v in values[: self.budget.literal]]
        if len(values) > self.budget.literal:
            shown.append("...")
        return "Literal[" + ", ".join(shown) + "]"

    def _union(self, names: list[str]) -> str:
        unique: list[str] = []
        for name in names:
            for part in _split_union(name):
                if part not in unique:
                    unique.append(part)
        if "Any" in unique:
            return "Any"
        if "None" in unique:  # Python writes it last
            unique.remove("None")
            unique.append("None")
        if len(unique) > self.budget.members:
            unique = [*unique[: self.budget.members], "..."]
        return " | ".join(unique)

    def nullable(self, schema: Json) -> bool:
        """Whether ``null`` is a valid value of ``schema``."""
        schema = self.resolve(schema)
        if not isinstance(schema, Mapping) or schema == {}:
            return True
        kind = schema.get("type")
        if kind == "null" or (isinstance(kind, list) and "null" in kind):
            return True
        if isinstance(schema.get("enum"), list) and None in schema["enum"]:
            return True
        for key in ("oneOf", "anyOf"):
            options = schema.get(key)
            if isinstance(options, list) and any(self.nullable(o) for o in options):
                return True
        return False


def _link(name: str) -> bool:
    """Hypermedia links (``comments_url``, ``href``) say least about a result: shown last."""
    lower = name.lower()
    return lower.endswith(("url", "href", "links")) or lower == "node_id"


def _split_union(name: str) -> list[str]:
    """The top-level members of a rendered union (brackets and braces kept whole)."""
    parts: list[str] = []
    depth = 0
    current = ""
    i = 0
    while i < len(name):
        ch = name[i]
        if ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        if depth == 0 and name.startswith(" | ", i):
            parts.append(current)
            current = ""
            i += 3
            continue
        current += ch
        i += 1
    parts.append(current)
    return [p for p in parts if p]


def _literal(value: Json) -> str:
    if isinstance(value, str):
        text = value if len(value) <= 40 else value[:37] + "..."
        return repr(text)
    if value is None or isinstance(value, bool | int | float):
        return repr(value)
    return "..."


def _ident(name: str) -> str:
    return "".join(ch for ch in name if ch.isalnum() or ch == "_")
