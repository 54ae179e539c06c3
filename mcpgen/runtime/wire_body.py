"""Request bodies: JSON, forms and multipart built from a tool's arguments (OpenAPI's
``style``/``explode`` and ``encoding``), and file arguments (base64 or a resource's bytes)."""

from __future__ import annotations

import base64
import codecs
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode
from xml.etree import ElementTree

from .errors import ToolError
from .wire import CONTROL, form_fields, scalar
from .wire_xml import strip as strip_xml  # (not "from . import": that asks __init__)

Json = Any
# part headers the multipart encoding writes itself (OpenAPI: Content-Type is ignored there)
PART_RESERVED = frozenset({"content-type", "content-disposition", "content-length"})
MAX_FILE_BYTES = 10 * 1024 * 1024  # a file argument's default limit (<NAME>_API_MAX_FILE_BYTES)
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # a header name (RFC 9110)
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
    declares). The body's ``readOnly`` properties, at any depth (``spec["read_only"]``), are
    left out: the server sets them.
    """
    value = _value(spec, arguments)
    if spec.get("read_only"):
        value = without_read_only(value, spec["read_only"])
    kind = spec["content_type"]
    if value is None and not (kind == "application/json" and spec["argument"] in arguments):
        return {}  # a JSON body given as null (a nullable schema) is sent: "null"
    parts: dict[str, dict[str, Json]] = spec.get("parts") or {}
    if kind == "multipart/form-data" and isinstance(value, dict):
        extra = part_headers or {}
        files = [
            item
            for k, v in value.items()
            for item in multipart_parts(k, v, parts.get(k) or {}, extra.get(k), limit)
        ]
        return multipart(files, spec.get("media_type") or kind)
    if kind == "application/octet-stream":
        return {"content": decode_file("body", value, limit)}
    encode: Callable[[str], bytes]
    if kind == "application/x-www-form-urlencoded" and isinstance(value, dict):
        pairs = [pair for k, v in value.items() for pair in form_fields(k, v, parts.get(k) or {})]
        # each value percent-encoded in the charset (no byte order mark before each)
        encode = lambda cs: urlencode(pairs, encoding=_unmarked(cs)).encode()  # noqa: E731
    elif kind == "application/json":  # ASCII, in the declared charset (``utf-16``) too
        encode = lambda charset: json.dumps(value).encode(_unmarked(charset))  # noqa: E731
    else:
        encode = scalar(value).encode
    charset = re.search(r"charset=\"?([\w.:-]+)", spec.get("media_type") or "", re.I)
    try:
        return {"content": encode(charset.group(1) if charset else "utf-8")}
    except LookupError:  # a charset Python does not know: UTF-8, as the document may mean
        return {"content": encode("utf-8")}
    except UnicodeEncodeError as exc:
        lacks = f"the body has {exc.object[exc.start]!r}, which {exc.encoding} lacks"
        raise ToolError(lacks) from None
    except UnicodeError as exc:  # a codec no body is written in (``charset=idna``)
        named = charset and charset.group(1)
        raise ToolError(f"the body cannot be written in {named}: {exc}") from None


def _value(spec: dict[str, Json], arguments: dict[str, Json]) -> Json:
    """The body: its argument's value, or the spread properties given."""
    if spec["argument"] is not None:
        return arguments.get(spec["argument"])
    pairs = zip(spec["properties"], spec["arguments"], strict=True)
    return {wire: arguments[arg] for wire, arg in pairs if arg in arguments}


def write_only(spec: dict[str, Json], arguments: dict[str, Json]) -> set[str]:
    """The strings the body sends in its ``writeOnly`` properties (``spec["write_only"]``:
    a password): an answer quoting one has it redacted, as a credential sent
    (``answers``); an XML body's (as written): its elements' (attributes') named as one."""
    value = _value(spec, arguments)
    if isinstance(value, str):
        try:  # (expat: no entity expansion bomb)
            root = ElementTree.fromstring(value)
        except ElementTree.ParseError:
            return set()
        return {text.strip() for text in strip_xml(root, [spec["write_only"]]) if text.strip()}
    kept = set(_strings(without_read_only(value, spec["write_only"])))
    return {text for text in _strings(value) if text not in kept}


def _strings(value: Json) -> list[str]:
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return [value] if isinstance(value, str) else [s for item in items for s in _strings(item)]


def _unmarked(charset: str) -> str:
    """The codec writing JSON or form values in ``charset`` without a byte order mark (RFC
    8259 §8.1: MUST NOT add one; Python's ``utf-16`` and ``utf-32`` do, before every form
    value too): big-endian, as a text without one is read (RFC 2781 §4.3). An unknown
    charset raises ``LookupError``."""
    name = codecs.lookup(charset).name
    return f"{name}-be" if name in ("utf-16", "utf-32") else charset


def without_read_only(
    value: Json, plan: dict[str, Json], defs: Json = None, own: bool = True, via: Any = None
) -> Json:
    """``value`` without the properties ``plan`` drops at any depth (the importer's
    ``plans.Plans``: ``readOnly`` ones of a body, ``writeOnly`` ones of an answer; ``gone``: a
    map value or an item left out). ``own``: the object's own ``drop`` applies (not when
    ``plan`` is a member beside it: the object's ``drop`` says what is marked wherever
    declared); ``via``: the definitions applied at this depth (with
    ``own``), each once: a cycle ends, and so do the paths many ``allOf`` members lead to
    one by (each path once was exponential: 20 definitions of two members, 0.4 s a call)."""
    defs = plan.get("$defs", {}) if defs is None else defs
    via = set() if via is None else via
    ref = plan.get("ref")
    if ref is not None:
        if (ref, own) in via:
            return value  # applied already: dropping again changes nothing
        via.add((ref, own))
        return without_read_only(value, defs[ref], defs, own, via)
    for member in plan.get("all", ()):
        value = without_read_only(value, member, defs, False, via)
    if isinstance(value, dict):
        gone, inner = plan.get("drop", ()) if own else (), plan.get("properties", {})
        patterns: list[tuple[Any, Json]] = []
        if plan.get("patterns"):
            from .patterns import matcher  # (carried by a package calling an upstream)

            patterns = [(matcher(p), sub) for p, sub in plan["patterns"].items()]
        kept = {}
        for k, v in value.items():
            if k in gone:
                continue
            subs = [sub for found, sub in patterns if found(k)]
            if not subs and "additional" in plan and k not in plan.get("known", ()):
                subs = [plan["additional"]]  # what the schema leaves to additionalProperties
            if any("gone" in sub for sub in subs):
                continue  # a readOnly map value
            for sub in [inner[k], *subs] if k in inner else subs:
                v = without_read_only(v, sub, defs)
            kept[k] = v
        return kept
    if isinstance(value, list) and ("items" in plan or "prefix" in plan):
        heads, rest = plan.get("prefix", []), plan.get("items", {})
        return [
            without_read_only(v, heads[i] if i < len(heads) else rest, defs)
            for i, v in enumerate(value)
            if i < len(heads) or "gone" not in rest  # readOnly items after the prefix
        ]
    return value


def multipart(parts: list[Any], media: str) -> dict[str, Json]:
    """A multipart body (``content``) and its ``Content-Type`` (``type``). The parts of
    ``multipart/form-data`` are named by a ``form-data`` disposition (RFC 7578). Another
    type's (``mixed``, ``related``: RFC 2046) are ``inline``, a file an ``attachment``,
    still naming the property (RFC 2183 allows the parameter; parts also come in property
    order), and each has a ``Content-Type`` (without, one is read as US-ASCII text). A
    ``multipart/related`` body's root is its first part, whose type the body's ``type``
    gives, and each part has a ``Content-ID`` (RFC 2387). No parts is the closing boundary
    only: what Starlette and Werkzeug read as an empty form. A ``boundary`` the document's
    media type has is replaced (a second one is a duplicate parameter: Go refuses the body,
    Python's ``email`` reads the first), and a ``start`` it gives is the root's
    ``Content-ID``."""
    base, boundary = media.split(";", 1)[0].strip().lower(), os.urandom(16).hex()
    media = re.sub(r';\s*boundary\s*=\s*("[^"]*"|[^;]*)', "", media, flags=re.I)
    start = re.search(r';\s*start\s*=\s*"?([^";]+)', media, re.I)
    form, out = base == "multipart/form-data", list[bytes]()  # joined once, never re-copied
    for i, (name, (filename, data, kind, extra)) in enumerate(parts):
        if filename and name.endswith("\\"):  # only the last parameter may end in one
            raise ToolError(
                f"the file part {name!r} cannot be sent: python-multipart and Python's email "
                "misread a name ending in a backslash when a filename follows it"
            )
        how = "form-data" if form else "attachment" if filename else "inline"
        named = f"; name={_quoted(name)}" + (f"; filename={_quoted(filename)}" if filename else "")
        lines = [f"Content-Disposition: {how}{named}"]
        kind = kind or ("" if form else "text/plain; charset=utf-8")
        if base == "multipart/related":
            own = start.group(1) if start and i == 0 else f"<{i}.{quote(name, safe='')}@mcpgen>"
            lines.append(f"Content-ID: {own}")
            if i == 0 and not re.search(r";\s*type\s*=", media, re.I):
                media += f'; type="{kind.split(";")[0]}"'
        lines += [f"Content-Type: {kind}"] if kind else []
        lines += [f"{k}: {v}" for k, v in extra.items() if _TOKEN.fullmatch(k)]
        if any(CONTROL.search(line) for line in lines):  # a resource's own media type
            raise ToolError(f"the part {name!r} would have a header holding a control character")
        head = "".join(f"{line}\r\n" for line in lines)
        data = data.encode() if isinstance(data, str) else data
        out += [f"--{boundary}\r\n{head}\r\n".encode(), data, b"\r\n"]
    return {
        "content": b"".join([*out, f"--{boundary}--\r\n".encode()]),
        "type": f"{media}; boundary={boundary}",
    }


def _quoted(text: str) -> str:
    """A disposition parameter's value: quoted, ``"`` and controls percent-encoded (as
    browsers write form-data names). Only the last parameter may end in a backslash
    (``\\"``): python-multipart and Python's ``email`` read an escaped quote there."""
    escaped = re.sub(r'[\x00-\x1f"]', lambda m: f"%{ord(m[0]):02X}", text.replace("\\", "\\\\"))
    return f'"{escaped}"'


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


def multipart_parts(
    name: str,
    value: Json,
    part: dict[str, Json],
    headers: dict[str, str] | None = None,
    limit: int = MAX_FILE_BYTES,
) -> list[tuple[str, tuple[str | None, str | bytes, str | None, dict[str, str]]]]:
    """One multipart property as parts: one per array item unless ``explode`` is false
    (or the style ``deepObject``: ``a[0]``, ``a[1]``),
    files as their bytes, objects as JSON unless the encoding gives a ``style`` (OpenAPI
    3.1 applies it to multipart: the parts are then the fields a form would have); each
    part carries ``headers``. A part's
    ``Content-Type`` is one of those ``encoding.contentType`` lists (wildcards allowed):
    the file's own type when listed (a resource's, or what its first bytes say), else the
    first listed that is not a wildcard."""
    if value is None:
        return []
    listed = part.get("contentType") if isinstance(part.get("contentType"), str) else None
    split = part.get("explode", True) and part.get("style") != "deepObject"
    if isinstance(value, list) and split and "json" not in str(listed):
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
