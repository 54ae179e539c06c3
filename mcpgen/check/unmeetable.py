"""Keywords of a schema object that no value can meet (``minLength`` 5 with ``maxLength`` 2)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jsonschema import Draft202012Validator

from mcpgen.check.schemas import TYPES, Nodes, located
from mcpgen.check.structure import short
from mcpgen.load import JsonPath

# (lower bound, upper bound, what they bound): pairs that can leave no value valid
BOUNDS = (
    ("minLength", "maxLength", "string"),
    ("minItems", "maxItems", "array"),
    ("minProperties", "maxProperties", "object"),
    ("minimum", "maximum", "number"),
    ("exclusiveMinimum", "maximum", "number"),
    ("minimum", "exclusiveMaximum", "number"),
    ("exclusiveMinimum", "exclusiveMaximum", "number"),
)
KEYWORDS = frozenset({"enum", "const", "required", *(k for b in BOUNDS for k in b[:2])})
IS_TYPE = Draft202012Validator.TYPE_CHECKER.is_type


def unmeetable(nodes: Nodes) -> Iterator[tuple[JsonPath, str]]:
    """What no value meets in a schema's ``schema_nodes``, as (path, message)."""
    for node, trail in nodes:
        if node.keys().isdisjoint(KEYWORDS):  # most nodes
            continue
        at = located(trail)
        for low, high, what in BOUNDS:
            if low not in node or high not in node:
                continue
            least, most = node[low], node[high]
            if not (IS_TYPE(least, "number") and IS_TYPE(most, "number")):
                continue  # (not a number: the metaschema check's to report)
            if least > most or (least == most and "exclusive" in low + high):
                yield (*at, low), f"{low} {least} and {high} {most} leave no {what} valid"
        enum, kinds = node.get("enum"), node.get("type")
        if enum == []:
            yield (*at, "enum"), "an empty enum allows no value"
        values: list[tuple[JsonPath, Any]]
        values = [(("enum", i), v) for i, v in enumerate(enum)] if isinstance(enum, list) else []
        values += [(("const",), node["const"])] if "const" in node else []
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if isinstance(kinds, list) and kinds and all(k in TYPES for k in kinds):
            for path, value in values:
                if not any(IS_TYPE(value, k) for k in kinds):
                    message = f"{short(value)} is not of type {' or '.join(kinds)}: never valid"
                    yield (*at, *path), message
        required, properties = node.get("required"), node.get("properties")
        if isinstance(required, list) and isinstance(properties, dict):
            for index, name in enumerate(required):
                if isinstance(name, str) and properties.get(name) is False:
                    message = f"required property {name!r} has the schema false: no object is valid"
                    yield (*at, "required", index), message
