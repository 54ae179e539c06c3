"""Stage one of validation: the manifest's shape, checked against the published schema; and
the view stage two reads, with what stage one found malformed blanked."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from mcpgen.load import Document, JsonPath
from mcpgen.problems import Level, Problem, Problems, cut

_ONE_OF_HINTS = {  # the fields the allowed forms require -> what to say
    frozenset({"uri", "uriTemplate"}): (
        "give exactly one of 'uri' (a fixed resource) or 'uriTemplate'"
    ),
    frozenset({"resource", "text", "image", "audio"}): (
        "a message holds exactly one of 'text', 'resource', 'image' or 'audio'"
    ),
    frozenset({"prompt", "resource"}): "a completion names exactly one of 'prompt' or 'resource'",
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


def check_structure(doc: Document) -> Problems:
    data = doc.data
    if not isinstance(data, dict):
        return Problems([_error(doc, (), "a manifest is a mapping with 'mcpgen' and 'server'")])
    version = data.get("mcpgen")
    if isinstance(version, int) and not isinstance(version, bool) and version != 1:
        message = f"unsupported manifest version {version}; this mcpgen reads version 1"
        return Problems([_error(doc, ("mcpgen",), message, path=())])  # (): nothing more to say
    tools = data.get("tools")
    imported = doc.imported.tools if doc.imported is not None else {}
    options = data.get("openapi")
    overridden = isinstance(options, dict) and bool(options.get("overrides"))
    checked = list(range(len(tools))) if isinstance(tools, list) else []
    if imported and isinstance(tools, list) and not overridden:
        # imported entries fit the schema by construction (unless overridden): not checked
        checked = [i for i in checked if i not in imported]
        data = {**data, "tools": [tools[i] for i in checked]}
    found = list(_validator().iter_errors(data))
    for error in found:
        if len(error.path) > 1 and error.path[0] == "tools" and isinstance(error.path[1], int):
            error.path[1] = checked[error.path[1]]
    problems = Problems()
    for error in sorted(found, key=lambda e: [str(p) for p in e.absolute_path]):
        problems.extend(schema_problems(doc, error))
    return problems


def schema_problems(doc: Document, error: ValidationError) -> list[Problem]:
    """Located, readable problems for one schema violation (usually exactly one)."""
    path: JsonPath = tuple(error.absolute_path)
    schema = error.schema if isinstance(error.schema, dict) else {}
    instance, kind = error.instance, str(error.validator)
    value: Any = error.validator_value  # the published schema's own: no need to check it
    message = error.message
    key = False
    if kind == "additionalProperties" and isinstance(instance, dict):
        allowed = set(schema.get("properties", {}))
        extra, known = sorted(k for k in instance if k not in allowed), ", ".join(sorted(allowed))
        unknown = [(n, f"unknown field {n!r}" + did_you_mean(n, allowed, known)) for n in extra]
        if extra:
            return [_error(doc, (*path, n), message, key=True) for n, message in unknown]
    elif "propertyNames" in error.absolute_schema_path and isinstance(instance, str):
        path = (*path, instance)
        key = True
        message = f"name {short(instance)} must match the pattern {value}"
    elif kind == "required":
        missing = str(error.message).split("'")[1] if "'" in error.message else error.message
        message = f"missing required field {missing!r}"
    elif kind == "oneOf":
        required = frozenset(r for sub in value for r in sub.get("required", []))
        message = _ONE_OF_HINTS.get(required, "does not match exactly one of the allowed forms")
    elif kind == "type":
        shown = " or ".join(value) if isinstance(value, list) else value
        got = "null" if instance is None else _JSON_TYPES.get(type(instance), "object")
        message = f"expected {shown}, got {got}" + (
            "" if instance is None else f" {short(instance)}"
        )
        if value == "string" and got in ("integer", "number", "boolean"):
            message += " (put it in quotes to make it a string)"
    elif kind == "enum":
        message = f"{short(instance)} is not one of {', '.join(map(short, value))}"
    elif kind == "minLength" and value == 1:
        message = "must not be empty"
    elif kind in _MESSAGES:
        message = _MESSAGES[kind].format(value=value, shown=short(value), instance=short(instance))
    return [_error(doc, path, message, key)]


def _error(
    doc: Document, where: JsonPath, message: str, key: bool = False, path: JsonPath | None = None
) -> Problem:
    """An error at ``where`` (``key``: at the key); ``path``: what the pipeline is told."""
    located, field = doc.locate(where, key=key), doc.field(where)
    return Problem(Level.ERROR, located, field, message, path=where if path is None else path)


def did_you_mean(name: str, choices: Iterable[str], known: str | None = None) -> str:
    """`` (did you mean 'x'?)`` for a near miss, else the known names (when given)."""
    if close := difflib.get_close_matches(name, sorted(choices), n=1, cutoff=0.7):
        return f" (did you mean {close[0]!r}?)"
    return f" (known fields: {known})" if known else ""


_MESSAGES = {  # by keyword: {instance} and {shown} as JSON, {value} as the schema has it
    "const": "must be {shown}, not {instance}",
    "pattern": "{instance} does not match the pattern {value}",
    "minLength": "{instance} must be at least {value} characters long",
    "maxLength": "{instance} must be at most {value} characters long",
    "minItems": "must have at least {value} items",
    "maxItems": "must have at most {value} items",
    "minProperties": "must have at least {value} fields",
    "maxProperties": "must have at most {value} fields",
    "minimum": "{instance} must be at least {value}",
    "maximum": "{instance} must be at most {value}",
    "exclusiveMinimum": "{instance} must be greater than {value}",
    "exclusiveMaximum": "{instance} must be less than {value}",
}

_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array"}


def short(value: Any) -> str:
    return cut(json.dumps(value, ensure_ascii=False), 40)


SECTIONS = ("tools", "resources", "prompts", "completions")
MAPPINGS = ("server", "$defs", "auth", "transports", "capabilities", "observability")
# settings the checks read together: a problem anywhere inside blanks the whole mapping
WHOLE = ("server", "auth", "transports", "observability")


def checkable(data: Any, broken: set[JsonPath]) -> dict[str, Any]:
    """``data`` with malformed sections made empty and malformed entries None."""
    view: dict[str, Any] = dict(data) if isinstance(data, dict) else {}
    for key in MAPPINGS:
        if not isinstance(view.get(key), dict) or (key,) in broken:
            view[key] = {}
    for section in SECTIONS:
        items = view.get(section)
        view[section] = [
            item if isinstance(item, dict) and (section, i) not in broken else None
            for i, item in enumerate(items if isinstance(items, list) else [])
        ]
    return view


def broken_entries(paths: Iterable[JsonPath]) -> set[JsonPath]:
    """The entries (``("tools", 3)``) and sections the structural problems are inside."""
    found: set[JsonPath] = set()
    for path in paths:
        if path and path[0] in SECTIONS and len(path) > 1:
            found.add(path[:2])
        elif tuple(path[:2]) == ("openapi", "credentials"):  # an entry, or the whole section
            found.add(tuple(path[:3]))
        elif path and (path[0] in WHOLE or (path[0] in MAPPINGS and len(path) == 1)):
            found.add(path[:1])
    return found


def entries(items: list[Any]) -> Iterable[tuple[int, dict[str, Any]]]:
    return ((i, item) for i, item in enumerate(items) if isinstance(item, dict))
