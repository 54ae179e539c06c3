"""File arguments that name a resource (docs/openapi.md, "Files").

A file argument of an imported operation (a multipart file part, an
``application/octet-stream`` body) is the file's bytes in base64, or the URI of a resource
of this server: base64 never holds a colon, a URI always does (``scheme:``). A URI is read
in-process, as ``resources/read`` would read it for the same caller (scopes checked), and
its bytes are sent; a ``data:`` URI carries its bytes itself. MCP has no request by which a server reads a resource the *client*
exposes, so any other URI is a tool error that names the forms accepted.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote_to_bytes

from mcp.shared.exceptions import MCPError

from . import wire
from .errors import ResourceNotFound, ToolError

Json = Any


async def resolve(
    spec: dict[str, Json], arguments: dict[str, Json], ctx: Any, limit: int
) -> dict[str, Json]:
    """``arguments`` with each file argument that is a URI replaced by the resource's bytes
    (a :class:`wire.Blob`); ``arguments`` itself is not changed."""
    given = dict(arguments)
    wanted = [slot for slot in wire.file_slots(spec, given) if wire.is_uri(slot[0][slot[1]])]
    if not wanted:
        return arguments
    registry = getattr(ctx, "registry", None) or {}
    table = registry.get("resources")
    for container, key, name in wanted:
        container[key] = await read(table, container[key].strip(), name, ctx, limit)
    return given


async def read(table: Any, uri: str, name: str, ctx: Any, limit: int) -> wire.Blob:
    """The resource ``uri`` of this server (or a ``data:`` URI) as a file argument ``name``
    (a tool error when it is none of this server's, cannot be read or is larger than
    ``limit``)."""
    if uri[:5].lower() == "data:":
        return data_uri(uri, name, limit)
    if table is None or table.find(uri) is None:
        raise ToolError(
            f"{name!r} names {uri!r}, which is not a resource of this server. A file argument "
            "is the file's bytes, base64-encoded, or the URI of a resource this server lists "
            "(resources/list, resources/templates/list). A server cannot read the client's "
            "own resources: send such a file as base64."
        )
    try:
        data, media = await table.data(uri, ctx)
    except MCPError as exc:
        raise ToolError(f"{name!r}: reading {uri!r} failed: {exc.error.message}") from None
    except ResourceNotFound as exc:
        raise ToolError(f"{name!r}: reading {uri!r} failed: {exc}") from None
    if len(data) > limit:
        raise wire.too_big(name, len(data), limit)
    return wire.Blob(data, media)


def data_uri(uri: str, name: str, limit: int) -> wire.Blob:
    """An RFC 2397 ``data:[media][;base64],...`` URI as the bytes it carries."""
    head, comma, payload = uri[5:].partition(",")
    if not comma:
        raise ToolError(f"{name!r}: a data: URI needs a ',' before its content")
    media, _, flags = head.partition(";")
    if flags.split(";")[-1].lower() == "base64":
        data = wire.decode_file(name, payload, limit)
    else:
        data = unquote_to_bytes(payload)
        if len(data) > limit:
            raise wire.too_big(name, len(data), limit)
    return wire.Blob(data, media or None)
