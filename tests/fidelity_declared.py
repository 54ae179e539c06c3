"""The fidelity suite's checks of what openapi-core does not judge. What a document itself
says of how arrays travel, read without mcpgen's importer (``exploded``): for each query
parameter and form or multipart property, one field per item or one field; openapi-core
accepts both (it reads the first of repeated fields, and an item holding commas is still
an item). ``query_items`` holds a request to it; ``part_headers``: a part header argument
arrived on its part."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlsplit

from wirekit import Seen, multipart, part_name

from mcpgen.runtime.wire import scalar

Json = Any
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


def exploded(raw: Json) -> dict[tuple[str, str, str], bool]:
    """``(path template, METHOD, name)`` -> exploded, for the document ``raw`` (OpenAPI 3
    ``style``/``explode`` and ``encoding``, or Swagger 2.0 ``collectionFormat``); a body
    property's name is ``body:NAME``. What is not listed uses the default: exploded."""
    found: dict[tuple[str, str, str], bool] = {}
    swagger = "swagger" in raw
    for url, item in (raw.get("paths") or {}).items():
        if not isinstance(item, dict):
            continue
        for method in METHODS:
            operation = item.get(method)
            if not isinstance(operation, dict):
                continue
            key = (url, method.upper())
            for param in [*(item.get("parameters") or []), *(operation.get("parameters") or [])]:
                param = _follow(raw, param)
                where, name = param.get("in"), param.get("name")
                if swagger and where in ("query", "formData") and param.get("type") == "array":
                    many = param.get("collectionFormat", "csv") == "multi"
                    found[(*key, name if where == "query" else f"body:{name}")] = many
                elif where == "query":
                    style = param.get("style", "form")
                    found[(*key, name)] = style == "form" and param.get("explode", True)
            body = _follow(raw, operation.get("requestBody") or {})
            for media, node in (body.get("content") or {}).items():
                if media not in FORMS or not isinstance(node, dict):
                    continue
                for prop, how in (node.get("encoding") or {}).items():
                    style = how.get("style", "form")
                    found[(*key, f"body:{prop}")] = style == "form" and how.get("explode", True)
    return found


def part_headers(params: list[Json], given: Json, seen: Seen) -> list[str]:
    """Where a part header argument (``encoding.headers``) is not on each part of its
    multipart property, as the caller gave it."""
    wrong = []
    for param in params:
        if not param.get("part") or param["argument"] not in given:
            continue
        want = scalar(given[param["argument"]])
        name, part = param["name"].lower(), param["part"]
        found = [h.get(name) for h, _ in multipart(seen) if part_name(h) == part]
        if not found or any(v != want for v in found):
            wrong.append(f"part header {name!r} of {part!r}: sent {want!r}, received {found!r}")
    return wrong


def query_items(params: list[Json], given: Json, seen: Seen, said: dict[str, bool]) -> list[str]:
    """Where a query array did not arrive as one field per item (exploded ``form``: the
    default) or as one field (any other style, or not exploded), as ``said`` (the document,
    by name) has it."""
    read = parse_qsl(urlsplit(seen.target).query, keep_blank_values=True)
    wrong = []
    for param in params:
        value = given.get(param["argument"])
        if param["location"] != "query" or not isinstance(value, list) or not value:
            continue
        count = sum(1 for key, _ in read if key == param["name"])
        if count != (len(value) if said.get(param["name"], True) else 1):
            wrong.append(f"query {param['name']!r}: {len(value)} items sent as {count} fields")
    return wrong


def _follow(raw: Json, node: Json) -> Json:
    """A local ``$ref`` followed (parameters and bodies defined in components)."""
    for _ in range(8):
        if not (isinstance(node, dict) and isinstance(node.get("$ref"), str)):
            break
        target: Json = raw
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target.get(part.replace("~1", "/").replace("~0", "~"), {})
        node = target
    return node if isinstance(node, dict) else {}
