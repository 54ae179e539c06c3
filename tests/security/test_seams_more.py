"""More attacks at the seams (round m4): what an API's odd answers do to the wrapper."""

from __future__ import annotations

import base64
import json
import threading
import time
from pathlib import Path

import httpx2
import pydantic_core
import pytest
from sec_harness import (
    Built,
    Mcp,
    Reply,
    Server,
    ServerPool,
    Tokens,
    Upstream,
    Watch,
    build,
    tool_text,
)

pytestmark = [pytest.mark.security, pytest.mark.timeout(60)]


@pytest.mark.parametrize(
    "location", ["http://127.0.0.1:+{port}/x", "http://127.0.0.1:99999/x", "http://[::1/x"]
)
def test_a_redirect_to_no_url_is_a_tool_error(target: Server, api: Upstream, location: str) -> None:
    """The API answers 302 with a Location urllib cannot read (a signed or out-of-range
    port, a broken IPv6 host): a tool error saying so, not an internal error with a
    traceback per call in the log; nothing is sent anywhere."""
    before = target.stderr().count("Traceback")
    api.routes["/api/v1/moved"] = Reply.redirect(location.format(port=api.port))
    answer = Mcp(target.url).call("get_moved")
    assert answer["result"]["isError"], answer
    assert "redirect" in tool_text(answer) and "internal error" not in tool_text(answer), answer
    assert [r.path for r in api.received] == ["/api/v1/moved"]
    assert target.stderr().count("Traceback") == before


NOTICED = """
mcpgen: 1
server: {name: noticed, version: 0.1.0, package: noticed_mcp, description: Lists that change.}
transports: {offer: [stdio, http]}
capabilities: {tools: {listChanged: true}}
auth:
  type: oauth
  issuer: https://auth.example.com
  audience: https://mcp.example.com/mcp
  jwksFile: jwks.json
  leeway: 0
resources:
  - {uri: "noticed://motd", name: motd, description: Hi., mimeType: text/plain, text: hi}
"""


@pytest.fixture(scope="module")
def noticed_built(workdir: Path) -> Built:
    return build(workdir / "noticed", NOTICED, "noticed_mcp")


@pytest.fixture(scope="module")
def noticed(noticed_built: Built, tokens: Tokens, pool: ServerPool) -> dict[str, Server]:
    env = {"NOTICED_JWKS_FILE": str(tokens.jwks)}
    return {
        "stateless": pool.start(noticed_built, "--stateless", env=env),
        "stateful": pool.start(noticed_built, env=env),
    }


def listening(server: Server, headers: dict[str, str]) -> tuple[threading.Event, list[bytes]]:
    """A 2026-07-28 ``subscriptions/listen`` stream read in a thread: set when it ends, and
    its status and bytes."""
    client = Mcp(server.url, headers)
    body = client.message("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    ended, read = threading.Event(), []

    def listen() -> None:
        with (
            httpx2.Client(timeout=httpx2.Timeout(10, read=None)) as http,
            http.stream(
                "POST",
                client.endpoint,
                content=json.dumps(body),
                headers=client.request_headers(body),
            ) as response,
        ):
            read.append(str(response.status_code).encode())
            read.extend(response.iter_bytes())
        ended.set()

    threading.Thread(target=listen, daemon=True).start()
    return ended, read


@pytest.mark.parametrize("variant", ["stateless", "stateful"])
def test_a_listen_stream_ends_when_the_token_expires(
    noticed: dict[str, Server], tokens: Tokens, variant: str
) -> None:
    """A 2026-07-28 ``subscriptions/listen`` POST is a stream as long-lived as a GET one:
    opened with a token valid for 3 more seconds, the server ends it once the token expires
    (list changes and resource updates went on reaching a credential that had expired)."""
    headers = tokens.bearer([], subject="frank", exp=int(time.time()) + 3)
    ended, read = listening(noticed[variant], headers)
    assert ended.wait(10), "the listen stream outlived its token"
    assert read[0] == b"200"


def test_sigterm_ends_a_listen_stream_with_an_error_at_once(
    noticed_built: Built, tokens: Tokens, pool: ServerPool
) -> None:
    """SIGTERM with a ``subscriptions/listen`` stream open: the stream ends with a JSON-RPC
    error and the server exits at once (it waited out --shutdown-timeout, then uvicorn cut
    the stream mid-chunk and logged a traceback)."""
    env = {"NOTICED_JWKS_FILE": str(tokens.jwks)}
    server = pool.start(noticed_built, "--stateless", "--shutdown-timeout", "8", env=env)
    ended, read = listening(server, tokens.bearer([], subject="frank"))
    assert Watch(10).until(lambda: b"acknowledged" in b"".join(read)), read
    started = time.monotonic()
    server.terminate()
    assert ended.wait(5) and server.process.wait(5) is not None
    assert time.monotonic() - started < 4 and b'"code":-32603' in read[-1], read
    assert "Traceback" not in server.stderr()


def forged(header: dict[str, str]) -> str:
    def part(value: dict[str, str]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return part(header) + "." + part({"sub": "mallory"}) + ".c2ln"


@pytest.mark.parametrize("alg", ["\u4e2d", "\u20ac", "x" * 5000])
def test_a_forged_token_header_is_refused_with_a_short_latin_1_challenge(
    gate: Server, alg: str
) -> None:
    """An unsigned token whose ``alg`` is a character latin-1 lacks: 401 invalid_token,
    not a 500 with a traceback per request (its repr went into ``WWW-Authenticate``, which
    HTTP/1.1 sends as latin-1); a 5,000-character one is not echoed whole."""
    before = gate.stderr().count("Traceback")
    token = forged({"alg": alg, "typ": "JWT", "kid": "k1"})
    answer = Mcp(gate.url, {"Authorization": "Bearer " + token}).send("tools/list")
    challenge = answer.headers.get("www-authenticate", "")
    assert answer.status == 401 and 'error="invalid_token"' in challenge, answer.text
    assert len(challenge) < 500 and len(answer.text) < 500, challenge
    assert gate.stderr().count("Traceback") == before


@pytest.mark.parametrize("status", [404, 410])
def test_an_upstream_404_on_a_resource_read_is_resource_not_found(
    target: Server, api: Upstream, status: int
) -> None:
    """A resource read whose API answers 404 (or 410) is the resource-not-found error an
    unknown URI gets (-32602 "Resource not found", what SDK 2.3 and the conformance suite
    expect; -32002 is retired), with the API's words; it was -32600 (Invalid Request)."""
    api.routes["/api/v1/items/7/label"] = Reply.json({"title": "no such item"}, status)
    answer = Mcp(target.url).rpc("resources/read", {"uri": "api://items/7/label"})
    error = answer["error"]
    assert error["code"] == -32602, answer
    assert error["message"].startswith("Resource not found: api://items/7/label: "), error
    assert "no such item" in error["message"] and error["data"] == {"uri": "api://items/7/label"}
    api.routes["/api/v1/items/7/label"] = Reply.json({"title": "down"}, 503)
    assert (
        Mcp(target.url).rpc("resources/read", {"uri": "api://items/7/label"})["error"]["code"]
        == -32600
    )


JSON = ("Content-Type", "application/json")


@pytest.mark.parametrize(
    ("reply", "said"),
    [  # a header value that is not ASCII (a UTF-8 file name), on any answer
        (Reply(200, [JSON, ("Content-Disposition", 'inline; name="caf\xc3\xa9"')], b"{}"), "{}"),
        (Reply(200, [("Content-Type", "application/json; charset=base64")], b"{}"), "{}"),
        (Reply(500, [("Content-Type", "text/plain; charset=utf-16")], b"boom"), "HTTP 500"),
        (
            Reply(500, [("Content-Type", "text/plain; charset=unicode_escape")], b"\\udfff"),
            "\\udfff",  # as UTF-8: that charset made a lone surrogate
        ),
        (Reply(200, [JSON], b'{"name": "\\ud800 x \\ud83d\\ude00"}'), "\ufffd x \U0001f600"),
        (Reply(500, [JSON], b'{"title": "\\uDC00 down"}'), "\ufffd down"),
    ],
)
def test_an_odd_answer_is_read_not_an_internal_error(
    target: Server, api: Upstream, reply: Reply, said: str
) -> None:
    """Answers a broken API sends, each read as it can be: a header value that is not ASCII
    (every call was an internal error: the answer was rebuilt with its headers as ASCII
    text), a charset that decodes no text (base64) or refuses these bytes (UTF-16 without a
    BOM), and a lone surrogate escaped in JSON (``\\ud800``), sent on as U+FFFD: the result
    held it, and the client could not parse the server's answer at all."""
    before = target.stderr().count("Traceback")
    api.routes["/api/v1/users/u1/profile"] = reply
    answer = Mcp(target.url).send(
        "tools/call", {"name": "get_profile", "arguments": {"userId": "u1"}}
    )
    pydantic_core.from_json(answer.text)  # as strict as the SDK's client: no lone surrogate
    assert said in tool_text(answer.only) and "internal error" not in tool_text(answer.only)
    assert target.stderr().count("Traceback") == before


def test_a_prompt_template_cannot_keep_the_server_busy(target: Server) -> None:
    """``pairs`` loops over the caller's word inside a loop over it, printing nothing: a
    word of 200,000 letters made 40 billion passes, hours of the event loop (every other
    request waits). The render stops after a second: a JSON-RPC error naming the limit, and
    the server answers the next request."""
    client = Mcp(target.url)
    started = time.monotonic()
    answer = client.rpc("prompts/get", {"name": "pairs", "arguments": {"word": "ab" * 100_000}})
    assert time.monotonic() - started < 10
    assert answer["error"]["code"] == -32603, answer
    assert "ran for more than" in answer["error"]["message"], answer
    short = client.rpc("prompts/get", {"name": "pairs", "arguments": {"word": "abc"}})
    assert short["result"]["messages"][0]["content"]["text"] == "Done.", short


def test_a_loops_if_and_a_callers_width_are_bounded_over_the_wire(target: Server) -> None:
    """``common`` skips every word of ``a`` (none is in ``b``): no block ran, so the clock was
    never read, and 100,000 words against 100,000 kept the event loop 33 s (a ping waited as
    long). ``padded`` took its width from the caller: "999999999" made a gigabyte before
    the size bound refused it. Both are refused, and the server answers a ping meanwhile."""
    client = Mcp(target.url)
    words = {"a": " ".join(f"a{n}" for n in range(100_000))}
    words["b"] = " ".join(f"b{n}" for n in range(100_000))
    pinged: list[float] = []

    def ping() -> None:
        time.sleep(0.3)
        started = time.monotonic()
        Mcp(target.url).rpc("ping", {})
        pinged.append(time.monotonic() - started)

    thread = threading.Thread(target=ping)
    thread.start()
    started = time.monotonic()
    answer = client.rpc("prompts/get", {"name": "common", "arguments": words})
    assert time.monotonic() - started < 10
    thread.join()
    assert pinged[0] < 5, pinged
    assert answer["error"]["code"] == -32603, answer
    assert "ran for more than" in answer["error"]["message"], answer
    wide = {"name": "me", "width": "999999999"}
    answer = client.rpc("prompts/get", {"name": "padded", "arguments": wide})
    assert answer["error"]["code"] == -32603, answer
    assert "width 999999999 is over" in answer["error"]["message"], answer
    fits = client.rpc("prompts/get", {"name": "padded", "arguments": {"name": "me", "width": "4"}})
    assert fits["result"]["messages"][0]["content"]["text"] == "  me", fits
