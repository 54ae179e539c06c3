"""Turning a tool's arguments into the parts of an HTTP request, safely.

Path values are percent-encoded as one segment and may never be ``.`` or ``..`` (an HTTP
client would resolve them and reach another endpoint); header values may not carry line
breaks; cookie values are percent-encoded so that a value cannot add a cookie (the URL and
the request they make: ``wire_request``; bodies: ``wire_body``)."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from .errors import ToolError

Json = Any
DOT_SEGMENTS = frozenset({".", ".."})
# RFC 6265 cookie-octet: visible ASCII but for DQUOTE, comma, semicolon and backslash
_COOKIE_SAFE = "!#$%&'()*+-./:<=>?@[]^_`{|}~"
CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # no header value holds one (RFC 9110)
# what joins an array's items in a style other than simple's and form's ","
DELIMITERS = {"pipeDelimited": "|", "spaceDelimited": " "}
RESERVED = ":/?@!$'()*,;"  # allowReserved's bare: RFC 3986's but []#&=+ (OpenAPI's App. C)
SEGMENT = functools.partial(quote, safe=":@$")  # RFC 3986 pchar some validators do not decode
RESERVED_SEGMENT = functools.partial(quote, safe=":@$/!'()*+,;=&")  # allowReserved: not ?#[]%
# headers no argument may set: the HTTP client computes them (framing, connection) or
# mcpgen does (body and response types, credentials); OpenAPI says to ignore the last three
RESERVED_HEADERS = frozenset(
    {
        "accept", "authorization", "connection", "content-length", "content-type", "cookie",
        "expect", "host", "keep-alive", "proxy-authorization", "proxy-connection", "te",
        "trailer", "transfer-encoding", "upgrade",
    }
)  # fmt: skip


def integral(value: Json) -> Json:
    """``value`` with every integral float below 1e21 an int (as JavaScript writes them): JSON
    does not tell ``1.0`` from ``1``, and an API parsing an integer refuses ``1.0``, ``1e+16``."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
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


def simple(value: Json, explode: bool, encode: Callable[[str], str] = str, style: str = "") -> str:
    """OpenAPI ``style: simple``: array items and object members comma-separated (space- or
    pipe-separated in ``spaceDelimited``, ``pipeDelimited``, Swagger 2.0's ``ssv``, ``pipes``)."""
    separator = encode(DELIMITERS[style]) if style in DELIMITERS else ","
    if isinstance(value, list):
        return separator.join(encode(scalar(v)) for v in value)
    if isinstance(value, dict):
        pairs = [(encode(str(k)), encode(scalar(v))) for k, v in value.items()]
        return separator.join(f"{k}={v}" if explode else f"{k}{separator}{v}" for k, v in pairs)
    return encode(scalar(value))


def path_segment(name: str, value: Json, param: dict[str, Json] | None = None) -> str:
    """A path parameter's value in its style (simple, label or matrix), percent-encoded (not
    ``/`` with OpenAPI 3.2's ``allowReserved``, Azure's ``x-ms-skip-url-encoding``)."""
    param = param or {}
    style, explode = param.get("style") or "simple", bool(param.get("explode"))
    seg = RESERVED_SEGMENT if param.get("allow_reserved") else SEGMENT
    if param.get("content_type"):
        text = seg(json.dumps(value, separators=(",", ":")))
    elif style == "label":
        if isinstance(value, dict) and explode:
            text = "".join(f".{seg(str(k))}={seg(scalar(v))}" for k, v in value.items())
        elif isinstance(value, list) and explode:
            text = "".join("." + seg(scalar(v)) for v in value)
        else:
            text = "." + simple(value, False, seg)
    elif style == "matrix":
        key = seg(name)
        if isinstance(value, dict) and explode:
            pairs = [(seg(str(k)), seg(scalar(v))) for k, v in value.items()]
        elif isinstance(value, list) and explode:
            pairs = [(key, seg(scalar(v))) for v in value]
        else:
            pairs = [(key, simple(value, False, seg))]
        text = "".join(f";{k}={v}" if v else f";{k}" for k, v in pairs)  # RFC 6570: ";x"
    else:
        text = simple(value, explode, seg, style)
    heads = [s.split(";")[0] for s in text.split("/")]  # a/;x/b: servlets drop ;x (..;x: ..)
    heads[0] = heads[0] or ("matrix" if style == "matrix" else "")  # matrix's own ";name"
    if not text or "" in heads or DOT_SEGMENTS & set(heads):  # a//b, /a, a/: proxies merge //
        raise ToolError(f"path parameter {name!r} may not be {text!r}")
    return text


def header_value(name: str, value: Json, param: dict[str, Json] | None = None) -> str:
    param = param or {}
    if param.get("content_type"):
        text = json.dumps(value, separators=(",", ":"))
    else:
        text = simple(value, bool(param.get("explode")), style=param.get("style") or "")
    text = text.strip(" \t")  # what HTTP reads of it (RFC 9110 5.5); h11 refuses to send more
    if CONTROL.search(text):
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


def cookie_pairs(name: str, value: Json, param: dict[str, Json]) -> dict[str, Json]:
    """A cookie parameter as cookies (name -> value or values; docs/openapi.md): one, ``c=a,b``
    (an item's comma ``%2C``), or exploded one per item or member, ``c=a; c=b``, ``R=1; G=2``."""
    if param.get("content_type"):
        return {name: json.dumps(value, separators=(",", ":"))}
    if param.get("explode") is False or not isinstance(value, list | dict):
        return {name: Encoded(simple(value, False, cookie_value))}
    if isinstance(value, list):
        return {name: [Encoded(cookie_value(v)) for v in value]}
    return {str(k): Encoded(cookie_value(v)) for k, v in value.items()}


def cookie_value(value: Json) -> str:
    return quote(scalar(value), safe=_COOKIE_SAFE.replace("%", ""))


def cookie_header(cookies: dict[str, Json]) -> str:
    pairs = [(quote(k, safe=""), v) for k, held in cookies.items() for v in as_list(held)]
    return "; ".join(f"{k}={v if isinstance(v, Encoded) else cookie_value(v)}" for k, v in pairs)


def query_pairs(name: str, value: Json, param: dict[str, Json]) -> list[tuple[str, str]]:
    """A query parameter as ``(name, value)`` pairs in its style (form, spaceDelimited,
    pipeDelimited, deepObject), or as JSON when the document gives it a ``content`` type.
    Values are percent-encoded (RFC 6570: a list's ``,`` bare, an item's ``%2C``; RFC
    3986's reserved characters bare with ``allowReserved``, but ``RESERVED``'s exceptions)."""
    if param.get("content_type"):
        return [(name, json.dumps(value, separators=(",", ":")))]
    style = param.get("style") or "form"
    encode = functools.partial(quote, safe=RESERVED if param.get("allow_reserved") else "")
    joined = style in DELIMITERS or (param.get("explode") is False and style != "deepObject")
    if joined and isinstance(value, list | dict):  # one value
        return [(name, Encoded(simple(value, False, encode, style)))]
    how = {k: param[k] for k in ("style", "explode") if param.get(k) is not None}
    return [(key, Encoded(encode(text))) for key, text in form_fields(name, value, how)]


class Encoded(str):
    """A query or cookie value percent-encoded already: sent as it is."""


def as_list(value: Json) -> list[Json]:
    return value if isinstance(value, list) else [value]


def form_fields(name: str, value: Json, part: dict[str, Json]) -> list[tuple[str, str]]:
    """One form property as ``(field, text)`` pairs (OpenAPI ``style``/``explode``)."""
    if value is None:
        return []
    if "json" in str(part.get("contentType", "")):
        return [(name, json.dumps(value, separators=(",", ":")))]
    style = part.get("style") or "form"
    explode = part.get("explode", style == "form")
    separator = DELIMITERS.get(style, ",")
    if style == "deepObject" and isinstance(value, dict | list):
        return deep_fields(name, value)
    if isinstance(value, list):
        if style in ("spaceDelimited", "pipeDelimited") or not explode:
            return [(name, separator.join(scalar(v) for v in value))]
        return [(name, scalar(v)) for v in value]
    if isinstance(value, dict):
        if explode and style == "form":
            return [(k, scalar(v)) for k, v in value.items()]
        members = (f"{k}{separator}{scalar(v)}" for k, v in value.items())
        return [(name, separator.join(members))]
    return [(name, scalar(value))]


def deep_fields(name: str, value: Json) -> list[tuple[str, str]]:
    """``style: deepObject``: ``o[k]=v``, and deeper (OpenAPI leaves it undefined) as qs, Rack
    and PHP read it and Stripe's clients write it: ``o[a][b]=v``, ``o[list][0]=x``. A key
    holding a bracket is refused: encoded or not, the API reads it as a nesting."""
    if not isinstance(value, dict | list):
        return [(name, scalar(value))]
    items = value.items() if isinstance(value, dict) else enumerate(value)
    if isinstance(value, dict) and any("[" in str(k) or "]" in str(k) for k in value):
        raise ToolError(f"{name!r} may not have a key holding '[' or ']' (read as a nesting)")
    return [pair for k, v in items for pair in deep_fields(f"{name}[{k}]", v)]
