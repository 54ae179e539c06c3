"""An upstream answer as a tool result.

JSON is structured content; text is text; images, audio and any other bytes (PDF,
octet-stream) are image, audio or embedded-resource content with their media type, never
a text dump of bytes. An answer is read (``capped.read``) up to a size limit (``<NAME>_API_MAX_RESPONSE_BYTES``,
default 10 MiB): past it the call is a tool error saying so. An HTTP error (4xx/5xx) is a
tool error naming the method, the operation's path template, the status and the URL
requested (credentials redacted), then the start of the body made readable: an RFC 9457
problem document as its title and detail, HTML as its text. A credential the request
sent (and a string it sent ``writeOnly``: ``wire_body.write_only``) is redacted from
errors, text and JSON answers alike (``links.next`` echoing a key),
before a JSON answer is checked against the output schema (the client checks what it
receives; an answer only the redaction makes invalid is a tool error that says so). The
properties the document marks ``writeOnly`` (a password a sloppy API echoes) are left out of
a JSON answer, at any depth, as the answer's status's schema has them (``operation["writeOnly"]``:
plans by status, only for an operation whose answer has any; ``gone``: the whole answer is,
and the result has no content); a refused answer's error then quotes none of it. So is any
body that parses as JSON, whatever its label (``text/plain``) or status (an error echoing
the request, or quoting what its own schema marks); a polled result the document does not
describe follows the request body's; an XML answer loses the elements so named
(and a map's marked values: ``wire_xml``).

A tool that advertises an output schema promises structured content, and a client checks
it (the SDK's raises "did not return structured content" otherwise): a 2xx answer that is
not JSON (an HTML page where JSON was documented), or JSON the advertised schema refuses,
is a tool error naming the status, the content type and what was expected.
"""

from __future__ import annotations

import codecs
import html
import json
import math
import re
from collections.abc import Callable, Collection, Sequence
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

import httpx2
import mcp_types as types

from . import wire_body, wire_request, wire_xml
from .content import audio, embedded_blob, image, structured, text, tool_error
from .errors import REDACTED

if TYPE_CHECKING:
    from .wire_request import Request

Json = Any
EXCERPT = 1000
MAX_RESPONSE_BYTES = 10 * 1024 * 1024
_CONTAINERS = (dict, list)  # what JSON parses to
MAX_DEPTH = 200  # levels a JSON answer may nest: the SDK cannot send a result nested 255
_PROBLEM_KEYS = ("type", "title", "status", "detail", "instance")
_HIDDEN_HTML = re.compile(r"<(script|style)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_BLOCK = re.compile(r"<\s*/?\s*(p|div|br|h[1-6]|li|tr|title|pre)\b[^>]*>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]*>")
_SURROGATE = re.compile(rb"\\\x00{0,3}u\x00{0,3}[dD]\x00{0,3}[89a-fA-F]")  # \\uD800 in any UTF
_GONE = re.compile(r"\S+(?: \S+)? failed: HTTP (?:404|410) ")  # error_text's head


def result(
    response: httpx2.Response,
    operation: dict[str, Json],
    request: Request,
    output: Any = None,
) -> types.CallToolResult:
    """The answer as a tool result; ``output``: a validator of the tool's advertised output
    schema (None: the tool advertises none, any answer goes)."""
    status = response.status_code
    shown = request.shown(str(response.url))
    media = response.headers.get("content-type", "").split(";")[0].strip().lower()
    hidden = _plans(operation["writeOnly"], status) if operation.get("writeOnly") else ()
    stripped: list[Json] = []  # the body's JSON without what they leave out, parsed once
    sent = (operation.get("body") or {}).get("write_only")  # (``request.secrets`` has them)
    if (any(hidden) or sent) and response.content:  # any body, whatever its status or label
        response, stripped = _without(response, media, hidden, request)
    if status >= 400 or (300 <= status < 400 and status != 304):  # a redirect not followed
        return tool_error(error_text(response, operation, request, media))
    json_answer = is_json(media)
    if output is not None and not (json_answer and response.content):  # a client refuses it
        return tool_error(unexpected(response, operation, request, media))
    if not response.content:
        return types.CallToolResult(content=[])
    if json_answer:
        try:
            data: Json = (
                stripped[0]
                if stripped
                else parsed(response, parse_constant=_not_json, parse_float=_finite)
            )
            deep = too_deep(data)
        except ValueError as exc:
            why = f": {exc}" if isinstance(exc, OutOfRange) else ""
            return tool_error(f"{shown}: the upstream answered invalid JSON (HTTP {status}){why}")
        except RecursionError:  # deeper than Python's parser goes
            deep = True
        if deep:
            return tool_error(
                f"{shown}: the upstream answered JSON nested more than {MAX_DEPTH} levels deep "
                f"(HTTP {status})"
            )
        raw = data
        if request.secrets or request.chosen:  # an echoed credential (``links.next``'s key)
            data = scrubbed(data, request.secrets, request.chosen)
        if operation.get("wrapped"):
            data, raw = {"result": data}, {"result": raw}
        if output is not None:  # what the client receives is checked (it checks it too)
            refused = _first_error(output, data, values=not hidden)
            if refused:
                redacted = bool(request.secrets or request.chosen)
                redacted = redacted and not _first_error(output, raw)
                return tool_error(mismatch(response, operation, request, refused, redacted))
        return structured(data)
    if media.startswith("text/") or media in ("application/xml", "application/yaml"):
        return types.CallToolResult(content=[text(request.scrub(response.text))])
    blob = response.content  # any other type (Atom's +xml, NDJSON...) may echo a key too
    for secret in sorted(request.secrets | request.chosen, key=len, reverse=True):
        blob = blob.replace(secret.encode(), REDACTED.encode()) if len(secret) >= 4 else blob
    if media.startswith("image/"):
        return types.CallToolResult(content=[image(blob, media)])
    if media.startswith("audio/"):
        return types.CallToolResult(content=[audio(blob, media)])
    uri = request.redact(str(response.url))
    return types.CallToolResult(
        content=[embedded_blob(uri, blob, media or "application/octet-stream")]
    )


def _plans(plans: dict[str, Json], status: int) -> list[dict[str, Json]]:
    """The ``writeOnly`` plans a success answer of ``status`` follows: its status's, else
    its range's (``2XX``), else every one (an undocumented status: what any answer marks);
    an error follows every one too, its own included (it may quote what a success holds)."""
    for key in (str(status), f"{status // 100}XX") if status < 300 else ():
        if key in plans:
            return [plans[key]]
    return list(plans.values())


def _without(
    response: httpx2.Response, media: str, hidden: Sequence[Json], request: Request
) -> tuple[httpx2.Response, list[Json]]:
    """``response`` without what the ``writeOnly`` plans leave out (a password), when its
    body is JSON whatever its label (``text/plain``, none) or status (an error echoing the
    request): nothing of it when the whole answer is; a body not JSON as it is. Its JSON so
    stripped comes too: a JSON success answer is not written again, only read once (its
    ``request``'s secrets are taken out next), another only when something is left out."""
    gone = any("gone" in plan for plan in hidden)
    if not gone and media.endswith(("/xml", "+xml")):  # (one that does not parse: as it is)
        body = wire_xml.without(response.content, hidden)
        return (response if body is None else _answer(response, media, body)), []
    try:
        data = None if gone else parsed(response, parse_constant=_not_json, parse_float=_finite)
        came = data
        for plan in () if gone else hidden:
            data = wire_body.without_read_only(data, plan)
        if not gone and is_json(media) and response.status_code < 300:
            return response, [data]
        data = scrubbed(data, request.secrets, request.chosen)
        if not gone and data == came:
            return response, [data]
        body = b"" if gone else json.dumps(data, ensure_ascii=False).encode()  # (UTF-8)
    except (ValueError, RecursionError):  # the checks that follow say what is wrong with it
        return response, []
    return _answer(response, media, body), [data]


def _answer(response: httpx2.Response, media: str, body: bytes) -> httpx2.Response:
    """``response`` with ``body`` (UTF-8) in place of its own."""
    headers = {"content-type": media} if media else {}
    return httpx2.Response(
        response.status_code, headers=headers, content=body, request=response.request
    )


def parsed(response: httpx2.Response, **options: Any) -> Json:
    """A JSON answer's value: its bytes as RFC 8259 reads them (UTF-8, -16 or -32, told
    apart by its first bytes), or decoded in another charset its ``Content-Type`` names
    (``charset=iso-8859-1``; it was "invalid JSON")."""
    charset = codecs.lookup(response.encoding or "utf-8").name  # a usable one (``capped.read``)
    content = response.content
    data = json.loads(content if charset.startswith("utf") else content.decode(charset), **options)
    if _SURROGATE.search(content):  # a lone one ("\\ud800") makes JSON no client parses
        whole = json.dumps(data, ensure_ascii=False).encode("utf-16-le", "surrogatepass")
        data = json.loads(whole.decode("utf-16-le", "replace"))
    return data


def is_json(media: str) -> bool:
    """A JSON media type: ``application/json``, any ``+json``, and ``text/json`` (what the
    importer reads as JSON too: ASP.NET answers it to ``Accept: text/json``)."""
    return media in ("application/json", "text/json") or media.endswith("+json")


def _not_json(constant: str) -> Json:
    raise ValueError(f"{constant} is not JSON")


class OutOfRange(ValueError):
    """A JSON number no float holds (``1e400``): the SDK cannot send it (it was "internal
    error")."""


def _finite(number: str) -> float:
    value = float(number)
    if math.isinf(value):
        raise OutOfRange(f"the number {number[:40]} is out of range")
    return value


def too_deep(data: Json, limit: int = MAX_DEPTH) -> bool:
    """Whether ``data`` nests more than ``limit`` arrays and objects (level by level, no
    recursion; about as long as parsing the answer took)."""
    level = [data] if isinstance(data, dict | list) else []
    for _ in range(limit):
        below: list[Json] = []
        for value in level:
            items = value.values() if isinstance(value, dict) else value
            below += [item for item in items if type(item) in _CONTAINERS]
        if not below:
            return False
        level = below
    return True


def scrubbed(data: Json, secrets: Collection[str], chosen: Collection[str] = ()) -> Json:
    """``data`` with every credential sent removed from its strings and keys (4 characters
    or more: ``wire_request.scrubber``) and any string that is one, whatever its length
    (``"q7z"``: known exactly); a 3-character one is never cut out of text. What the caller
    sent that the document marks secret (``chosen``: a ``writeOnly`` password) is a value
    only: a string equal to it is ``REDACTED``, one holding it standing alone (4 characters
    or more) has it cut out; a key is never rewritten (a password ``user`` left
    ``{"user": ...}`` as ``{"REDACTED": ...}``), nor a word holding it (``username``).
    Numbers are left alone: an equal page number or year is no echo of a PIN."""
    whole = (set(secrets) | set(chosen)) - {""}
    scrub = wire_request.scrubber(secrets, chosen)
    key = scrub if not chosen else wire_request.scrubber(secrets) if secrets else str

    def each(data: Json) -> Json:
        if isinstance(data, str):
            return REDACTED if data in whole else scrub(data)
        if isinstance(data, list):
            return [each(item) for item in data]
        if isinstance(data, dict):
            return {key(name): each(item) for name, item in data.items()}
        return data

    return each(data)


def error_text(
    response: httpx2.Response, operation: dict[str, Json], request: Request, media: str
) -> str:
    """``POST /pets/{id} failed: HTTP 404 Not Found (POST https://...)``, then the body."""
    head = _head(response, operation, request, "failed:")
    head += f" ({request.shown(str(response.url))})"
    body = _excerpt(request, readable(response, media, request.scrub), EXCERPT)
    return request.scrub(f"{head}: {body}" if body else head)


def failure(result: types.CallToolResult) -> Exception:
    """A resource read's tool error as what ``resources/read`` answers: the API's 404 or
    410 (``error_text``) is ``ResourceNotFound`` (as an unknown URI), the rest ``ToolError``."""
    from .errors import ResourceNotFound, ToolError

    message = " ".join(c.text for c in result.content if isinstance(c, types.TextContent))
    return (ResourceNotFound if _GONE.match(message) else ToolError)(message)


def _head(
    response: httpx2.Response, operation: dict[str, Json], request: Request, verb: str = "answered"
) -> str:
    """``GET /pets/{id} answered HTTP 200 OK`` (the operation, ``verb`` and the status)."""
    status = response.status_code
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = ""
    where = f"{request.method} {operation.get('path') or ''}".rstrip()
    return f"{where} {verb} HTTP {status} {reason}".rstrip()


def unexpected(
    response: httpx2.Response, operation: dict[str, Json], request: Request, media: str
) -> str:
    """A success answer that is not the JSON the tool's output schema describes."""
    expected = operation.get("responseType") or "application/json"
    if response.status_code in (204, 205, 304):  # not a failure: say so
        got = "no content (a success without the JSON a result of this tool must carry)"
    elif not response.content:
        got = "an empty body"
    else:
        got = f"{media or 'a body without a content type'} ({len(response.content)} bytes)"
    head = f"{_head(response, operation, request)} with {got} where {expected} was expected"
    head += f" (the tool's output schema describes JSON; {request.shown(str(response.url))})"
    if operation.get("writeOnly"):  # (JSON as text/plain: its password is not left out)
        return request.scrub(head)
    body = _excerpt(request, readable(response, media, request.scrub), EXCERPT // 4)
    return request.scrub(f"{head}: {body}" if body else head)


def mismatch(
    response: httpx2.Response,
    operation: dict[str, Json],
    request: Request,
    refused: str,
    redacted: bool = False,
) -> str:
    """A JSON success answer that the tool's advertised output schema refuses (``redacted``:
    only once the credentials it echoes are redacted)."""
    what = (
        "matches the tool's output schema until the credential it echoes is redacted"
        if redacted
        else "does not match the tool's output schema"
    )
    return request.scrub(
        f"{_head(response, operation, request)} with JSON that {what}: "
        f"{_excerpt(request, refused, EXCERPT // 4)} "
        f"({request.shown(str(response.url))})"
    )


def _excerpt(request: Request, text: str, size: int) -> str:
    """The start of ``text`` (from the upstream), credentials taken out *before* it is cut:
    a credential the cut runs through would otherwise be shown in part."""
    text = request.scrub(text)
    return text[:size] + "…" if len(text) > size else text


def _first_error(validator: Any, data: Json, values: bool = True) -> str:
    """Where ``data`` departs from the schema, in one line ("" when it does not); without
    ``values``, the keyword it fails instead of the message, which quotes the value (what
    the plan could not strip from an answer of another shape: a password)."""
    try:
        error = next(iter(validator.iter_errors(data)), None)
    except RecursionError:
        return "(result): nested too deeply"
    if error is None:
        return ""
    where = ".".join(str(p) for p in error.absolute_path) or "(result)"
    if values:
        return f"{where}: {error.message}"
    told = error.validator_value  # the schema's (``"object"``, a list of required names)
    plain = not isinstance(told, dict | list) or not any(isinstance(v, dict) for v in told)
    return f"{where}: fails its schema's '{error.validator}'" + (
        f" ({_compact(told)[:100]})" if plain else ""
    )


def readable(response: httpx2.Response, media: str, scrub: Callable[[str], str] = str) -> str:
    """The start of an error body as text a model can read; ``scrub`` takes the credentials
    out of the text before any of it is cut."""
    if not response.content:
        return ""
    if is_json(media):
        try:
            data = parsed(response)
            if too_deep(data):
                raise ValueError("nested too deeply to render")
        except (ValueError, RecursionError):
            return _squeeze(scrub(response.text)[: EXCERPT * 2])
        return problem(data) if isinstance(data, dict) else _compact(data)
    if media in ("text/html", "application/xhtml+xml"):
        return html_text(scrub(response.text)[: EXCERPT * 20])
    if media.startswith("text/") or media in ("", "application/xml", "application/yaml"):
        return _squeeze(scrub(response.text)[: EXCERPT * 2])
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
