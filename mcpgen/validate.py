"""Stage one of validation: the manifest's shape, checked against the published schema."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from .errors import Level, Problem, Problems
from .loader import Document, JsonPath

_ONE_OF_HINTS = {
    ("uri", "uriTemplate"): "give exactly one of 'uri' (a fixed resource) or 'uriTemplate'",
    ("resource", "text", "image", "audio"): (
        "a message holds exactly one of 'text', 'resource', 'image' or 'audio'"
    ),
    ("prompt", "resource"): "a completion names exactly one of 'prompt' or 'resource'",
}


@cache
def manifest_schema() -> dict[str, Any]:
    """The published JSON Schema of manifest format version 1."""
    text = resources.files("mcpgen").joinpath("schema/manifest.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def _validator() -> Draft202012Validator:
    return Draft202012Validator(manifest_schema())


def dotted(path: JsonPath) -> str:
    """``tools[0].input.properties.x``: how a field is named in messages."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + part
    return out


def check_structure(doc: Document) -> Problems:
    problems = Problems()
    data = doc.data
    if not isinstance(data, dict):
        problems.add(
            Problem(
                Level.ERROR,
                doc.locate(()),
                "",
                "a manifest is a mapping with 'mcpgen' and 'server'",
            )
        )
        return problems
    if "mcpgen" in data and data["mcpgen"] != 1:
        problems.add(
            Problem(
                Level.ERROR,
                doc.locate(("mcpgen",)),
                "mcpgen",
                f"unsupported manifest version {data['mcpgen']!r}; this mcpgen reads version 1",
            )
        )
        return problems
    errors = sorted(_validator().iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    for error in errors:
        problems.add(_problem(doc, error))
    return problems


def _problem(doc: Document, error: ValidationError) -> Problem:
    path: JsonPath = tuple(error.absolute_path)
    message = error.message
    key = False
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = set(error.schema.get("properties", {}))
        extra = sorted(k for k in error.instance if k not in allowed)
        if extra:
            path = (*path, extra[0])
            key = True
            known = ", ".join(sorted(allowed))
            message = f"unknown field {extra[0]!r} (known fields: {known})"
    elif error.validator == "required":
        missing = str(error.message).split("'")[1] if "'" in error.message else error.message
        message = f"missing required field {missing!r}"
    elif error.validator == "oneOf":
        options = tuple(
            sorted(
                r
                for sub in error.validator_value
                if isinstance(sub, dict)
                for r in sub.get("required", [])
            )
        )
        for fields, hint in _ONE_OF_HINTS.items():
            if set(fields) == set(options):
                message = hint
    elif error.validator == "type":
        expected = error.validator_value
        shown = " or ".join(expected) if isinstance(expected, list) else expected
        message = f"expected {shown}, got {_json_type(error.instance)} {_short(error.instance)}"
    elif error.validator in ("enum", "const"):
        allowed_values = error.validator_value
        if error.validator == "const":
            allowed_values = [allowed_values]
        message = f"{_short(error.instance)} is not one of {', '.join(map(_short, allowed_values))}"
    elif error.validator == "pattern":
        message = f"{_short(error.instance)} does not match the pattern {error.validator_value}"
    return Problem(Level.ERROR, doc.locate(path, key=key), dotted(path), message)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."
