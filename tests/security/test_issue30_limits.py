"""Issue 30, the limits that must hold for the whole server, attacked over the wire: code
mode's memory and output limits (1, 4), hidden operations in code mode (13), a spec pattern
that backtracks (9), forwarded addresses and the rate limit (6), sessions per caller (7),
sandbox workers shared fairly (8) and tokens that expire mid-run (12).

The code-mode server (``vault``, package ``vault_mcp``) is built once for this module: an
OAuth resource server (``hideUnauthorizedTools``, leeway 0) wrapping a small API in code
mode, served by the local upstream that records every request.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx2
import pytest
from sec_harness import (
    Built,
    LegacySse,
    Mcp,
    Server,
    Tokens,
    Upstream,
    Ws,
    build,
    refused,
    tool_text,
)
from sec_servers import gate_env

Spawn = Callable[..., Server]
pytestmark = [pytest.mark.security, pytest.mark.timeout(120)]

VAULT_API = """
openapi: 3.1.0
info: {title: Vault API, version: 1.0.0}
servers: [{url: "http://127.0.0.1:9/api"}]
paths:
  /echo:
    post:
      operationId: echoBody
      requestBody:
        content:
          application/json:
            schema: {type: object, properties: {data: {type: array}}}
      responses:
        "200": {description: The body back, content: {application/json: {schema: {type: object}}}}
  /items/{itemId}:
    delete:
      operationId: deleteItem
      parameters:
        - {name: itemId, in: path, required: true, schema: {type: integer}}
      responses:
        "200": {description: Deleted, content: {application/json: {schema: {type: object}}}}
  /find:
    get:
      operationId: findUser
      parameters:
        - {name: name, in: query, required: true, schema: {type: string, pattern: "^([a-z]+)+$"}}
      responses:
        "200": {description: Found, content: {application/json: {schema: {type: object}}}}
"""

VAULT = """
mcpgen: 1
server: {name: vault, version: 0.1.0, package: vault_mcp, description: A code-mode server.}
transports: {offer: [stdio, http, sse, websocket]}  # attacked over each
auth:
  type: oauth
  issuer: https://auth.example.com
  audience: https://mcp.example.com/mcp
  jwksFile: jwks.json
  hideUnauthorizedTools: true
  leeway: 0
openapi:
  source: vault-api.yaml
  mode: code
  overrides: {deleteItem: {scopes: [admin]}}
  codeMode: {timeout: 20, workers: 2}
"""

ALIASED = "s = 'x' * 1000\na = [s] * 1000\n"  # ~1 MB in the sandbox, shared a thousand times


@pytest.fixture(scope="module")
def vault_built(workdir: Path) -> Built:
    return build(workdir / "vault", VAULT, "vault_mcp", {"vault-api.yaml": VAULT_API})


@pytest.fixture(scope="module")
def vault(vault_built: Built, upstream: Upstream, tokens: Tokens) -> Iterator[Server]:
    env = {"VAULT_API_BASE_URL": upstream.url + "/api", "VAULT_JWKS_FILE": str(tokens.jwks)}
    server = Server(vault_built, env=env)
    try:
        yield server
    finally:
        server.stop()


def execute(server: Server, tokens: Tokens, code: str, subject: str = "alice", **options: object):
    scopes = options.pop("scopes", ["user"])
    headers = tokens.bearer(scopes, subject=subject, **options)  # type: ignore[arg-type]
    with Mcp(server.url, headers, timeout=60) as client:
        return client.call("execute", {"code": code})


def peak_rss_mb(server: Server) -> float:
    """The server process's peak resident memory (VmHWM), in MB."""
    status = Path(f"/proc/{server.process.pid}/status").read_text()
    line = next(x for x in status.splitlines() if x.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


# -- 1. aliasing past the memory limit --------------------------------------------------------


def test_1_an_aliased_result_is_refused_while_it_is_converted(
    vault: Server, tokens: Tokens
) -> None:
    """``[a] * 300`` is ~1 MB in the sandbox and 300 MB as JSON: refused as over the output
    limit, and the server does not grow by anything like the value's expanded size."""
    execute(vault, tokens, "1 + 1")  # the pool and the modules are loaded before measuring
    before = peak_rss_mb(vault)
    answer = execute(vault, tokens, ALIASED + "[a] * 300")
    assert refused(answer) and "limit" in tool_text(answer), tool_text(answer)[:500]
    grown = peak_rss_mb(vault) - before
    assert grown < 100, f"the server grew by {grown:.0f} MB"
    assert vault.alive()


def test_1_an_aliased_argument_never_reaches_the_upstream(
    vault: Server, tokens: Tokens, api: Upstream
) -> None:
    """``echo_body(data=[a] * 30)``: 30 MB as JSON; the operation is refused inside the run
    and the upstream receives nothing bigger than the arguments limit (1 MB)."""
    answer = execute(vault, tokens, ALIASED + "echo_body(data=[a] * 30)")
    sizes = [len(r.body) for r in api.received]
    assert all(size <= 1024 * 1024 for size in sizes), sizes
    assert refused(answer) and "bytes" in tool_text(answer), tool_text(answer)[:500]
    small = execute(vault, tokens, "echo_body(data=[1, 2, 3])")  # a normal body still goes
    assert not refused(small), tool_text(small)[:500]


# -- 4. an exception message past the output limit -------------------------------------------


def test_4_an_exception_message_respects_the_output_limit(vault: Server, tokens: Tokens) -> None:
    """``raise ValueError('E' * 5_000_000)``: a tool error of at most 64 KB."""
    answer = execute(vault, tokens, "raise ValueError('E' * 5_000_000)")
    text = tool_text(answer)
    assert refused(answer) and "ValueError" in text, text[:300]
    assert len(text.encode()) <= 64 * 1024, len(text.encode())


# -- 13. hidden operations in code mode -------------------------------------------------------


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_13_code_mode_treats_hidden_operations_as_unknown(
    vault: Server, tokens: Tokens, api: Upstream, era: str
) -> None:
    """Without the admin scope (``hideUnauthorizedTools``), ``delete_item`` is a NameError
    exactly like a name that never existed, whether read or called."""
    headers = tokens.bearer(["user"])
    with Mcp(vault.url, headers, timeout=60) as client:
        if era == "handshake":
            assert client.initialize().status == 200
        for code in ("str(delete_item)", "delete_item(itemId=1)"):
            hidden = tool_text(client.call("execute", {"code": code}))
            absent = tool_text(
                client.call("execute", {"code": code.replace("delete_item", "purge_thing")})
            )
            assert "NameError" in hidden and "may not" not in hidden, hidden
            assert hidden.replace("delete_item", "purge_thing") == absent, (hidden, absent)
    assert api.received == []
    admin = execute(vault, tokens, "delete_item(itemId=1)", scopes=["user", "admin"])
    assert not refused(admin), tool_text(admin)[:300]


# -- 9. a pattern that backtracks --------------------------------------------------------------


def test_9_a_backtracking_pattern_does_not_block_the_server(
    vault: Server, tokens: Tokens, api: Upstream
) -> None:
    """``pattern: ^([a-z]+)+$`` and 26 letters and a ``!`` (8 s with Python's ``re``, doubling
    per letter): the argument is refused at once, and another caller is not held up."""
    attack: dict[str, object] = {}

    def run() -> None:
        attack["answer"] = execute(vault, tokens, f"find_user(name={'a' * 26 + '!'!r})")

    thread = threading.Thread(target=run)
    started = time.monotonic()
    thread.start()
    time.sleep(0.5)
    with Mcp(vault.url, tokens.bearer(["user"], subject="bob")) as other:
        assert "result" in other.rpc("tools/list")
    waited = time.monotonic() - started
    thread.join(60)
    assert waited < 3, f"another caller waited {waited:.1f} s"
    assert refused(attack["answer"]) and "does not match" in tool_text(attack["answer"])
    assert api.received == []
    fine = execute(vault, tokens, "find_user(name='abc')")  # a matching name still goes
    assert not refused(fine) and len(api.received) == 1, tool_text(fine)[:300]


# -- 8. sandbox workers shared fairly ---------------------------------------------------------


def test_8_one_callers_slow_runs_do_not_hold_up_another(vault: Server, tokens: Tokens) -> None:
    """Two workers (the default); mallory starts two runs that sleep 6 s. Bob's run starts
    a second later and is answered at once: mallory's second run waits for her first."""
    execute(vault, tokens, "1 + 1")
    slow = "import time\ntime.sleep(6)\n'done'"
    answers: list[object] = []
    threads = [
        threading.Thread(target=lambda: answers.append(execute(vault, tokens, slow, "mallory")))
        for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    time.sleep(1.0)
    started = time.monotonic()
    answer = execute(vault, tokens, "1 + 1", subject="bob")
    waited = time.monotonic() - started
    for thread in threads:
        thread.join(60)
    assert not refused(answer), tool_text(answer)
    assert waited < 3, f"bob waited {waited:.1f} s for mallory's runs"
    assert len(answers) == 2 and not any(refused(a) for a in answers), answers


# -- 12. a token that expires mid-run -----------------------------------------------------------


def test_12_an_expired_token_stops_the_runs_operation_calls(
    vault: Server, tokens: Tokens, api: Upstream
) -> None:
    """A token valid for 3 more seconds starts a run that sleeps 4 s and then calls an
    operation: the call is refused and never reaches the upstream."""
    code = "import time\ntime.sleep(4)\nfind_user(name='abc')"
    answer = execute(vault, tokens, code, exp=int(time.time()) + 3)
    assert refused(answer) and "expired" in tool_text(answer), tool_text(answer)[:300]
    assert api.received == []


# -- 6. forwarded addresses and the rate limit ----------------------------------------------


def _flood(port: int, requests: list[bytes], connections: int = 4) -> int:
    """Send the requests pipelined over a few keep-alive connections; the 401s answered."""
    counts: list[int] = []

    def one(part: list[bytes]) -> None:
        with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
            sender = threading.Thread(target=sock.sendall, args=(b"".join(part),))
            sender.start()
            data = b""
            while data.count(b"HTTP/1.1 ") < len(part):
                chunk = sock.recv(1 << 20)
                if not chunk:
                    break
                data += chunk
            sender.join(60)
            counts.append(data.count(b"HTTP/1.1 401"))

    threads = [
        threading.Thread(target=one, args=(requests[i::connections],)) for i in range(connections)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    return sum(counts)


def test_6_forwarded_for_is_not_believed_by_default(
    gate_built: Built, upstream: Upstream, tokens: Tokens, spawn: Spawn
) -> None:
    """Burst 3, 0.2 requests/s: 12 garbage tokens each with a new ``X-Forwarded-For`` come
    from one peer address, so they share its bucket and most get 429."""
    server = spawn(
        gate_built,
        "--stateless",
        "--rate-limit",
        "0.2",
        "--rate-burst",
        "3",
        env=gate_env(upstream, tokens),
    )
    with Mcp(server.url) as client:
        statuses = [
            client.send(
                "tools/list",
                headers={"Authorization": f"Bearer junk{i}", "X-Forwarded-For": f"10.9.{i}.1"},
            ).status
            for i in range(12)
        ]
    assert set(statuses) <= {401, 429}, statuses
    assert statuses.count(429) >= 8, statuses


def test_6_a_flood_of_refused_requests_does_not_reset_a_caller(
    gate_built: Built, upstream: Upstream, tokens: Tokens, spawn: Spawn
) -> None:
    """Behind a trusted proxy (``--trusted-proxies 127.0.0.1``) 10,050 refused requests from
    as many forwarded addresses (more than the 10,000 buckets kept) leave carol's empty
    bucket empty: she still gets 429."""
    server = spawn(
        gate_built,
        "--stateless",
        "--rate-limit",
        "0.005",
        "--rate-burst",
        "1",
        "--trusted-proxies",
        "127.0.0.1",
        env=gate_env(upstream, tokens),
    )
    carol = tokens.bearer(["user"], subject="carol")
    with Mcp(server.url, carol) as client:
        assert [client.send("tools/list").status for _ in range(2)] == [200, 429]
        body = b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'
        requests = [
            (
                f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
                f"Authorization: Bearer junk\r\nX-Forwarded-For: 10.{i >> 16}.{(i >> 8) & 255}.{i & 255}\r\n"
                f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                f"Content-Length: {len(body)}\r\n\r\n"
            ).encode()
            + body
            for i in range(10_050)
        ]
        assert _flood(server.port, requests) == 10_050
        assert client.send("tools/list").status == 429


# -- 7. sessions per caller -------------------------------------------------------------------


def test_7_one_caller_cannot_take_every_session(
    gate_built: Built, upstream: Upstream, tokens: Tokens, spawn: Spawn
) -> None:
    """``GATE_MAX_SESSIONS=5``: mallory's token opens at most half of them (503 past it), so
    bob can still open one."""
    server = spawn(gate_built, env={**gate_env(upstream, tokens), "GATE_MAX_SESSIONS": "5"})
    mallory = tokens.bearer(["user"], subject="mallory")
    http = httpx2.Client(timeout=20)
    statuses = [Mcp(server.url, mallory, http=http).initialize().status for _ in range(5)]
    assert statuses.count(200) == 2 and statuses.count(503) == 3, statuses
    bob = Mcp(server.url, tokens.bearer(["user"], subject="bob"), http=http).initialize()
    http.close()
    assert bob.status == 200, bob.status


def _expiring(tokens: Tokens, seconds: int = 3) -> dict[str, str]:
    return tokens.bearer(["user"], subject="erin", exp=int(time.time()) + seconds)


def test_12_a_stateful_get_stream_ends_when_the_token_expires(
    gate_stateful: Server, tokens: Tokens
) -> None:
    """A session's GET stream opened with a token valid for 3 more seconds is ended by the
    server once the token expires (the client reconnects with a fresh one)."""
    headers = _expiring(tokens)
    client = Mcp(gate_stateful.url, headers)
    assert client.initialize().status == 200
    stream_headers = {
        **headers,
        "Accept": "text/event-stream",
        "Mcp-Session-Id": client.session or "",
        "MCP-Protocol-Version": "2025-11-25",
    }
    ended = threading.Event()

    def listen() -> None:
        timeout = httpx2.Timeout(10, read=None)
        with (
            httpx2.Client(timeout=timeout) as http,
            http.stream("GET", gate_stateful.url + "/mcp", headers=stream_headers) as response,
        ):
            assert response.status_code == 200
            for _ in response.iter_bytes():
                pass
        ended.set()

    threading.Thread(target=listen, daemon=True).start()
    assert ended.wait(10), "the GET stream outlived its token"
    client.close()


def test_12_a_legacy_sse_stream_ends_when_the_token_expires(
    gate_sse: Server, tokens: Tokens
) -> None:
    """The legacy ``GET /sse`` stream of a token valid for 3 more seconds ends after it."""
    stream = LegacySse(gate_sse.url, _expiring(tokens))
    assert stream.endpoint, stream.status
    stream._thread.join(10)
    assert not stream._thread.is_alive(), "the SSE stream outlived its token"


def test_7_legacy_sse_and_websocket_sessions_are_capped_per_caller(
    gate_built: Built, upstream: Upstream, tokens: Tokens, spawn: Spawn
) -> None:
    """The sibling transports: ``GATE_MAX_SESSIONS=4`` over legacy SSE and WebSocket,
    mallory holds at most 2 streams or connections (503 past it), bob still gets one."""
    env = {**gate_env(upstream, tokens), "GATE_MAX_SESSIONS": "4"}
    mallory = tokens.bearer(["user"], subject="mallory")
    bob = tokens.bearer(["user"], subject="bob")
    sse = spawn(gate_built, transport="sse", env=env)
    streams = [LegacySse(sse.url, mallory) for _ in range(3)]
    assert [s.status for s in streams] == [200, 200, 503]
    assert LegacySse(sse.url, bob).status == 200
    ws = spawn(gate_built, transport="websocket", env=env)
    opened = [Ws(ws.port, mallory) for _ in range(2)]
    with pytest.raises(Exception, match="503"):
        Ws(ws.port, mallory)
    other = Ws(ws.port, bob)
    assert "result" in other.initialize()
    for connection in [*opened, other]:
        connection.close()


def test_6_websocket_messages_are_charged_to_the_rate_limit(
    gate_built: Built, upstream: Upstream, tokens: Tokens, spawn: Spawn
) -> None:
    """The sibling on WebSocket: one request a second, bursts of 2. The handshake and
    initialize take the burst; four more requests on the same connection are answered no
    faster than the rate (about 4 s), not at once."""
    server = spawn(
        gate_built,
        "--rate-limit",
        "1",
        "--rate-burst",
        "2",
        transport="websocket",
        env=gate_env(upstream, tokens),
    )
    ws = Ws(server.port, tokens.bearer(["user"], subject="carol"))
    ws.initialize()
    started = time.monotonic()
    answers = [ws.rpc("tools/list", timeout=20) for _ in range(4)]
    elapsed = time.monotonic() - started
    ws.close()
    assert all("result" in a for a in answers), answers
    assert elapsed >= 2.5, f"4 requests past the burst answered in {elapsed:.1f} s"
