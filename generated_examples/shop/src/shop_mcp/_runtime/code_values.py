"""Between the sandbox and the dispatch point: the keyword arguments a sandboxed call
passes, what an operation's result becomes inside the sandbox, and what the sandbox's value
becomes as JSON."""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Mapping
from typing import Any

import mcp_types as types

from .code_docs import text
from .search import OperationDoc
from .shapes import Shapes

Json = Any


def argument_problem(doc: OperationDoc, kwargs: Mapping[str, Any]) -> str | None:
    schema = doc.input_schema or {}
    properties = schema.get("properties") or {}
    if properties:
        unknown = [k for k in kwargs if k not in properties]
        if unknown:
            known = ", ".join(properties) or "nothing"
            return f"got an unexpected keyword argument {unknown[0]!r} (it takes: {known})"
    missing = [n for n in schema.get("required") or () if n not in kwargs or kwargs[n] is None]
    if missing:
        return f"missing required keyword argument {missing[0]!r}"
    return None


def without_absent(doc: OperationDoc, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments to send: ``None`` means left out unless the parameter accepts null."""
    schema = doc.input_schema or {}
    properties = schema.get("properties") or {}
    shapes = Shapes(schema)
    return {
        k: v
        for k, v in kwargs.items()
        if v is not None or (k in properties and shapes.nullable(properties[k]))
    }


def result_value(doc: OperationDoc, result: types.CallToolResult) -> Json:
    """What the code gets back from an operation: its structured result, else its content."""
    data = result.structured_content
    if data is not None:
        if doc.wrapped and isinstance(data, dict) and set(data) == {"result"}:
            return data["result"]
        return data
    values: list[Json] = []
    for item in result.content:
        if isinstance(item, types.TextContent):
            try:
                values.append(json.loads(item.text))
            except ValueError:
                values.append(item.text)
        elif isinstance(item, types.ImageContent | types.AudioContent):
            values.append({"type": item.type, "mimeType": item.mime_type, "data": item.data})
        else:
            values.append(item.model_dump(mode="json", by_alias=True, exclude_none=True))
    if not values:
        return None
    return values[0] if len(values) == 1 else values


def plain_value(value: Any, depth: int = 0) -> Json:
    """The sandbox's value as JSON data (tuples and sets as lists, bytes as base64)."""
    if depth > 64:
        return "..."
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, Mapping):
        return {str(k): plain_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain_value(v, depth + 1) for v in value]
    if isinstance(value, set | frozenset):
        items = [plain_value(v, depth + 1) for v in value]
        try:
            return sorted(items)
        except TypeError:
            return items
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    return repr(value)


def error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[text(message)], is_error=True)


def with_output(stdout: str, message: str) -> str:
    if not stdout:
        return message
    return f"{stdout.rstrip()}\n\n{message}"
