"""What streamable HTTP answers to hostile JSON-RPC bodies (the stateless app, in this
process). Where SDK 2.3's transport does not answer what JSON-RPC 2.0 asks for, the table
says so and accepts the correct answer too, and an ``xfail`` test asserts the correct one
(docs/reliability.md)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import httpx2
import pytest
import rtkit
from rtbridge import http_client, running

from mcpgen.runtime import jsonrpc

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}


@pytest.fixture(scope="module")
async def http() -> AsyncIterator[httpx2.AsyncClient]:
    """The stateless (SSE answers) app of the fixture without auth, for the module."""
    async with (
        running(rtkit.app(rtkit.make_spec("none"), "http-stateless")) as app,
        http_client(app) as client,
    ):
        yield client


def messages(response: httpx2.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages in a response: a JSON body or SSE ``data:`` lines."""
    kind = response.headers.get("content-type", "")
    if not response.content:
        return []
    if kind.startswith("application/json"):
        body = response.json()
        return body if isinstance(body, list) else [body]
    return [
        json.loads(line[5:])
        for line in response.text.splitlines()
        if line.startswith("data:") and line[5:].strip()
    ]


async def post(
    http: httpx2.AsyncClient, body: bytes, headers: dict[str, str] | None = None
) -> httpx2.Response:
    return await http.post("/mcp", content=body, headers=headers or HEADERS)


# (body, HTTP status and JSON-RPC error SDK 2.3 answers, what JSON-RPC 2.0 asks for)
CASES: list[tuple[str, bytes, tuple[int, Any], Any]] = [
    ("malformed JSON", b"{not json", (400, PARSE_ERROR), None),
    ("invalid UTF-8", b"\xff\xfe", (400, PARSE_ERROR), None),
    ("empty body", b"", (400, PARSE_ERROR), None),
    ("empty batch", b"[]", (400, INVALID_REQUEST), None),
    ("a string", b'"hello"', (400, INVALID_PARAMS), INVALID_REQUEST),
    ("missing method", b'{"jsonrpc":"2.0","id":2}', (400, INVALID_PARAMS), INVALID_REQUEST),
    ("missing jsonrpc", b'{"id":3,"method":"tools/list"}', (400, INVALID_PARAMS), INVALID_REQUEST),
    ("jsonrpc 1.0", b'{"jsonrpc":"1.0","id":4,"method":"tools/list"}', (400, INVALID_PARAMS),
     INVALID_REQUEST),
    ("method a number", b'{"jsonrpc":"2.0","id":5,"method":5}', (400, INVALID_REQUEST), None),
    ("params a string", b'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":"x"}',
     (400, INVALID_REQUEST), None),
    ("id an object", b'{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}', (202, None),
     INVALID_REQUEST),
    ("id null", b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}', (202, None),
     INVALID_REQUEST),
    ("a lone surrogate", b'{"jsonrpc":"2.0","id":15,"method":"tools/call",'
     b'"params":{"name":"echo","arguments":{"text":"a\\ud800"}}}', (400, PARSE_ERROR), None),
    ("unknown method", b'{"jsonrpc":"2.0","id":7,"method":"no/such"}', (200, METHOD_NOT_FOUND),
     None),
    ("arguments a string",
     b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":"s"}}',
     (200, INVALID_PARAMS), None),
    ("name a number", b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":5}}',
     (200, INVALID_PARAMS), None),
    ("unknown tool", b'{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"nope"}}',
     (200, INVALID_PARAMS), None),
    ("arguments break the schema",
     b'{"jsonrpc":"2.0","id":12,"method":"tools/call",'
     b'"params":{"name":"echo","arguments":{"text":5}}}', (200, "tool error"), None),
]  # fmt: skip


@pytest.mark.parametrize(("body", "now", "spec"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
async def test_hostile_json_rpc_over_http(
    http: httpx2.AsyncClient, body: bytes, now: tuple[int, Any], spec: Any
) -> None:
    status, code = now
    response = await post(http, body)
    found = messages(response)
    assert "Traceback" not in response.text
    if spec is not None and response.status_code == 400 and found:
        assert found[0]["error"]["code"] in (code, spec), found
    elif code is None:  # taken for a notification: no answer at all (or the right one)
        if found:
            assert found[0]["error"]["code"] == spec, found
        else:
            assert response.status_code == status
    elif code == "tool error":
        assert response.status_code == status
        assert found[0]["result"]["isError"] is True, found
    else:
        assert response.status_code == status, response.text
        assert found and found[0]["error"]["code"] == code, found
    if response.status_code == 400:  # id null, or the request's as stdio answers (-32600)
        assert found and found[0]["id"] in (None, _id(body)), found
    ok = await post(http, json.dumps(ADD).encode())
    assert messages(ok)[0]["result"]["structuredContent"] == {"text": "ok"}


def _id(body: bytes) -> Any:
    try:
        return json.loads(body).get("id")
    except (ValueError, AttributeError):
        return None


ADD = {"jsonrpc": "2.0", "id": 99, "method": "tools/call",
       "params": {"name": "echo", "arguments": {"text": "ok"}}}  # fmt: skip


@pytest.mark.parametrize("odd", [b"{}", b"null", b"true", b"[1]", b"1.5"])
@pytest.mark.parametrize("name", [b'"id"', b'"\\u0069d"', b'"i\\u0064"'])
async def test_http_answers_a_request_with_a_bad_id(
    http: httpx2.AsyncClient, odd: bytes, name: bytes
) -> None:
    # SDK 2.3 takes it for a notification: 202, never answered (PostGuard answers), and so
    # when the name "id" is escaped
    response = await post(http, b'{"jsonrpc":"2.0",' + name + b":" + odd + b',"method":"ping"}')
    found = messages(response)
    assert found and found[0]["error"]["code"] == INVALID_REQUEST, response.status_code


@pytest.mark.parametrize("odd", [b"{}", b"null"])
async def test_a_bad_id_after_the_first_16_kib_is_answered_too(
    http: httpx2.AsyncClient, odd: bytes
) -> None:
    """The answer does not depend on how the body arrives: a long call whose bad id comes
    after 16 KiB, in chunks, is answered as one that arrives at once (it was taken for a
    notification: 202, never answered)."""
    text = b'{"name":"echo","arguments":{"text":"' + b"x" * 40_000 + b'"}}'
    body = b'{"jsonrpc":"2.0","method":"tools/call","params":' + text + b',"id":' + odd + b"}"

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(body), 4096):
            yield body[start : start + 4096]

    for sent in (body, chunks()):
        response = await http.post("/mcp", content=sent, headers=HEADERS)
        found = messages(response)
        assert found and found[0]["error"]["code"] == INVALID_REQUEST, response.status_code


async def test_odd_names_inside_the_arguments_are_no_bad_request(http: httpx2.AsyncClient) -> None:
    odd = {"id": None, "method": 5, "params": "x", "jsonrpc": "1.0"}
    call = {**ADD, "params": {"name": "echo", "arguments": {"text": "ok", **odd}}}
    response = await post(http, json.dumps(call).encode())
    assert messages(response)[0]["id"] == 99, response.text


# what stdio answers to a JSON array (test_rt_stdio_wire.py), and so HTTP
BATCH_ANSWER = {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": "Invalid Request"}}  # fmt: skip


ERAS = pytest.mark.parametrize(
    ("arm", "version"),
    [(a, v) for a in ("http", "http-stateless", "http-json") for v in ("2025-11-25", "2026-07-28")],
)


@asynccontextmanager
async def era(arm: str, version: str, **changes: Any) -> AsyncIterator[tuple[httpx2.AsyncClient, dict[str, str], bytes]]:  # fmt: skip
    """A client of ``arm`` (its settings ``changes``d), the headers of a request in
    ``version``'s era (after a handshake where that opens a session) and the body of an echo
    call in that era."""
    headers = {**HEADERS, "MCP-Protocol-Version": version}
    meta = {"io.modelcontextprotocol/protocolVersion": version, "io.modelcontextprotocol/clientCapabilities": {}}  # fmt: skip
    call = json.dumps({**ADD, "params": {**ADD["params"], "_meta": meta}}).encode()
    app = rtkit.app(rtkit.make_spec("none"), arm, **changes)
    async with running(app), http_client(app) as http:
        if version == "2026-07-28":  # the request metadata headers of the call
            headers.update({"Mcp-Method": "tools/call", "Mcp-Name": "echo"})
        elif arm == "http":
            params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}  # fmt: skip
            opened = await post(http, json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}).encode(), headers)  # fmt: skip
            headers["Mcp-Session-Id"] = opened.headers["mcp-session-id"]
        yield http, headers, call
        ok = await post(http, call, headers)  # and the server still answers
        assert messages(ok)[0]["result"]["structuredContent"] == {"text": "ok"}, ok.text


@ERAS
async def test_a_batch_gets_the_invalid_request_stdio_gives(arm: str, version: str) -> None:
    """A JSON array (batching left MCP in 2025-06-18): 400 and the -32600 stdio answers, in
    both eras (SDK 2.3: -32602 with pydantic's report in the handshake era, its own
    message in 2026-07-28's)."""
    async with era(arm, version) as (http, headers, call):
        batch = await post(http, b"[" + call + b"]", headers)
    assert (batch.status_code, messages(batch)) == (400, [BATCH_ANSWER]), batch.text


@ERAS
async def test_a_body_not_sent_as_json_gets_415_and_a_json_rpc_error(
    arm: str, version: str
) -> None:
    """A call posted as text/plain, or a type that only begins with application/json: 415
    Unsupported Media Type with a JSON-RPC error of id null (SDK 2.3: a plain-text 400; in
    2026-07-28 it took application/jsonx), in both eras."""
    for kind in ("text/plain", "application/jsonx", "application/json-seq"):
        async with era(arm, version) as (http, headers, call):
            as_text = await post(http, call, {**headers, "Content-Type": kind})
        assert as_text.status_code == 415, (kind, as_text.text)
        assert [(m["id"], m["error"]["code"]) for m in messages(as_text)] == [
            (None, INVALID_REQUEST)
        ]


# JSON that is no JSON-RPC 2.0 message, and the id of stdio's -32600 answer to it
NOT_MESSAGES = [
    (b'{"foo": 1}', None),
    (b'"hello"', None),
    (b'{"jsonrpc":"2.0","id":2}', 2),  # no method
    (b'{"id":3,"method":"tools/list"}', 3),  # no jsonrpc
    (b'{"jsonrpc":"1.0","id":4,"method":"tools/list"}', 4),
    # the names of a message, but not at the top level; "2.0" elsewhere than in "jsonrpc"
    (b'{"id":5,"params":{"jsonrpc":"2.0","method":"x"},"foo":1}', 5),
    (b'{"jsonrpc":2,"id":6,"method":"tools/list","params":{"v":"2.0"}}', 6),
    (b'{"method":"tools/list","params":{"jsonrpc":"2.0","id":7}}', None),
    (b'{"result":{},"error":{"jsonrpc":"2.0"}}', None),
]


@ERAS
async def test_json_that_is_no_message_gets_the_invalid_request_stdio_gives(
    arm: str, version: str
) -> None:
    """A JSON value that is no JSON-RPC request, notification or response: 400 and -32600
    (SDK 2.3: -32602 with pydantic's report), the request's id when it has one."""
    async with era(arm, version) as (http, headers, _):
        answers = [await post(http, body, headers) for body, _ in NOT_MESSAGES]
    for (body, request_id), answer in zip(NOT_MESSAGES, answers, strict=True):
        expected = {**BATCH_ANSWER, "id": request_id}
        assert (answer.status_code, messages(answer)) == (400, [expected]), (body, answer.text)


# request objects JSON-RPC 2.0 calls invalid, and the id of stdio's -32600 answer to them
INVALID_REQUESTS = [
    (b'{"jsonrpc":"2.0","id":5,"method":5}', 5),
    (b'{"jsonrpc":"2.0","id":"a","method":null}', "a"),
    (b'{"jsonrpc":"2.0","id":5,"method":{"name":"ping"}}', 5),
    (b'{"jsonrpc":"2.0","method":["ping"]}', None),
    (b'{"jsonrpc":"2.0","id":6,"method":"tools/list","params":"x"}', 6),
    (b'{"jsonrpc":"2.0","id":6,"method":"tools/list","params":5}', 6),
    (b'{"method":"tools/list","params":true,"jsonrpc":"2.0","id":7}', 7),
    # JSON-RPC allows array params, MCP does not (and stdio answers -32600 with the id)
    (b'{"jsonrpc":"2.0","id":6,"method":"tools/list","params":[]}', 6),
    (b'{"method":"tools/call","params":["echo",{"text":"x"}],"jsonrpc":"2.0","id":7}', 7),
    # laid out as an SDK writes a message, a name given twice (the last one counts)
    (b'{"jsonrpc":"2.0","id":8,"method":"ping","jsonrpc":2}', 8),
    (b'{"jsonrpc":"2.0","id":8,"method":"ping","method":5}', 8),
    (b'{"jsonrpc":"2.0","id":8,"method":"ping","\\u006dethod":5}', 8),
    (b'{"jsonrpc":"2.0","id":8,"method":"ping","params":{},"params":"x"}', 8),
    (b'{"method":"ping","params":{},"method":null,"jsonrpc":"2.0","id":9}', 9),
]


@ERAS
async def test_an_invalid_request_object_gets_the_invalid_request_stdio_gives(
    arm: str, version: str
) -> None:
    """A request whose method is no string or whose params are no object, and so when a
    name is given twice: 400 and -32600 with the request's id (SDK 2.3: -32602 with
    pydantic's report, id null)."""
    async with era(arm, version) as (http, headers, _):
        answers = [await post(http, body, headers) for body, _ in INVALID_REQUESTS]
    for (body, request_id), answer in zip(INVALID_REQUESTS, answers, strict=True):
        expected = {**BATCH_ANSWER, "id": request_id}
        assert (answer.status_code, messages(answer)) == (400, [expected]), (body, answer.text)


async def test_a_name_given_twice_is_read_as_the_sdk_reads_it(http: httpx2.AsyncClient) -> None:
    """The last value counts: when it is valid, the call is served."""
    body = b'{"jsonrpc":"2.0","id":3,"method":5,"method":"ping","params":"x","params":{}}'
    assert messages(await post(http, body)) == [{"jsonrpc": "2.0", "id": 3, "result": {}}]


@pytest.mark.parametrize("pretty", [False, True])
def test_a_message_laid_out_as_an_sdk_writes_it_is_not_parsed(
    monkeypatch: pytest.MonkeyPatch, pretty: bool
) -> None:
    """The Python SDK's key order (``jsonrpc``, ``id``, then ``method``/``result``/``error``)
    and the TypeScript SDK's (``method``/``result`` first, ``jsonrpc`` and ``id`` last) are
    told from the bytes: PostGuard does not parse a valid call before the SDK does."""
    monkeypatch.setattr(jsonrpc.json, "loads", None)  # parsing would fail the test
    dumps = partial(json.dumps, indent=1 if pretty else None)
    # a newline and an accent, which json.dumps escapes
    text = {"name": "echo", "arguments": {"text": "a\n\u00e9", "params": {}}}
    python_order = {**ADD, "params": {**text, "jsonrpc": "2.0", "method": "x"}}
    typescript_order = {
        "method": "tools/call",
        "params": ADD["params"],
        "jsonrpc": "2.0",
        "id": "a",
    }
    for value in (python_order, typescript_order, {"result": {}, "jsonrpc": "2.0", "id": 3}):
        assert jsonrpc.error_for_post(dumps(value).encode()) is None


async def test_a_message_with_escaped_names_is_still_served(http: httpx2.AsyncClient) -> None:
    """The guard finds JSON that is no message by the bytes of its names, then parses it: a
    valid call whose names are escaped is answered as usual."""
    body = json.dumps(ADD).replace('"jsonrpc"', '"\\u006asonrpc"').replace('"2.0"', '"2\\u002e0"')
    assert "jsonrpc" not in body and "2.0" not in body
    answer = messages(await post(http, body.encode()))
    assert answer[0]["result"]["structuredContent"] == {"text": "ok"}, answer


@ERAS
async def test_a_declared_body_over_the_limit_gets_413_and_a_json_rpc_error(
    arm: str, version: str
) -> None:
    """A body whose Content-Length is over ``max_body_size``, or a chunked one over it: 413
    with a JSON-RPC error of id null (SDK 2.3: a plain-text 413)."""
    async with era(arm, version, max_body_size=2048) as (http, headers, call):
        big = call.replace(b'"ok"', b'"' + b"x" * 4096 + b'"')
        declared = await post(http, big, headers)

        async def chunks() -> AsyncIterator[bytes]:
            yield big

        streamed = await http.post("/mcp", content=chunks(), headers=headers)
    assert declared.status_code == 413, declared.text
    assert messages(declared) == [{**BATCH_ANSWER, "error": {"code": INVALID_REQUEST, "message": "Request body too large"}}]  # fmt: skip
    assert streamed.status_code == 413 and messages(streamed) == messages(declared)


async def next_data(lines: AsyncIterator[str], event: str | None = None) -> str:
    current = None
    async for line in lines:
        if line.startswith("event:"):
            current = line[6:].strip()
        elif line.startswith("data:") and (event is None or current == event):
            return line[5:].strip()
    raise AssertionError("the stream ended")


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2024-11-05", "capabilities": {},
                         "clientInfo": {"name": "t", "version": "0"}}}  # fmt: skip
TOO_LARGE = {**BATCH_ANSWER, "error": {"code": INVALID_REQUEST, "message": "Request body too large"}}  # fmt: skip
AS_TEXT = {**BATCH_ANSWER, "error": {"code": INVALID_REQUEST, "message": "Content-Type must be application/json"}}  # fmt: skip
PARSE = {**BATCH_ANSWER, "error": {"code": PARSE_ERROR, "message": "Parse error"}}
SURROGATE = {**BATCH_ANSWER, "error": {"code": PARSE_ERROR, "message": f"Parse error: a string {jsonrpc.LONE_SURROGATE}"}}  # fmt: skip
# (a POST to legacy SSE's message endpoint, its headers; the answer of streamable HTTP)
LEGACY: list[tuple[str, bytes, dict[str, str], tuple[int, Any]]] = [
    ("batch", b"[" + json.dumps(INITIALIZE).encode() + b"]", {}, (400, BATCH_ANSWER)),
    ("text/plain", json.dumps(INITIALIZE).encode(), {"Content-Type": "text/plain"}, (415, AS_TEXT)),
    ("no message", b'{"foo": 1}', {}, (400, BATCH_ANSWER)),
    ("method a number", b'{"jsonrpc":"2.0","id":5,"method":5}', {}, (400, {**BATCH_ANSWER, "id": 5})),
    ("over the limit", json.dumps({**INITIALIZE, "pad": "x" * 4096}).encode(), {}, (413, TOO_LARGE)),
    ("not JSON", b"{bad", {}, (400, PARSE)),
    ("cut short", json.dumps(INITIALIZE).encode()[:-1], {}, (400, PARSE)),
    ("not UTF-8", b'{"jsonrpc":"2.0","id":1,"method":"ping\xff"}', {}, (400, PARSE)),
    ("a lone surrogate", b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"\\ud800"}}', {}, (400, SURROGATE)),
]  # fmt: skip


@pytest.mark.parametrize(("body", "changed", "answer"), [c[1:] for c in LEGACY], ids=[c[0] for c in LEGACY])  # fmt: skip
async def test_legacy_sse_posts_get_the_json_rpc_errors_of_streamable_http(
    body: bytes, changed: dict[str, str], answer: tuple[int, Any]
) -> None:
    """POST /messages/ of legacy HTTP+SSE, guarded as streamable HTTP's POST (SDK 2.3:
    plain-text 400 "Could not parse message" or "Invalid Content-Type header", plain-text
    413); the session keeps serving."""
    app = rtkit.app(rtkit.make_spec("none"), "sse", max_body_size=2048)
    async with running(app), http_client(app) as http, http.stream("GET", "/sse") as stream:
        lines = stream.aiter_lines()
        endpoint = await next_data(lines, "endpoint")
        refused = await http.post(endpoint, content=body, headers={**HEADERS, **changed})
        ok = await http.post(endpoint, json=INITIALIZE, headers=HEADERS)
        served = json.loads(await next_data(lines))
    assert (refused.status_code, messages(refused)) == (answer[0], [answer[1]]), refused.text
    assert ok.status_code == 202 and served["id"] == 1 and "serverInfo" in served["result"]


async def test_legacy_sse_takes_a_body_up_to_max_body_size_over_4_mib() -> None:
    """``max_body_size`` over the SDK's default 4 MiB holds for legacy SSE too (it was cut at
    4 MiB: the SDK transport's own limit, behind the runtime's)."""
    app = rtkit.app(rtkit.make_spec("none"), "sse", max_body_size=5 * 1024 * 1024)
    big = json.dumps({**INITIALIZE, "pad": "x" * (4_500_000)}).encode()
    async with running(app), http_client(app) as http, http.stream("GET", "/sse") as stream:
        lines = stream.aiter_lines()
        endpoint = await next_data(lines, "endpoint")
        taken = await http.post(endpoint, content=big, headers=HEADERS)
        assert taken.status_code == 202, taken.text
        served = json.loads(await next_data(lines))
    assert served["id"] == 1 and "serverInfo" in served["result"]
