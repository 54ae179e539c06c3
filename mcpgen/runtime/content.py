"""Content blocks for results, and turning what a handler returns into a tool result."""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Sequence
from functools import cache
from typing import Any, get_args

import mcp_types as types
from pydantic import BaseModel, TypeAdapter

Json = Any
ContentBlock = types.ContentBlock  # text, image, audio, resource link, embedded resource
CONTENT_TYPES = get_args(ContentBlock)
# a dict is structured content: what a handler returns for an output that is a type alias
# (a map), as the models give no class for it
ToolReturn = (
    str | ContentBlock | Sequence[ContentBlock] | types.CallToolResult | BaseModel | dict[str, Json]
)
ResourceReturn = str | bytes | Sequence[types.TextResourceContents | types.BlobResourceContents]
PromptReturn = str | Sequence[types.PromptMessage] | types.GetPromptResult


def text(value: str) -> types.TextContent:
    return types.TextContent(type="text", text=value)


def image(data: bytes, mime_type: str) -> types.ImageContent:
    return types.ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime_type)


def audio(data: bytes, mime_type: str) -> types.AudioContent:
    return types.AudioContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime_type)


def embedded_text(uri: str, value: str, mime_type: str = "text/plain") -> types.EmbeddedResource:
    contents = types.TextResourceContents(uri=uri, mime_type=mime_type, text=value)
    return types.EmbeddedResource(resource=contents)


def embedded_blob(uri: str, data: bytes, mime_type: str) -> types.EmbeddedResource:
    blob = base64.b64encode(data).decode("ascii")
    contents = types.BlobResourceContents(uri=uri, mime_type=mime_type, blob=blob)
    return types.EmbeddedResource(resource=contents)


def resource_link(
    uri: str, name: str, *, mime_type: str | None = None, description: str | None = None
) -> types.ResourceLink:
    return types.ResourceLink(uri=uri, name=name, mime_type=mime_type, description=description)


@cache
def adapter(model: Any) -> TypeAdapter[Any]:
    """pydantic's adapter of ``model`` (a class or a type alias), made once: what the tools
    validate a type alias's arguments with and the typed client parses results with."""
    return TypeAdapter(model)


def tool_error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[text(message)], is_error=True)


_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False)  # (keeps no state per call)


def dumps(value: Json) -> str:
    """JSON text for a result: non-ASCII kept, NaN and infinities refused (not JSON)."""
    return _ENCODER.encode(value)


def structured(data: Json) -> types.CallToolResult:
    """A result carrying JSON data both as text (for older clients) and as structured
    content (when it is an object, as the handshake-era protocol requires)."""
    content: list[ContentBlock] = [text(dumps(data))]
    if isinstance(data, dict):
        return types.CallToolResult(content=content, structured_content=data)
    return types.CallToolResult(content=content)


def to_result(value: ToolReturn) -> types.CallToolResult:
    """What a tool handler returned, as the result sent to the client."""
    if isinstance(value, types.CallToolResult):
        return value
    if isinstance(value, BaseModel) and not isinstance(value, CONTENT_TYPES):
        return structured(value.model_dump(mode="json", by_alias=True, exclude_unset=True))
    if isinstance(value, dict):
        return structured(value)
    if isinstance(value, str):
        return types.CallToolResult(content=[text(value)])
    if isinstance(value, Sequence):
        return types.CallToolResult(
            content=[block for block in value if not isinstance(block, str)]
        )
    return types.CallToolResult(content=[value])


def has_non_finite(value: Json, or_null: bool = False) -> bool:
    """True when a number JSON cannot carry (NaN, an infinity) appears anywhere inside
    ``value`` (a dict or a list), or with ``or_null`` a null."""
    stack: list[Json] = [value]
    while stack:
        node = stack.pop()
        for item in node.values() if isinstance(node, dict) else node:
            if isinstance(item, (dict, list)):  # (a union would be made per item)
                stack.append(item)
            elif (item is None and or_null) or (
                isinstance(item, float) and not math.isfinite(item)
            ):
                return True
    return False
