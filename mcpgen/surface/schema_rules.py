"""Pure helpers of the schema comparison: keyword classes, types, enums, allOf merging."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping

from .changes import Json, _canon


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


DOC_KEYWORDS = _words(
    "title description examples example $comment deprecated readOnly writeOnly "
    "externalDocs xml discriminator $id $schema $anchor"
)
DEFINITIONS = frozenset({"$defs", "definitions"})  # reached through $ref only
# keywords compared by a rule below
HANDLED = _words(
    "type nullable enum const minimum maximum exclusiveMinimum exclusiveMaximum minLength "
    "maxLength minItems maxItems minProperties maxProperties multipleOf pattern format "
    "uniqueItems properties required additionalProperties items prefixItems "
    "additionalItems $ref allOf anyOf oneOf default"
)
# validation keywords whose change is not analysed: reported as "changed, assumed breaking"
OPAQUE = _words(
    "not if then else dependentRequired dependentSchemas dependencies patternProperties "
    "propertyNames contains minContains maxContains unevaluatedProperties "
    "unevaluatedItems $dynamicRef $recursiveRef contentMediaType contentEncoding "
    "contentSchema"
)
# keywords that only constrain values of one JSON type (for splitting `type: [a, b]`)
TYPE_KEYWORDS = {
    "string": _words("minLength maxLength pattern format"),
    "number": _words("minimum maximum exclusiveMinimum exclusiveMaximum multipleOf format"),
    "array": _words("items prefixItems minItems maxItems uniqueItems"),
    "object": _words("properties required additionalProperties minProperties maxProperties"),
}
TYPE_KEYWORDS["integer"] = TYPE_KEYWORDS["number"]
ALL_TYPE_KEYWORDS = frozenset().union(*TYPE_KEYWORDS.values())
MAX_DEPTH = 200

FALSE_SCHEMA: dict[str, Json] = {"not": {}}


def _schema(value: Json) -> Json:
    """Boolean schemas as objects: ``true`` accepts anything, ``false`` nothing."""
    return {} if value is True else FALSE_SCHEMA if value is False else value


def _is_false(node: Json) -> bool:
    return isinstance(node, dict) and node.get("not") == {} and len(node) == 1


def _types(node: Mapping[str, Json]) -> frozenset[str] | None:
    raw = node.get("type")
    if raw is None:
        return None
    if isinstance(raw, str):
        types = frozenset([raw])
    elif isinstance(raw, list):
        types = frozenset(t for t in raw if isinstance(t, str))
    else:
        return frozenset(["?" + _canon(raw)])  # not a JSON Schema type: only equal to itself
    if node.get("nullable") is True:
        types |= {"null"}
    return types


def _enum(node: Mapping[str, Json]) -> tuple[str, frozenset[str]] | None:
    if "const" in node:
        return "const", frozenset([_canon(node["const"])])
    if isinstance(node.get("enum"), list):
        return "enum", frozenset(_canon(v) for v in node["enum"])
    return None


def _without(node: Mapping[str, Json], *keys: str) -> dict[str, Json]:
    return {k: v for k, v in node.items() if k not in keys}


def _validation_part(node: Mapping[str, Json]) -> dict[str, Json]:
    return {k: v for k, v in node.items() if k not in DOC_KEYWORDS and k != "default"}


def _alternatives(rest: dict[str, Json]) -> list[Json]:
    """A schema without anyOf/oneOf as alternatives: itself, or one per type of a list."""
    types = rest.get("type")
    if not isinstance(types, list) or len(types) < 2 or "nullable" in rest:
        return [rest]
    split = []
    for t in types:
        foreign = ALL_TYPE_KEYWORDS - TYPE_KEYWORDS.get(str(t), frozenset()) | {"type"}
        split.append({**{k: v for k, v in rest.items() if k not in foreign}, "type": t})
    return split


def _type_key(alt: Json) -> str:
    """What an alternative is paired by with one of the other side: its types, or its $ref."""
    types = _types(alt) if isinstance(alt, dict) else None
    if types is not None:
        return _canon(sorted(types))
    return f"$ref:{_ref(alt)}" if isinstance(alt, dict) and "$ref" in alt else "?"


def _merge_into(merged: dict[str, Json], piece: dict[str, Json]) -> bool:
    """Add the keywords of one allOf part; False when they clash with what is there."""
    for key, value in piece.items():
        if key not in merged:  # a copy of what the next parts add to: never the lock's own
            fresh = key in ("properties", "required") and isinstance(value, dict | list)
            merged[key] = copy.copy(value) if fresh else value
        elif key in DOC_KEYWORDS or key.startswith("x-"):
            continue  # the first description wins
        elif key == "properties" and isinstance(value, dict) and isinstance(merged[key], dict):
            into = merged[key]
            for name, schema in value.items():
                same = into.get(name, schema) == schema
                into[name] = schema if same else {"allOf": [into[name], schema]}
        elif key == "required" and isinstance(value, list):
            merged[key] += [r for r in value if r not in merged[key]]
        elif key == "type":
            if _types({"type": merged[key]}) != _types({"type": value}):
                return False
        elif merged[key] != value:
            return False
    return True


def _collapse_enums(node: dict[str, Json]) -> dict[str, Json]:
    """``oneOf: [{const: a}, {enum: [b]}]`` (values of one type) as ``enum: [a, b]``."""
    if "enum" in node or "const" in node:
        return node
    for keyword in ("anyOf", "oneOf"):
        alternatives = node.get(keyword)
        if not isinstance(alternatives, list) or not alternatives:
            continue
        values: list[str] = []
        types: set[str] = set()
        for alt in alternatives:
            found = _enum(alt) if isinstance(alt, dict) and not set(alt) - _VALUE_ONLY else None
            if found is None:
                break
            values += found[1]
            types.add(_canon(sorted(_types(alt) or ())))
        else:
            if len(types) != 1 or (keyword == "oneOf" and len(values) != len(set(values))):
                continue
            only = json.loads(types.pop())
            if "type" in node and _types(node) != frozenset(only):
                continue
            collapsed = _without(node, keyword)
            if only:
                collapsed["type"] = only[0] if len(only) == 1 else only
            collapsed["enum"] = [json.loads(v) for v in sorted(set(values))]
            return collapsed
    return node


_VALUE_ONLY = frozenset({"type", "enum", "const", "title", "description"})


def _extra(value: Json) -> Json:
    return {} if value is None else _schema(value)


def _tuple(node: Mapping[str, Json]) -> tuple[list[Json], Json]:
    """(prefix schemas, schema of the other items) of an array schema, in any draft."""
    items = node.get("items")
    if isinstance(items, list):  # draft 4-7 tuple form
        return items, _extra(node.get("additionalItems"))
    prefix = node.get("prefixItems")
    return (prefix if isinstance(prefix, list) else []), _extra(items)


def _ref(node: Mapping[str, Json]) -> str | None:
    """The ``$ref`` of a schema as a string (a malformed one never resolves)."""
    ref = node.get("$ref")
    return ref if ref is None or isinstance(ref, str) else "!" + _canon(ref)
