"""Example arguments for generated tests: one valid instance and one invalid instance.

Both are checked against the schema with jsonschema at build time; when no example can be
found (or checked) the value is None and the generated test for it is skipped, saying why.
"""

from __future__ import annotations

import json
from typing import Any

from jsonschema import Draft202012Validator

from mcpgen.check.schemas import resolve_pointer
from mcpgen.model.regex_example import pattern_example

Json = Any
_MISSING = object()
MOST = 10_000  # characters of JSON an example may take: a schema asking for more gets none


def _json(value: Json) -> str:
    return json.dumps(value, default=str)


def _valid(schema: Json, root: Json, depth: int) -> Json:
    if depth > 12 or schema is True or schema == {}:
        return "example" if depth else {}
    if not isinstance(schema, dict):
        return _MISSING
    if "$ref" in schema and isinstance(schema["$ref"], str):
        found, target = resolve_pointer(root, schema["$ref"])
        return _valid(target, root, depth + 1) if found else _MISSING
    for key in ("const", "default"):
        if key in schema:
            return schema[key]
    for key in ("examples", "enum"):
        if isinstance(schema.get(key), list) and schema[key]:
            return schema[key][0]
    for key in ("oneOf", "anyOf"):
        if isinstance(schema.get(key), list):
            for option in schema[key]:
                value = _valid(option, root, depth + 1)
                if value is not _MISSING:
                    return value
    if isinstance(schema.get("allOf"), list):
        merged: dict[str, Json] = {}
        for part in schema["allOf"]:
            value = _valid(part, root, depth + 1)
            if isinstance(value, dict):
                merged.update(value)
        return merged
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in schema):
        result: dict[str, Json] = {}
        properties = schema.get("properties", {})
        for name in schema.get("required", []):
            value = _valid(properties.get(name, {}), root, depth + 1)
            if value is _MISSING:
                return _MISSING
            result[name] = value
        return result if len(_json(result)) <= MOST else _MISSING
    if kind == "array":
        count = int(schema.get("minItems", 0))
        item = _valid(schema.get("items", {}), root, depth + 1) if count else None
        if item is _MISSING or count * len(_json(item)) > MOST:
            return _MISSING
        return [item] * count
    if kind == "string":
        return _string(schema)
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        if not isinstance(low, int | float):
            return _MISSING
        value = low + 1 if "exclusiveMinimum" in schema else low
        return int(value) if kind == "integer" else float(value)
    if kind in ("boolean", "null"):
        return False if kind == "boolean" else None
    return _MISSING


FORMATS = {
    "date": "2024-01-01",
    "date-time": "2024-01-01T00:00:00Z",
    "email": "user@example.com",
    "uri": "https://example.com",
    "uuid": "00000000-0000-0000-0000-000000000000",
}


def _string(schema: dict[str, Json]) -> Json:
    low, high = schema.get("minLength", 0), schema.get("maxLength")
    if not isinstance(low, int) or not isinstance(high, int | None):
        return _MISSING
    known = FORMATS.get(schema.get("format", ""))
    if isinstance(schema.get("pattern"), str):
        found = pattern_example(schema["pattern"], low, high, known)
        return _MISSING if found is None else found
    if known is not None:
        return known
    return "x" * max(low, min(7, 64 if high is None else high)) if low <= MOST else _MISSING


_MEMO: dict[int, tuple[Json, Json | None]] = {}  # id(schema) -> (schema, example)


def valid_example(schema: Json) -> Json | None:
    """Arguments ``schema`` accepts, or None when none is easy to find. Remembered per
    schema object: the templates ask for each tool's example several times."""
    memo = _MEMO.get(id(schema))
    if memo is not None and memo[0] is schema:
        return memo[1]
    if len(_MEMO) > 20_000:
        _MEMO.clear()
    example = _valid(schema, schema, 0)
    try:
        if example is _MISSING or not Draft202012Validator(schema).is_valid(example):
            example = None
    except Exception:
        example = None
    _MEMO[id(schema)] = (schema, example)
    return example


def invalid_example(schema: Json) -> Json | None:
    """Arguments (an object) that ``schema`` rejects, or None when none is easy to find."""
    if not isinstance(schema, dict):
        return None
    base = valid_example(schema)
    candidates: list[Json] = []
    if isinstance(base, dict):
        for name in schema.get("required") or []:
            candidates.append({k: v for k, v in base.items() if k != name})
        for name, prop in (schema.get("properties") or {}).items():
            kind = prop.get("type") if isinstance(prop, dict) else None
            if kind in ("string", "array", "object", "boolean"):
                candidates.append({**base, name: 12345})
            elif kind in ("integer", "number"):
                candidates.append({**base, name: "not a number"})
        candidates.append({**base, "__unexpected__": 1})
    validator = Draft202012Validator(schema)
    for candidate in candidates:
        try:
            if not validator.is_valid(candidate):
                return candidate
        except Exception:
            continue
    return None
