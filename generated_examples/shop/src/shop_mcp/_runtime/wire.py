"""Turning a tool's arguments into the parts of an HTTP request, safely.

Path values are percent-encoded as one segment and may never be ``.`` or ``..`` (an HTTP
client would resolve them and reach another endpoint); header values may not carry line
breaks; cookie values are percent-encoded so that a value cannot add a cookie.
"""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from .errors import ToolError

Json = Any
DOT_SEGMENTS = frozenset({".", ".."})
# RFC 6265 cookie-octet: visible ASCII but for DQUOTE, comma, semicolon and backslash
_COOKIE_SAFE = "!#$%&'()*+-./:<=>?@[]^_`{|}~"
REDACTED = "REDACTED"


def scalar(value: Json) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def path_segment(name: str, value: Json) -> str:
    text = scalar(value)
    if text in DOT_SEGMENTS or not text:
        raise ToolError(f"path parameter {name!r} may not be {text!r}")
    return quote(text, safe="")


def header_value(name: str, value: Json) -> str:
    text = scalar(value)
    if any((ord(ch) < 0x20 and ch != "\t") or ord(ch) == 0x7F for ch in text):
        raise ToolError(f"header parameter {name!r} may not contain control characters")
    return text


def cookie_value(value: Json) -> str:
    return quote(scalar(value), safe=_COOKIE_SAFE.replace("%", ""))


def cookie_header(cookies: dict[str, str]) -> str:
    return "; ".join(
        f"{quote(name, safe='')}={cookie_value(value)}" for name, value in cookies.items()
    )


def query_value(value: Json, param: dict[str, Json]) -> Json:
    if param.get("content_type"):
        return json.dumps(value, separators=(",", ":"))
    if isinstance(value, list):
        style = param.get("style") or ""
        if param.get("explode", True) is False or style in ("pipeDelimited", "spaceDelimited"):
            separator = {"pipeDelimited": "|", "spaceDelimited": " "}.get(style, ",")
            return separator.join(scalar(v) for v in value)
        return [scalar(v) for v in value]
    return scalar(value)


def body(spec: dict[str, Json], arguments: dict[str, Json]) -> dict[str, Json]:
    """The request options (``content``/``data``/``files``) for an operation's body."""
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
    if kind == "application/json":
        return {"content": json.dumps(value).encode()}
    if kind == "application/x-www-form-urlencoded":
        return {"data": {k: scalar(v) for k, v in value.items()}}
    if kind == "multipart/form-data":
        return {"files": {k: (None, scalar(v)) for k, v in value.items()}}
    if kind == "application/octet-stream":
        try:
            return {
                "content": base64.b64decode(value, validate=True) if isinstance(value, str) else b""
            }
        except ValueError:
            raise ToolError("the body must be base64") from None
    return {"content": str(value).encode()}


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
