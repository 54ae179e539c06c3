"""What an imported operation puts on the wire, read back as bytes by a local upstream:
files from base64 arguments, arrays in form and multipart bodies (OpenAPI's ``style``/
``explode`` and ``encoding``), and reserved headers that no argument may set (issue 33)."""

from __future__ import annotations

import base64
import email
import email.policy
import io
from typing import Any
from urllib.parse import parse_qsl, unquote

import pytest
from starlette.requests import Request
from werkzeug.formparser import parse_form_data
from wirekit import imported, multipart, operations, part_name, recorder, upstream

from mcpgen.runtime.errors import ToolError

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]
PNG = b"\x89PNG\r\n\x1a\n\x00\x00binary\xff"


def doc(media: str, schema: Any, encoding: Any = None, params: Any = None) -> Any:
    content: dict[str, Any] = {"schema": schema}
    if encoding:
        content["encoding"] = encoding
    op: dict[str, Any] = {
        "operationId": "send",
        "requestBody": {"required": True, "content": {media: content}},
        "responses": {"200": {"description": "ok"}},
    }
    if params:
        op["parameters"] = params
    return {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {"/x": {"post": op}},
    }


async def send(data: Any, arguments: dict[str, Any]) -> Any:
    with recorder() as rec:
        result = await upstream(rec.url).call(operations(data)["send"], arguments)
        assert not result.is_error, result.content
        assert len(rec.seen) == 1
        return rec.seen[0]


UPLOAD = {
    "type": "object",
    "required": ["file"],
    "properties": {
        "file": {"type": "string", "format": "binary"},
        "pages": {"type": "array", "items": {"type": "string", "format": "binary"}},
        "note": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "meta": {"type": "object", "properties": {"a": {"type": "integer"}}},
    },
}


async def test_multipart_files_are_bytes_and_arrays_are_one_part_per_item() -> None:
    seen = await send(
        doc("multipart/form-data", UPLOAD, {"file": {"contentType": "image/png"}}),
        {
            "file": base64.b64encode(PNG).decode(),
            # a MIME-style base64 with a line break, and the URL-safe alphabet
            "pages": ["aGVs\nbG8=", base64.urlsafe_b64encode(b"\xfb\xff").decode()],
            "note": "hi",
            "tags": ["a", "b"],
            "meta": {"a": 1},
        },
    )
    parts = [(part_name(h), h.get("content-type"), body) for h, body in multipart(seen)]
    assert parts == [
        ("file", "image/png", PNG),
        ("pages", "application/octet-stream", b"hello"),
        ("pages", "application/octet-stream", b"\xfb\xff"),
        ("note", None, b"hi"),
        ("tags", None, b"a"),
        ("tags", None, b"b"),
        ("meta", "application/json", b'{"a": 1}'),
    ]
    assert 'filename="file"' in multipart(seen)[0][0]["content-disposition"]


async def test_a_multipart_array_with_explode_false_is_one_part() -> None:
    seen = await send(
        doc("multipart/form-data", UPLOAD, {"tags": {"explode": False}}),
        {"file": "aGk=", "tags": ["a", "b"]},
    )
    assert [(part_name(h), body) for h, body in multipart(seen)] == [
        ("file", b"hi"),
        ("tags", b"a,b"),
    ]


async def test_an_openapi_3_1_content_media_type_property_is_a_file() -> None:
    """OpenAPI 3.1 writes a binary part as ``contentMediaType`` (its migration guide:
    ``format: binary`` becomes ``contentMediaType: application/octet-stream``): it was a
    text part carrying the caller's base64, not the file's bytes."""
    props = {
        "pic": {"type": "string", "contentMediaType": "image/png"},
        "raw": {"contentMediaType": "application/octet-stream"},
        "note": {"type": "string", "contentMediaType": "text/plain"},
    }
    data = doc("multipart/form-data", {"type": "object", "properties": props})
    data["openapi"] = "3.1.0"
    tool = imported(data).tools[0]["input"]["properties"]
    assert tool["pic"]["contentEncoding"] == tool["raw"]["contentEncoding"] == "base64"
    assert "contentEncoding" not in tool["note"]
    png = base64.b64encode(PNG).decode()
    seen = await send(data, {"pic": png, "raw": "aGk=", "note": "aGk="})
    parts = [(part_name(h), body) for h, body in multipart(seen)]
    assert parts == [("pic", PNG), ("raw", b"hi"), ("note", b"aGk=")]


async def test_a_nullable_json_body_given_null_is_sent_as_null() -> None:
    """``null`` is a value a nullable body takes: it was no body at all, without a
    ``Content-Type`` (an API then answers 400 or 415)."""
    seen = await send(doc("application/json", {"type": "array", "nullable": True}), {"body": None})
    assert (seen.headers["content-type"], seen.body) == ("application/json", b"null")


async def test_a_file_argument_that_is_not_base64_is_a_tool_error() -> None:
    with recorder() as rec:
        with pytest.raises(ToolError, match="'file' must be base64"):
            await upstream(rec.url).call(
                operations(doc("multipart/form-data", UPLOAD))["send"], {"file": "not base64!"}
            )
        assert rec.seen == []


@pytest.mark.parametrize("media", ["application/octet-stream", "application/pdf"])
async def test_a_binary_body_is_its_bytes(media: str) -> None:
    seen = await send(
        doc(media, {"type": "string", "format": "binary"}),
        {"body": base64.encodebytes(PNG * 20).decode()},  # line breaks every 76 characters
    )
    assert seen.body == PNG * 20
    assert seen.headers["content-type"] == media


FORM = {
    "type": "object",
    "properties": {
        "ids": {"type": "array", "items": {"type": "integer"}},
        "csv": {"type": "array", "items": {"type": "string"}},
        "pipes": {"type": "array", "items": {"type": "string"}},
        "filter": {"type": "object", "properties": {"x": {"type": "string"}}},
        "flat": {"type": "object", "properties": {"y": {"type": "string"}}},
        "doc": {"type": "object", "properties": {"z": {"type": "boolean"}}},
    },
}


async def test_form_arrays_are_one_field_per_item_and_encoding_is_honoured() -> None:
    encoding = {
        "csv": {"style": "form", "explode": False},
        "pipes": {"style": "pipeDelimited"},
        "filter": {"style": "deepObject", "explode": True},
        "doc": {"contentType": "application/json"},
    }
    seen = await send(
        doc("application/x-www-form-urlencoded", FORM, encoding),
        {
            "ids": [1, 2],
            "csv": ["a", "b"],
            "pipes": ["c", "d"],
            "filter": {"x": "1 2"},
            "flat": {"y": "&"},
            "doc": {"z": True},
        },
    )
    assert seen.headers["content-type"] == "application/x-www-form-urlencoded"
    assert parse_qsl(seen.body.decode()) == [
        ("ids", "1"),
        ("ids", "2"),
        ("csv", "a,b"),
        ("pipes", "c|d"),
        ("filter[x]", "1 2"),
        ("y", "&"),
        ("doc", '{"z":true}'),
    ]


async def test_a_deep_object_nests_brackets_in_a_form_body_and_a_query() -> None:
    """Stripe's form bodies (``encoding: {style: deepObject, explode: true}``): a nested
    object or array went as JSON text in one field (``shipping[address]={"city":...}``,
    ``items={"price":...}``), which no bracket parser reads; now ``shipping[address][city]``
    and ``items[0][price]``, as Stripe's clients send, in a query too."""
    props = {
        "shipping": {"type": "object", "additionalProperties": True},
        "items": {"type": "array", "items": {"type": "object"}},
        "expand": {"type": "array", "items": {"type": "string"}},
    }
    deep = {"style": "deepObject", "explode": True}
    data = doc(
        "application/x-www-form-urlencoded",
        {"type": "object", "properties": props},
        {name: deep for name in props},
        [{"name": "created", "in": "query", "schema": {"type": "object"}, **deep}],
    )
    seen = await send(
        data,
        {
            "shipping": {"name": "n", "address": {"city": "Paris", "lines": ["a&b"]}},
            "items": [{"price": "p1", "quantity": 2}],
            "expand": ["customer"],
            "created": {"range": {"gte": 1}},
        },
    )
    assert parse_qsl(seen.body.decode()) == [
        ("shipping[name]", "n"),
        ("shipping[address][city]", "Paris"),
        ("shipping[address][lines][0]", "a&b"),
        ("items[0][price]", "p1"),
        ("items[0][quantity]", "2"),
        ("expand[0]", "customer"),
    ]
    assert seen.target == "/x?created%5Brange%5D%5Bgte%5D=1"
    # a multipart body (Stripe's file upload) names its parts so too
    data["paths"]["/x"]["post"]["requestBody"]["content"] = {
        "multipart/form-data": {
            "schema": {"type": "object", "properties": props},
            "encoding": {name: deep for name in props},
        }
    }
    seen = await send(data, {"expand": ["links", "x"], "items": [{"price": "p"}]})
    assert [(part_name(h), body) for h, body in multipart(seen)] == [
        ("items[0][price]", b"p"),
        ("expand[0]", b"links"),
        ("expand[1]", b"x"),
    ]


async def test_swagger_ssv_and_pipes_in_a_path_or_a_header_keep_their_delimiter() -> None:
    """Swagger 2.0's ``collectionFormat`` applies to path and header arrays too: ``ssv``
    and ``pipes`` there were sent comma-separated, as ``csv``."""

    def array(name: str, where: str, fmt: str) -> dict[str, Any]:
        items = {"type": "string"}
        return {"name": name, "in": where, "required": True, "type": "array", "items": items,
                "collectionFormat": fmt}  # fmt: skip

    op = {
        "operationId": "send",
        "parameters": [
            array("p", "path", "pipes"),
            array("s", "path", "ssv"),
            array("X-Pipes", "header", "pipes"),
            array("X-Spaces", "header", "ssv"),
            array("X-Csv", "header", "csv"),
        ],
        "responses": {"200": {"description": "ok"}},
    }
    data = {
        "swagger": "2.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/x/{p}/{s}": {"get": op}},
    }
    pair = ["a b", "c"]
    arguments = {"p": pair, "s": pair, "X-Pipes": pair, "X-Spaces": pair, "X-Csv": pair}
    seen = await send(data, arguments)
    assert seen.target == "/x/a%20b%7Cc/a%20b%20c"
    assert (seen.headers["x-pipes"], seen.headers["x-spaces"]) == ("a b|c", "a b c")
    assert seen.headers["x-csv"] == "a b,c"


async def test_swagger_form_data_files_and_collection_formats() -> None:
    data = {
        "swagger": "2.0",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/x": {
                "post": {
                    "operationId": "send",
                    "consumes": ["multipart/form-data"],
                    "parameters": [
                        {"name": "upload", "in": "formData", "type": "file", "required": True},
                        {
                            "name": "multi",
                            "in": "formData",
                            "type": "array",
                            "items": {"type": "string"},
                            "collectionFormat": "multi",
                        },
                        {
                            "name": "csv",
                            "in": "formData",
                            "type": "array",
                            "items": {"type": "string"},
                        },
                    ],
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }
    seen = await send(data, {"upload": "aGk=", "multi": ["a", "b"], "csv": ["c", "d"]})
    assert [(part_name(h), body) for h, body in multipart(seen)] == [
        ("upload", b"hi"),
        ("multi", b"a"),
        ("multi", b"b"),
        ("csv", b"c,d"),
    ]


RESERVED = ["Content-Length", "Host", "Transfer-Encoding", "Connection", "Keep-Alive", "TE"]


async def test_reserved_headers_are_not_arguments_and_never_forwarded() -> None:
    params = [{"name": n, "in": "header", "schema": {"type": "string"}} for n in RESERVED]
    params.append({"name": "X-Trace", "in": "header", "schema": {"type": "string"}})
    data = doc("application/json", {"type": "object"}, params=params)
    result = imported(data)
    assert list(result.tools[0]["input"]["properties"]) == ["X-Trace", "body"]
    ignored = [p.message for p in result.problems if "the HTTP client sets it" in p.message]
    assert len(ignored) == len(RESERVED)
    operation = operations(data)["send"]
    # a spec written before these were refused still carries them: the runtime drops them
    operation["params"] += [
        {"name": n, "location": "header", "argument": n, "required": False} for n in RESERVED
    ]
    arguments = {n: "1" for n in RESERVED} | {"X-Trace": "t-1", "body": {"hello": "world"}}
    with recorder() as rec:
        outcome = await upstream(rec.url).call(operation, arguments)
        assert not outcome.is_error, outcome.content
        (seen,) = rec.seen
    assert seen.body == b'{"hello": "world"}'
    assert seen.headers["content-length"] == str(len(seen.body))
    assert seen.headers["host"] == rec.url.removeprefix("http://")
    assert seen.headers["x-trace"] == "t-1"
    assert "transfer-encoding" not in seen.headers and "te" not in seen.headers
    assert seen.headers.get("connection", "keep-alive") == "keep-alive"


async def test_a_header_value_the_client_cannot_send_is_a_tool_error() -> None:
    params = [{"name": "X-Name", "in": "header", "schema": {"type": "string"}}]
    operation = operations(doc("application/json", {"type": "object"}, params=params))["send"]
    with recorder() as rec:
        with pytest.raises(ToolError, match="'X-Name' must be ASCII"):  # not "internal error"
            await upstream(rec.url).call(operation, {"X-Name": "caf\u00e9"})
        assert rec.seen == []


def param(name: str, where: str, schema: Any, **how: Any) -> dict[str, Any]:
    return {"name": name, "in": where, "required": where == "path", "schema": schema, **how}


ARRAY = {"type": "array", "items": {"type": "string"}}
OBJECT = {"type": "object", "properties": {"r": {"type": "integer"}, "g": {"type": "integer"}}}


async def test_parameter_styles_on_the_wire() -> None:
    params = [
        param("s", "path", ARRAY),
        param("l", "path", ARRAY, style="label", explode=True),
        param("m", "path", OBJECT, style="matrix", explode=False),
        param("form", "query", ARRAY),
        param("csv", "query", ARRAY, explode=False),
        param("space", "query", ARRAY, style="spaceDelimited", explode=False),
        param("color", "query", OBJECT),
        param("deep", "query", OBJECT, style="deepObject", explode=True),
        param("X-Ids", "header", ARRAY),
        param("X-Pt", "header", OBJECT, explode=True),
        param("c", "cookie", ARRAY),
    ]
    op = {
        "operationId": "send",
        "parameters": params,
        "responses": {"200": {"description": "ok"}},
    }
    data = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {"/x/{s}/{l}/{m}": {"get": op}},
    }
    arguments = {
        "s": ["a/b", "c"],
        "l": ["d", "e"],
        "m": {"r": 1, "g": 2},
        "form": ["f", "g h"],
        "csv": ["i", "j"],
        "space": ["k", "l"],
        "color": {"r": 3, "g": 4},
        "deep": {"r": 5, "g": 6},
        "X-Ids": ["m", "n"],
        "X-Pt": {"r": 7, "g": 8},
        "c": ["o", "p"],
    }
    seen = await send(data, arguments)
    path, _, query = seen.target.partition("?")
    assert path == "/x/a%2Fb,c/.d.e/;m=r,1,g,2"
    # spaces as %20 (RFC 3986 and OpenAPI's examples): "+" is a space to form decoders only
    assert "form=g%20h&" in query and "space=k%20l&" in query
    assert parse_qsl(query) == [
        ("form", "f"),
        ("form", "g h"),
        ("csv", "i,j"),
        ("space", "k l"),
        ("r", "3"),
        ("g", "4"),
        ("deep[r]", "5"),
        ("deep[g]", "6"),
    ]
    assert (seen.headers["x-ids"], seen.headers["x-pt"]) == ("m,n", "r=7,g=8")
    assert seen.headers["cookie"] == "c=o; c=p"  # exploded (form's default): a cookie each


async def test_a_cookie_with_a_content_type_is_its_json() -> None:
    """A cookie parameter described by ``content`` is sent as that JSON (percent-encoded,
    as every cookie value is), as a query or header one is: it was ``a,1,b,x y``."""
    prefs = {"name": "prefs", "in": "cookie", "content": {"application/json": {"schema": OBJECT}}}
    op = {"operationId": "send", "parameters": [prefs], "responses": {"200": {"description": "ok"}}}
    data = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {"/x": {"get": op}},
    }
    seen = await send(data, {"prefs": {"r": 1, "g": "x y"}})
    assert unquote(seen.headers["cookie"]) == 'prefs={"r":1,"g":"x y"}'


def test_path_values_keep_colons_and_at_signs_and_encode_the_rest() -> None:
    """``:`` and ``@`` are path characters: an ARN stays readable to a validator that does
    not decode path parameters (openapi-core); a slash or space never passes."""
    from mcpgen.runtime.wire import path_segment

    assert path_segment("arn", "arn:aws:s3:::b/k@v 1") == "arn:aws:s3:::b%2Fk@v%201"
    assert path_segment("config", "$default") == "$default"
    assert path_segment("ids", ["a:1", "b,c"]) == "a:1,b%2Cc"


async def test_a_multipart_style_the_document_gives_makes_form_fields() -> None:
    """OpenAPI 3.1 applies ``encoding.style`` to multipart too: an object with ``style:
    form`` is its members as parts, not one JSON part (which stays the default)."""
    schema = {
        "type": "object",
        "properties": {
            "object": {"type": "object", "properties": {"foo": {"type": "string"}}},
            "plain": {"type": "object", "properties": {"foo": {"type": "string"}}},
            "codes": {"type": "array", "items": {"type": "integer"}},
        },
    }
    encoding = {"object": {"style": "form"}, "codes": {"style": "pipeDelimited", "explode": False}}
    given = {"object": {"foo": "a", "bar": "b"}, "plain": {"foo": "c"}, "codes": [1, 2]}
    seen = await send(doc("multipart/form-data", schema, encoding), given)
    assert [(part_name(h), c) for h, c in multipart(seen)] == [
        ("foo", b"a"),
        ("bar", b"b"),
        ("plain", b'{"foo": "c"}'),
        ("codes", b"1|2"),
    ]


def mime_parts(seen: Any) -> list[Any]:
    """The parts of a multipart body as Python's MIME parser reads them."""
    head = f"Content-Type: {seen.headers['content-type']}\r\n\r\n".encode()
    message = email.message_from_bytes(head + seen.body, policy=email.policy.HTTP)
    assert message.is_multipart() and not message.defects
    return list(message.iter_parts())


async def test_multipart_mixed_parts_are_mime_parts_in_order_that_still_name_the_property() -> None:
    """``multipart/mixed`` parts carried RFC 7578's ``Content-Disposition: form-data``: they
    are RFC 2046 parts now, in property order, ``inline`` (a file an ``attachment``) with the
    property's ``name`` (RFC 2183 allows the parameter), each with its ``Content-Type``: a
    part without one is read as US-ASCII text."""
    seen = await send(doc("multipart/mixed", UPLOAD), {"file": "aGk=", "note": "né", "meta": {}})
    assert seen.headers["content-type"].startswith("multipart/mixed; boundary=")
    assert [(h["content-disposition"], h["content-type"], body) for h, body in multipart(seen)] == [
        ('attachment; name="file"; filename="file"', "application/octet-stream", b"hi"),
        ('inline; name="note"', "text/plain; charset=utf-8", "né".encode()),
        ('inline; name="meta"', "application/json", b"{}"),
    ]
    read = [(p.get_content_disposition(), p.get_param("name", header="content-disposition"),
             p.get_content()) for p in mime_parts(seen)]  # fmt: skip
    assert read == [
        ("attachment", "file", b"hi"),
        ("inline", "note", "né"),
        ("inline", "meta", b"{}"),
    ]


async def test_multipart_related_has_a_root_its_type_and_content_ids() -> None:
    """RFC 2387: the first part is the root, whose type the body's ``type`` parameter names
    (required), and parts have a ``Content-ID``; none of these were sent."""
    schema = {
        "type": "object",
        "properties": {"meta": {"type": "object"}, "pages": UPLOAD["properties"]["pages"]},
    }
    seen = await send(
        doc("multipart/related", schema), {"meta": {"a": 1}, "pages": ["aGk=", "aA=="]}
    )
    kind = seen.headers["content-type"].partition("; boundary=")[0]
    assert kind == 'multipart/related; type="application/json"'
    assert [(h["content-id"], part_name(h), body) for h, body in multipart(seen)] == [
        ("<0.meta@mcpgen>", "meta", b'{"a": 1}'),
        ("<1.pages@mcpgen>", "pages", b"hi"),
        ("<2.pages@mcpgen>", "pages", b"h"),
    ]
    octets = "application/octet-stream"
    assert [p.get_content_type() for p in mime_parts(seen)] == ["application/json", octets, octets]


async def starlette_form(seen: Any) -> list[tuple[str, Any]]:
    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": seen.body, "more_body": False}

    headers = [(b"content-type", seen.headers["content-type"].encode())]
    form = await Request({"type": "http", "method": "POST", "headers": headers}, receive).form()
    return [(k, v if isinstance(v, str) else await v.read()) for k, v in form.multi_items()]


def werkzeug_form(seen: Any) -> list[tuple[str, Any]]:
    environ = {
        "REQUEST_METHOD": "POST",
        "CONTENT_TYPE": seen.headers["content-type"],
        "CONTENT_LENGTH": str(len(seen.body)),
        "wsgi.input": io.BytesIO(seen.body),
    }
    _, form, files = parse_form_data(environ, silent=False)
    return [*form.items(multi=True), *((k, f.read()) for k, f in files.items(multi=True))]


async def test_a_multipart_body_with_no_parts_is_an_empty_multipart() -> None:
    """A required multipart body with none of its (optional) properties given was sent as
    no bytes and no ``Content-Type``: it is the closing boundary now, which Starlette's and
    Werkzeug's parsers read as an empty form (Werkzeug refuses no bytes at all)."""
    schema = {"type": "object", "properties": {"note": {"type": "string"}}}
    seen = await send(doc("multipart/form-data", schema), {})
    kind, _, boundary = seen.headers["content-type"].partition("; boundary=")
    assert (kind, seen.body) == ("multipart/form-data", f"--{boundary}--\r\n".encode())
    assert await starlette_form(seen) == werkzeug_form(seen) == []


async def test_real_form_parsers_read_a_multipart_form() -> None:
    given = {"file": base64.b64encode(PNG).decode(), "note": "n\u00e9", "tags": ["a", "b"]}
    seen = await send(doc("multipart/form-data", UPLOAD), given)
    fields = [("note", "n\u00e9"), ("tags", "a"), ("tags", "b")]
    assert await starlette_form(seen) == [("file", PNG), *fields]
    assert werkzeug_form(seen) == [*fields, ("file", PNG)]


async def test_a_boundary_and_a_start_the_document_gives_are_honoured() -> None:
    """A document's ``multipart/form-data; boundary=XYZ`` was sent with a second boundary
    after it (Go refuses a duplicate parameter, Python's MIME parser read the first: no
    parts), and a ``multipart/related`` ``start`` named no part: the root was not found."""
    seen = await send(doc("multipart/form-data; boundary=XYZ", UPLOAD), {"note": "n"})
    assert seen.headers["content-type"].count("boundary=") == 1
    assert [p.get_content() for p in mime_parts(seen)] == ["n"]
    assert werkzeug_form(seen) == await starlette_form(seen) == [("note", "n")]
    media = 'multipart/related; start="<root@x>"; type="application/json"'
    seen = await send(doc(media, UPLOAD), {"meta": {}, "note": "n"})
    assert [h["content-id"] for h, _ in multipart(seen)] == ["<root@x>", "<1.meta@mcpgen>"]


def test_a_part_header_never_holds_a_line_break() -> None:
    """A resource's own media type (a handler's ``mimeType``) with CR LF in it wrote more
    headers and a body into the part: Starlette read a ``role`` field of the server's
    making (httpx2's encoder raised ValueError: an internal error)."""
    from mcpgen.runtime.wire_body import Blob, body

    spec = {
        "argument": None,
        "properties": ["file", "role"],
        "arguments": ["file", "role"],
        "content_type": "multipart/form-data",
        "parts": {"file": {"file": True}},
    }
    media = 'text/plain\r\nContent-Disposition: form-data; name="role"\r\n\r\nadmin'
    with pytest.raises(ToolError, match="'file' would have a header holding a control"):
        body(spec, {"file": Blob(b"hi", media), "role": "user"})
    assert (
        b"\r\n\r\nhi\r\n" in body(spec, {"file": Blob(b"hi", "text/plain"), "role": "u"})["content"]
    )


async def test_a_file_part_named_with_a_trailing_backslash_is_refused() -> None:
    """A file property named ``a\\``: ``name="a\\\\"; filename="a\\\\"`` (RFC 7578's quoted
    strings) is read by python-multipart (Starlette) and Python's ``email`` as one name,
    ``a"; filename="a\\``: their split at ``;`` counts ``\\"`` as an escaped quote. Only the
    last parameter may end in a backslash, and both end in one (the filename is the name);
    browsers escape no backslash (WHATWG), and ``%5C`` is not decoded by either parser: so
    the call is refused, sending nothing. A field part (``name`` alone) is read right."""
    schema = {
        "type": "object",
        "properties": {"a\\": {"type": "string", "format": "binary"}, "b\\": {"type": "string"}},
    }
    data = doc("multipart/form-data", schema)
    seen = await send(data, {"b\\": "x"})
    assert werkzeug_form(seen) == await starlette_form(seen) == [("b\\", "x")]
    assert [p.get_param("name", header="content-disposition") for p in mime_parts(seen)] == ["b\\"]
    with recorder() as rec:
        with pytest.raises(ToolError, match=r"the file part 'a\\\\' .* backslash"):
            await upstream(rec.url).call(operations(data)["send"], {"a\\": "aGk=", "b\\": "x"})
        assert rec.seen == []
