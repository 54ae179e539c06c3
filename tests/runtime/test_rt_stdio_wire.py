"""What the stdio transport (``runtime.stdio``) answers, line by line, on one fixture server
process shared by the module: hostile JSON-RPC, an oversized line, handlers that raise,
time out, are cancelled or print. At the end the server must exit 0 at end of input.

SDK 2.3's own stdio transport drops a line it cannot read; the runtime's answers -32700 or
-32600 as JSON-RPC 2.0 (section 5.1) asks.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import rtkit
from rtstdio import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    Stdio,
    call,
    cleaned_up,
    wait_for,
    wait_until,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
TOO_LARGE = {"code": INVALID_REQUEST, "message": "Request body too large"}


@pytest.fixture(scope="module")
def stdio() -> Iterator[Stdio]:
    server = Stdio()
    try:
        server.initialize()
        yield server
        assert server.close() == 0, server.stderr.decode()[-3000:]
    finally:
        server.kill()


# (line, what the server answers: None = nothing, an error code, or "tool error")
CASES: list[tuple[str, bytes, Any]] = [
    ("malformed JSON", b"{not json", PARSE_ERROR),
    ("invalid UTF-8", b'{"jsonrpc":"2.0","id":1,"method":"ping"\xff}', PARSE_ERROR),
    ("truncated", b'{"jsonrpc":"2.0","id":1,"meth', PARSE_ERROR),
    ("empty batch", b"[]", INVALID_REQUEST),
    ("batch of numbers", b"[1,2]", INVALID_REQUEST),
    ("a string", b'"hello"', INVALID_REQUEST),
    ("null", b"null", INVALID_REQUEST),
    ("missing method", b'{"jsonrpc":"2.0","id":2}', INVALID_REQUEST),
    ("missing jsonrpc", b'{"id":3,"method":"tools/list"}', INVALID_REQUEST),
    ("jsonrpc 1.0", b'{"jsonrpc":"1.0","id":4,"method":"tools/list"}', INVALID_REQUEST),
    ("method a number", b'{"jsonrpc":"2.0","id":5,"method":5}', INVALID_REQUEST),
    ("id an object", b'{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}', INVALID_REQUEST),
    ("id a boolean", b'{"jsonrpc":"2.0","id":true,"method":"tools/list"}', INVALID_REQUEST),
    ("id null", b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}', INVALID_REQUEST),
    ("id an object, its name escaped", b'{"jsonrpc":"2.0","\\u0069d":{},"method":"tools/list"}',
     INVALID_REQUEST),
    ("params a string", b'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":"x"}',
     INVALID_REQUEST),
    ("method null", b'{"jsonrpc":"2.0","id":5,"method":null}', INVALID_REQUEST),
    ("method an object", b'{"jsonrpc":"2.0","id":5,"method":{"name":"ping"}}', INVALID_REQUEST),
    ("params a number", b'{"jsonrpc":"2.0","id":6,"method":"tools/list","params":5}',
     INVALID_REQUEST),
    ("method given twice, the last a number", b'{"jsonrpc":"2.0","id":8,"method":"ping","method":5}',
     INVALID_REQUEST),
    ("jsonrpc given twice, the last a number", b'{"jsonrpc":"2.0","id":8,"method":"ping","jsonrpc":2}',
     INVALID_REQUEST),
    ("a name given twice, the last valid", b'{"jsonrpc":"2.0","id":8,"method":5,"method":"ping"}',
     {}),
    ("unknown method", b'{"jsonrpc":"2.0","id":7,"method":"no/such"}', METHOD_NOT_FOUND),
    ("arguments a string",
     b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":"s"}}',
     INVALID_PARAMS),
    ("name a number", b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":5}}',
     INVALID_PARAMS),
    ("no name", b'{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{}}', INVALID_PARAMS),
    ("unknown tool", b'{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"nope"}}',
     INVALID_PARAMS),
    ("arguments break the schema",
     b'{"jsonrpc":"2.0","id":12,"method":"tools/call",'
     b'"params":{"name":"echo","arguments":{"text":5,"extra":1}}}', "tool error"),
    ("bad cursor", b'{"jsonrpc":"2.0","id":13,"method":"tools/list","params":{"cursor":"!!"}}',
     INVALID_PARAMS),
    ("a response nobody asked for", b'{"jsonrpc":"2.0","id":14,"result":{}}', None),
    ("an unknown notification", b'{"jsonrpc":"2.0","method":"notifications/nope"}', None),
]  # fmt: skip


@pytest.mark.parametrize(("line", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_hostile_json_rpc(stdio: Stdio, line: bytes, expected: Any) -> None:
    seen = stdio.exchange(line)
    if expected is None:
        assert seen == []
        return
    assert len(seen) == 1, seen
    answer = seen[0]
    assert "Traceback" not in json.dumps(answer)
    if expected == {}:
        assert answer == {"jsonrpc": "2.0", "id": 8, "result": {}}, answer
        return
    if expected == "tool error":
        assert answer["result"]["isError"] is True, answer
        return
    assert answer["error"]["code"] == expected, answer
    if expected in (PARSE_ERROR, INVALID_REQUEST):
        assert answer["id"] is None or isinstance(answer["id"], int | str), answer
    assert stdio.process.poll() is None
    stdio.echo_works()


def test_a_parse_error_is_answered_exactly(stdio: Stdio) -> None:
    assert stdio.exchange(b"{not json") == [
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    ]


@pytest.mark.parametrize(
    ("params", "field", "why"),
    [
        ({"arguments": {}}, "params.name", "Field required"),
        ({"name": "echo", "arguments": [1]}, "params.arguments", "valid dictionary"),
        ({"name": 5}, "params.name", "valid string"),
    ],
)
def test_invalid_params_name_the_field(stdio: Stdio, params: Any, field: str, why: str) -> None:
    """The SDK says only "Invalid request parameters"; the answer names the field and why,
    and echoes no value."""
    seen = stdio.exchange(json.dumps({**call(3, "echo", {}), "params": params}).encode())
    error = seen[0]["error"]
    assert error["code"] == INVALID_PARAMS, error
    assert error["message"].startswith(f"Invalid request parameters: {field}: "), error
    assert why in error["message"] and error["data"]["fields"][0] == field, error


def test_a_lone_surrogate_is_a_parse_error_as_on_http(stdio: Stdio) -> None:
    """Python's json reads ``"\\ud800"``, the SDK does not (nor UTF-8): -32700, as streamable
    HTTP answers (test_rt_hostile_http), not -32600, and the tool never runs."""
    [answer] = stdio.exchange(json.dumps(call(16, "echo", {"text": "\udc00"})).encode())
    assert answer["id"] is None and answer["error"]["code"] == PARSE_ERROR, answer
    assert "lone UTF-16 surrogate" in answer["error"]["message"], answer
    stdio.echo_works()


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":2}',
        b'{"jsonrpc":"2.0","id":2,"method":null}',
        b'{"method":"tools/list","params":"x","jsonrpc":"2.0","id":2}',
        b'{"jsonrpc":"2.0","id":2,"method":"ping","\\u006dethod":5}',
    ],
)
def test_an_invalid_request_keeps_its_id(stdio: Stdio, line: bytes) -> None:
    """-32600 with the request's id, as streamable HTTP answers (test_rt_hostile_http)."""
    seen = stdio.exchange(line)
    assert seen and seen[0]["error"]["code"] == INVALID_REQUEST and seen[0]["id"] == 2


def test_an_oversized_line_is_answered(stdio: Stdio) -> None:
    """A line over the HTTP body limit (4 MiB) but under stdio's floor (64 MiB) is read and
    answered like any other: a refusal would say id null, which the host cannot match to
    the call it waits on. The server keeps serving."""
    answer = stdio.call(call("big", "echo", {"text": "x", "padding": "x" * (6 << 20)}), 60)
    assert answer["result"]["isError"] is True  # additionalProperties: false
    assert "padding" in answer["result"]["content"][0]["text"]
    assert len(json.dumps(answer)) < 10_000, "the error must not echo the 6 MiB back"
    stdio.echo_works()


def test_a_line_over_the_limit_is_refused(stdio: Stdio) -> None:
    """A line over 64 MiB is answered as HTTP answers a body over its limit, -32600 with
    id null, without echoing it; the server keeps serving."""
    line = json.dumps(call("big", "echo", {"text": "x", "padding": "x" * (65 << 20)}))
    seen = stdio.exchange(line.encode())
    assert seen == [{"jsonrpc": "2.0", "id": None, "error": TOO_LARGE}], str(seen)[:1000]
    stdio.echo_works()


def test_a_line_that_never_ends_is_not_held(stdio: Stdio) -> None:
    """A line that never ends (256 MiB, no newline) is refused once past the limit and never
    held whole: the server's peak memory stays far below it, and once the line ends it
    serves on."""
    assert stdio.process.stdin is not None
    for _ in range(256):
        stdio.process.stdin.write(b"x" * (1 << 20))
    stdio.process.stdin.flush()
    assert stdio.receive(30) == {"jsonrpc": "2.0", "id": None, "error": TOO_LARGE}
    status = Path(f"/proc/{stdio.process.pid}/status").read_text()
    peak = int(status.split("VmHWM:")[1].split()[0]) << 10
    assert peak < 256 << 20, f"peak RSS {peak >> 20} MiB"
    assert stdio.exchange(b"}") == []  # the end of the long line: nothing more to say
    stdio.echo_works()


def test_a_raising_handler_leaks_nothing_to_the_client(stdio: Stdio) -> None:
    answer = stdio.call(call(1, "boom", {}))
    result = answer["result"]
    assert result["isError"] is True
    text = json.dumps(answer)
    assert rtkit.SECRET not in text and "Traceback" not in text and "RuntimeError" not in text
    assert "internal error" in result["content"][0]["text"]
    stdio.echo_works()
    # the operator sees it all in the server's log
    wait_until(lambda: f"RuntimeError: {rtkit.SECRET}".encode() in stdio.stderr)
    assert b"Traceback (most recent call last)" in stdio.stderr


def test_a_tool_timeout_answers_in_time_and_cancels_the_handler(
    stdio: Stdio, tmp_path: Path
) -> None:
    marker = tmp_path / "limited"
    started = time.monotonic()
    answer = stdio.call(call(2, "limited", {"seconds": 5, "marker": str(marker)}))
    elapsed = time.monotonic() - started
    result = answer["result"]
    assert result["isError"] is True and "timed out" in result["content"][0]["text"], answer
    assert 0.45 <= elapsed < 4, elapsed
    assert cleaned_up(marker) and marker.with_suffix(".cancelled").exists()
    stdio.echo_works()


def test_client_cancellation_cancels_the_handler(stdio: Stdio, tmp_path: Path) -> None:
    marker = tmp_path / "slow"
    stdio.send(call(41, "slow", {"seconds": 60, "marker": str(marker)}))
    wait_for(marker.with_suffix(".started"))
    stdio.send(
        {"jsonrpc": "2.0", "method": "notifications/cancelled",
         "params": {"requestId": 41, "reason": "user pressed stop"}}
    )  # fmt: skip
    assert wait_for(marker.with_suffix(".cancelled"), 10) < 10
    assert cleaned_up(marker)
    # no answer to the cancelled request (MCP: the receiver should not respond), and
    # cancelling requests that are unknown or done is harmless
    for request_id in (41, "never-sent"):
        stdio.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": request_id}})  # fmt: skip
    seen = stdio.exchange(json.dumps(call(42, "echo", {"text": "x"})).encode())
    assert [m.get("id") for m in seen] == [42], seen


def test_a_handler_that_prints_does_not_corrupt_the_wire(stdio: Stdio) -> None:
    """fd 1 points at stderr while serving: the wire carries JSON-RPC only."""
    answer = stdio.call(call(43, "shout", {"text": "hi"}))
    assert answer["result"]["structuredContent"] == {"text": "HI"}
    wait_until(lambda: b"stray output from a handler" in stdio.stderr)
