"""Issue 16, one test per defect, sent the way an attacker sends it: raw HTTP, SSE,
WebSocket or stdio against a running generated server, with the upstream API on 127.0.0.1
recording what actually reached it.

Each test asserts what a careful server does. Those that fail on today's runtime carry
``xfail(strict=True)`` with the reason; when the runtime is fixed they pass, and the strict
marker then fails the suite until it is removed.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx2
import pytest
from sec_harness import (
    HANDSHAKE,
    WORKTREE,
    Built,
    Mcp,
    Reply,
    Server,
    ServerPool,
    Tokens,
    Upstream,
    Watch,
    Ws,
    build,
    refused,
    tool_text,
)
from sec_servers import GATE, GATE_API, Variants, gate_env, target_env

Spawn = Callable[..., Server]
pytestmark = pytest.mark.security


def resets(upstream: Upstream) -> list[str]:
    return [r.raw_head.split("\r\n")[0] for r in upstream.received if r.path.endswith("/reset")]


def hides_it(response: dict) -> bool:
    """With ``hideUnauthorizedTools`` a forbidden operation is one that does not exist for
    the caller: refused as unknown, so the answer does not confirm it is there."""
    return refused(response) and "no operation named" in tool_text(response)


# -- 1. meta tools bypass scopes -------------------------------------------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_1_direct_call_without_the_scope_is_refused(
    gate_stateful: Server, api: Upstream, tokens: Tokens, era: str
) -> None:
    """tools/call admin_reset with a token lacking ``admin``: refused before the handler
    (today: 403 insufficient_scope; with meta tools, "unknown tool" would be as safe); the
    upstream never hears of it."""
    client = Mcp(gate_stateful.url, tokens.bearer(["user"]), era=era)
    if era == "handshake":
        assert client.initialize().status == 200
    answer = client.send("tools/call", {"name": "admin_reset", "arguments": {}})
    assert answer.status == 403 or refused(answer.only), answer.text
    assert resets(api) == []


@pytest.mark.timeout(60)
@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_1_call_operation_runs_a_tool_the_token_may_not_call(
    gate_stateful: Server, api: Upstream, tokens: Tokens, era: str
) -> None:
    """call_operation {"name": "admin_reset"} is a tools/call by another road: a careful
    server checks scopes at the one dispatch point, so it refuses (this server hides what a
    caller may not call: "no operation named", as for one that does not exist; without
    ``hideUnauthorizedTools`` the error says the scope is missing), and the upstream gets
    nothing."""
    admin = Mcp(gate_stateful.url, tokens.bearer(["admin"]), era=era)
    user = Mcp(gate_stateful.url, tokens.bearer(["user"]), era=era)
    if era == "handshake":
        admin.initialize()
        user.initialize()
    allowed = admin.call("call_operation", {"name": "admin_reset", "arguments": {}})
    assert not refused(allowed) and len(resets(api)) == 1, allowed  # the road works
    api.received.clear()
    answer = user.call("call_operation", {"name": "admin_reset", "arguments": {}})
    assert hides_it(answer), answer
    assert resets(api) == [], "the upstream received POST /admin/reset from a user token"


@pytest.mark.timeout(60)
def test_1_search_operations_hides_what_the_caller_may_not_call(
    gate: Server, api: Upstream, tokens: Tokens
) -> None:
    """With ``hideUnauthorizedTools``, discovery shows only what the caller may call:
    search_operations finds admin_reset for an admin token and not for a user token."""
    admin = Mcp(gate.url, tokens.bearer(["admin"])).call("search_operations", {"query": "reset"})
    assert "admin_reset" in tool_text(admin)
    user = Mcp(gate.url, tokens.bearer(["user"])).call("search_operations", {"query": "reset"})
    assert not refused(user)
    assert "admin_reset" not in tool_text(user), tool_text(user)


@pytest.mark.timeout(60)
def test_1_describe_operation_hides_what_the_caller_may_not_call(
    gate: Server, api: Upstream, tokens: Tokens
) -> None:
    """describe_operation admin_reset for a user token: answered like an unknown operation
    (an error), without the operation's description or input schema."""
    answer = Mcp(gate.url, tokens.bearer(["user"])).call(
        "describe_operation", {"name": "admin_reset"}
    )
    assert refused(answer), answer
    text = json.dumps(answer)
    assert "confirm" not in text and "Reset every account" not in text, text


RP_MANIFEST = """
mcpgen: 1
server: {name: rp, version: 0.1.0, package: rp_mcp}
transports: {offer: [stdio, http, sse, websocket]}  # attacked over each
auth:
  type: oauth
  issuer: https://auth.example.com
  audience: https://mcp.example.com/mcp
  jwksFile: jwks.json
  hideUnauthorizedTools: true
resources:
  - {uri: "rp://payroll", name: payroll, description: Salaries., text: "alice 9000", scopes: [hr]}
  - {uri: "rp://menu", name: menu, description: Lunch., text: "soup"}
prompts:
  - name: dismiss
    description: Draft a dismissal letter.
    scopes: [hr]
    messages: [{role: user, text: "Draft it."}]
"""


@pytest.mark.timeout(120)
def test_1_resources_and_prompts_carry_scopes(workdir: Path, tokens: Tokens, spawn: Spawn) -> None:
    """A resource or prompt declared with ``scopes: [hr]``: the build accepts it; a token
    without ``hr`` gets an error on resources/read and prompts/get and does not see them
    listed (hideUnauthorizedTools); a token with ``hr`` reads them."""
    built = build(workdir / "rp", RP_MANIFEST, "rp_mcp", check=False)
    assert built.returncode == 0, built.output
    server = spawn(built, "--stateless", env={"RP_JWKS_FILE": str(tokens.jwks)})
    user = Mcp(server.url, tokens.bearer(["user"]))
    read = user.rpc("resources/read", {"uri": "rp://payroll"})
    assert "error" in read and "alice 9000" not in json.dumps(read), read
    assert "error" in user.rpc("prompts/get", {"name": "dismiss"})
    listed = json.dumps(user.rpc("resources/list")) + json.dumps(user.rpc("prompts/list"))
    assert "rp://menu" in listed and "payroll" not in listed and "dismiss" not in listed
    hr = Mcp(server.url, tokens.bearer(["hr"]))
    assert "alice 9000" in json.dumps(hr.rpc("resources/read", {"uri": "rp://payroll"}))


# -- 2. dot segments -----------------------------------------------------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize("user_id", ["..", "."])
def test_2_path_parameter_dot_segment_is_refused(
    target: Server, api: Upstream, user_id: str
) -> None:
    """get_profile {"userId": ".."} would make GET /users/../profile = /profile. A careful
    server refuses a path parameter that is a dot segment (after decoding) with a tool
    error, before any upstream request."""
    answer = Mcp(target.url).call("get_profile", {"userId": user_id})
    collapsed = [r.target for r in api.received if not r.path.startswith("/api/v1/users/")]
    assert collapsed == [], f"the upstream received {collapsed}"
    assert refused(answer) and api.received == [], (answer, [r.target for r in api.received])


@pytest.mark.timeout(60)
@pytest.mark.parametrize("segment", ["..", "%2e%2e", "%2E."])
def test_2_resource_template_variable_dot_segment_is_refused(
    target: Server, api: Upstream, segment: str
) -> None:
    """resources/read api://items/../label would fetch GET /api/v1/label with the API key.
    The variable is an integer in the operation's schema: a careful server checks it (after
    decoding) and answers a JSON-RPC error without calling the upstream."""
    answer = Mcp(target.url).rpc("resources/read", {"uri": f"api://items/{segment}/label"})
    assert "error" in answer, answer
    assert api.received == [], [r.raw_head for r in api.received]


# -- 3. upstream credentials leak ----------------------------------------------------------


@pytest.mark.timeout(60)
def test_3_redirect_to_another_origin_gets_no_api_key(
    target: Server, api: Upstream, other: Upstream
) -> None:
    """The upstream answers 302 to another origin (another port). Either the server does
    not follow it, or it follows without the API key: the 302 target never receives
    ``X-API-Key`` (nor the key's value in any header)."""
    api.routes["/api/v1/moved"] = Reply.redirect(other.url + "/landing")
    Mcp(target.url).call("get_moved")
    assert api.wait_for(1) and api.received[0].header("x-api-key") == "SECRET-HEADER-KEY"
    leaked = [r.raw_head for r in other.received if "SECRET-HEADER-KEY" in r.raw_head]
    assert leaked == [], leaked


@pytest.mark.timeout(60)
def test_3_binary_result_uri_does_not_show_the_query_key(target: Server, api: Upstream) -> None:
    """An operation authenticated by a query-string key answers a binary body: the MCP
    result embeds it as a resource whose ``uri`` must not contain the key (redacted or
    without the query)."""
    api.routes["/api/v1/files"] = Reply.binary(b"%PDF-1.7 secret-free bytes")
    answer = Mcp(target.url).call("get_file", {"fileId": "report"})
    assert api.received and "api_key=SECRET-QUERY-KEY" in api.received[0].target
    contents = answer["result"]["content"]
    assert contents and contents[0]["type"] == "resource", answer
    assert "SECRET-QUERY-KEY" not in json.dumps(answer), contents[0]["resource"]["uri"]


# -- 4. cookie injection --------------------------------------------------------------------


@pytest.mark.timeout(60)
def test_4_cookie_parameter_cannot_add_cookies(target: Server, api: Upstream) -> None:
    """get_prefs {"theme": "dark; admin=1"}: the upstream receives one cookie, ``theme``
    (its value encoded), or nothing at all (a tool error); never a cookie named admin."""
    Mcp(target.url).call("get_prefs", {"theme": "dark; admin=1"})
    for request in api.received:
        for header in request.all("cookie"):
            names = {part.split("=", 1)[0].strip() for part in header.split(";")}
            assert names <= {"theme"}, f"cookies sent upstream: {header!r}"


# -- 5. rate limit bypass -------------------------------------------------------------------


@pytest.fixture(scope="module")
def gate_limited(pool: ServerPool, gate_built: Built, upstream: Upstream, tokens: Tokens) -> Server:
    """The OAuth server with a tight rate limit: bursts of 3, one request per 5 s after."""
    return pool.start(
        gate_built,
        "--stateless",
        "--rate-limit",
        "0.2",
        "--rate-burst",
        "3",
        env=gate_env(upstream, tokens),
    )


def _statuses(server: Server, headers: list[dict[str, str]]) -> list[int]:
    client = Mcp(server.url)
    return [client.send("tools/list", headers=h).status for h in headers]


@pytest.mark.timeout(60)
def test_5_one_token_spelled_differently_shares_one_bucket(
    gate_limited: Server, tokens: Tokens
) -> None:
    """One identity, burst 3, 0.2 requests/s: ``Bearer T``, ``bearer T``, ``BEARER T``,
    ``Bearer  T`` are the same caller, so of 8 quick requests at most 4 pass (3 + what
    refills meanwhile) and the rest get 429."""
    server = gate_limited
    token = tokens.token(["user"], subject="carol")
    spellings = ["Bearer ", "bearer ", "BEARER ", "Bearer  "]
    statuses = _statuses(server, [{"Authorization": spellings[i % 4] + token} for i in range(8)])
    assert set(statuses) <= {200, 429}, statuses
    assert statuses.count(200) <= 4 and statuses.count(429) >= 4, statuses


@pytest.mark.timeout(60)
def test_5_garbage_tokens_are_limited_by_address(gate_limited: Server, tokens: Tokens) -> None:
    """12 requests from one address, each with a different invalid token: they are not a
    verified identity, so they share the address's bucket (burst 3) and most get 429."""
    server = gate_limited
    statuses = _statuses(server, [{"Authorization": f"Bearer junk{i}"} for i in range(12)])
    assert set(statuses) <= {401, 429}, statuses
    assert statuses.count(429) >= 8, statuses


# -- 7. disconnect does not cancel (before 6: 6 reuses these servers, then stops them) ---


def _post_and_hang_up(server: Server, client: Mcp, body: dict, upstream: Upstream) -> None:
    """POST ``body`` on a raw connection, wait until the call reaches the upstream, close."""
    data = json.dumps(body).encode()
    head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nContent-Length: {len(data)}\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in client.request_headers(body).items()) + "\r\n"
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(head.encode() + data)
        assert upstream.wait_for(1, 10), "the call never reached the upstream"


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("flags", "era"),
    [
        pytest.param(
            ["--stateless", "--json-response"],
            "modern",
        ),
        pytest.param(
            ["--json-response"],
            "handshake",
        ),
        pytest.param(
            ["--event-store-size", "0"],
            "handshake",
        ),
        pytest.param(["--stateless"], "modern"),
    ],
    ids=["json-stateless", "json-stateful", "stateful-sse-not-resumable", "stateless-sse"],
)
def test_7_client_that_hangs_up_cancels_its_call(
    target_variants: Variants, api: Upstream, flags: list[str], era: str
) -> None:
    """The client posts a call to an operation whose upstream hangs, then closes its
    connection. Nobody can receive the answer any more (no resumable stream), so a careful
    server cancels the handler: the upstream sees its request's connection closed within
    2.5 s, not at the 30 s timeout. (A resumable stateful stream may legitimately keep the
    call for a reconnect; that mode is not asserted here.)"""
    upstream = api
    upstream.routes["/api/v1/slow"] = Reply.json({"slow": "late"}, delay=10.0)
    server = target_variants.get(*flags)
    client = Mcp(server.url, era=era)
    if era == "handshake":
        client.initialize()
    _post_and_hang_up(server, client, client.message("tools/call", {"name": "slow_op"}), upstream)
    assert Watch(2.5).until(
        lambda: upstream.received[0].aborted
    ), "the handler still waits on the upstream after its client went away"


# -- 6. SIGTERM in SSE mode -----------------------------------------------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "flags",
    [
        pytest.param(["--stateless"]),
        pytest.param([]),
        pytest.param(["--json-response"], id="json-response"),
        pytest.param(["--stateless", "--workers", "2"]),
    ],
    ids=["stateless-sse", "stateful-sse", "json-response", "two-workers"],
)
def test_6_sigterm_lets_the_call_in_flight_finish(
    target_variants: Variants, api: Upstream, flags: list[str]
) -> None:
    """A call whose upstream takes 1 s is in flight when SIGTERM arrives; the shutdown
    timeout is 10 s (the default), so the client gets its result (today only --json-response does; the
    SSE modes answer an empty, truncated stream within ~0.4 s)."""
    upstream = api
    upstream.routes["/api/v1/slow"] = Reply.json({"slow": "finished"}, delay=1.0)
    server = target_variants.take(*flags)
    client = Mcp(server.url, timeout=30)
    client.initialize()
    outcome: dict[str, object] = {}

    def call() -> None:
        try:
            outcome["answer"] = client.send("tools/call", {"name": "slow_op", "arguments": {}})
        except Exception as exc:  # the stream cut short
            outcome["error"] = repr(exc)

    caller = threading.Thread(target=call)
    caller.start()
    assert upstream.wait_for(1, 10), "the call never reached the upstream"
    server.terminate()
    caller.join(20)
    server.process.wait(20)
    answer = outcome.get("answer")
    assert answer is not None, outcome
    assert "finished" in tool_text(answer.only), answer.text  # type: ignore[attr-defined]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("flags", [["--stateless"], ["--stateless", "--workers", "2"]])
def test_6_a_call_past_the_shutdown_timeout_ends_with_an_error(
    target_variants: Variants, api: Upstream, flags: list[str]
) -> None:
    """A call still running when the shutdown timeout (2 s) is up ends with a JSON-RPC error
    saying why, not uvicorn's 500 and a traceback in the log; in each worker the same."""
    api.routes["/api/v1/slow"] = Reply.json({"slow": "finished"}, delay=8.0)
    server = target_variants.take(*flags, "--shutdown-timeout", "2")
    outcome: dict[str, object] = {}
    caller = threading.Thread(
        target=lambda: outcome.update(answer=Mcp(server.url, timeout=30).call("slow_op"))
    )
    caller.start()
    assert api.wait_for(1, 10), "the call never reached the upstream"
    os.killpg(server.process.pid, signal.SIGTERM)  # as a container stop: every worker
    caller.join(20)
    server.process.wait(20)
    assert outcome["answer"]["error"]["code"] == -32603, outcome  # type: ignore[index]
    assert "shut down" in outcome["answer"]["error"]["message"]  # type: ignore[index]
    assert "Traceback" not in server.stderr()


# -- 8. WebSocket and token expiry --------------------------------------------------------


@pytest.mark.timeout(60)
def test_8_websocket_stops_serving_an_expired_token(
    gate_ws: Server, api: Upstream, tokens: Tokens
) -> None:
    """A token valid for 3 more seconds opens a WebSocket (leeway 0). After it expires, a
    call on the same connection is refused (an error, or the connection closed with 1008)
    and never reaches the upstream."""
    upstream = api
    expires = int(time.time()) + 3
    ws = Ws(gate_ws.port, {"Authorization": "Bearer " + tokens.token(["user"], exp=expires)})
    ws.initialize()
    profile = {
        "name": "call_operation",
        "arguments": {"name": "get_profile", "arguments": {"userId": "u1"}},
    }
    assert not refused(ws.rpc("tools/call", profile))
    assert len(upstream.received) == 1
    time.sleep(max(0.0, expires - time.time()) + 1.5)
    try:
        late = ws.rpc("tools/call", profile, timeout=5)
    except Exception:  # closed: the careful answer
        late = {"error": "closed"}
    assert refused(late), late
    assert len(upstream.received) == 1, "the expired token's call reached the upstream"


# -- 9. unbounded stateful sessions ------------------------------------------------------


@pytest.mark.timeout(90)
def test_9_stateful_sessions_are_capped(
    target_built: Built, upstream: Upstream, spawn: Spawn
) -> None:
    """With ``TARGET_MAX_SESSIONS=5`` (the setting a cap would read, named like every other
    ``TARGET_<SETTING>``), 12 initialize requests do not leave 12 live sessions: either the
    extra ones are refused (429/503) or the oldest are closed (their id answers 404). The
    generated README states the limit and how to change it."""
    server = spawn(target_built, env={**target_env(upstream), "TARGET_MAX_SESSIONS": "5"})
    opened: list[Mcp] = []
    refused_count = 0
    http = httpx2.Client(timeout=20)
    for _ in range(12):
        client = Mcp(server.url, http=http)
        answer = client.initialize()
        if answer.status == 200 and client.session:
            opened.append(client)
        else:
            refused_count += 1
    alive = sum(1 for c in opened if c.send("ping").status == 200)
    http.close()
    assert alive <= 5, f"{alive} live sessions, {refused_count} refused"
    assert "MAX_SESSIONS" in target_built.readme


# -- 10. low ---------------------------------------------------------------------------------


@pytest.mark.timeout(60)
def test_10_deeply_nested_arguments_get_a_json_rpc_error(gate: Server, tokens: Tokens) -> None:
    """A valid token and ``arguments`` nested 100,000 lists deep: a careful server answers a
    JSON-RPC error (parse error or invalid request, status 4xx or 200), never a 500 with a
    traceback, and keeps serving."""
    client = Mcp(gate.url, tokens.bearer(["user"]))
    body = client.message("tools/call", {"name": "call_operation", "arguments": {}})
    raw = json.dumps(body).replace(
        '"arguments": {}', '"arguments": {"x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    )
    answer = client.post(body, raw=raw.encode())
    assert answer.status != 500 and "Traceback" not in answer.text, answer.text[:300]
    assert "error" in answer.only, answer.text[:300]
    assert client.send("tools/list").status == 200


@pytest.mark.timeout(60)
def test_10_websocket_parse_error_is_answered(gate_ws: Server, tokens: Tokens) -> None:
    """JSON-RPC 2.0: an unparsable message is answered with -32700 (id null), as stdio and
    HTTP already do."""
    ws = Ws(gate_ws.port, tokens.bearer(["user"]))
    ws.initialize()
    ws.send("{not json")
    try:
        answer = ws.receive(timeout=2)
    except TimeoutError:
        answer = {}
    assert answer.get("id") is None and answer.get("error", {}).get("code") == -32700, answer


@pytest.mark.timeout(60)
@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_10_non_finite_numbers_are_refused(target: Server, number: str) -> None:
    """``{"x": NaN}`` is not JSON (RFC 8259), and 1e400 overflows to infinity: a careful
    server refuses the call (a parse error or an invalid-arguments tool error) instead of
    running measure and answering ``structuredContent: {"doubled": null}``."""
    client = Mcp(target.url)
    body = client.message("tools/call", {"name": "measure", "arguments": {"x": 0}})
    raw = json.dumps(body).replace('"x": 0', f'"x": {number}')
    answer = client.post(body, raw=raw.encode())
    response = answer.only
    assert refused(response), answer.text[:400]
    # refused as bad input, before measure runs: not an internal error, not code 0
    if "error" in response:
        assert response["error"]["code"] in (-32700, -32600, -32602), response
    else:
        message = response["result"]["content"][0]["text"]
        assert "Invalid arguments" in message and "NaN" in message, message


@pytest.mark.timeout(60)
def test_10_prompt_sandbox_error_has_a_json_rpc_code(target: Server) -> None:
    """countdown's template calls range(n); n=1000000 trips the Jinja sandbox. The answer is
    a JSON-RPC error with a standard code (-32602 invalid params or -32603 internal error),
    not code 0, in the handshake era as in 2026-07-28."""
    client = Mcp(target.url)
    client.initialize()
    answer = client.rpc("prompts/get", {"name": "countdown", "arguments": {"n": "1000000"}})
    assert answer.get("error", {}).get("code") in (-32602, -32603), answer


@pytest.mark.timeout(60)
def test_10_exp_as_a_string_is_refused(gate: Server, tokens: Tokens) -> None:
    """RFC 7519: ``exp`` is a NumericDate, a JSON number. ``"exp": "<future>"`` is a
    malformed token: 401 invalid_token (a number in the same place is accepted)."""
    future = int(time.time()) + 600
    good = Mcp(gate.url, tokens.bearer(["user"], exp=future)).send("tools/list")
    assert good.status == 200
    bad = Mcp(gate.url, tokens.bearer(["user"], exp=str(future))).send("tools/list")
    assert bad.status == 401, (bad.status, bad.text[:200])


@pytest.mark.timeout(60)
def test_10_slowloris_connections_are_closed(target: Server) -> None:
    """One connection trickles a header byte every 0.5 s and never ends its headers;
    another opens and sends nothing. A careful server closes both within 12 s (a request
    header timeout of 10 s or less); today both stay open as long as the client likes."""
    trickle = socket.create_connection(("127.0.0.1", target.port))
    silent = socket.create_connection(("127.0.0.1", target.port))
    trickle.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{target.port}\r\nX-Slow: ".encode())
    closed: set[str] = set()
    deadline = time.monotonic() + 12
    for sock in (trickle, silent):
        sock.settimeout(0.25)
    while time.monotonic() < deadline and len(closed) < 2:
        for name, sock in (("trickle", trickle), ("silent", silent)):
            if name in closed:
                continue
            try:
                if sock.recv(4096) == b"":
                    closed.add(name)
            except TimeoutError:
                pass
            except OSError:
                closed.add(name)
        if "trickle" not in closed:
            try:
                trickle.sendall(b"x")
            except OSError:
                closed.add("trickle")
        time.sleep(0.25)
    trickle.close()
    silent.close()
    assert closed == {
        "trickle",
        "silent",
    }, f"still open after 12 s: {closed ^ {'trickle', 'silent'}}"


def _post(port: int, chunks: list[bytes], length: int) -> tuple[float, bytes]:
    """A raw POST /mcp of ``length`` body bytes sent as ``chunks`` (headers with the
    first) 0.3 s apart: the seconds until the server answers, and the answer's start."""
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nMcp-Protocol-Version: {HANDSHAKE}\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=8) as sock:
        start = time.monotonic()
        sock.sendall(head + chunks[0])
        for chunk in chunks[1:]:
            time.sleep(0.3)
            sock.sendall(chunk)
        answer = sock.recv(200)
        return time.monotonic() - start, answer


@pytest.mark.timeout(60)
def test_10_a_stalled_request_body_is_cut_off(
    target_built: Built, upstream: Upstream, spawn: Spawn
) -> None:
    """``--body-timeout 1``: a body stalled mid-way is dropped after about a second with 408
    and a JSON-RPC error (not the SDK's 500 and a traceback in the log); one sent with its
    headers, or in two parts (the server waits for the second), is answered."""
    server = spawn(target_built, "--body-timeout", "1", env=target_env(upstream))
    init = {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t"}}
    body = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}).encode()
    seconds, answer = _post(server.port, [body[:10]], len(body))
    assert answer.startswith(b"HTTP/1.1 408") and 0.9 < seconds < 5, (seconds, answer)
    assert b"application/json" in answer and "Traceback" not in server.stderr(), answer
    for chunks in ([body], [body[:10], body[10:]]):
        seconds, answer = _post(server.port, chunks, len(body))
        assert answer.startswith(b"HTTP/1.1 200"), answer


KILL_DURING_APPLY = """
import os, signal, sys, runpy
out = os.path.abspath(sys.argv[2])
def dying(real):
    def swap(src, dst, *args, **kwargs):
        if os.path.abspath(str(dst)).startswith(out):
            os.kill(os.getpid(), signal.SIGKILL)  # the moment files are swapped into place
        return real(src, dst, *args, **kwargs)
    return swap
os.replace, os.rename = dying(os.replace), dying(os.rename)
sys.argv = ["mcpgen", "build", sys.argv[1], "-o", out]
runpy.run_module("mcpgen", run_name="__main__", alter_sys=True)
"""


def _mcpgen(*args: str, kill: bool = False) -> int:
    command = (
        [sys.executable, "-c", KILL_DURING_APPLY, *args]
        if kill
        else [sys.executable, "-m", "mcpgen", "build", args[0], "-o", args[1]]
    )
    process = subprocess.Popen(
        command,
        env={**os.environ, "PYTHONPATH": str(WORKTREE)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        return process.wait(timeout=180)
    finally:
        with contextlib.suppress(ProcessLookupError):  # workers the killed build forked
            os.killpg(process.pid, signal.SIGKILL)


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.mark.timeout(180)
def test_10_sigkill_during_apply_leaves_nothing_behind(workdir: Path) -> None:
    """``mcpgen build`` is SIGKILLed at the moment it swaps its staged files into place,
    once for a new output folder (staged whole beside it) and once for an update (each
    file staged beside its target). The next build of the same manifest succeeds and
    leaves no staging folder or temporary file anywhere."""
    folder = workdir / "killed"
    folder.mkdir()
    manifest = folder / "mcpgen.yaml"
    manifest.write_text(GATE.replace("A guarded server.", "Version one."), encoding="utf-8")
    (folder / "gate-api.yaml").write_text(GATE_API, encoding="utf-8")
    out = folder / "out"
    inputs = {"mcpgen.yaml", "gate-api.yaml"}
    assert _mcpgen(str(manifest), str(out), kill=True) == -signal.SIGKILL
    assert {p.name for p in folder.iterdir()} - inputs  # the kill left something staged
    assert _mcpgen(str(manifest), str(out)) == 0
    clean = _tree(out)
    manifest.write_text(GATE.replace("A guarded server.", "Version two."), encoding="utf-8")
    assert _mcpgen(str(manifest), str(out), kill=True) == -signal.SIGKILL
    assert _tree(out) != clean  # staged files were left by the kill
    assert _mcpgen(str(manifest), str(out)) == 0
    leftovers = sorted(_tree(out) - clean)
    beside = sorted({p.name for p in folder.iterdir()} - inputs - {"out"})
    assert leftovers == [] and beside == [], (leftovers, beside)


# -- 11. protocol bugs ---------------------------------------------------------------------


@pytest.mark.timeout(60)
def test_11_set_level_filters_log_messages(target: Server) -> None:
    """After logging/setLevel "error", a tool that logs at debug, info, warning and error
    sends the client only the error message (RFC 5424 order, as the spec asks)."""
    client = Mcp(target.url)
    client.initialize()
    assert "result" in client.rpc("logging/setLevel", {"level": "error"})
    answer = client.send("tools/call", {"name": "chatty", "arguments": {}})
    levels = [
        m["params"]["level"] for m in answer.messages if m.get("method") == "notifications/message"
    ]
    assert "error" in levels and "done" in tool_text(answer.only), answer.messages
    assert levels == ["error"], levels


@pytest.mark.timeout(60)
def test_11_stdio_writes_one_message_per_write(target_built: Built) -> None:
    """stdout is a SOCK_SEQPACKET socket, so every write the server makes arrives as one
    packet. The client sends three calls (each with two progress notifications and four
    log messages) and reads a second later, as a busy client does: each packet holds
    exactly one JSON-RPC message, so a stock client's line handler sees each one."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    theirs.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    read_end, write_end = os.pipe()
    process = subprocess.Popen(
        [sys.executable, "-m", target_built.package, "--transport", "stdio"],
        stdin=read_end,
        stdout=theirs.fileno(),
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(target_built.src)},
    )
    os.close(read_end)
    theirs.close()
    try:
        handshake = [
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": HANDSHAKE,
                    "capabilities": {},
                    "clientInfo": {"name": "attacker", "version": "0"},
                },
            },
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
        ]
        os.write(write_end, b"".join(json.dumps(m).encode() + b"\n" for m in handshake))
        ours.settimeout(20)
        assert b'"id":0' in ours.recv(1 << 20)
        calls = [
            {
                "jsonrpc": "2.0",
                "id": i,
                "method": "tools/call",
                "params": {"name": "chatty", "arguments": {}, "_meta": {"progressToken": i}},
            }
            for i in (1, 2, 3)
        ]
        os.write(write_end, b"".join(json.dumps(m).encode() + b"\n" for m in calls))
        time.sleep(1.0)
        packets: list[bytes] = []
        while sum(p.count(b'"result"') for p in packets) < 3:
            packets.append(ours.recv(1 << 20))
        per_packet = [p.count(b"\n") for p in packets]
        assert all(count == 1 for count in per_packet), per_packet
    finally:
        os.close(write_end)
        ours.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
