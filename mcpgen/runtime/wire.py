"""Turning a tool's arguments into the parts of an HTTP request, safely.

Path values are percent-encoded as one segment and may never be ``.`` or ``..`` (an HTTP
client would resolve them and reach another endpoint); header values may not carry line
breaks; cookie values are percent-encoded so that a value cannot add a cookie.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
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
# part headers the multipart encoding writes itself (OpenAPI: Content-Type is ignored there)
PART_RESERVED = frozenset({"content-type", "content-disposition", "content-length"})
MAX_FILE_BYTES = 10 * 1024 * 1024  # a file argument's default limit (<NAME>_API_MAX_FILE_BYTES)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")  # base64 never holds a colon: a URI does
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF8", "image/gif"),
    (b"%PDF-", "application/pdf"),
    (b"PK\x03\x04", "application/zip"),
)


@dataclass(frozen=True)
class Blob:
    """A file argument read from a resource URI: its bytes and the resource's media type."""

    data: bytes
    media: str | None = None


def integral(value: Json) -> Json:
    """``value`` with every integral float an int: JSON does not tell ``1.0`` from ``1``,
    and an API parsing an integer (Go, serde, a route pattern) refuses ``1.0``."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, list):
        return [integral(item) for item in value]
    if isinstance(value, dict):
        return {key: integral(item) for key, item in value.items()}
    return value


def scalar(value: Json) -> str:
    """One value as text: JSON's ``true``/``false``, ``null`` empty."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
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
    # ":", "@" and "$" are path characters (RFC 3986 pchar) some validators do not decode
    return quote(text, safe=":@$")


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
    text = text.strip(" \t")  # what HTTP reads of it (RFC 9110 5.5); h11 refuses to send more
    if any((ord(ch) < 0x20 and ch != "\t") or ord(ch) == 0x7F for ch in text):
        raise ToolError(f"header parameter {name!r} may not contain control characters")
    if not text.isascii():
        raise ToolError(f"header parameter {name!r} must be ASCII (HTTP headers carry no other)")
    return text


def set_headers(held: dict[str, str], given: dict[str, str]) -> None:
    """``given`` set in ``held``, replacing a header of the same name in any case."""
    names = {name.lower() for name in given}
    for name in [name for name in held if name.lower() in names]:
        del held[name]
    held.update(given)


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


def body(
    spec: dict[str, Json],
    arguments: dict[str, Json],
    part_headers: dict[str, dict[str, str]] | None = None,
    limit: int = MAX_FILE_BYTES,
) -> dict[str, Json]:
    """The request options (``content``/``files``) for an operation's body.

    Form and multipart bodies follow OpenAPI's defaults (``style: form``, ``explode: true``:
    one field per array item) and the document's ``encoding`` (``spec["parts"]``: content
    type, style, explode per property); a file property (``file``) and an
    ``application/octet-stream`` body are base64 arguments sent as their bytes (or a
    :class:`Blob` read from a resource URI), at most ``limit`` bytes each. ``part_headers``:
    the headers the parts of each multipart property carry (arguments its ``encoding``
    declares).
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
        extra = part_headers or {}
        return {
            "files": [
                item
                for k, v in value.items()
                for item in multipart_parts(k, v, parts.get(k) or {}, extra.get(k), limit)
            ]
        }
    if kind == "application/octet-stream":
        return {"content": decode_file("body", value, limit)}
    text = value if isinstance(value, str) else scalar(value)
    charset = re.search(r"charset=\"?([\w.:-]+)", spec.get("media_type") or "", re.I)
    try:
        return {"content": text.encode(charset.group(1) if charset else "utf-8")}
    except LookupError:  # a charset Python does not know: UTF-8, as the document may mean
        return {"content": text.encode()}
    except UnicodeEncodeError as exc:
        lacks = f"the body has {exc.object[exc.start]!r}, which {exc.encoding} lacks"
        raise ToolError(lacks) from None


def is_uri(value: Json) -> bool:
    """A file argument that names a resource (``scheme:...``) rather than carrying bytes."""
    return isinstance(value, str) and _SCHEME.match(value.lstrip()) is not None


def file_slots(spec: dict[str, Json], arguments: dict[str, Json]) -> list[tuple[Json, Json, str]]:
    """Where the file arguments of a call are, as ``(container, key, argument name)``: the
    ``application/octet-stream`` body and the file properties of a multipart body (each
    item of an array of files). Containers below ``arguments`` are replaced by copies, so
    a caller that copied ``arguments`` may set values in place."""
    kind, whole = spec["content_type"], spec["argument"]
    if kind == "application/octet-stream" and whole is not None and whole in arguments:
        return [(arguments, whole, whole)]
    if kind != "multipart/form-data":
        return []
    files = [wire for wire, how in (spec.get("parts") or {}).items() if how.get("file")]
    places: list[tuple[Json, Json, str]] = []
    if whole is not None and isinstance(arguments.get(whole), dict):
        container = arguments[whole] = dict(arguments[whole])
        places = [(container, wire, whole) for wire in files if wire in container]
    elif whole is None:
        names = dict(zip(spec["properties"], spec["arguments"], strict=True))
        places = [(arguments, names[w], names[w]) for w in files if names.get(w) in arguments]
    slots: list[tuple[Json, Json, str]] = []
    for container, key, name in places:
        if isinstance(container[key], list):
            items = container[key] = list(container[key])
            slots += [(items, i, name) for i in range(len(items))]
        else:
            slots.append((container, key, name))
    return slots


def form_fields(name: str, value: Json, part: dict[str, Json]) -> list[tuple[str, str]]:
    """One form property as ``(field, text)`` pairs (OpenAPI ``style``/``explode``)."""
    if value is None:
        return []
    if "json" in str(part.get("contentType", "")):
        return [(name, json.dumps(value, separators=(",", ":")))]
    style = part.get("style") or "form"
    explode = part.get("explode", style == "form")
    separator = {"pipeDelimited": "|", "spaceDelimited": " "}.get(style, ",")
    if isinstance(value, list):
        if style in ("spaceDelimited", "pipeDelimited") or not explode:
            return [(name, separator.join(scalar(v) for v in value))]
        return [(name, scalar(v)) for v in value]
    if isinstance(value, dict):
        if style == "deepObject":
            return [(f"{name}[{k}]", scalar(v)) for k, v in value.items()]
        if explode and style == "form":
            return [(k, scalar(v)) for k, v in value.items()]
        members = (f"{k}{separator}{scalar(v)}" for k, v in value.items())
        return [(name, separator.join(members))]
    return [(name, scalar(value))]


def multipart_parts(
    name: str,
    value: Json,
    part: dict[str, Json],
    headers: dict[str, str] | None = None,
    limit: int = MAX_FILE_BYTES,
) -> list[tuple[str, tuple[str | None, str | bytes, str | None, dict[str, str]]]]:
    """One multipart property as parts: one per array item unless ``explode`` is false,
    files as their bytes, objects as JSON unless the encoding gives a ``style`` (OpenAPI
    3.1 applies it to multipart: the parts are then the fields a form would have); each
    part carries ``headers``. A part's
    ``Content-Type`` is one of those ``encoding.contentType`` lists (wildcards allowed):
    the file's own type when listed (a resource's, or what its first bytes say), else the
    first listed that is not a wildcard."""
    if value is None:
        return []
    listed = part.get("contentType") if isinstance(part.get("contentType"), str) else None
    if isinstance(value, list) and part.get("explode", True) and "json" not in str(listed):
        return [item for v in value for item in multipart_parts(name, v, part, headers, limit)]
    extra = dict(headers or {})
    if part.get("file"):
        if isinstance(value, list):
            raise ToolError(f"{name!r} must be one base64 string or resource URI")
        blob = decode_file(name, value, limit)
        own = value.media if isinstance(value, Blob) else None
        kind = part_type(listed, own or sniff(blob)) or "application/octet-stream"
        return [(name, (name, blob, kind, extra))]
    media = part_type(listed, None)
    if part.get("style") and "json" not in str(media):  # a style the document gives (3.1)
        return [(key, (None, text, media, extra)) for key, text in form_fields(name, value, part)]
    if isinstance(value, dict) or (isinstance(value, list) and "json" in str(media)):
        return [(name, (None, json.dumps(value), media or "application/json", extra))]
    if isinstance(value, list):
        return [(name, (None, ",".join(scalar(v) for v in value), media, extra))]
    return [(name, (None, scalar(value), media, extra))]


def part_type(listed: str | None, own: str | None) -> str | None:
    """The ``Content-Type`` of a part whose encoding lists ``listed`` (comma-separated,
    ``image/*`` wildcards allowed), its content of type ``own`` when known."""
    options = [m.strip() for m in (listed or "").split(",") if m.strip()]
    if own and (not options or any(_covers(m, own) for m in options)):
        return own
    return next((m for m in options if "*" not in m), None)


def _covers(pattern: str, media: str) -> bool:
    kind, _, sub = pattern.split(";", 1)[0].strip().lower().partition("/")
    own_kind, _, own_sub = media.split(";", 1)[0].strip().lower().partition("/")
    return kind in ("*", own_kind) and sub in ("*", own_sub)


def sniff(data: bytes) -> str | None:
    """The media type a well-known file signature announces (PNG, JPEG, GIF, PDF, ZIP)."""
    return next((media for magic, media in _MAGIC if data.startswith(magic)), None)


def decode_file(name: str, value: Json, limit: int = MAX_FILE_BYTES) -> bytes:
    """A file argument as at most ``limit`` bytes: base64 (standard or URL-safe alphabet,
    line breaks allowed), or a :class:`Blob` read from a resource URI."""
    if isinstance(value, Blob):
        data = value.data
    elif isinstance(value, str):
        packed = "".join(value.split())
        if len(packed) // 4 * 3 > limit + 2:  # too big whatever it decodes to
            raise too_big(name, len(packed) // 4 * 3, limit)
        data = _base64(name, packed)
    else:
        raise ToolError(f"{name!r} must be a base64 string or a resource URI")
    if len(data) > limit:
        raise too_big(name, len(data), limit)
    return data


def too_big(name: str, size: int, limit: int) -> ToolError:
    return ToolError(
        f"{name!r} is a file of about {size} bytes, more than the {limit} a file argument may "
        "have (setting <NAME>_API_MAX_FILE_BYTES)"
    )


def _base64(name: str, packed: str) -> bytes:
    packed += "=" * (-len(packed) % 4)
    for altchars in (None, b"-_"):
        try:
            return base64.b64decode(packed, altchars=altchars, validate=True)
        except ValueError:
            continue
    raise ToolError(
        f"{name!r} must be base64 (the file's bytes, base64-encoded) or the URI of a "
        "resource of this server"
    )


def credential_forms(value: str) -> tuple[str, ...]:
    """The forms in which a credential sent as ``value`` may come back in an answer:
    itself, its token (``Bearer x``: ``x``) and, for HTTP basic, ``user:password`` and the
    password decoded."""
    scheme, _, token = value.partition(" ")
    if scheme.lower() != "basic":
        return value, token
    try:
        pair = base64.b64decode(token, validate=True).decode()
    except ValueError:  # binascii.Error and UnicodeDecodeError are both ValueErrors
        return value, token
    return value, token, pair, pair.partition(":")[2]


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
