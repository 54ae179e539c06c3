"""The keywords of an OpenAPI Schema Object that hold values, not schemas: each is kept
as JSON Schema 2020-12 writes it, converted (OpenAPI 3.0's boolean exclusive bounds,
``example``, Swagger's ``type: file``), or left out with the reason it is malformed.
Keywords that hold schemas are the converter's (``schema.SchemaConverter``)."""

from __future__ import annotations

import json
import math
from typing import Any

from mcpgen.check.schemas import python_regex

Json = Any
STD_2020_12 = "https://json-schema.org/draft/2020-12/schema"
SUBSCHEMA = frozenset(
    {
        "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
        "unevaluatedItems", "unevaluatedProperties", "contentSchema",
    }
)  # fmt: skip
SUBSCHEMA_MAPS = frozenset({"properties", "patternProperties", "dependentSchemas"})
SUBSCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
IGNORED = frozenset({"xml", "externalDocs", "$defs", "definitions"})
UNSUPPORTED = frozenset(
    {"$id", "$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor",
     "$vocabulary"}
)  # fmt: skip
_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
_NUMBERS = frozenset({"maximum", "minimum"})
_COUNTS = frozenset(
    {
        "maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties",
        "maxContains", "minContains",
    }
)  # fmt: skip
_BOOLEANS = frozenset({"uniqueItems", "readOnly", "writeOnly", "deprecated"})
_STRINGS = frozenset(
    {"title", "description", "format", "pattern", "contentEncoding", "contentMediaType", "$comment"}
)
_ANY = frozenset({"default", "const"})
_OTHERS = frozenset(
    {"type", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "enum", "example",
     "examples", "required", "dependentRequired", "$schema"}
)  # fmt: skip
VALUE_KEYWORDS = _NUMBERS | _COUNTS | _BOOLEANS | _STRINGS | _ANY | _OTHERS
# annotations that stay outside when a nullable schema is wrapped in anyOf
_OUTER = ("title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly")
_COMPOSED = ("allOf", "anyOf", "oneOf", "not", "if", "$ref", "const")


def value_keyword(keyword: str, value: Json, node: dict[str, Json], out: dict[str, Json]) -> str:
    """Put one of ``VALUE_KEYWORDS`` of ``node`` into ``out``; why it was left out, or ""."""
    if keyword == "type":
        return _type(value, out)
    if keyword in ("exclusiveMinimum", "exclusiveMaximum"):
        return _exclusive(node, keyword, value, out)
    if keyword in _NUMBERS:
        if not _is_number(value):
            return "must be a number"
        if node.get(f"exclusive{keyword.title()}") is not True:  # else moved there
            out[keyword] = value
    elif keyword == "multipleOf":
        if not (_is_number(value) and value > 0):
            return "must be a number greater than 0"
        out[keyword] = value
    elif keyword in _COUNTS:
        if not (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
            return "must be a non-negative integer"
        out[keyword] = value
    elif keyword in _BOOLEANS:
        if not isinstance(value, bool):
            return "must be true or false"
        out[keyword] = value
    elif keyword in _STRINGS:
        if not isinstance(value, str):
            return "must be a string"
        if keyword == "pattern" and not python_regex(value):
            # Java or .NET syntax (\p{...}, \A, \z): the server could not check it
            return "is not a regular expression Python can use"
        out[keyword] = value
    elif keyword in _ANY:
        out[keyword] = value
    elif keyword == "enum":
        if not isinstance(value, list):
            return "must be a list"
        out[keyword] = list(value)
    elif keyword == "example":
        out["examples"] = [*out.get("examples", []), value]
    elif keyword == "examples":
        given = value if isinstance(value, list) else [value]
        out["examples"] = [*given, *out.get("examples", [])]
    elif keyword == "required":
        if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            return "must be a list of property names"
        out[keyword] = list(dict.fromkeys(value))
    elif keyword == "dependentRequired":
        if not (isinstance(value, dict) and all(_names(v) for v in value.values())):
            return "must map names to lists of names"
        out[keyword] = value
    elif keyword == "$schema" and value != STD_2020_12:
        return "only JSON Schema 2020-12 is supported"
    return ""


def finish(out: dict[str, Json], nullable: bool) -> dict[str, Json]:
    """A converted schema made whole: binary strings as base64, properties sent in one
    direction only not required, and ``nullable`` as JSON Schema writes it."""
    if "format" in out and out["format"] == "binary":
        del out["format"]
        out.setdefault("contentEncoding", "base64")
    required = out.get("required")
    properties = out.get("properties")
    if required and isinstance(properties, dict):
        one_way = {
            k
            for k, v in properties.items()
            if isinstance(v, dict) and (v.get("readOnly") is True or v.get("writeOnly") is True)
        }
        if one_way:
            out["required"] = [r for r in required if r not in one_way]
    if "required" in out and not out["required"]:
        del out["required"]
    return _nullable(out) if nullable else out


def _type(value: Json, out: dict[str, Json]) -> str:
    if value == "file":  # Swagger 2.0 uploads
        out["type"] = "string"
        out["contentEncoding"] = "base64"
    elif isinstance(value, str) and value in _TYPES:
        out["type"] = value
    elif (
        isinstance(value, list)
        and value
        and all(isinstance(v, str) and v in _TYPES for v in value)
        and len(set(value)) == len(value)
    ):
        out["type"] = list(value)
    else:
        return f"has an unknown type {value!r}"
    return ""


def _exclusive(node: dict[str, Json], keyword: str, value: Json, out: dict[str, Json]) -> str:
    bound = "minimum" if keyword == "exclusiveMinimum" else "maximum"
    if value is True:
        if not _is_number(node.get(bound)):
            return f"is true without a numeric {bound!r}"
        out[keyword] = node[bound]
    elif value is False:
        return ""
    elif _is_number(value):
        out[keyword] = value
    else:
        return "must be a number (or, before 3.1, a boolean)"
    return ""


def _nullable(out: dict[str, Json]) -> dict[str, Json]:
    if any(k in out for k in _COMPOSED):
        outer = {k: out.pop(k) for k in _OUTER if k in out}
        return {**outer, "anyOf": [out, {"type": "null"}]}
    kind = out.get("type")
    if kind is not None:
        kinds = [kind] if isinstance(kind, str) else list(kind)
        out["type"] = kinds if "null" in kinds else [*kinds, "null"]
    if "enum" in out and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    return out


def _names(value: Json) -> bool:
    return isinstance(value, list) and all(isinstance(s, str) for s in value)


def default_fits(schema: dict[str, Json]) -> bool:
    """Whether ``default`` is valid under the rest of ``schema`` (True when that depends on
    a reference: those are resolved later)."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    rest = {k: v for k, v in schema.items() if k != "default"}
    if '"$ref"' in json.dumps(rest):
        return True
    try:
        return bool(Draft202012Validator(rest).is_valid(schema["default"]))
    except (SchemaError, RecursionError, ValueError):
        return True


def _is_number(value: Json) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, int)
