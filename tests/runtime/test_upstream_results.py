"""How an upstream answer becomes a tool result (``runtime.answers.result``): empty
answers are empty results, errors name the method, the path template, the status and the
URL requested with credentials redacted, then the body made readable (problem documents,
HTML as text); JSON is structured (wrapped when the output schema wraps it); binary answers
are image, audio or embedded-resource content, bounded in size (issue 33)."""

from __future__ import annotations

import base64
import json
import tracemalloc
import zlib
from collections.abc import AsyncIterator

import httpx2
import pytest
import wirekit

from mcpgen.runtime import answers, capped
from mcpgen.runtime.errors import ToolError
from mcpgen.runtime.upstream import Request

pytestmark = pytest.mark.timeout(30)
URL = "https://api.example.test/items/7?api_key=s3cret-key&page=2"


def answer(status: int, body: bytes = b"", media: str | None = None) -> httpx2.Response:
    headers = {"content-type": media} if media else {}
    return httpx2.Response(
        status, content=body, headers=headers, request=httpx2.Request("DELETE", URL)
    )


def request() -> Request:
    sent = Request("DELETE", URL)
    sent.parts["query"]["api_key"] = "s3cret-key"
    sent.secret_query.add("api_key")
    sent.secrets.add("s3cret-key")
    return sent


@pytest.mark.parametrize("status", [200, 202, 204])
def test_an_empty_answer_is_an_empty_result(status: int) -> None:
    result = answers.result(answer(status), {}, request())
    assert result.content == [] and not result.is_error
    assert result.structured_content is None  # not the text "null"


@pytest.mark.parametrize("status", [204, 205, 304])
def test_no_content_for_a_tool_with_an_output_schema_is_a_tool_error_saying_so(
    status: int,
) -> None:
    """A 204, 205 or 304 (a conditional request the caller made with ``If-None-Match``) the
    operation does not declare, to a tool that advertises an output schema: an empty result
    made every SDK client raise "has an output schema but did not return structured
    content" (the spec: a tool with an output schema MUST return structured content), so it
    is a tool error that says the API answered a success without content."""
    from mcpgen.runtime.schemas import validator

    result = answers.result(answer(status), ITEM, request(), validator({"type": "object"}))
    assert result.is_error and result.structured_content is None
    message = result.content[0].text  # type: ignore[union-attr]
    assert f"HTTP {status}" in message and "no content (a success" in message
    plain = answers.result(answer(status), ITEM, request())  # no output schema: empty
    assert plain.content == [] and not plain.is_error


def test_an_error_names_the_method_and_url_without_the_credential() -> None:
    body = b'{"error": "bad key s3cret-key"}'
    result = answers.result(answer(403, body, "application/json"), {}, request())
    assert result.is_error
    message = result.content[0].text  # type: ignore[union-attr]
    assert message.startswith(
        "DELETE failed: HTTP 403 Forbidden (DELETE https://api.example.test/items/7?"
    )
    assert "page=2" in message and message.endswith('{"error":"bad key REDACTED"}')
    assert "s3cret-key" not in message


def test_json_is_structured_and_wrapped_when_the_schema_wraps_it() -> None:
    plain = answers.result(answer(200, b'{"id": 7}', "application/json"), {}, request())
    assert plain.structured_content == {"id": 7}
    wrapped = answers.result(
        answer(200, b"[1, 2]", "application/json"), {"wrapped": True}, request()
    )
    assert wrapped.structured_content == {"result": [1, 2]}


ITEM = {"path": "/items/{id}"}


def error_of(status: int, body: bytes, media: str) -> str:
    result = answers.result(answer(status, body, media), ITEM, request())
    assert result.is_error and result.structured_content is None
    return result.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("charset", ["iso-8859-1", "windows-1252", "utf-16", "utf-32-be"])
def test_json_in_a_charset_its_content_type_names_is_read_in_it(charset: str) -> None:
    """JSON in ISO-8859-1 (``charset=iso-8859-1``) was "invalid JSON"; UTF-16 and -32 are
    read as RFC 8259 says, from the bytes; an error body in such a charset is readable."""
    body = json.dumps({"name": "Größe"}, ensure_ascii=False).encode(charset)
    media = f"application/json; charset={charset}"
    assert answers.result(answer(200, body, media), {}, request()).structured_content == {
        "name": "Größe"
    }
    failed = answers.result(answer(400, body, media), {}, request())
    assert failed.content[0].text.endswith('{"name":"Größe"}')  # type: ignore[union-attr]


def test_text_json_is_json_as_the_importer_reads_it() -> None:
    """The importer gives an operation answering ``text/json`` (ASP.NET's) an output schema
    and asks for it (``Accept``); the answer was "text/json where text/json was expected"."""
    from mcpgen.runtime.schemas import validator

    item = {"responseType": "text/json"}
    ok = answers.result(
        answer(200, b'{"id": 7}', "text/json; charset=utf-8"),
        item,
        request(),
        validator({"type": "object"}),
    )
    assert not ok.is_error and ok.structured_content == {"id": 7}


def test_a_problem_document_is_rendered_readably() -> None:
    body = (
        b'{"type": "https://example.test/probs/out-of-credit", "title": "You do not have'
        b' enough credit.", "status": 403, "detail": "Your balance is 30, but that costs 50.",'
        b' "instance": "/account/12345/msgs/abc", "balance": 30}'
    )
    message = error_of(403, body, "application/problem+json")
    assert message.startswith("DELETE /items/{id} failed: HTTP 403 Forbidden (DELETE https://")
    assert message.endswith(
        ": You do not have enough credit.: Your balance is 30, but that costs 50."
        ' (type https://example.test/probs/out-of-credit) {"balance":30}'
    )


def test_html_is_reduced_to_its_text_and_long_bodies_are_cut() -> None:
    page = (
        b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title><style>p {color: red}"
        b"</style><script>var x = '<p>';</script></head><body><h1>Bad&nbsp;Gateway</h1>"
        b"<p>The proxy got an invalid\n   answer &amp; gave up.</p></body></html>"
    )
    message = error_of(502, page, "text/html")
    assert message.endswith(
        "HTTP 502 Bad Gateway (DELETE https://api.example.test/items/7?api_key=REDACTED&page=2):"
        " 502 Bad Gateway / Bad Gateway / The proxy got an invalid answer & gave up."
    )
    long = error_of(500, b"x" * 5000, "text/plain")
    assert long.endswith(": " + "x" * answers.EXCERPT + "\u2026")


def test_a_binary_error_body_is_described_not_dumped() -> None:
    assert error_of(500, b"\x00\xff" * 50, "application/pdf").endswith(
        ": (100 bytes of application/pdf)"
    )


@pytest.mark.parametrize(
    ("media", "kind"),
    [
        ("image/png", "image"),
        ("audio/wav", "audio"),
        ("application/pdf", "resource"),
        ("application/octet-stream", "resource"),
    ],
)
def test_binary_answers_are_media_content(media: str, kind: str) -> None:
    blob = bytes(range(256))
    result = answers.result(answer(200, blob, media), {}, request())
    (item,) = result.content
    assert item.type == kind
    if kind == "resource":
        assert item.resource.mime_type == media  # type: ignore[union-attr]
        assert base64.b64decode(item.resource.blob) == blob  # type: ignore[union-attr]
        assert "s3cret" not in str(item.resource.uri)  # type: ignore[union-attr]
    else:
        assert item.mime_type == media  # type: ignore[union-attr]
        assert base64.b64decode(item.data) == blob  # type: ignore[union-attr]


GET_FILE = {
    "openapi": "3.0.3",
    "info": {"title": "t", "version": "1"},
    "paths": {
        "/files/{id}": {
            "get": {
                "operationId": "send",
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}


@pytest.mark.anyio
async def test_through_a_local_upstream_errors_binary_and_the_size_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    operation = wirekit.operations(GET_FILE)["send"]
    with wirekit.recorder() as rec:
        api = wirekit.upstream(rec.url)
        rec.answer(404, "application/problem+json", b'{"title": "No such file", "status": 404}')
        missing = await api.call(operation, {"id": "a b"})
        assert missing.is_error
        assert missing.content[0].text == (  # type: ignore[union-attr]
            f"GET /files/{{id}} failed: HTTP 404 Not Found (GET {rec.url}/files/a%20b):"
            " No such file"
        )
        rec.answer(200, "image/png", b"\x89PNG" + b"\x00" * 2000)
        picture = await api.call(operation, {"id": "p"})
        assert picture.content[0].type == "image"
        assert base64.b64decode(picture.content[0].data) == rec.reply  # type: ignore[union-attr]
        monkeypatch.setenv("MCPGEN_TEST_WIRE_API_MAX_RESPONSE_BYTES", "1000")
        with pytest.raises(ToolError) as refused:  # a tool error once dispatched
            await api.call(operation, {"id": "p"})
    assert str(refused.value) == (
        f"GET {rec.url}/files/p: the answer is larger than 1000 bytes, the most this server"
        " reads (setting MCPGEN_TEST_WIRE_API_MAX_RESPONSE_BYTES)"
    )
    monkeypatch.setenv("MCPGEN_TEST_WIRE_API_RETRIES", "0")
    with pytest.raises(ToolError) as down:  # nothing listens there any more
        await api.call(operation, {"id": "p"})
    assert str(down.value) == (
        f"GET {rec.url}/files/p failed: ConnectError (is the API up?"
        " MCPGEN_TEST_UNSET_BASE_URL sets its base URL)"
    )


@pytest.mark.anyio
async def test_an_answer_without_a_length_is_cut_at_the_limit() -> None:
    sent: list[int] = []

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(100):
            sent.append(1)
            yield b"x" * 100

    streamed = httpx2.Response(200, content=chunks(), request=httpx2.Request("GET", URL))
    with pytest.raises(ToolError, match="too big"):
        await capped.read(streamed, 1000, ToolError("too big"))
    assert len(sent) == 11  # read no further than the limit
    whole = httpx2.Response(200, content=chunks(), request=httpx2.Request("GET", URL))
    assert (await capped.read(whole, 10_000, ToolError("x"))).content == b"x" * 10_000


WBITS = {"gzip": 31, "deflate": 15, "raw deflate": -15}  # raw: deflate without zlib header


def packed(coding: str, blocks: list[bytes]) -> bytes:
    """``blocks`` compressed as ``coding`` (``gzip, gzip``: gzip twice)."""
    first, _, then = coding.partition(", ")
    squeeze = zlib.compressobj(9, zlib.DEFLATED, WBITS[first])
    data = b"".join(squeeze.compress(block) for block in blocks) + squeeze.flush()
    return packed(then, [data]) if then else data


@pytest.mark.anyio
async def test_an_authorization_answer_trickling_in_is_cut_off_at_its_deadline() -> None:
    """``capped.fetch`` (token endpoint, introspection, JWKS) bounds the whole answer: the
    client's timeout is per read, so a server sending a byte every 0.3 s held the caller
    for as long as it kept sending (here 3 s, under a 1 s deadline)."""
    import contextlib
    import socket
    import threading
    import time

    listener = socket.create_server(("127.0.0.1", 0))

    def trickle() -> None:
        conn, _ = listener.accept()
        conn.recv(65536)
        body = b'{"keys": []}'
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
        conn.sendall(head + str(len(body)).encode() + b"\r\n\r\n")
        for byte in body[:10]:
            time.sleep(0.3)
            with contextlib.suppress(OSError):
                conn.sendall(bytes([byte]))
        conn.close()

    threading.Thread(target=trickle, daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/jwks"
    started = time.monotonic()
    async with httpx2.AsyncClient(timeout=5) as client:
        with pytest.raises(httpx2.ReadTimeout, match="no whole answer in 1 s"):
            await capped.fetch(client, client.build_request("GET", url), 1000, ValueError(), 1)
    listener.close()
    assert time.monotonic() - started < 2.0


@pytest.mark.anyio
@pytest.mark.parametrize("coding", ["gzip", "deflate", "raw deflate", "gzip, gzip"])
async def test_a_compressed_answer_decodes_and_is_capped_as_it_inflates(
    coding: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The limit counts decoded bytes, checked at most 1 MiB apart (httpx2 inflates each
    network read in bounded pieces): 50 MB of zeros sent as 50 KB of gzip is refused with
    the oversize error, never held whole (a decompression bomb)."""
    operation = wirekit.operations(GET_FILE)["send"]
    with wirekit.recorder() as rec:
        api = wirekit.upstream(rec.url)
        rec.headers = [("Content-Encoding", coding.replace("raw ", ""))]
        document = {"items": [{"id": n, "name": f"item {n}"} for n in range(200)]}
        rec.answer(200, "application/json", packed(coding, [json.dumps(document).encode()]))
        assert (await api.call(operation, {"id": "p"})).structured_content == document
        rec.answer(200, "application/octet-stream", packed(coding, [bytes(2**20)] * 50))
        assert len(rec.reply) < 100_000
        monkeypatch.setenv("MCPGEN_TEST_WIRE_API_MAX_RESPONSE_BYTES", "1000000")
        tracemalloc.start()
        try:
            with pytest.raises(ToolError) as refused:
                await api.call(operation, {"id": "p"})
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert str(refused.value) == (
        f"GET {rec.url}/files/p: the answer is larger than 1000000 bytes, the most this server"
        " reads (setting MCPGEN_TEST_WIRE_API_MAX_RESPONSE_BYTES)"
    )
    assert peak < 6_000_000  # the limit and one decoded piece, not the 50 MB


@pytest.mark.parametrize("media", ["text/plain", "text/html", "application/json", ""])
def test_a_credential_the_excerpt_cuts_through_is_not_shown_in_part(media: str) -> None:
    """The API echoes the key where the excerpt ends (an error page, a 2xx answer that is
    not the advertised JSON, JSON the output schema refuses): no prefix of it is shown."""
    from mcpgen.runtime.patterns import validator

    for cut in (answers.EXCERPT, answers.EXCERPT // 4):
        body = ("x" * (cut - 6) + " s3cret-key trailing").encode()
        for status, output in ((500, None), (200, validator({"type": "object"}))):
            result = answers.result(answer(status, body, media), {}, request(), output)
            message = result.content[0].text  # type: ignore[union-attr]
            assert result.is_error and "s3cr" not in message, message[-80:]
    refused = ("x" * (answers.EXCERPT // 4 - 6) + " s3cret-key").encode()
    strict = validator({"type": "object", "properties": {"id": {"type": "integer"}}})
    mismatch = answers.result(
        answer(200, b'{"id": "' + refused + b'"}', "application/json"), {}, request(), strict
    )
    message = mismatch.content[0].text  # type: ignore[union-attr]
    assert mismatch.is_error and "s3cr" not in message, message[-120:]


SCHEMES = {
    "jar": {"type": "apiKey", "in": "cookie", "name": "session"},
    "key": {"type": "apiKey", "in": "query", "name": "api_key"},
    "token": {"type": "http", "scheme": "bearer"},
}
JAR = {
    "openapi": "3.0.3",
    "info": {"title": "Jar", "version": "1"},
    "components": {"securitySchemes": SCHEMES},
    "paths": {
        "/x": {
            "get": {
                "operationId": "getX",
                "security": [{"jar": [], "key": [], "token": []}],
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}


@pytest.mark.anyio
async def test_every_credential_echoed_in_an_error_is_redacted() -> None:
    """A cookie credential too (it was shown as the API echoed it)."""
    operation = wirekit.operations(JAR)["get_x"]
    with wirekit.recorder() as rec:
        api = wirekit.upstream(rec.url, SCHEMES)
        rec.answer(500, "text/plain", b"bad secret-jar, secret-key, secret-token")
        result = await api.call(operation, {})
    (seen,) = rec.seen
    assert "session=secret-jar" in seen.headers["cookie"]  # all three were sent
    assert "api_key=secret-key" in seen.target and "secret-token" in seen.headers["authorization"]
    message = result.content[0].text  # type: ignore[union-attr]
    assert result.is_error and message.endswith("bad REDACTED, REDACTED, REDACTED"), message


BASIC = {"basic": {"type": "http", "scheme": "basic"}}


@pytest.mark.anyio
async def test_a_basic_password_echoed_raw_is_redacted() -> None:
    """An API that echoes the decoded password (not the base64 sent) gets it redacted too."""
    spec = {**JAR, "components": {"securitySchemes": BASIC}}
    spec["paths"] = {"/x": {"get": {**JAR["paths"]["/x"]["get"], "security": [{"basic": []}]}}}
    operation = wirekit.operations(spec)["get_x"]
    with wirekit.recorder() as rec:
        api = wirekit.upstream(rec.url, BASIC)
        rec.answer(401, "text/plain", b"user secret-basic_USERNAME: wrong secret-basic_PASSWORD")
        result = await api.call(operation, {})
    (seen,) = rec.seen
    assert seen.headers["authorization"].startswith("Basic ")
    message = result.content[0].text  # type: ignore[union-attr]
    assert result.is_error and "secret-basic_PASSWORD" not in message, message
    assert message.endswith("wrong REDACTED"), message


def test_an_answer_only_the_redaction_makes_invalid_is_an_error_that_says_so() -> None:
    """A credential is redacted before the answer is checked against the output schema:
    the client checks the structured content it receives (the SDK raises on a mismatch),
    and a message about the raw answer would quote the credential (``repr``-escaped, past
    the redaction). A valid answer the redaction makes invalid is a tool error without
    the credential that blames the redaction, not the upstream's answer."""
    from mcpgen.runtime.schemas import validator

    ids = {"type": "string", "pattern": "^order-[a-z0-9-]+$"}
    output = validator({"type": "object", "properties": {"id": ids}})
    body = b'{"id": "order-s3cret-key"}'
    result = answers.result(answer(200, body, "application/json"), ITEM, request(), output)
    message = result.content[0].text  # type: ignore[union-attr]
    assert result.is_error and result.structured_content is None
    assert "s3cret-key" not in message and "'order-REDACTED'" in message, message
    assert "matches the tool's output schema until the credential" in message, message
    invalid = b'{"id": "ORDER-s3cret-key"}'  # invalid as answered: the upstream's fault
    result = answers.result(answer(200, invalid, "application/json"), ITEM, request(), output)
    message = result.content[0].text  # type: ignore[union-attr]
    assert "s3cret-key" not in message and "does not match the tool's output" in message


def nested(depth: int) -> bytes:
    return b'{"a":' * depth + b"1" + b"}" * depth


@pytest.mark.parametrize("depth", [256, 5000])
def test_json_nested_too_deep_is_a_tool_error_that_says_so(depth: int) -> None:
    """An answer nested 256 levels (which the SDK cannot send: the call was a JSON-RPC
    error) or more than Python's parser goes (an "internal error", the status of a 500
    lost, a poll's ``RecursionError`` likewise) is a tool error naming the depth."""
    from mcpgen.runtime.upstream_poll import still_running

    ok = answers.result(answer(200, nested(depth), "application/json"), ITEM, request())
    assert ok.is_error and "JSON nested more than 200 levels deep (HTTP 200)" in str(ok.content)
    failed = error_of(500, nested(depth), "application/json")
    assert failed.startswith("DELETE /items/{id} failed: HTTP 500 Internal Server Error")
    assert '{"a":{"a":' in failed  # the body's start, as text
    assert not still_running(answer(200, nested(depth), "application/json"))


def test_json_nested_to_the_limit_is_sent() -> None:
    result = answers.result(answer(200, nested(199), "application/json"), ITEM, request())
    assert not result.is_error
    result.model_dump_json(by_alias=True)  # the SDK can send it


@pytest.mark.parametrize("number", [b"1e400", b"-1e999"])
def test_a_number_out_of_float_range_is_a_tool_error_that_says_so(number: bytes) -> None:
    """Python reads ``1e400`` as infinity, which the SDK cannot send: the call was an
    "internal error" in the log instead of saying what the API answered."""
    body = b'{"n": [' + number + b"]}"
    result = answers.result(answer(200, body, "application/json"), ITEM, request())
    assert result.is_error
    assert f"invalid JSON (HTTP 200): the number {number.decode()} is out of range" in str(
        result.content
    )


@pytest.mark.anyio
async def test_a_query_key_echoed_percent_encoded_is_redacted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A key with characters a query encodes (base64's ``/+=``) comes back as the API saw
    it, percent-encoded, when the API echoes the URL it was asked (a ``links.self``, an
    error quoting the request): that form is redacted too (it reached the client whole)."""
    key = "Sup3r/Key+b64=="
    monkeypatch.setenv("MCPGEN_TEST_WIRE_API_KEY", key)
    spec = {
        **JAR,
        "paths": {"/x": {"get": {**JAR["paths"]["/x"]["get"], "security": [{"key": []}]}}},
    }
    operation = wirekit.operations(spec)["get_x"]
    with wirekit.recorder() as rec:
        api = wirekit.upstream(rec.url, SCHEMES)
        echoed = "Sup3r%2FKey%2Bb64%3D%3D"
        rec.answer(200, "application/json", json.dumps({"self": f"/x?api_key={echoed}"}).encode())
        ok = await api.call(operation, {})
        rec.answer(500, "text/plain", f"bad key {echoed}".encode())
        failed = await api.call(operation, {})
    assert [seen.target.endswith(f"api_key={echoed}") for seen in rec.seen] == [True, True]
    assert ok.structured_content == {"self": "/x?api_key=REDACTED"}
    message = failed.content[0].text  # type: ignore[union-attr]
    assert failed.is_error and "Sup3r" not in message, message


@pytest.mark.anyio
async def test_a_cookie_key_echoed_as_the_cookie_sent_it_is_redacted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A cookie credential with a space, ``;`` or ``,`` goes out percent-encoded in the
    ``Cookie`` header; an API echoing the cookie it got showed that form whole."""
    monkeypatch.setenv("MCPGEN_TEST_WIRE_API_JAR", "s3cret jar;v=1,2")
    spec = {
        **JAR,
        "paths": {"/x": {"get": {**JAR["paths"]["/x"]["get"], "security": [{"jar": []}]}}},
    }
    operation = wirekit.operations(spec)["get_x"]
    with wirekit.recorder() as rec:
        api = wirekit.upstream(rec.url, SCHEMES)
        rec.answer(500, "text/plain", b"bad cookie")
        await api.call(operation, {})
        (seen,) = rec.seen
        sent = seen.headers["cookie"].partition("session=")[2]
        assert sent and sent != "s3cret jar;v=1,2"  # encoded on the way out
        rec.answer(500, "text/plain", f"bad cookie {sent}".encode())
        failed = await api.call(operation, {})
    message = failed.content[0].text  # type: ignore[union-attr]
    assert failed.is_error and "s3cret" not in message and message.endswith("REDACTED"), message


@pytest.mark.anyio
@pytest.mark.parametrize("media", ["text/plain", "application/json"])
async def test_a_key_in_the_base_urls_path_echoed_in_an_error_is_redacted(
    monkeypatch: pytest.MonkeyPatch, media: str
) -> None:
    """A deployment's base URL with a key in its path (``https://host/KEY123/v1``, bot and
    webhook APIs) or in a query value it adds: the URL in the error showed ``REDACTED``, but
    the body the API answered repeated the key (the path it was asked) to the client."""
    spec = {**JAR, "paths": {"/x": {"get": {**JAR["paths"]["/x"]["get"], "security": []}}}}
    operation = wirekit.operations(spec)["get_x"]
    with wirekit.recorder() as rec:
        api = wirekit.upstream("https://api.example.test/v1")
        monkeypatch.setenv(api.settings["baseUrlEnv"], rec.url + "/bot42:K3y%2Fx/v1?cid=Cl1ent")
        echo = {"error": "no route /bot42:K3y/x/v1/x, bot42:K3y%2Fx, client Cl1ent"}
        rec.answer(404, media, json.dumps(echo).encode())
        failed = await api.call(operation, {})
    (seen,) = rec.seen
    assert seen.target == "/bot42:K3y%2Fx/v1/x?cid=Cl1ent"  # the key was sent
    message = failed.content[0].text  # type: ignore[union-attr]
    assert failed.is_error and "404" in message, message
    assert "K3y" not in message and "Cl1ent" not in message, message
    assert "/v1/x" in message  # the documented path is still shown


@pytest.mark.anyio
async def test_a_gateways_word_in_the_base_urls_path_is_not_taken_for_a_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``https://gw/petstore/v1`` (a gateway's prefix, not a key): scrubbing every added
    segment cut ``petstore`` out of the data the API answered; a long or digit-bearing
    segment still counts as a key."""
    spec = {**JAR, "paths": {"/x": {"get": {**JAR["paths"]["/x"]["get"], "security": []}}}}
    operation = wirekit.operations(spec)["get_x"]
    with wirekit.recorder() as rec:
        api = wirekit.upstream("https://api.example.test/v1")
        monkeypatch.setenv(api.settings["baseUrlEnv"], rec.url + "/petstore/tok3n4567/v1")
        rec.answer(200, "application/json", b'{"store": "petstore", "token": "tok3n4567"}')
        result = await api.call(operation, {})
    assert not result.is_error, result.content
    text = result.content[0].text  # type: ignore[union-attr]
    assert "petstore" in text and "tok3n4567" not in text, text
