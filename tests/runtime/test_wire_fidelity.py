"""What an imported operation sends, attacked value by value against a local upstream
that records the raw request: JSON ``null``, integral numbers, and cookies the upstream
sets (the request carries the operation's parameters and credential, nothing else), and
URLs with a query of their own (a base URL's, a poll ``Location``'s)."""

from __future__ import annotations

import base64
import contextlib
import json
from typing import Any
from urllib.parse import parse_qs, quote_plus

import httpx2
import pytest
from wirekit import imported, operations, recorder, upstream

from mcpgen.runtime.errors import ToolError

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]


def document(path: str, params: list[dict[str, Any]]) -> Any:
    op = {"operationId": "send", "parameters": params, "responses": {"200": {"description": "ok"}}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {path: {"get": op}},
    }


def posted(op: dict[str, Any]) -> Any:
    """An OpenAPI 3.1 document whose one operation ``op`` is ``POST /x``."""
    return {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/x": {"post": op}},
    }


def body_operation(media: str, schema: Any) -> Any:
    """The imported ``send`` operation of a document whose required body is ``media``."""
    op = {
        "operationId": "send",
        "requestBody": {"required": True, "content": {media: {"schema": schema}}},
        "responses": {"200": {"description": "ok"}},
    }
    return operations(posted(op))["send"]


def param(name: str, where: str, schema: Any) -> dict[str, Any]:
    return {"name": name, "in": where, "required": where == "path", "schema": schema}


async def test_a_cookie_the_upstream_sets_is_never_sent_again() -> None:
    """The server's one HTTP client serves every caller: a session cookie one call
    received must not ride along on the next call (another caller's, maybe)."""
    data = document("/x", [])
    with recorder() as rec:
        api = upstream(rec.url)
        rec.headers = [("Set-Cookie", "session=caller-a; Path=/")]
        assert not (await api.call(operations(data)["send"], {})).is_error
        rec.headers = []
        assert not (await api.call(operations(data)["send"], {})).is_error
        assert [seen.headers.get("cookie") for seen in rec.seen] == [None, None]


NULLABLE = {"type": "string", "nullable": True}


async def test_null_is_never_sent_as_python_none() -> None:
    """A ``null`` header, cookie or query value is left out (an absent optional
    parameter); a ``null`` array item is empty; a ``null`` path value is refused."""
    params = [
        param("q", "query", NULLABLE),
        param("X-N", "header", NULLABLE),
        param("c", "cookie", NULLABLE),
        param("items", "query", {"type": "array", "items": NULLABLE}),
        param("X-Items", "header", {"type": "array", "items": NULLABLE}),
    ]
    given = {"q": None, "X-N": None, "c": None, "items": ["a", None], "X-Items": [None, "b"]}
    with recorder() as rec:
        result = await upstream(rec.url).call(operations(document("/x", params))["send"], given)
        assert not result.is_error, result.content
        (seen,) = rec.seen
    assert seen.target == "/x?items=a&items="
    assert (seen.headers.get("x-n"), seen.headers.get("cookie")) == (None, None)
    assert seen.headers["x-items"] == ",b"
    with recorder() as rec:
        op = operations(document("/x/{p}", [param("p", "path", NULLABLE)]))["send"]
        with pytest.raises(ToolError, match="'p' may not be ''"):
            await upstream(rec.url).call(op, {"p": None})
        assert rec.seen == []


async def test_an_integral_number_is_sent_without_a_fraction() -> None:
    """JSON does not tell ``1`` from ``1.0``, and JSON Schema's ``integer`` accepts both: a
    parameter sends ``1`` (an API parsing an integer refuses ``1.0``)."""
    params = [
        param("p", "path", {"type": "integer"}),
        param("q", "query", {"type": "integer"}),
        param("r", "query", {"type": "number"}),
        param("X-I", "header", {"type": "array", "items": {"type": "integer"}}),
    ]
    given = {"p": 1.0, "q": -2.0, "r": 2.5, "X-I": [3.0, 4]}
    with recorder() as rec:
        op = operations(document("/x/{p}", params))["send"]
        result = await upstream(rec.url).call(op, given)
        assert not result.is_error, result.content
        (seen,) = rec.seen
    assert seen.target == "/x/1?q=-2&r=2.5"
    assert seen.headers["x-i"] == "3,4"


async def test_a_large_integral_number_is_sent_without_a_fraction_or_an_exponent() -> None:
    """``2.0**53`` went as ``9007199254740992.0`` and ``1e16`` as ``1e+16``: an API parsing
    an integer refuses both (an integral float is an exact integer, whatever its size)."""
    params = [param("a", "query", {"type": "integer"}), param("b", "query", {"type": "integer"})]
    with recorder() as rec:
        op = operations(document("/x", params))["send"]
        result = await upstream(rec.url).call(op, {"a": 2.0**53, "b": -1e16})
        assert not result.is_error, result.content
        (seen,) = rec.seen
    assert seen.target == "/x?a=9007199254740992&b=-10000000000000000"


async def test_a_header_parameter_named_like_the_credential_header_does_not_ride_along() -> None:
    """Header names are case-insensitive: a declared ``x-key`` parameter and the ``X-Key``
    credential are one header, and the credential's value is the one sent (as when the
    parameter is spelled the same), not both (an upstream reading the first header would
    take the caller's)."""
    schemes = {"key": {"type": "apiKey", "in": "header", "name": "X-Key"}}
    data = document("/x", [param("x-key", "header", {"type": "string"})])
    data["components"] = {"securitySchemes": schemes}
    data["paths"]["/x"]["get"]["security"] = [{"key": []}]
    with recorder() as rec:
        result = await upstream(rec.url, schemes).call(operations(data)["send"], {"x-key": "mine"})
        assert not result.is_error, result.content
        (seen,) = rec.seen
    assert seen.raw_headers.count(("X-Key", "secret-key")) == 1
    assert [name for name, _ in seen.raw_headers if name.lower() == "x-key"] == ["X-Key"]


async def test_a_delimited_object_is_its_members_joined_by_the_delimiter() -> None:
    """OpenAPI's style table: ``spaceDelimited`` and ``pipeDelimited`` objects are
    ``color=R%20100%20G%20200`` and ``color=R|100|G|200`` (not comma-separated)."""
    color = {"type": "object", "properties": {"R": {"type": "integer"}, "G": {"type": "integer"}}}
    params = [
        {**param("space", "query", color), "style": "spaceDelimited", "explode": False},
        {**param("pipe", "query", color), "style": "pipeDelimited", "explode": False},
    ]
    given = {"space": {"R": 100, "G": 200}, "pipe": {"R": 1, "G": 2}}
    with recorder() as rec:
        result = await upstream(rec.url).call(operations(document("/x", params))["send"], given)
        assert not result.is_error, result.content
        (seen,) = rec.seen
    assert seen.target == "/x?space=R%20100%20G%20200&pipe=R%7C1%7CG%7C2"


async def test_a_path_value_never_leaves_its_segment() -> None:
    """Under a base URL with a path and a trailing slash, a path value's ``/``, ``%2F``,
    ``?``, ``#`` and ``../`` stay inside its segment; ``.`` and ``..`` (a label's ``.``
    too) are refused: the HTTP client would resolve them to another endpoint."""
    label = {**param("l", "path", {"type": "string"}), "style": "label"}
    op = operations(document("/files/{name}/{l}", [param("name", "path", {}), label]))["send"]
    values = ["a/b", "%2F", "a?b#c", "../admin", "é"]
    with recorder() as rec:
        api = upstream(rec.url + "/api/")
        for value in values:
            assert not (await api.call(op, {"name": value, "l": "x"})).is_error
        for name, dots in [(".", "x"), ("..", "x"), ("x", "."), ("x", "")]:
            with pytest.raises(ToolError, match=r"may not be '\.\.?'"):
                await api.call(op, {"name": name, "l": dots})
    assert [seen.target for seen in rec.seen] == [
        f"/api/files/{sent}/.x" for sent in ["a%2Fb", "%252F", "a%3Fb%23c", "..%2Fadmin", "%C3%A9"]
    ]


async def test_an_empty_matrix_value_is_its_name_alone() -> None:
    """OpenAPI's style table and RFC 6570 (``{;x}``, ``{;x*}``): an empty matrix value is
    ``;color``, not ``;color=``."""
    params = [
        {**param("a", "path", {"type": "string"}), "style": "matrix"},
        {**param("b", "path", {"type": "array", "items": {}}), "style": "matrix", "explode": True},
    ]
    with recorder() as rec:
        op = operations(document("/x/{a}/{b}", params))["send"]
        result = await upstream(rec.url).call(op, {"a": "", "b": ["", "1"]})
        assert not result.is_error, result.content
        (seen,) = rec.seen
    assert seen.target == "/x/;a/;b;b=1"


async def test_a_form_list_is_joined_by_a_bare_comma_and_its_items_commas_are_encoded() -> None:
    """OpenAPI's style table and RFC 6570 (``{?list}``): ``color=blue,black``, an item's own
    comma ``%2C``. Every comma went as ``%2C``: an API splitting the raw query on ``,``
    read one item, and one decoding first could not tell ``["a,b", "c"]`` from three."""
    color = {"type": "object", "properties": {"R": {"type": "string"}}}
    params = [
        {**param("csv", "query", {"type": "array", "items": {}}), "explode": False},
        {**param("color", "query", color), "explode": False},
        param("one", "query", {"type": "string"}),
    ]
    given = {"csv": ["a,b", "c", True], "color": {"R": "1,2"}, "one": "d,e"}
    with recorder() as rec:
        result = await upstream(rec.url).call(operations(document("/x", params))["send"], given)
        assert not result.is_error, result.content
        (seen,) = rec.seen
    assert seen.target == "/x?csv=a%2Cb,c,true&color=R,1%2C2&one=d%2Ce"


async def test_allow_reserved_sends_reserved_characters_as_they_are() -> None:
    """``allowReserved: true`` (a query value that is a path, a URL, a filter expression):
    RFC 3986's reserved characters go unencoded; any other percent-encoded, and so are
    those OpenAPI's Appendix C has the client encode still: ``[]#`` (not allowed in a
    query) and ``&=+`` (a bare ``&`` cut the value in two, ``y é#z`` a parameter of its
    own; a ``+`` was a space to a form decoder: Azure's OData ``$filter`` with a time zone
    offset). It was refused with a warning, every value encoded."""
    params = [
        {**param("q", "query", {"type": "string"}), "allowReserved": True},
        {**param("l", "query", {"type": "array", "items": {}}), "allowReserved": True},
    ]
    data = document("/x", params)
    result = imported(data)
    assert not [p for p in result.problems if "allowReserved" in str(p)], result.problems
    given = {"q": "a/b?c:d@e!$'()*+,;=[x]&y é#z", "l": ["f/g", "h i"]}
    with recorder() as rec:
        result = await upstream(rec.url).call(operations(data)["send"], given)
        assert not result.is_error, result.content
        (seen,) = rec.seen
    assert seen.target == "/x?q=a/b?c:d@e!$'()*%2B,;%3D%5Bx%5D%26y%20%C3%A9%23z&l=f/g&l=h%20i"


@pytest.mark.parametrize(
    ("media", "schema", "given", "sent"),
    [
        ("*/*", {"type": "object"}, {"a": 1}, "application/json"),
        ("application/*", {"type": "object"}, {"a": 1}, "application/json"),
        ("text/*", {"type": "string"}, "hi", "text/plain; charset=utf-8"),
        ("image/*", {"type": "string", "format": "binary"}, "aGk=", "application/octet-stream"),
        ("text/csv; charset=utf-8", {"type": "string"}, "a,b", "text/csv; charset=utf-8"),
    ],
)
async def test_a_media_range_is_never_sent_as_the_content_type(
    media: str, schema: Any, given: Any, sent: str
) -> None:
    """A body the document lists under ``*/*`` or ``image/*`` is sent with the type it is
    sent as: a media range names no type (RFC 9110) and an API may refuse it (415)."""
    op = {
        "operationId": "send",
        "requestBody": {"required": True, "content": {media: {"schema": schema}}},
        "responses": {"200": {"description": "ok"}},
    }
    data = posted(op)
    with recorder() as rec:
        result = await upstream(rec.url).call(operations(data)["send"], {"body": given})
        assert not result.is_error, result.content
        (seen,) = rec.seen
    assert seen.headers["content-type"] == sent


async def test_an_integral_number_in_a_json_body_or_json_parameter_has_no_fraction() -> None:
    """A strictly typed API (Go's ``encoding/json``, serde) refuses ``1.0`` for an integer;
    JSON means the same by ``1``."""
    item = {"type": "object", "properties": {"n": {"type": "integer"}, "x": {"type": "number"}}}
    op = {
        "operationId": "send",
        "parameters": [
            {"name": "f", "in": "query", "content": {"application/json": {"schema": item}}}
        ],
        "requestBody": {"required": True, "content": {"application/json": {"schema": item}}},
        "responses": {"200": {"description": "ok"}},
    }
    data = posted(op)
    given = {"f": {"n": 2.0, "x": 0.5}, "n": 1.0, "x": 1.5}
    with recorder() as rec:
        result = await upstream(rec.url).call(operations(data)["send"], given)
        assert not result.is_error, result.content
        (seen,) = rec.seen
    assert json.loads(seen.body) == {"n": 1, "x": 1.5}
    assert b'"n": 1,' in seen.body
    assert seen.target == "/x?f=" + quote_plus('{"n":2,"x":0.5}')


@pytest.mark.parametrize(
    ("media", "sent"),
    [
        ("text/plain", "text/plain; charset=utf-8"),
        ("text/csv", "text/csv; charset=utf-8"),
        ("text/plain; charset=ISO-8859-1", "text/plain; charset=ISO-8859-1"),
        ("application/xml", "application/xml"),
    ],
)
async def test_a_text_body_is_in_the_charset_its_content_type_names(media: str, sent: str) -> None:
    """A text body goes out as UTF-8 and says so (without a ``charset`` a server may read
    it as ISO-8859-1, Spring's default for ``text/plain``: ``é`` arrives as ``Ã©``), or in
    the charset the document names."""
    op = {
        "operationId": "send",
        "requestBody": {"required": True, "content": {media: {"schema": {"type": "string"}}}},
        "responses": {"200": {"description": "ok"}},
    }
    data = posted(op)
    with recorder() as rec:
        result = await upstream(rec.url).call(operations(data)["send"], {"body": "café"})
        assert not result.is_error, result.content
        (seen,) = rec.seen
    charset = "latin-1" if "8859" in media else "utf-8"
    assert (seen.headers["content-type"], seen.body) == (sent, "café".encode(charset))


@pytest.mark.parametrize("charset", ["utf-16", "utf-32-be", "utf-8"])
async def test_a_json_body_is_in_the_charset_its_content_type_names(charset: str) -> None:
    """``application/json; charset=utf-16``: the body went as ASCII bytes under a header
    that said UTF-16 (an API reading it as said gets garbage)."""
    media = f"application/json; charset={charset}"
    send = body_operation(media, {"type": "object", "properties": {"name": {"type": "string"}}})
    with recorder() as rec:
        result = await upstream(rec.url).call(send, {"name": "Größe"})
        assert not result.is_error, result.content
        (seen,) = rec.seen
    assert seen.headers["content-type"] == media
    assert json.loads(seen.body) == {"name": "Größe"}  # (detects UTF-16 and UTF-32)


@pytest.mark.parametrize("charset", ["utf-16", "UTF16", "utf-16le", "utf-16-be", "utf-32"])
async def test_a_json_body_in_utf_16_has_no_byte_order_mark(charset: str) -> None:
    """RFC 8259 §8.1: a JSON text MUST NOT start with a BOM. Python's ``utf-16`` (and
    ``utf-32``) codec writes one, little-endian: a ``charset=utf-16`` body is big-endian
    without it now (RFC 2781 §4.3: no BOM means big-endian), ``-le``/``-be`` as declared.
    Starlette's ``await request.json()`` (``json.loads`` of the bytes) reads it."""
    from starlette.requests import Request

    media = f"application/json; charset={charset}"
    send = body_operation(media, {"type": "object", "properties": {"name": {"type": "string"}}})
    with recorder() as rec:
        result = await upstream(rec.url).call(send, {"name": "Größe"})
        assert not result.is_error, result.content
        (seen,) = rec.seen

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": seen.body, "more_body": False}

    headers = [(b"content-type", media.encode())]
    read = await Request({"type": "http", "method": "POST", "headers": headers}, receive).json()
    assert read == {"name": "Größe"}
    order = "le" if "le" in charset else "be"
    width = "32" if "32" in charset else "16"
    assert seen.body == json.dumps({"name": "Größe"}).encode(f"utf-{width}-{order}")


async def test_a_form_body_is_percent_encoded_in_the_charset_its_content_type_names() -> None:
    """``application/x-www-form-urlencoded; charset=iso-8859-1`` (read so by servlet
    containers): ``é`` went as UTF-8's ``%C3%A9``, read as ``Ã©``; one it lacks is refused."""
    media = "application/x-www-form-urlencoded; charset=iso-8859-1"
    send = body_operation(media, {"type": "object", "properties": {"name": {"type": "string"}}})
    with recorder() as rec:
        result = await upstream(rec.url).call(send, {"name": "Größe"})
        assert not result.is_error, result.content
        with pytest.raises(ToolError, match="which latin-1 lacks"):
            await upstream(rec.url).call(send, {"name": "€"})
        (seen,) = rec.seen
    assert seen.body == b"name=Gr%F6%DFe"


async def test_a_form_body_in_utf_16_has_no_byte_order_mark_before_each_value() -> None:
    """``urlencode(..., encoding="utf-16")`` encodes each key and value on its own, each
    with a BOM: a decoder of the whole form read U+FEFF inside every value."""
    media = "application/x-www-form-urlencoded; charset=utf-16"
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}
    send = body_operation(media, schema)
    with recorder() as rec:
        result = await upstream(rec.url).call(send, {"a": "é", "b": "x"})
        assert not result.is_error, result.content
        (seen,) = rec.seen
    assert seen.body == b"%00a=%00%E9&%00b=%00x"
    assert parse_qs(seen.body.decode(), encoding="utf-16-be") == {"a": ["é"], "b": ["x"]}


async def test_a_body_in_a_codec_that_writes_no_text_is_a_tool_error() -> None:
    """``charset=idna`` (a codec Python knows, for host names): a long body raised a bare
    ``UnicodeError`` out of the call."""
    send = body_operation("text/plain; charset=idna", {"type": "string"})
    with recorder() as rec:
        with pytest.raises(ToolError, match="cannot be written in idna"):
            await upstream(rec.url).call(send, {"body": "a" * 100})
        assert rec.seen == []


async def test_a_text_body_its_charset_cannot_carry_is_a_tool_error() -> None:
    op = {
        "operationId": "send",
        "requestBody": {
            "required": True,
            "content": {"text/plain; charset=us-ascii": {"schema": {"type": "string"}}},
        },
        "responses": {"200": {"description": "ok"}},
    }
    data = posted(op)
    with recorder() as rec:
        with pytest.raises(ToolError, match="'é', which ascii lacks"):
            await upstream(rec.url).call(operations(data)["send"], {"body": "café"})
        assert rec.seen == []


async def test_a_credential_a_success_answer_echoes_is_redacted() -> None:
    """APIs keyed by a query parameter echo it in the links they answer (NASA's
    ``links.next``: ``...?page=2&api_key=...``): the caller of the MCP server never sees
    the operator's key, in a success no more than in an error."""
    schemes = {"key": {"type": "apiKey", "in": "query", "name": "api_key"}}
    data = document("/x", [])
    data["components"] = {"securitySchemes": schemes}
    data["paths"]["/x"]["get"]["security"] = [{"key": []}]
    with recorder() as rec:
        api = upstream(rec.url, schemes)
        link = rec.url + "/x?page=2&api_key=secret-key"
        rec.answer(200, "application/json", json.dumps({"links": {"next": link}}).encode())
        result = await api.call(operations(data)["send"], {})
        rec.answer(200, "text/plain", b"next: " + link.encode())
        text = await api.call(operations(data)["send"], {})
    assert rec.seen[0].target == "/x?api_key=secret-key"
    assert result.structured_content == {"links": {"next": link.replace("secret-key", "REDACTED")}}
    assert "secret-key" not in str(result.content) + str(text.content)


@pytest.mark.parametrize("number", [b"NaN", b"-Infinity"])
async def test_an_answer_with_nan_is_invalid_json_not_an_internal_error(number: bytes) -> None:
    """Python's ``json.dumps`` writes ``NaN`` (a pandas-backed API answers it): it is not
    JSON, and a result cannot carry it; the caller is told so, as for any invalid JSON."""
    with recorder() as rec:
        rec.answer(200, "application/json", b'{"mean": ' + number + b"}")
        result = await upstream(rec.url).call(operations(document("/x", []))["send"], {})
    message = result.content[0].text  # type: ignore[union-attr]
    assert result.is_error and "invalid JSON (HTTP 200)" in message, message


async def test_a_header_value_with_outer_spaces_is_sent_as_http_reads_it() -> None:
    """HTTP drops the spaces and tabs around a header value (RFC 9110 5.5), and h11 refuses
    to send them: the call was "failed: LocalProtocolError". The value goes out as any
    server would read it."""
    data = document("/x", [param("X-V", "header", {"type": "string"})])
    with recorder() as rec:
        result = await upstream(rec.url).call(operations(data)["send"], {"X-V": " a b\t"})
        assert not result.is_error, result.content
        (seen,) = rec.seen
    assert ("X-V", "a b") in seen.raw_headers


@pytest.mark.parametrize("status", [300, 302, 307])
async def test_a_redirect_that_cannot_be_followed_is_an_error_not_a_result(status: int) -> None:
    """A 3xx without a ``Location`` (or a 300 Multiple Choices) is no answer to the call:
    its body was the tool's result, as if the operation had succeeded."""
    with recorder() as rec:
        rec.answer(status, "application/json", b'{"choices": ["a", "b"]}')
        result = await upstream(rec.url).call(operations(document("/x", []))["send"], {})
    message = result.content[0].text  # type: ignore[union-attr]
    assert result.is_error and f"HTTP {status}" in message, message


@pytest.mark.parametrize("base", ["/v1?api-version=2024-01", "/v1/?api-version=2024-01"])
@pytest.mark.parametrize("setting", [False, True])
async def test_a_base_url_with_a_query_keeps_it_and_the_path_goes_before_it(
    base: str, setting: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server URL (or the base URL setting) may carry a query (Azure's
    ``?api-version=...``): the operation's path goes before it, its parameters stay, and
    the operation's own query parameters come after them. The path was appended to the
    query, and the query then dropped (``/v1`` was called)."""
    schemes = {"key": {"type": "apiKey", "in": "query", "name": "api_key"}}
    params = [param("id", "path", {"type": "string"}), param("q", "query", {"type": "string"})]
    data = document("/items/{id}", params)
    data["components"] = {"securitySchemes": schemes}
    data["paths"]["/items/{id}"]["get"]["security"] = [{"key": []}]
    with recorder() as rec:
        api = upstream("http://unused.invalid" if setting else rec.url + base, schemes)
        if setting:
            monkeypatch.setenv(api.settings["baseUrlEnv"], rec.url + base)
        op = operations(data)["send"]
        assert not (await api.call(op, {"id": "7", "q": "a b"})).is_error
        assert not (await api.call(op, {"id": "8"})).is_error
    assert [seen.target for seen in rec.seen] == [
        "/v1/items/7?api-version=2024-01&q=a%20b&api_key=secret-key",
        "/v1/items/8?api-version=2024-01&api_key=secret-key",
    ]


@pytest.mark.parametrize("key", [None, "k3y"])
async def test_a_poll_location_keeps_its_own_query(key: str | None) -> None:
    """The ``Location`` of a 202 (``/jobs/1?api-version=2``) is polled with its query (and
    the query credential after it): the poll sent ``/jobs/1`` (or ``/jobs/1?api_key=...``)."""
    from mcpgen.runtime.upstream import Request
    from mcpgen.runtime.upstream_poll import poll

    with recorder() as rec:
        sent = Request("POST", rec.url + "/jobs")
        if key is not None:
            sent.parts["query"]["api_key"] = key
            sent.secret_query.add("api_key")
        started = httpx2.Response(
            202,
            headers={"location": "/jobs/1?api-version=2", "retry-after": "0"},
            request=httpx2.Request("POST", sent.url),
        )
        done = await poll(upstream(rec.url), sent, started, {"interval": 0}, None)
        assert done.status_code == 200
    expected = "/jobs/1?api-version=2" + ("" if key is None else f"&api_key={key}")
    assert [seen.target for seen in rec.seen] == [expected]


PET = {
    "type": "object",
    "properties": {"id": {"type": "integer", "readOnly": True}, "name": {"type": "string"}},
}
PETS = {
    "open": {**PET, "additionalProperties": True},
    "allOf": {"allOf": [{"$ref": "#/components/schemas/Pet"}, {"required": ["name"]}]},
    "nullable": {"$ref": "#/components/schemas/Pet", "nullable": True},
    # ``id`` is written by one alternative: the value may be a Pet, whose id the server
    # sets (round 22: it was sent); one that requires it writable is the caller's to send
    "oneOf": {"oneOf": [PET, {"properties": {"id": {"type": "integer"}}}]},
    "oneOfRequired": {"oneOf": [PET, {"properties": {"id": {}}, "required": ["id"]}]},
    # ``readOnly`` behind a reference: the property's definition says it (OpenAPI 3.0
    # wraps a reference in ``allOf`` to give it a description)
    "refProperty": {
        **PET,
        "additionalProperties": True,
        "required": ["id", "name"],
        "properties": {
            **PET["properties"],
            "id": {"$ref": "#/components/schemas/Id", "examples": [7]},
        },
    },
    "allOfProperty": {
        **PET,
        "additionalProperties": True,
        "required": ["id", "name"],
        "properties": {
            **PET["properties"],
            "id": {"allOf": [{"$ref": "#/components/schemas/Id"}], "description": "d"},
        },
    },
}
COMPONENTS = {"Pet": PET, "Id": {"type": "integer", "readOnly": True}}


@pytest.mark.parametrize("shape", sorted(PETS))
async def test_a_read_only_property_of_a_whole_body_is_not_sent(shape: str) -> None:
    """OpenAPI: ``readOnly`` properties SHOULD NOT be sent in a request. A spread body
    offers no argument for them; a body passed whole (open, composed) sent what the model
    gave, ``id`` included (an API may refuse it, or take the caller's id)."""
    op = {
        "operationId": "send",
        "requestBody": {"required": True, "content": {"application/json": {"schema": PETS[shape]}}},
        "responses": {"200": {"description": "ok"}},
    }
    data = posted(op)
    data["components"] = {"schemas": COMPONENTS}
    with recorder() as rec:
        given = {"body": {"id": 7, "name": "Rex", "kind": "dog"}}
        result = await upstream(rec.url).call(operations(data)["send"], given)
        assert not result.is_error, result.content
        (seen,) = rec.seen
    kept = {"id": 7} if shape == "oneOfRequired" else {}
    assert json.loads(seen.body) == {**kept, "name": "Rex", "kind": "dog"}


async def test_a_read_only_property_of_an_object_parameter_is_neither_offered_nor_sent() -> None:
    """An object in the query (``deepObject``, ``form`` exploded or not, its schema inline
    or a definition) or the path: its ``readOnly`` ``id`` was offered in the tool's input
    and sent (``f[id]=1``, ``id=2``, ``h=id,3,...``, ``/x/id,4,...``), unlike a body's."""
    pet = {"$ref": "#/components/schemas/Pet"}
    params = [
        {**param("f", "query", PET), "style": "deepObject", "explode": True},
        {**param("g", "query", pet), "style": "form", "explode": True},
        {**param("h", "query", PET), "style": "form", "explode": False},
        param("p", "path", PET),
    ]
    data = document("/x/{p}", params)
    data["components"] = {"schemas": COMPONENTS}
    (tool,) = imported(data).tools
    assert '"id"' not in json.dumps(tool["input"]), tool["input"]
    given = {key: {"id": n, "name": "Rex"} for n, key in enumerate("fghp", 1)}
    with recorder() as rec:
        result = await upstream(rec.url).call(operations(data)["send"], given)
        assert not result.is_error, result.content
        (seen,) = rec.seen
    assert seen.target == "/x/name,Rex?f%5Bname%5D=Rex&name=Rex&h=name,Rex"


NODE = {  # a recursive definition with a readOnly property, reached in every way
    "type": "object",
    "properties": {
        "id": {"type": "integer", "readOnly": True},
        "name": {"type": "string"},
        "parent": {"$ref": "#/components/schemas/Node", "nullable": True},
        "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
        "tags": {"type": "array", "items": {"$ref": "#/components/schemas/Id"}},
    },
}


@pytest.mark.parametrize("spread", [True, False])
async def test_a_read_only_property_of_a_nested_object_is_not_sent(spread: bool) -> None:
    """``readOnly`` properties of objects inside the body (a property's object, an array's
    items, a recursive definition, an ``allOf`` member) were sent as given; only the
    body's own were left out."""
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "node": {"$ref": "#/components/schemas/Node"},
            "more": {"allOf": [{"$ref": "#/components/schemas/Node"}, {"description": "d"}]},
            "id": {"type": "integer", "readOnly": True},
        },
    }
    if not spread:
        schema["additionalProperties"] = True
    op = {
        "operationId": "send",
        "requestBody": {"required": True, "content": {"application/json": {"schema": schema}}},
        "responses": {"200": {"description": "ok"}},
    }
    data = posted(op)
    data["components"] = {"schemas": {"Node": NODE, "Id": {"type": "integer"}}}
    leaf = {"id": 3, "name": "c", "children": [], "tags": [1]}
    node = {"id": 1, "name": "a", "parent": {"id": 2, "name": "b", "parent": None}}
    given = {**node, "children": [leaf, {"name": "d", "children": [leaf]}]}
    arguments = {"node": given, "more": leaf}
    with recorder() as rec:
        call = arguments if spread else {"body": {**arguments, "id": 9, "other": {"id": 4}}}
        result = await upstream(rec.url).call(operations(data)["send"], call)
        assert not result.is_error, result.content
        (seen,) = rec.seen
    sent = json.loads(seen.body)
    bare = {"name": "c", "children": [], "tags": [1]}
    assert sent.pop("other", {"id": 4}) == {"id": 4}  # not the body's: an open object's own
    assert sent == {
        "node": {
            "name": "a",
            "parent": {"name": "b", "parent": None},
            "children": [bare, {"name": "d", "children": [bare]}],
        },
        "more": bare,
    }


INNER = {"type": "object", "properties": {"id": {"readOnly": True}, "name": {"type": "string"}}}
DEEP = {  # definitions whose readOnly ``id`` is only deeper than their own properties
    "A": {"type": "object", "properties": {"x": INNER}},
    "Items": {"type": "object", "properties": {"x": {"type": "array", "items": INNER}}},
    "AllOf": {"allOf": [{"type": "object", "properties": {"x": INNER}}]},
    "OneOf": {"oneOf": [{"type": "object", "properties": {"x": INNER}}]},
    "Loop": {"type": "object", "properties": {"x": INNER, "next": {"$ref": "#/$defs/Loop"}}},
    "Via": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}},  # only through A
}


@pytest.mark.parametrize("body", ["ref", "allOf", "property"])
@pytest.mark.parametrize("name", sorted(DEEP))
async def test_a_read_only_property_deep_inside_a_definition_is_not_sent(
    name: str, body: str
) -> None:
    """A definition whose ``readOnly`` property sits in an inline object (a property's, an
    array's items, a member's) was planned as dropping nothing: ``id`` was sent. The body
    is the definition (spread when it can be), wraps it, or has it as a property."""
    components = {k: json.loads(json.dumps(v).replace("#/$defs/", "#/components/schemas/"))
                  for k, v in DEEP.items()}  # fmt: skip
    ref = {"$ref": f"#/components/schemas/{name}"}
    schema = {"ref": ref, "allOf": {"allOf": [ref]}, "property": {"properties": {"v": ref}}}[body]
    op = {
        "operationId": "send",
        "requestBody": {"required": True, "content": {"application/json": {"schema": schema}}},
        "responses": {"200": {"description": "ok"}},
    }
    data = posted(op)
    data["components"] = {"schemas": components}
    x = {"id": 1, "name": "a"}
    value = {"a": {"x": x}} if name == "Via" else {"x": [x] if name == "Items" else x}
    if name == "Loop":
        value["next"] = {"x": x, "next": {"x": x}}
    value = {"v": value} if body == "property" else value
    spec = operations(data)["send"]
    argument = spec["body"]["argument"]  # None: a spread body, one argument a property
    with recorder() as rec:
        given = value if argument is None else {argument: value}
        result = await upstream(rec.url).call(spec, given)
        assert not result.is_error, result.content
        (seen,) = rec.seen
    sent = json.loads(seen.body)
    assert "'id'" not in repr(sent) and "'name': 'a'" in repr(sent), sent


ITEM = {"$ref": "#/components/schemas/Item"}  # its ``id`` is readOnly
OPEN = {"type": "object"}  # what it holds is sent as given
WHERE = {  # a body (schema, value, what is sent) with Items where a readOnly ``id`` is found
    "additional": ({"additionalProperties": ITEM}, {"k": 1}, {"k": 0}),
    "pattern": ({"patternProperties": {"^i": ITEM, "^j": OPEN}}, {"i": 1, "j": 1}, {"i": 0, "j": 1}),
    "declaredBeside": ({"properties": {"p": OPEN}, "additionalProperties": ITEM}, {"p": 1, "k": 1},
                       {"p": 1, "k": 0}),
    "patternBeside": ({"patternProperties": {"^p": OPEN}, "additionalProperties": ITEM},
                      {"p": 1, "k": 1}, {"p": 1, "k": 0}),
    "prefix": ({"type": "array", "prefixItems": [ITEM, OPEN]}, [1, 1], [0, 1]),
    "prefixThenItems": ({"type": "array", "prefixItems": [OPEN], "items": ITEM}, [1, 1, 1],
                        [1, 0, 0]),
}  # fmt: skip


@pytest.mark.parametrize("via", ["inline", "ref"])
@pytest.mark.parametrize("where", sorted(WHERE))
async def test_a_read_only_property_in_a_map_value_or_a_fixed_position_item_is_not_sent(
    where: str, via: str
) -> None:
    """A map's values (``additionalProperties``, ``patternProperties``: the properties the
    schema does not declare or no pattern matches are ``additionalProperties``' own) and an
    array's fixed-position items (``prefixItems``; ``items`` after them) were planned as
    dropping nothing: ``id`` was sent (and ``items`` was applied to the fixed items too)."""
    schema, value, expected = WHERE[where]
    components = {"Item": INNER, "Body": schema}
    body = {"$ref": "#/components/schemas/Body"} if via == "ref" else schema
    op = {
        "operationId": "send",
        "requestBody": {"required": True, "content": {"application/json": {"schema": body}}},
        "responses": {"200": {"description": "ok"}},
    }
    data = posted(op)
    data["components"] = {"schemas": components}
    spec = operations(data)["send"]
    item = [{"name": "a"}, {"id": 1, "name": "a"}]  # as sent: 0 without its id, 1 with it
    values = value.items() if isinstance(value, dict) else enumerate(value)
    given = {k: item[1] for k, _ in values}
    given = list(given.values()) if isinstance(value, list) else given
    with recorder() as rec:
        result = await upstream(rec.url).call(spec, {spec["body"]["argument"]: given})
        assert not result.is_error, result.content
        (seen,) = rec.seen
    wanted = expected.items() if isinstance(expected, dict) else enumerate(expected)
    sent = {k: item[v] for k, v in wanted}
    assert json.loads(seen.body) == (list(sent.values()) if isinstance(value, list) else sent)


async def sent_json(schema: Any, given: Any, components: Any = None, version: str = "3.1.0") -> Any:
    """What the ``send`` operation of a JSON body ``schema`` sends for ``given`` (the body's
    properties when spread, else the whole body), in an OpenAPI ``version`` document."""
    op = {
        "operationId": "send",
        "requestBody": {"required": True, "content": {"application/json": {"schema": schema}}},
        "responses": {"200": {"description": "ok"}},
    }
    data = posted(op)
    data["openapi"] = version
    data["components"] = {"schemas": components or {}}
    spec = operations(data)["send"]
    argument = spec["body"]["argument"]
    with recorder() as rec:
        result = await upstream(rec.url).call(
            spec, given if argument is None else {argument: given}
        )
        assert not result.is_error, result.content
        (seen,) = rec.seen
    return json.loads(seen.body)


RO = {"type": "string", "readOnly": True}
RO_REF = {"$ref": "#/components/schemas/Ro"}
MAPS = {  # a map's value schema (its values readOnly) and what of {r1, w1} is sent
    "additional": ({"additionalProperties": RO}, {}),
    "additionalRef": ({"additionalProperties": RO_REF}, {}),
    "additionalAllOf": ({"additionalProperties": {"allOf": [RO_REF], "description": "d"}}, {}),
    "additionalOneOf": ({"additionalProperties": {"oneOf": [RO, RO_REF]}}, {}),
    "pattern": ({"patternProperties": {"^r": RO, "^w": {"type": "string"}}}, {"w1": "b"}),
    "patternRef": ({"patternProperties": {"^r": RO_REF}, "additionalProperties": True},
                   {"w1": "b"}),
    "patternOverDeclared": ({"properties": {"r1": {"type": "string"}},
                             "patternProperties": {"^r": RO_REF}}, {"w1": "b"}),
}  # fmt: skip


@pytest.mark.parametrize("spread", [True, False])
@pytest.mark.parametrize("shape", sorted(MAPS))
async def test_a_map_whose_values_are_read_only_is_sent_without_them(
    shape: str, spread: bool
) -> None:
    """A map whose value schema says ``readOnly`` (``additionalProperties``,
    ``patternProperties``, inline or by reference) sent every key: only the properties of
    objects inside the values were looked at. Each value is read-only (JSON Schema: the
    annotation is the instance's each subschema applies to; OpenAPI 3.0: a property's), the
    map is not: it is sent without them (``{}``), as an object without its readOnly
    properties is (a required map stays present). A pattern marking a declared property
    read-only applies to it too (both schemas apply: any ``readOnly`` counts)."""
    tags, kept = MAPS[shape]
    schema: dict[str, Any] = {
        "type": "object",
        "required": ["tags"],
        "properties": {"tags": {"type": "object", **tags}, "name": {"type": "string"}},
    }
    if not spread:
        schema["additionalProperties"] = False
        schema = {"allOf": [schema]}  # a body passed whole
    given = {"tags": {"r1": "a", "w1": "b"}, "name": "n"}
    sent = await sent_json(schema, given, {"Ro": RO})
    assert sent == {"tags": kept, "name": "n"}


ARRAYS = {  # an array whose items are readOnly, and what of ["a", "b"] is sent
    "items": ({"items": RO}, []),
    "itemsRef": ({"items": RO_REF}, []),
    "itemsNullable": ({"items": {"anyOf": [RO_REF, {"type": "null"}]}}, []),
    "afterPrefix": ({"prefixItems": [{"type": "string"}], "items": RO_REF}, ["a"]),
    # a fixed-position item stays: leaving it out would move the items after it
    "prefix": ({"prefixItems": [RO_REF, {"type": "string"}]}, ["a", "b"]),
}


@pytest.mark.parametrize("spread", [True, False])
@pytest.mark.parametrize("shape", sorted(ARRAYS))
async def test_an_array_whose_items_are_read_only_is_sent_without_them(
    shape: str, spread: bool
) -> None:
    """An array whose ``items`` say ``readOnly`` (inline, by reference) sent every item:
    only the properties of objects inside the items were looked at. Each item is
    read-only, the array is not: it is sent without them, as a map without its readOnly
    values is. A body that is such an array too."""
    items, kept = ARRAYS[shape]
    schema: dict[str, Any] = {
        "type": "object",
        "required": ["ids"],
        "properties": {"ids": {"type": "array", **items}, "name": {"type": "string"}},
    }
    if not spread:
        schema = {"allOf": [schema]}  # a body passed whole
    given = {"ids": ["a", "b"], "name": "n"}
    assert await sent_json(schema, given, {"Ro": RO}) == {"ids": kept, "name": "n"}
    assert await sent_json({"type": "array", **items}, ["a", "b"], {"Ro": RO}) == kept


PLAIN = {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}}
MARKED = {"type": "object", "properties": {"id": {"type": "integer", "readOnly": True}}}
COMPOSED = {  # a body whose ``id`` is marked by some members only, and whether it is sent
    # allOf: every member applies, readOnly in any counts (JSON Schema 2020-12 §9.4)
    "allOf": ({"allOf": [PLAIN, MARKED]}, False),
    "allOfRef": ({"allOf": [PLAIN, {"$ref": "#/components/schemas/Marked"}]}, False),
    "ownAndAllOf": ({**PLAIN, "allOf": [MARKED]}, False),
    "refBeside": ({**PLAIN, "$ref": "#/components/schemas/Marked"}, False),
    # oneOf/anyOf: the member the value validates against decides; not validated, a
    # property counts when any member marks it (round 22: when every member declaring it
    # did), but not when a member declaring it writable requires it
    "oneOf": ({"oneOf": [PLAIN, MARKED]}, False),
    "anyOf": ({"anyOf": [MARKED, PLAIN]}, False),
    "oneOfRequiredPlain": ({"oneOf": [MARKED, {**PLAIN, "required": ["id"]}]}, True),
    "oneOfAllMark": ({"oneOf": [MARKED, {**MARKED, "required": ["id"]}]}, False),
    "oneOfOnlyDeclarer": ({"oneOf": [MARKED, {"properties": {"name": {}}}]}, False),
    "ownAndOneOf": ({**PLAIN, "oneOf": [MARKED, {**MARKED, "required": ["id"]}]}, False),
    "propertyOneOf": ({"properties": {"id": {"oneOf": [RO_REF, {"type": "integer",
                      "readOnly": True}]}, "name": {}}}, False),
}  # fmt: skip


@pytest.mark.parametrize("depth", ["body", "nested"])
@pytest.mark.parametrize("shape", sorted(COMPOSED))
async def test_a_property_read_only_in_one_composition_member_follows_the_annotation_rule(
    shape: str, depth: str
) -> None:
    """``allOf`` members marking ``id`` readOnly beside one declaring it writable: ``id``
    was sent (readOnly only where every declaration said so), in the body and in an object
    inside it. Every ``allOf`` member applies, and ``readOnly`` is true when any applicable
    subschema says so; of ``oneOf``/``anyOf`` only the member the value validates against
    applies: taken to be any marking ``id``, unless one declaring it writable requires it."""
    composed, sent_id = COMPOSED[shape]
    components = {"Marked": MARKED, "Ro": {"type": "integer", "readOnly": True}}
    given = {"id": 1, "name": "a"}
    expected = {"id": 1, "name": "a"} if sent_id else {"name": "a"}
    if depth == "body":
        schema = {**composed, "additionalProperties": True}
        assert await sent_json(schema, given, components) == expected
    else:
        schema = {"type": "object", "properties": {"inner": composed}}
        assert await sent_json(schema, {"inner": given}, components) == {"inner": expected}


async def test_a_read_only_property_inside_one_oneof_member_is_left_out_whichever_matches() -> None:
    """Deeper than the object's own properties, a ``oneOf``/``anyOf`` member's readOnly
    properties are left out whichever member the value validates against (the rule chosen:
    the runtime does not validate, and merging the members' plans per property is not done):
    ``x.id`` is readOnly in one member, writable in the other."""
    inner = {"type": "object", "properties": {"x": MARKED}}
    other = {"type": "object", "properties": {"x": PLAIN}}
    schema = {"oneOf": [inner, other], "additionalProperties": True}
    assert await sent_json(schema, {"x": {"id": 1, "name": "a"}}) == {"x": {"name": "a"}}


NULLABLE = {  # a value readOnly by reference, null allowed; the document's version
    "allOfNullable": ({"allOf": [RO_REF], "nullable": True}, "3.0.3"),
    "refNullable": ({"$ref": "#/components/schemas/Ro", "nullable": True}, "3.0.3"),
    "anyOfNull": ({"anyOf": [RO_REF, {"type": "null"}]}, "3.1.0"),
    "oneOfNull": ({"oneOf": [{"type": "null"}, RO_REF]}, "3.1.0"),
}


@pytest.mark.parametrize("where", ["property", "nested", "map"])
@pytest.mark.parametrize("shape", sorted(NULLABLE))
async def test_a_nullable_value_read_only_by_reference_is_not_sent(shape: str, where: str) -> None:
    """``{allOf: [$ref: Ro], nullable: true}`` (OpenAPI 3.0; 3.1 writes ``anyOf: [Ro,
    {type: null}]``): the value was offered as an argument and sent, as the ``nullable``
    branch (no ``readOnly`` of its own) made the oneOf/anyOf rule (every member) fail. A
    null is no value a client sets for the server either: only the other members count."""
    value, version = NULLABLE[shape]
    name = {"type": "string"}
    components = {"Ro": RO}
    if where == "property":
        schema = {"type": "object", "properties": {"at": value, "name": name}}
        data = posted({"operationId": "send", "responses": {"200": {"description": "ok"}},
                       "requestBody": {"content": {"application/json": {"schema": schema}}}})  # fmt: skip
        data["openapi"], data["components"] = version, {"schemas": components}
        assert operations(data)["send"]["body"]["arguments"] == ["name"]
        given: Any = {"at": "x", "name": "n"}
        assert await sent_json(schema, given, components, version) == {"name": "n"}
    elif where == "nested":
        schema = {"type": "object", "properties": {"inner": {
            "type": "object", "properties": {"at": value, "name": name}}}}  # fmt: skip
        given = {"inner": {"at": "x", "name": "n"}}
        sent = await sent_json(schema, given, components, version)
        assert sent == {"inner": {"name": "n"}}
    else:
        schema = {"type": "object", "properties": {"tags": {"additionalProperties": value}}}
        given = {"tags": {"a": "x", "b": None}}
        assert await sent_json(schema, given, components, version) == {"tags": {}}


def chain(n: int) -> dict[str, Any]:
    """Definitions ``D0``..``Dn+1``, each ``Di`` with a readOnly ``pi`` and ``allOf``
    references to the next two (2^n paths from ``D0`` to the last two, which end them, one
    with a readOnly ``z``)."""
    ref = "#/components/schemas/D{}".format
    found: dict[str, Any] = {
        f"D{i}": {"type": "object", "properties": {f"p{i}": RO, "k": {"type": "string"}},
                  "allOf": [{"$ref": ref(i + 1)}, {"$ref": ref(i + 2)}]}
        for i in range(n)
    }  # fmt: skip
    found[f"D{n}"] = {"type": "object", "properties": {"z": RO}}
    found[f"D{n + 1}"] = {"type": "object", "properties": {"y": {"type": "string"}}}
    return found


async def test_definitions_many_allof_paths_lead_to_are_looked_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each ``allOf`` path to a definition was followed on its own, at import (is it
    ``readOnly``?), in every call (its plan applied again) and in the advertised input's
    copies: exponential, 7 s each at 26 definitions. Looked at once each (per definition
    planned, at import): n² steps at most."""
    from mcpgen.openapi import one_way
    from mcpgen.openapi.schema import SchemaConverter
    from mcpgen.runtime import wire_body

    looked, applied, copied = [0], [0], [0]
    groups, apply, unrequire = (
        SchemaConverter._groups,
        wire_body.without_read_only,
        one_way.unrequire,
    )

    def counted_groups(self: Any, schema: Any) -> Any:
        looked[0] += 1
        return groups(self, schema)

    def counted_apply(*args: Any) -> Any:
        applied[0] += 1
        return apply(*args)

    monkeypatch.setattr(SchemaConverter, "_groups", counted_groups)

    def counted_unrequire(*args: Any) -> Any:  # (once per node ``one_way.leave_out`` copies)
        copied[0] += 1
        return unrequire(*args)

    monkeypatch.setattr(wire_body, "without_read_only", counted_apply)
    monkeypatch.setattr(one_way, "unrequire", counted_unrequire)
    n = 22
    schema = {
        "type": "object",
        "properties": {"x": {"allOf": [{"$ref": "#/components/schemas/D0"}]}, "w": {}},
    }
    given = {"x": {"p0": "a", "p5": "b", "k": "c", "y": "d", "z": "f"}, "w": "e"}
    assert await sent_json(schema, given, chain(n)) == {"x": {"k": "c", "y": "d"}, "w": "e"}
    assert looked[0] < 2 * n * n and applied[0] < 10 * n, (looked, applied)  # 466, 69
    # the readOnly copies: each path to a definition marked its own (Fibonacci: 374,004
    # nodes copied, 16-45 s); now the marks a definition's copy holds, one copy each: 181
    assert copied[0] < 20 * n, copied


@pytest.mark.parametrize("spread", [True, False])
@pytest.mark.parametrize("shape", ["refProperty", "allOfProperty"])
def test_a_read_only_property_behind_a_reference_is_not_asked_for(shape: str, spread: bool) -> None:
    """``id``, ``readOnly`` in the definition it refers to, required by the body: a spread
    body offers no argument for it, a body passed whole does not require it (it was an
    argument, or required then not sent, when the reference had keywords beside it or sat
    in an ``allOf``)."""
    schema = {k: v for k, v in PETS[shape].items() if not (spread and k == "additionalProperties")}
    op = {
        "operationId": "send",
        "requestBody": {"required": True, "content": {"application/json": {"schema": schema}}},
        "responses": {"200": {"description": "ok"}},
    }
    data = posted(op)
    data["components"] = {"schemas": COMPONENTS}
    (tool,) = imported(data).tools
    if spread:
        assert operations(data)["send"]["body"]["arguments"] == ["name"]
        assert set(tool["input"]["properties"]) == {"name"}
    else:
        assert tool["input"]["properties"]["body"]["required"] == ["name"]


async def test_a_query_parameter_the_base_url_also_names_is_sent_once() -> None:
    """A base URL ``?api-version=2024-01&keep=1`` and an operation that declares
    ``api-version`` (as Azure's documents do) and a query credential the base URL names too:
    each name is sent once, the operation's value (both went: ``api-version=2024-01&
    api-version=2025-05``, the upstream picks one)."""
    schemes = {"key": {"type": "apiKey", "in": "query", "name": "api_key"}}
    data = document("/items", [param("api-version", "query", {"type": "string"})])
    data["components"] = {"securitySchemes": schemes}
    data["paths"]["/items"]["get"]["security"] = [{"key": []}]
    with recorder() as rec:
        api = upstream(rec.url + "/v1?api-version=2024-01&keep=1&api_key=old", schemes)
        op = operations(data)["send"]
        assert not (await api.call(op, {"api-version": "2025-05"})).is_error
        assert not (await api.call(op, {})).is_error
    assert [seen.target for seen in rec.seen] == [
        "/v1/items?keep=1&api-version=2025-05&api_key=secret-key",
        "/v1/items?api-version=2024-01&keep=1&api_key=secret-key",
    ]


async def test_a_poll_that_left_the_api_never_returns_to_it_with_credentials() -> None:
    """A 202 whose ``Location`` is another origin is polled there without credentials; that
    origin's own 202 may not steer the next poll back to the API with them (a redirect that
    left the origin never returns to a credentialed request): the poll sent the API key to
    a path the other origin chose, and returned the API's answer to the caller."""
    from mcpgen.runtime.upstream import Request
    from mcpgen.runtime.upstream_poll import poll

    with recorder() as api, recorder() as other:
        sent = Request("POST", api.url + "/jobs")
        sent.parts["headers"]["X-API-Key"] = "k3y-secret"
        sent.secret_headers.add("X-API-Key")
        sent.parts["query"]["api_key"] = "q-secret"
        sent.secret_query.add("api_key")
        other.answer(202, "application/json", b"{}")
        other.headers = [("Location", api.url + "/admin/export"), ("Retry-After", "0")]
        started = httpx2.Response(
            202,
            headers={"location": other.url + "/status", "retry-after": "0"},
            request=httpx2.Request("POST", sent.url),
        )
        done = await poll(upstream(api.url), sent, started, {"interval": 0}, None)
        assert done.status_code == 200
    assert [seen.target for seen in other.seen] == ["/status"]
    assert "x-api-key" not in other.seen[0].headers
    assert [seen.target for seen in api.seen] == ["/admin/export"]
    assert "x-api-key" not in api.seen[0].headers


async def test_a_poll_redirected_off_the_api_never_returns_to_it_with_credentials() -> None:
    """A poll on the API's origin that a redirect takes to another origin: that origin's
    202 may not steer the next poll back to the API with credentials either (only a
    ``Location`` leaving the origin was counted, not a redirect of a poll: the API key went
    to a path the other origin chose)."""
    from mcpgen.runtime.upstream import Request
    from mcpgen.runtime.upstream_poll import poll

    with recorder() as api, recorder() as other:
        sent = Request("POST", api.url + "/jobs")
        sent.parts["headers"]["X-API-Key"] = "k3y-secret"
        sent.secret_headers.add("X-API-Key")
        api.moved = {"/status": other.url + "/elsewhere"}
        other.answer(202, "application/json", b"{}")
        other.headers = [("Location", api.url + "/admin/export"), ("Retry-After", "0")]
        started = httpx2.Response(
            202,
            headers={"location": "/status", "retry-after": "0"},
            request=httpx2.Request("POST", sent.url),
        )
        done = await poll(upstream(api.url), sent, started, {"interval": 0}, None)
        assert done.status_code == 200
    assert [seen.target for seen in api.seen] == ["/status", "/admin/export"]
    assert api.seen[0].headers["x-api-key"] == "k3y-secret"  # still home
    assert [seen.target for seen in other.seen] == ["/elsewhere"]
    assert "x-api-key" not in other.seen[0].headers
    assert "x-api-key" not in api.seen[1].headers


def keyed_job(api_url: str, location: str, echoed: bool = True) -> tuple[Any, httpx2.Response]:
    """A POST to ``/jobs`` with its API key in the query (``echoed``: its value known as a
    credential sent too, as ``Upstream.authorize`` records it) and the 202 it got."""
    from mcpgen.runtime.upstream import Request

    sent = Request("POST", api_url + "/jobs")
    sent.parts["query"]["api_key"] = "k3y-secret"
    sent.secret_query.add("api_key")
    if echoed:
        sent.secrets.add("k3y-secret")
    started = httpx2.Response(
        202,
        headers={"location": location},
        request=httpx2.Request("POST", sent.url + "?api_key=k3y-secret"),
    )
    return sent, started


async def test_a_poll_sent_off_the_api_drops_a_query_key_its_location_carries() -> None:
    """A 202 whose ``Location`` is on another origin and carries the request's query (the
    API key in it): the poll went there with the key. (Dropped by its name alone.)"""
    from mcpgen.runtime.upstream_poll import poll

    with recorder() as api, recorder() as other:
        location = other.url + "/status?id=7&api_key=k3y-secret"
        sent, started = keyed_job(api.url, location, echoed=False)
        done = await poll(upstream(api.url), sent, started, {"interval": 0}, None)
        assert done.status_code == 200
    assert [seen.target for seen in other.seen] == ["/status?id=7"]


async def test_a_poll_sent_off_the_api_drops_the_key_echoed_under_another_name() -> None:
    """A 202 whose ``Location`` on another origin echoes the key's value under a name of its
    own (``?token=...``): a redirect off the API dropped it, a poll sent it."""
    from mcpgen.runtime.upstream_poll import poll

    with recorder() as api, recorder() as other:
        sent, started = keyed_job(api.url, other.url + "/status?id=7&token=k3y-secret")
        done = await poll(upstream(api.url), sent, started, {"interval": 0}, None)
        assert done.status_code == 200
    assert [seen.target for seen in other.seen] == ["/status?id=7"]


async def test_a_poll_redirected_off_the_api_drops_the_key_echoed_under_another_name() -> None:
    """A poll on the API's origin answered by a redirect to another origin whose
    ``Location`` echoes the key's value (``?token=...``): the poll's request knew no
    credential value, so the key went there."""
    from mcpgen.runtime.upstream_poll import poll

    with recorder() as api, recorder() as other:
        api.moved = {"/status": other.url + "/done?id=7&token=k3y-secret"}
        sent, started = keyed_job(api.url, "/status?id=7")
        done = await poll(upstream(api.url), sent, started, {"interval": 0}, None)
        assert done.status_code == 200
    assert [seen.target for seen in api.seen] == ["/status?id=7&api_key=k3y-secret"]
    assert [seen.target for seen in other.seen] == ["/done?id=7"]


@pytest.mark.parametrize("where", ["query", "header"])
async def test_a_redirect_to_another_origin_that_echoes_the_key_does_not_send_it(
    where: str,
) -> None:
    """An API whose redirect to another origin (a CDN) copies the request's query, key and
    all, into the ``Location``: the other origin got the key in its URL, though every
    credential header and cookie was dropped."""
    schemes = {"key": {"type": "apiKey", "in": where, "name": "api_key"}}
    data = document("/file", [])
    data["components"] = {"securitySchemes": schemes}
    data["paths"]["/file"]["get"]["security"] = [{"key": []}]
    with recorder() as api, recorder() as cdn:
        echoed = "secret-key"  # what ``upstream`` sets as the key
        api.moved = {"/file": f"{cdn.url}/f?v=2&api_key={echoed}&token={echoed}&x=secret"}
        result = await upstream(api.url, schemes).call(operations(data)["send"], {})
        assert not result.is_error, result.content
    assert [seen.target for seen in cdn.seen] == ["/f?v=2&x=secret"]
    assert "api_key" not in cdn.seen[0].headers


async def test_a_redirect_off_the_api_drops_a_key_echoed_with_a_plus_or_inside_a_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A key with ``+`` (base64 keys have it) echoed as is (``?t=a+b``: read as ``a b``, no
    key sent), with ``%20`` for it, or inside another value (``?next=/cb%3Fkey%3D...``) went
    to the other origin."""
    monkeypatch.setenv("MCPGEN_TEST_WIRE_API_PLUS", "k3y+b64/z==")
    schemes = {"plus": {"type": "apiKey", "in": "header", "name": "X-Key"}}
    data = document("/file", [])
    data["components"] = {"securitySchemes": schemes}
    data["paths"]["/file"]["get"]["security"] = [{"plus": []}]
    echoes = "t=k3y+b64/z==&u=k3y%20b64/z%3D%3D&next=%2Fcb%3Fk%3Dk3y%252Bb64%252Fz%253D%253D"
    with recorder() as api, recorder() as cdn:
        api.moved = {"/file": f"{cdn.url}/f?v=2&{echoes}&w=a+b&flag"}
        result = await upstream(api.url, schemes).call(operations(data)["send"], {})
        assert not result.is_error, result.content
    assert [seen.target for seen in cdn.seen] == ["/f?v=2&w=a+b&flag"]
    assert "x-key" not in cdn.seen[0].headers


@pytest.mark.parametrize("where", ["query", "header"])
async def test_a_redirect_to_another_origin_with_the_key_in_its_path_is_not_followed(
    where: str,
) -> None:
    """An API whose redirect off its origin puts the key in the path (``/KEY/file``): only
    a query was cleaned, so the other origin got the key in its request line."""
    schemes = {"key": {"type": "apiKey", "in": where, "name": "api_key"}}
    data = document("/file", [])
    data["components"] = {"securitySchemes": schemes}
    data["paths"]["/file"]["get"]["security"] = [{"key": []}]
    with recorder() as api, recorder() as cdn:
        api.moved = {"/file": f"{cdn.url}/secret-key/f?v=2"}
        with pytest.raises(ToolError, match="another origin with a credential in the URL") as e:
            await upstream(api.url, schemes).call(operations(data)["send"], {})
    assert "secret-key" not in str(e.value)
    assert cdn.seen == []


@pytest.mark.parametrize("where", ["query", "header"])
async def test_a_redirect_on_the_apis_origin_keeps_the_query_credential(where: str) -> None:
    """A redirect on the API's own origin (``/old`` -> ``/new``) keeps the credentials: a
    header key went along, a query key was dropped (the ``Location`` replaced the URL),
    so an API that moved a path answered 401."""
    schemes = {"key": {"type": "apiKey", "in": where, "name": "api_key"}}
    data = document("/old", [])
    data["components"] = {"securitySchemes": schemes}
    data["paths"]["/old"]["get"]["security"] = [{"key": []}]
    with recorder() as rec:
        rec.moved = {"/old": "/new?v=2"}
        result = await upstream(rec.url, schemes).call(operations(data)["send"], {})
        assert not result.is_error, result.content
    sent = [(seen.target, seen.headers.get("api_key")) for seen in rec.seen]
    if where == "query":
        assert sent == [("/old?api_key=secret-key", None), ("/new?v=2&api_key=secret-key", None)]
    else:
        assert sent == [("/old", "secret-key"), ("/new?v=2", "secret-key")]


@pytest.mark.parametrize(
    ("status", "method"), [(301, "POST"), (303, "POST"), (303, "HEAD"), (307, "POST"), (308, "PUT")]
)
async def test_a_redirect_to_another_origin_keeps_the_request_but_no_credential(
    status: int, method: str
) -> None:
    """A 307/308 off the API resends the method and body, a 301 (POST) or 303 asks with
    GET without the body (RFC 9110, Fetch): never with the bearer token, the header key or
    the cookie. A 303 answering HEAD went as a GET (Fetch keeps HEAD)."""
    schemes = {
        "bearer": {"type": "http", "scheme": "bearer"},
        "head": {"type": "apiKey", "in": "header", "name": "X-Key"},
        "jar": {"type": "apiKey", "in": "cookie", "name": "sid"},
    }
    op = {
        "operationId": "send",
        "security": [{"bearer": [], "head": [], "jar": []}],
        "responses": {"200": {"description": "ok"}},
    }
    if method != "HEAD":
        json_body = {"schema": {"type": "object", "properties": {"a": {"type": "string"}}}}
        op["requestBody"] = {"required": True, "content": {"application/json": json_body}}
    data = {**posted(op), "components": {"securitySchemes": schemes}}
    data["paths"] = {"/x": {method.lower(): op}}
    with recorder() as api, recorder() as other:
        api.moved, api.moved_status = {"/x": other.url + "/y"}, status
        result = await upstream(api.url, schemes).call(operations(data)["send"], {"a": "b"})
        assert not result.is_error, result.content
    (first,), (seen,) = api.seen, other.seen
    assert {"authorization", "x-key", "cookie"} <= first.headers.keys()
    assert not {"authorization", "x-key", "cookie"} & seen.headers.keys()
    kept = status in (307, 308) or method == "HEAD"
    assert (seen.method, seen.body) == ((method, first.body) if kept else ("GET", b""))
    assert ("content-type" in seen.headers) == (kept and method != "HEAD")


async def test_a_redirect_to_another_origin_carrying_the_query_key_drops_it() -> None:
    """A move to another origin written as ``return 301 https://new$request_uri`` (nginx)
    carries the request's query, the API key in it: that origin got the key, though a
    redirect off the API's origin goes without every credential (docs/security.md)."""
    schemes = {"key": {"type": "apiKey", "in": "query", "name": "api_key"}}
    data = document("/old", [{"name": "v", "in": "query", "schema": {"type": "string"}}])
    data["components"] = {"securitySchemes": schemes}
    data["paths"]["/old"]["get"]["security"] = [{"key": []}]
    with recorder() as api, recorder() as other:
        api.moved = {"/old": other.url + "/old?v=2&api_key=secret-key"}
        result = await upstream(api.url, schemes).call(operations(data)["send"], {"v": "2"})
        assert not result.is_error, result.content
    assert [seen.target for seen in api.seen] == ["/old?v=2&api_key=secret-key"]
    assert [seen.target for seen in other.seen] == ["/old?v=2"]


async def test_an_answer_trickling_in_is_cut_off_at_the_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``<NAME>_API_TIMEOUT`` bounds the whole answer (docs/security.md): the HTTP client's
    timeout is per read, so an upstream sending a byte a second held a call with a 1 s
    timeout for as long as it kept sending (here 6 s, the answer then taken)."""
    import socket
    import threading
    import time

    listener = socket.create_server(("127.0.0.1", 0))

    def trickle() -> None:
        conn, _ = listener.accept()
        conn.recv(65536)
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 6\r\n\r\n"
        )
        for byte in b'"abcd"':
            time.sleep(0.6)
            with contextlib.suppress(OSError):
                conn.sendall(bytes([byte]))
        conn.close()

    threading.Thread(target=trickle, daemon=True).start()
    monkeypatch.setenv("MCPGEN_TEST_WIRE_API_TIMEOUT", "1")
    monkeypatch.setenv("MCPGEN_TEST_WIRE_API_RETRIES", "0")
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    started = time.monotonic()
    with pytest.raises(ToolError, match="failed: TimeoutError"):
        await upstream(url).call(operations(document("/x", []))["send"], {})
    listener.close()
    assert time.monotonic() - started < 2.5


@pytest.mark.parametrize("media", ["application/atom+xml", "application/x-ndjson"])
async def test_a_credential_echoed_in_an_answer_of_another_type_is_redacted(media: str) -> None:
    """An Atom feed's self link (or an NDJSON line) echoing the query key: a type neither
    JSON nor text/ went to the caller as an embedded blob, base64 of the bytes as
    received, the operator's key in it."""
    schemes = {"key": {"type": "apiKey", "in": "query", "name": "api_key"}}
    data = document("/x", [])
    data["components"] = {"securitySchemes": schemes}
    data["paths"]["/x"]["get"]["security"] = [{"key": []}]
    with recorder() as rec:
        link = rec.url + "/x?page=2&api_key=secret-key"
        rec.answer(200, media, f'<link rel="next" href="{link}"/>'.encode())
        result = await upstream(rec.url, schemes).call(operations(data)["send"], {})
    (content,) = result.content
    shown = json.dumps(content.model_dump(mode="json"))
    blob = getattr(getattr(content, "resource", None), "blob", "")
    assert "secret-key" not in shown + base64.b64decode(blob).decode(), shown


async def test_a_poll_status_echoing_the_key_is_redacted_in_the_progress() -> None:
    """Each poll's JSON ``status`` becomes the task's ``statusMessage``, which the caller
    reads: a status echoing the query key (as the answer's own links may) showed it, and
    a status of any length was kept whole."""
    from types import SimpleNamespace

    from mcpgen.runtime.upstream import Request
    from mcpgen.runtime.upstream_poll import poll

    said: list[str] = []

    async def progress(done: float, total: float | None, message: str) -> None:
        said.append(message)

    with recorder() as rec:
        sent = Request("POST", rec.url + "/jobs")
        sent.parts["query"]["api_key"] = "k3y-secret"
        sent.secret_query.add("api_key")
        sent.secrets.add("k3y-secret")
        status = f"done, see {rec.url}/r?api_key=k3y-secret " + "x" * 2000
        rec.answer(200, "application/json", json.dumps({"status": status}).encode())
        started = httpx2.Response(
            202,
            headers={"location": "/jobs/1", "retry-after": "0"},
            request=httpx2.Request("POST", sent.url),
        )
        ctx = SimpleNamespace(progress=progress)
        await poll(upstream(rec.url), sent, started, {"interval": 0}, ctx)  # type: ignore[arg-type]
    (message,) = said
    assert "k3y-secret" not in message and len(message) <= 300, message


async def test_an_operation_with_its_own_server_is_sent_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """GitHub's release asset upload declares ``servers: [https://uploads.github.com]``: it
    was sent to the API's base URL (a located warning said these were not supported), and
    so was a path item's server. Now an operation goes to its own server (the path item's
    else; server variables at their defaults; a relative one after the base URL's host)
    with the API's credentials; the base URL's variable, when set, still takes every call
    (a deployment's API or a test's)."""
    schemes = {"token": {"type": "http", "scheme": "bearer"}}
    ok = {"200": {"description": "ok"}}
    with recorder() as api, recorder() as uploads:
        up = uploads.url.replace("127.0.0.1", "{host}")
        variables = {"host": {"default": "127.0.0.1"}}
        paths = {
            "/assets": {"post": {"operationId": "up", "responses": ok,
                                 "servers": [{"url": up, "variables": variables}]}},
            "/raw": {"servers": [{"url": uploads.url + "/raw-root"}],
                     "get": {"operationId": "raw", "responses": ok}},
            "/v2/x": {"get": {"operationId": "relative", "responses": ok,
                              "servers": [{"url": "/other"}]}},
            "/s": {"get": {"operationId": "schemeless", "responses": ok,
                           "servers": [{"url": uploads.url.removeprefix("http:")}]}},
        }  # fmt: skip
        data = {
            "openapi": "3.0.3",
            "info": {"title": "t", "version": "1"},
            "servers": [{"url": api.url + "/api"}],
            "paths": paths,
            "components": {"securitySchemes": schemes},
            "security": [{"token": []}],
        }
        ops = operations(data)
        wrapped = upstream(api.url + "/api", schemes)
        for name in ("up", "raw", "relative"):
            assert not (await wrapped.call(ops[name], {})).is_error
        monkeypatch.setenv("MCPGEN_TEST_UNSET_BASE_URL", api.url + "/deployed")
        assert not (await wrapped.call(ops["up"], {})).is_error
        # a scheme-relative server (``//host``) is a host of its own too (r4: the API's
        # token went to any host a document named so, the deployment's base URL set or not)
        assert not (await wrapped.call(ops["schemeless"], {})).is_error
    assert [(s.target, s.headers["authorization"]) for s in uploads.seen] == [
        ("/assets", "Bearer secret-token"),
        ("/raw-root/raw", "Bearer secret-token"),
    ]
    assert [s.target for s in api.seen] == ["/other/v2/x", "/deployed/assets", "/deployed/s"]
    assert not imported(data).problems


async def test_a_poll_of_an_operation_with_its_own_server_stays_on_that_api() -> None:
    """A 202's ``Location`` on the operation's own server (a loopback one here) is that
    API's: it was judged against the base URL's host (a documentation address, never
    reached), as a redirect off the API into the server's networks, and refused."""
    from mcpgen.runtime.upstream import Request
    from mcpgen.runtime.upstream_poll import poll

    with recorder() as rec:
        sent = Request("POST", rec.url + "/jobs")
        sent.at(rec.url, rec.url)  # as ``Upstream.call`` does for an operation's own server
        started = httpx2.Response(
            202,
            headers={"location": "/jobs/1", "retry-after": "0"},
            request=httpx2.Request("POST", sent.url),
        )
        done = await poll(upstream("http://192.0.2.1"), sent, started, {"interval": 0}, None)
        assert done.status_code == 200
    assert [seen.target for seen in rec.seen] == ["/jobs/1"]


async def test_a_path_value_keeps_its_slashes_where_the_document_says_so() -> None:
    """Azure's ``{policyAssignmentId}`` (``x-ms-skip-url-encoding: true``, 72 of its
    documents) and Open Policy Agent's ``/v1/data/{path}`` (``allowReserved``, which
    OpenAPI 3.2 extends to paths) take a path of segments: each ``/`` went as ``%2F``
    (Azure answers 404). Now ``/`` and the path's other reserved characters stay bare, but
    ``?``, ``#`` and ``%``; a ``.`` or ``..`` segment is still refused, and so is an empty
    one (``a//b``, ``/a``, ``a/``: proxies merging ``//`` sent it to another path), with
    nothing sent (the upstream saw one request)."""
    params = [
        {**param("id", "path", {"type": "string"}), "x-ms-skip-url-encoding": True},
        {**param("p", "path", {"type": "string"}), "allowReserved": True},
        param("plain", "path", {"type": "string"}),
    ]
    send = operations(document("/{id}/data/{p}/{plain}", params))["send"]
    given = {"id": "providers/Microsoft.Management/x=1", "p": "a/b c?d#e%f", "plain": "g/h"}
    with recorder() as rec:
        result = await upstream(rec.url).call(send, given)
        assert not result.is_error, result.content
        for bad in (
            "a/../admin",
            "./a",
            "a/..",
            "..;/admin",
            "a/..;x/b",
            "a//b",
            "/a",
            "a/",
            "a/;/b",
            "a/;x/b",
        ):
            with pytest.raises(ToolError, match="may not be"):
                await upstream(rec.url).call(send, {**given, "p": bad})
    (seen,) = rec.seen
    assert seen.target == ("/providers/Microsoft.Management/x=1/data/a/b%20c%3Fd%23e%25f/g%2Fh")
