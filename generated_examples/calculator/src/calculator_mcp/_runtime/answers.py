"""An upstream answer as a tool result.

JSON is structured content; text is text; images, audio and any other bytes (PDF,
octet-stream) are image, audio or embedded-resource content with their media type, never
a text dump of bytes. An answer is read up to a size limit (``<NAME>_API_MAX_RESPONSE_BYTES``,
default 10 MiB): past it the call is a tool error saying so. An HTTP error (4xx/5xx) is a
tool error naming the method, the operation's path template, the status and the URL
requested (credentials redacted), then the start of the body made readable: an RFC 9457
problem document as its title and detail, HTML as its text.
"""

from __future__ import annotations

import html
import json
import re
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

import httpx2
import mcp_types as types

from . import wire
from .content import audio, embedded_blob, image, structured, text, tool_error
from .errors import ToolError

if TYPE_CHECKING:
    from .upstream import Request

Json = Any
EXCERPT = 1000
MAX_RESPONSE_BYTES = 10 * 1024 * 1024
_PROBLEM_KEYS = ("type", "title", "status", "detail", "instance")
_HIDDEN_HTML = re.compile(r"<(script|style)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_BLOCK = re.compile(r"<\s*/?\s*(p|div|br|h[1-6]|li|tr|title|pre)\b[^>]*>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]*>")


async def read(response: httpx2.Response, limit: int, refused: str) -> httpx2.Response:
    """A streamed response read whole, refused (and closed) past ``limit`` bytes with the
    tool error ``refused``."""
    declared = response.headers.get("content-length", "")
    try:
        if declared.isdigit() and int(declared) > limit:
            raise ToolError(refused)
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > limit:
                raise ToolError(refused)
            chunks.append(chunk)
    finally:
        await response.aclose()
    kept = [
        (k, v)
        for k, v in response.headers.multi_items()
        if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")
    ]  # the body below is already decoded
    return httpx2.Response(
        response.status_code, headers=kept, content=b"".join(chunks), request=response.request
    )


def result(
    response: httpx2.Response, operation: dict[str, Json], request: Request
) -> types.CallToolResult:
    status = response.status_code
    shown = request.shown(str(response.url))
    media = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if status >= 400:
        return tool_error(error_text(response, operation, request, media))
    if not response.content:
        return types.CallToolResult(content=[])
    if media == "application/json" or media.endswith("+json"):
        try:
            data: Json = response.json()
        except ValueError:
            return tool_error(f"{shown}: the upstream answered invalid JSON (HTTP {status})")
        if operation.get("wrapped"):
            data = {"result": data}
        return structured(data)
    if media.startswith("text/") or media in ("application/xml", "application/yaml"):
        return types.CallToolResult(content=[text(response.text)])
    blob = response.content
    if media.startswith("image/"):
        return types.CallToolResult(content=[image(blob, media)])
    if media.startswith("audio/"):
        return types.CallToolResult(content=[audio(blob, media)])
    uri = wire.redact(str(response.url), request.secret_query)
    return types.CallToolResult(
        content=[embedded_blob(uri, blob, media or "application/octet-stream")]
    )


def error_text(
    response: httpx2.Response, operation: dict[str, Json], request: Request, media: str
) -> str:
    """``POST /pets/{id} failed: HTTP 404 Not Found (POST https://...)``, then the body."""
    status = response.status_code
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = ""
    where = f"{request.method} {operation.get('path') or ''}".rstrip()
    head = f"{where} failed: HTTP {status} {reason}".rstrip()
    head += f" ({request.shown(str(response.url))})"
    body = readable(response, media)
    if len(body) > EXCERPT:
        body = body[:EXCERPT] + "…"
    return request.scrub(f"{head}: {body}" if body else head)


def readable(response: httpx2.Response, media: str) -> str:
    """The start of an error body as text a model can read."""
    if not response.content:
        return ""
    if media == "application/json" or media.endswith("+json"):
        try:
            data = response.json()
        except ValueError:
            return _squeeze(response.text[: EXCERPT * 2])
        return problem(data) if isinstance(data, dict) else _compact(data)
    if media in ("text/html", "application/xhtml+xml"):
        return html_text(response.text[: EXCERPT * 20])
    if media.startswith("text/") or media in ("", "application/xml", "application/yaml"):
        return _squeeze(response.text[: EXCERPT * 2])
    return f"({len(response.content)} bytes of {media})"


def problem(data: dict[str, Json]) -> str:
    """A problem document (RFC 9457), or any JSON error object, in one readable line."""
    words = [str(data[k]) for k in ("title", "detail") if isinstance(data.get(k), str | int)]
    if not words:
        return _compact(data)
    kind = data.get("type")
    if isinstance(kind, str) and kind not in ("", "about:blank"):
        words.append(f"(type {kind})")
    rest = {k: v for k, v in data.items() if k not in _PROBLEM_KEYS}
    if rest:
        words.append(_compact(rest))
    return _squeeze(": ".join(words[:2]) + "".join(" " + w for w in words[2:]))


def html_text(page: str) -> str:
    page = _HIDDEN_HTML.sub(" ", page)
    page = _BLOCK.sub("\x00", page)
    lines = (_squeeze(html.unescape(line)) for line in _TAG.sub(" ", page).split("\x00"))
    return " / ".join(line for line in lines if line)


def _compact(data: Json) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def _squeeze(value: str) -> str:
    return " ".join(value.split())
