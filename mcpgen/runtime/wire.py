"""Turning a tool's arguments into the parts of an HTTP request, safely.

Path values are percent-encoded as one segment and may never be ``.`` or ``..`` (an HTTP
client would resolve them and reach another endpoint); header values may not carry line
breaks; cookie values are percent-encoded so that a value cannot add a cookie. The URL is
the base URL's path, then the operation's, then the base URL's query and the operation's
(bodies: ``wire_body``)."""

from __future__ import annotations

import base64
import functools
import json
import re
from collections.abc import Callable, Collection
from typing import Any
from urllib.parse import (
    parse_qsl,
    quote,
    quote_plus,
    unquote,
    unquote_plus,
    urljoin,
    urlsplit,
    urlunsplit,
)

from .errors import REDACTED, ToolError

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


def credential_forms(value: str) -> tuple[str, ...]:
    """The forms in which a credential sent as ``value`` may come back in an answer:
    itself, its token (``Bearer x``: ``x``), percent-encoded as a query sends it (an API
    echoing the URL it was asked: ``a/b+c=`` as ``a%2Fb%2Bc%3D``), as a cookie sends it
    (``a b;c`` as ``a%20b%3Bc``) and, for HTTP basic, ``user:password`` and the password
    decoded."""
    scheme, _, token = value.partition(" ")
    forms = (value, token, quote(value, safe=""), quote_plus(value), cookie_value(value))
    if scheme.lower() != "basic":
        return forms
    try:
        pair = base64.b64decode(token, validate=True).decode()
    except ValueError:  # binascii.Error and UnicodeDecodeError are both ValueErrors
        return forms
    return *forms, pair, pair.partition(":")[2]


def join(base: str, path: str) -> str:
    """The operation's ``path`` after the path of the ``base`` URL, before its query."""
    parts = urlsplit(base)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + path))


def with_query(url: str, query: dict[str, Json] | None) -> str:
    """``url`` with ``query`` (name -> text or list of texts) after the query it has, less
    its pairs of a name ``query`` sets (a base URL's ``api-version``, an operation's too)."""
    pairs = [(key, text) for key, held in (query or {}).items() for text in as_list(held)]
    if not pairs:
        return url
    parts = urlsplit(without(url, {key for key, _ in pairs}))
    kept = [parts.query] if parts.query else []  # a space as %20: "+" is one to forms only
    added = ["=".join(t if isinstance(t, Encoded) else quote(t, safe="") for t in p) for p in pairs]
    return urlunsplit(parts._replace(query="&".join([*kept, *added])))


def without(url: str, names: Collection[str], values: Collection[str] = ()) -> str:
    """``url`` less the query pairs of ``names`` and those that echo one of ``values`` (a
    redirect off the API's origin whose ``Location`` echoes the key: ``?token=...``, ``+``
    kept or read as a space, or inside another value: ``?next=/cb%3Fkey%3D...``)."""
    if not names and not values:
        return url
    parts = urlsplit(url)
    kept = [
        q
        for q in parts.query.split("&")
        if q and unquote_plus(q.partition("=")[0]) not in names and not _echoes(q, values)
    ]
    return urlunsplit(parts._replace(query="&".join(kept)))


def _echoes(pair: str, values: Collection[str]) -> bool:
    """Whether a query pair holds one of ``values``: as its whole value, or (one of at
    least 4 characters, as ``Request.scrub`` finds them) anywhere in it."""
    value, whole = _read(pair.partition("=")[2]), _read(pair)
    return any(
        text in value or (len(text) >= 4 and any(text in form for form in whole))
        for text in values
        if text
    )


def _read(text: str) -> set[str]:
    """What a query's ``text`` may be read as: itself, decoded, ``+`` as a space or not."""
    return {text, unquote(text), unquote_plus(text), unquote(text).replace(" ", "+")}


def redact(url: str, secret_params: set[str]) -> str:
    """``url`` as it may be shown: no user info, credential query values replaced."""
    parts = urlsplit(url)
    netloc = parts.netloc.rsplit("@", 1)[-1]
    query = "&".join(
        (
            f"{key}={REDACTED}"
            if unquote_plus(key) in secret_params
            else (f"{key}={value}" if sep else key)
        )
        for key, sep, value in (item.partition("=") for item in parts.query.split("&") if item)
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def shown_base(base: str, documented: str) -> tuple[str, str, frozenset[str], frozenset[str]]:
    """The base URL set for this deployment (without its query), how it may be shown, the
    query names it adds, and what it holds that the documented one does not (a path segment
    that may be a key, a value of a query name it adds). Beyond the documented base URL (the
    manifest's ``baseUrl``) its path and query are the deployment's and may hold a key
    (``https://host/bot42:K3y/v1?code=KEY``): those are shown ``REDACTED`` (the rest of the
    path is kept: it says which call failed), and taken out of answers as a credential sent
    (``Request.at``)."""
    parts, known = urlsplit(base), urlsplit(documented)
    added = dict(parse_qsl(parts.query, True))
    names = frozenset(added.keys() - {k for k, _ in parse_qsl(known.query, True)})
    path, known_path = parts.path.rstrip("/"), known.path.rstrip("/")
    segments = {s for s in set(path.split("/")) - set(known_path.split("/")) if keylike(s)}
    held = frozenset({*segments, *map(unquote, segments), *(added[name] for name in names)})
    if not segments:
        return "", "", names, held
    real = urlunsplit((parts.scheme, parts.netloc, path, "", ""))
    hidden = "/".join(REDACTED if s in segments else s for s in path.split("/"))
    netloc = parts.netloc.rsplit("@", 1)[-1]
    return real, urlunsplit((parts.scheme, netloc, hidden, "", "")), names, held


def keylike(segment: str) -> bool:
    """A path segment a deployment adds that may be a key (``bot42:K3y``, a long token),
    not a gateway's word (``petstore``, ``prod``): scrubbed from every answer and refused
    off-origin, a word would be cut out of data and links."""
    return len(segment) >= 16 or (len(segment) >= 8 and any(c.isdigit() for c in segment))


class Request:
    """One upstream request being assembled: its parts and which query names are secret."""

    def __init__(self, method: str, url: str) -> None:
        self.method = method
        self.url = url
        self.parts: dict[str, dict[str, Any]] = {"headers": {}, "query": {}, "cookies": {}}
        self.secret_query: set[str] = set()
        self.secret_headers: set[str] = set()
        self.secrets: set[str] = set()  # every credential value sent (headers, query, cookies)
        self.options: dict[str, Json] = {}
        self.base: tuple[str, str, frozenset[str]] = ("", "", frozenset())  # ``shown_base``
        self.api = ""  # the base URL it is sent to (``at``)

    def at(self, base: str, documented: str) -> None:
        """The request made to ``base``, documented as ``documented``: what ``base`` adds
        is shown ``REDACTED`` in URLs and taken out of answers like a credential sent."""
        real, shown, names, held = shown_base(base, documented)
        self.base, self.api = (real, shown, names), base
        for value in held - {""}:
            self.secrets.update(credential_forms(value))

    def redact(self, url: str) -> str:
        """``url`` as it may be shown: ``redact``, and the base URL's path as ``shown_base``."""
        real, shown, names = self.base
        url = shown + url[len(real) :] if real and url.startswith(real) else url
        return redact(url, self.secret_query | names)

    def shown(self, url: str | None = None) -> str:
        return f"{self.method} {self.redact(url or self.url)}"

    def leaving(self, url: str) -> str:
        """``url`` fit to follow off the API's origin: without a query pair that names or
        holds a credential; refused when one is left elsewhere (``https://cdn/KEY/file``)."""
        url = without(url, self.secret_query, self.secrets)
        if self.scrub(url) != url:
            raise ToolError(
                f"{self.shown()}: the API redirected to another origin with a credential in "
                "the URL; not followed"
            )
        return url

    def scrub(self, text: str) -> str:
        """``text`` (an upstream answer shown to the client) without any credential sent."""
        return scrubber(self.secrets)(text)


def scrubber(secrets: Collection[str]) -> Callable[[str], str]:
    """What takes each of ``secrets`` (4 characters or more) out of a text: one pattern,
    longest first, made once for all the strings of an answer."""
    kept = sorted((s for s in secrets if len(s) >= 4), key=len, reverse=True)
    pattern = re.compile("|".join(map(re.escape, kept))) if kept else None
    return str if pattern is None else functools.partial(pattern.sub, REDACTED)


def origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme.lower(), (parts.hostname or "").lower(), port


def redirect(base: str, location: str) -> str:
    """The URL an answer's ``Location`` names, refused when urllib cannot read its origin
    (which decides whether the credentials follow): the upstream chose it."""
    try:
        url = urljoin(base, location)
        origin(url)
    except ValueError:
        raise ToolError("the API answered a redirect to something that is no URL") from None
    return url
