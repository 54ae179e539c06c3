"""The keywords of an OpenAPI Schema Object that hold values, not schemas: kept as JSON
Schema 2020-12 writes them, converted, or left out with the reason they are malformed."""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable
from typing import Any

from mcpgen.check.schemas import TYPES, python_regex
from mcpgen.openapi.media import category

Json = Any
STD_2020_12 = "https://json-schema.org/draft/2020-12/schema"
_NUMBERS = ("maximum", "minimum")
_COUNTS = (
    "maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties",
    "maxContains", "minContains",
)  # fmt: skip
_BOOLEANS = ("uniqueItems", "readOnly", "writeOnly", "deprecated", "nullable")
_STRINGS = (
    "title", "description", "format", "pattern", "contentEncoding", "contentMediaType", "$comment",
)  # fmt: skip
# annotations that stay outside when a nullable schema is wrapped in anyOf
_OUTER = ("title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly")
_COMPOSED = ("allOf", "anyOf", "oneOf", "not", "if", "$ref", "const")


def _is_number(value: Json) -> bool:
    finite = isinstance(value, float) and math.isfinite(value)
    return finite or (isinstance(value, int) and not isinstance(value, bool))


def _names(value: Json) -> bool:
    return isinstance(value, list) and all(isinstance(s, str) for s in value)


def _count(value: Json) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


# what a well-formed value of a keyword is, and why one that is not is left out
_VALID: dict[str, tuple[Callable[[Json], bool], str]] = {
    **dict.fromkeys(_NUMBERS, (_is_number, "must be a number")),
    **dict.fromkeys(_COUNTS, (_count, "must be a non-negative integer")),
    **dict.fromkeys(_BOOLEANS, (lambda v: isinstance(v, bool), "must be true or false")),
    **dict.fromkeys(_STRINGS, (lambda v: isinstance(v, str), "must be a string")),
    "multipleOf": (lambda v: _is_number(v) and v > 0, "must be a number greater than 0"),
    "enum": (lambda v: isinstance(v, list), "must be a list"),
    "required": (_names, "must be a list of property names"),
    "dependentRequired": (
        lambda v: isinstance(v, dict) and all(_names(n) for n in v.values()),
        "must map names to lists of names",
    ),
}
VALUE_KEYWORDS = frozenset(_VALID) | {
    "type", "exclusiveMinimum", "exclusiveMaximum", "default", "const", "example", "examples",
    "$schema",
}  # fmt: skip


def value_keyword(keyword: str, value: Json, node: dict[str, Json], out: dict[str, Json]) -> str:
    """Put one of ``VALUE_KEYWORDS`` of ``node`` into ``out``; why it was left out, or ""."""
    if keyword == "type":
        return _type(value, out)
    if keyword in ("exclusiveMinimum", "exclusiveMaximum"):
        return _exclusive(node, keyword, value, out)
    valid, why = _VALID.get(keyword, (None, ""))
    if valid is not None and not valid(value):
        return why
    if keyword == "pattern" and not python_regex(value):
        # Java or .NET syntax (\p{...}, \A, \z): the server could not check it
        return "is not a regular expression Python can use"
    if keyword in _NUMBERS:
        if node.get(f"exclusive{keyword.title()}") is not True:  # else moved there
            out[keyword] = value
    elif keyword == "example":
        out["examples"] = [*out.get("examples", []), value]
    elif keyword == "examples":
        given = value if isinstance(value, list) else [value]
        out["examples"] = [*given, *out.get("examples", [])]
    elif keyword == "enum":
        out[keyword] = list(value)
    elif keyword == "required":
        out[keyword] = list(dict.fromkeys(value))
    elif keyword == "$schema":
        return "" if value == STD_2020_12 else "only JSON Schema 2020-12 is supported"
    else:
        out[keyword] = value
    return ""


def finish(out: dict[str, Json], x_nullable: bool) -> dict[str, Json]:
    """A converted schema made whole: binary strings as base64, ``readOnly`` properties
    not required (never sent), and ``nullable`` (or ``x_nullable``) as JSON Schema writes it."""
    if out.get("format") == "binary":
        del out["format"]
        out.setdefault("contentEncoding", "base64")
    media = out.get("contentMediaType")  # OpenAPI 3.1's binary: raw bytes of that type
    binary = isinstance(media, str) and category(media) == "application/octet-stream"
    if binary and out.get("type", "string") == "string":  # (not JSON, a form, text or XML)
        out.setdefault("contentEncoding", "base64")
    properties = out.get("properties")
    if out.get("required") and isinstance(properties, dict):
        one_way = [k for k, v in properties.items() if isinstance(v, dict) and v.get("readOnly")]
        out["required"] = [r for r in out["required"] if r not in one_way]
    if "required" in out and not out["required"]:
        del out["required"]
    return _nullable(out) if out.pop("nullable", False) or x_nullable else out


def _type(value: Json, out: dict[str, Json]) -> str:
    if value == "file":  # Swagger 2.0 uploads
        out.update(type="string", contentEncoding="base64")
    elif isinstance(value, str) and value in TYPES:
        out["type"] = value
    elif (
        isinstance(value, list)
        and value
        and all(isinstance(v, str) and v in TYPES for v in value)
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
    elif _is_number(value):
        out[keyword] = value
    elif value is not False:
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


def default_fits(schema: dict[str, Json]) -> bool:
    """Whether ``default`` is valid under the rest of ``schema`` (True beside a reference)."""
    return _fits(json.dumps(schema, sort_keys=True))


@functools.lru_cache(maxsize=4096)
def _fits(text: str) -> bool:
    """``default_fits`` by the schema's text (an API repeats a few, such as ``per_page``)."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    from mcpgen.check.formats import model_formats

    schema = json.loads(text)
    rest = {k: v for k, v in schema.items() if k != "default"}
    if '"$ref"' in json.dumps(rest):
        return True
    try:
        validator = Draft202012Validator(rest, format_checker=model_formats())
        return bool(validator.is_valid(schema["default"]))
    except (SchemaError, RecursionError, ValueError):
        return True
