"""File arguments that name a resource (docs/openapi.md, "Files").

A file argument of an imported operation (a multipart file part, an
``application/octet-stream`` body) is the file's bytes in base64, or the URI of a resource
of this server: base64 never holds a colon, a URI always does (``scheme:``). A URI is read
in-process, as ``resources/read`` would read it for the same caller (scopes checked), and
its bytes are sent; a ``data:`` URI carries its bytes itself. MCP has no request by which a server reads a resource the *client*
exposes, so any other URI is a tool error that names the forms accepted.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote_to_bytes

from mcp.shared.exceptions import MCPError

from . import wire_body
from .errors import ResourceNotFound, ToolError
from .stubs import is_stub

Json = Any
MEDIA_TYPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*")
MAX_READS = 64  # resource URIs one call may name as files (each read runs a handler)


async def resolve(
    spec: dict[str, Json], arguments: dict[str, Json], ctx: Any, limit: int
) -> dict[str, Json]:
    """``arguments`` with each file argument that is a URI replaced by the resource's bytes
    (a :class:`wire_body.Blob`); ``arguments`` itself is not changed. What one call reads from
    resources is bounded like one file (``limit`` bytes in all, :data:`MAX_READS` reads):
    a short URI must not make the server read (and send) far more than a caller could
    send itself."""
    given = dict(arguments)
    wanted = [
        slot for slot in wire_body.file_slots(spec, given) if wire_body.is_uri(slot[0][slot[1]])
    ]
    if not wanted:
        return arguments
    registry = getattr(ctx, "registry", None) or {}
    table = registry.get("resources")
    reads = sum(1 for c, k, _ in wanted if not _inline(c[k].strip()))
    if reads > MAX_READS:
        raise ToolError(f"a call may name at most {MAX_READS} resources as files, not {reads}")
    total = 0
    for container, key, name in wanted:
        uri = container[key].strip()
        container[key] = blob = await read(table, uri, name, ctx, limit)
        total += 0 if _inline(uri) else len(blob.data)
        if total > limit:
            raise ToolError(
                f"the files this call reads from resources come to more than {limit} bytes, "
                "the most one call may read (setting <NAME>_API_MAX_FILE_BYTES)"
            )
    return given


async def read(table: Any, uri: str, name: str, ctx: Any, limit: int) -> wire_body.Blob:
    """The resource ``uri`` of this server (or a ``data:`` URI) as a file argument ``name``
    (a tool error when it is none of this server's, or one the caller cannot see, cannot
    be read or is larger than ``limit``)."""
    if _inline(uri):
        return data_uri(uri, name, limit)
    found = None if table is None else table.find(uri)
    shown = uri if table is None else table.shown(uri)  # (a secret variable's value REDACTED)
    if found is None or not table.policy.visible(ctx.identity, "resource", found[0].key):
        raise ToolError(  # a resource hidden from this caller is not named either
            f"{name!r} names {shown!r}, which is not a resource of this server. A file argument "
            "is the file's bytes, base64-encoded, or the URI of a resource this server lists "
            "(resources/list, resources/templates/list). A server cannot read the client's "
            "own resources: send such a file as base64."
        )
    try:
        data, media = await table.data(uri, ctx)
    except MCPError as exc:
        raise ToolError(f"{name!r}: reading {shown!r} failed: {exc.error.message}") from None
    except ResourceNotFound as exc:
        raise ToolError(f"{name!r}: reading {shown!r} failed: {exc}") from None
    except NotImplementedError as exc:
        if not is_stub(exc, found[0].handler_path):
            raise
        raise ToolError(
            f"{name!r}: the resource {shown!r} is not implemented yet: write its handler in "
            f"{found[0].handler_path}"
        ) from None
    if len(data) > limit:
        raise wire_body.too_big(name, len(data), limit)
    return wire_body.Blob(data, media)


def data_uri(uri: str, name: str, limit: int) -> wire_body.Blob:
    """An RFC 2397 ``data:[media][;base64],...`` URI as the bytes it carries."""
    head, comma, payload = uri[5:].partition(",")
    if not comma:
        raise ToolError(f"{name!r}: a data: URI needs a ',' before its content")
    media, _, flags = head.partition(";")
    if media and not MEDIA_TYPE.fullmatch(media):
        raise ToolError(f"{name!r}: {media[:40]!r} is not a media type (type/subtype)")
    if flags.split(";")[-1].lower() == "base64":
        data = wire_body.decode_file(name, payload, limit)
    else:
        data = unquote_to_bytes(payload)
        if len(data) > limit:
            raise wire_body.too_big(name, len(data), limit)
    return wire_body.Blob(data, media or None)


def _inline(uri: str) -> bool:
    """A ``data:`` URI: bytes the caller sent, not a resource the server reads."""
    return uri[:5].lower() == "data:"
