"""Turning a tool's arguments into the parts of an HTTP request, safely.

Path values are percent-encoded as one segment and may never be ``.`` or ``..`` (an HTTP
client would resolve them and reach another endpoint); header values may not carry line
breaks; cookie values are percent-encoded so that a value cannot add a cookie.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

from .errors import ToolError

Json = Any
DOT_SEGMENTS = frozenset({".", ".."})
# RFC 6265 cookie-octet: visible ASCII but for DQUOTE, comma, semicolon and backslash
_COOKIE_SAFE = "!#$%&'()*+-./:<=>?@[]^_`{|}~"
REDACTED = "REDACTED"
# headers no argument may set: the HTTP client computes them (framing, connection) or
# mcpgen does (body and response types, credentials); OpenAPI says to ignore the last three
RESERVED_HEADERS = frozenset(
    {
        "accept", "authorization", "connection", "content-length", "content-type", "cookie",
        "expect", "host", "keep-alive", "proxy-authorization", "proxy-connection", "te",
        "trailer", "transfer-encoding", "upgrade",
    }
)  # fmt: skip


def scalar(value: Json) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def simple(value: Json, explode: bool, encode: Callable[[str], str] = str) -> str:
    """OpenAPI ``style: simple``: array items and object members comma-separated."""
    if isinstance(value, list):
        return ",".join(encode(scalar(v)) for v in value)
    if isinstance(value, dict):
        pairs = [(encode(str(k)), encode(scalar(v))) for k, v in value.items()]
        return ",".join(f"{k}={v}" if explode else f"{k},{v}" for k, v in pairs)
    return encode(scalar(value))


def _segment(text: str) -> str:
    return quote(text, safe="")


def path_segment(name: str, value: Json, param: dict[str, Json] | None = None) -> str:
    """A path parameter's value in its style (simple, label or matrix), percent-encoded."""
    param = param or {}
    style, explode = param.get("style") or "simple", bool(param.get("explode"))
    if param.get("content_type"):
        text = _segment(json.dumps(value, separators=(",", ":")))
    elif style == "label":
        if isinstance(value, dict) and explode:
            text = "".join(f".{_segment(str(k))}={_segment(scalar(v))}" for k, v in value.items())
        elif isinstance(value, list) and explode:
            text = "".join("." + _segment(scalar(v)) for v in value)
        else:
            text = "." + simple(value, False, _segment)
    elif style == "matrix":
        key = _segment(name)
        if isinstance(value, dict) and explode:
            text = "".join(f";{_segment(str(k))}={_segment(scalar(v))}" for k, v in value.items())
        elif isinstance(value, list) and explode:
            text = "".join(f";{key}={_segment(scalar(v))}" for v in value)
        else:
            text = f";{key}=" + simple(value, False, _segment)
    else:
        text = simple(value, explode, _segment)
    if text in DOT_SEGMENTS or not text:
        raise ToolError(f"path parameter {name!r} may not be {text!r}")
    return text


def header_value(name: str, value: Json, param: dict[str, Json] | None = None) -> str:
    param = param or {}
    if param.get("content_type"):
        text = json.dumps(value, separators=(",", ":"))
    else:
        text = simple(value, bool(param.get("explode")))
    if any((ord(ch) < 0x20 and ch != "\t") or ord(ch) == 0x7F for ch in text):
        raise ToolError(f"header parameter {name!r} may not contain control characters")
    if not text.isascii():
        raise ToolError(f"header parameter {name!r} must be ASCII (HTTP headers carry no other)")
    return text


def cookie_value(value: Json) -> str:
    return quote(scalar(value), safe=_COOKIE_SAFE.replace("%", ""))


def cookie_header(cookies: dict[str, str]) -> str:
    return "; ".join(
        f"{quote(name, safe='')}={cookie_value(value)}" for name, value in cookies.items()
    )


def query_pairs(name: str, value: Json, param: dict[str, Json]) -> list[tuple[str, str]]:
    """A query parameter as ``(name, value)`` pairs in its style (form, spaceDelimited,
    pipeDelimited, deepObject), or as JSON when the document gives it a ``content`` type."""
    if param.get("content_type"):
        return [(name, json.dumps(value, separators=(",", ":")))]
    how = {k: param[k] for k in ("style", "explode") if param.get(k) is not None}
    return form_fields(name, value, how)


def as_list(value: Json) -> list[Json]:
    return value if isinstance(value, list) else [value]


def body(spec: dict[str, Json], arguments: dict[str, Json]) -> dict[str, Json]:
    """The request options (``content``/``files``) for an operation's body.

    Form and multipart bodies follow OpenAPI's defaults (``style: form``, ``explode: true``:
    one field per array item) and the document's ``encoding`` (``spec["parts"]``: content
    type, style, explode per property); a file property (``file``) and an
    ``application/octet-stream`` body are base64 arguments sent as their bytes.
    """
    if spec["argument"] is not None:
        value = arguments.get(spec["argument"])
    else:
        value = {
            wire: arguments[arg]
            for wire, arg in zip(spec["properties"], spec["arguments"], strict=True)
            if arg in arguments
        }
    if value is None:
        return {}
    kind = spec["content_type"]
    parts: dict[str, dict[str, Json]] = spec.get("parts") or {}
    if kind == "application/json":
        return {"content": json.dumps(value).encode()}
    if kind == "application/x-www-form-urlencoded" and isinstance(value, dict):
        pairs = [pair for k, v in value.items() for pair in form_fields(k, v, parts.get(k) or {})]
        return {"content": urlencode(pairs).encode()}
    if kind == "multipart/form-data" and isinstance(value, dict):
        return {
            "files": [
                item for k, v in value.items() for item in multipart_parts(k, v, parts.get(k) or {})
            ]
        }
    if kind == "application/octet-stream":
        return {"content": decode_file("body", value)}
    return {"content": (value if isinstance(value, str) else scalar(value)).encode()}


def decode_file(name: str, value: Json) -> bytes:
    """A file argument (base64, standard or URL-safe alphabet, line breaks allowed) as bytes."""
    if not isinstance(value, str):
        raise ToolError(f"{name!r} must be a base64 string")
    packed = "".join(value.split())
    packed += "=" * (-len(packed) % 4)
    for altchars in (None, b"-_"):
        try:
            return base64.b64decode(packed, altchars=altchars, validate=True)
        except ValueError:
            continue
    raise ToolError(f"{name!r} must be base64 (the file's bytes, base64-encoded)")


def form_fields(name: str, value: Json, part: dict[str, Json]) -> list[tuple[str, str]]:
    """One form property as ``(field, text)`` pairs (OpenAPI ``style``/``explode``)."""
    if value is None:
        return []
    if "json" in str(part.get("contentType", "")):
        return [(name, json.dumps(value, separators=(",", ":")))]
    style = part.get("style") or "form"
    explode = part.get("explode", style == "form")
    if isinstance(value, list):
        if style in ("spaceDelimited", "pipeDelimited") or not explode:
            separator = {"pipeDelimited": "|", "spaceDelimited": " "}.get(style, ",")
            return [(name, separator.join(scalar(v) for v in value))]
        return [(name, scalar(v)) for v in value]
    if isinstance(value, dict):
        if style == "deepObject":
            return [(f"{name}[{k}]", scalar(v)) for k, v in value.items()]
        if explode:
            return [(k, scalar(v)) for k, v in value.items()]
        return [(name, ",".join(f"{k},{scalar(v)}" for k, v in value.items()))]
    return [(name, scalar(value))]


def multipart_parts(
    name: str, value: Json, part: dict[str, Json]
) -> list[tuple[str, tuple[str | None, str | bytes, str | None]]]:
    """One multipart property as parts: one per array item unless ``explode`` is false,
    files as their bytes, objects as JSON."""
    if value is None:
        return []
    media = part.get("contentType")
    media = media.split(",")[0].strip() if isinstance(media, str) else None
    if isinstance(value, list) and part.get("explode", True) and "json" not in str(media):
        return [item for v in value for item in multipart_parts(name, v, part)]
    if part.get("file"):
        if isinstance(value, list):
            raise ToolError(f"{name!r} must be one base64 string")
        blob = decode_file(name, value)
        return [(name, (name, blob, media or "application/octet-stream"))]
    if isinstance(value, dict) or (isinstance(value, list) and "json" in str(media)):
        return [(name, (None, json.dumps(value), media or "application/json"))]
    if isinstance(value, list):
        return [(name, (None, ",".join(scalar(v) for v in value), media))]
    return [(name, (None, scalar(value), media))]


def redact(url: str, secret_params: set[str]) -> str:
    """``url`` as it may be shown: no user info, credential query values replaced."""
    parts = urlsplit(url)
    netloc = parts.netloc.rsplit("@", 1)[-1]
    query = "&".join(
        f"{key}={REDACTED}" if key in secret_params else (f"{key}={value}" if sep else key)
        for key, sep, value in (item.partition("=") for item in parts.query.split("&") if item)
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme.lower(), (parts.hostname or "").lower(), port
