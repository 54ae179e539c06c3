"""Attacks of our own at the seams where two features meet (issue 16 asks for at least 20
beyond its list): what an API wrapper sends upstream, what it shows and logs, how
authorization holds across transports, eras and JSON tricks, and what the HTTP front door
lets through. Refused attacks are ordinary tests; the ones that succeed today are
listed with what was wrong in ``docs/security-attacks.md``."""

from __future__ import annotations

import base64
import json
import socket
import time
from urllib.parse import parse_qsl, unquote

import httpx2
import pytest
from sec_harness import (
    ACCEPT,
    HANDSHAKE,
    MODERN,
    LegacySse,
    Mcp,
    Reply,
    Server,
    Tokens,
    Upstream,
    Ws,
    raw_http,
    refused,
    status_of,
    tool_text,
)


def resets(upstream: Upstream) -> list[str]:
    return [r.target for r in upstream.received if r.path.endswith("/reset")]


pytestmark = [pytest.mark.security, pytest.mark.timeout(60)]


# -- what an API wrapper sends upstream -----------------------------------------------------


@pytest.mark.parametrize(
    "value", ["a\r\nX-Injected: 1", "a\nX-Injected: 1", "a\rX-Injected: 1", "a\x00X-Injected: 1"]
)
def test_header_parameter_cannot_inject_headers(target: Server, api: Upstream, value: str) -> None:
    """A header parameter with CR/LF/NUL: the upstream never receives a header line of the
    attacker's (a careful server refuses the value; h11 refuses to send it today)."""
    answer = Mcp(target.url).call("get_prefs", {"X-Trace": value})
    injected = [r.raw_head for r in api.received if r.header("x-injected") is not None]
    assert injected == [], injected
    assert api.received == [] or all("\n" not in (r.header("x-trace") or "") for r in api.received)
    assert refused(answer) or api.received, answer


@pytest.mark.parametrize("value", ["a&admin=1", "a#fragment", "a=b;c", "x%26admin%3D1", "\u00e9&"])
def test_query_parameter_cannot_add_parameters(target: Server, api: Upstream, value: str) -> None:
    """A query parameter full of ``&``, ``=``, ``#``: the upstream's query decodes to exactly
    one parameter ``q`` with the attacker's value, nothing else."""
    Mcp(target.url).call("get_prefs", {"q": value})
    assert len(api.received) == 1, [r.target for r in api.received]
    assert parse_qsl(api.received[0].query, keep_blank_values=True) == [("q", value)]


@pytest.mark.parametrize("value", ["a/b", "a%2Fb", "a?x=1", "a#b", "..%2F..%2Fadmin", "a\\b"])
def test_path_parameter_stays_one_segment(target: Server, api: Upstream, value: str) -> None:
    """Slashes (raw or encoded), ``?`` and ``#`` in a path parameter: the upstream path is
    still /api/v1/users/<one segment>/profile, the segment decodes to the value, and there
    is no query string."""
    Mcp(target.url).call("get_profile", {"userId": value})
    assert len(api.received) == 1, [r.target for r in api.received]
    request = api.received[0]
    parts = request.target.split("/")
    assert request.query == "" and "?" not in request.target, request.target
    assert parts[:4] == ["", "api", "v1", "users"] and parts[5:] == ["profile"], request.target
    assert unquote(parts[4]) == value


@pytest.mark.parametrize(
    "template",
    [
        "http://127.0.0.1:{port}/steal",
        "//127.0.0.1:{port}/steal",
        "@127.0.0.1:{port}",
        "http:/\\127.0.0.1:{port}",
    ],
)
def test_absolute_url_in_path_parameter_stays_on_the_api(
    target: Server, api: Upstream, other: Upstream, template: str
) -> None:
    """SSRF through a path parameter: an absolute or scheme-relative URL pointing at another
    origin is only ever a path segment of the configured API (the server URL's variables
    are fixed at build time, and the base URL comes from the operator's environment)."""
    Mcp(target.url).call("get_profile", {"userId": template.format(port=other.port)})
    assert other.received == [], [r.raw_head for r in other.received]
    assert all(r.path.startswith("/api/v1/users/") for r in api.received)


@pytest.mark.parametrize("variable", ["abc", "1%2F..%2F..%2Fadmin", "1%20OR%201=1", "-1e9"])
def test_resource_template_variable_outside_its_schema(
    target: Server, api: Upstream, variable: str
) -> None:
    """itemId is an integer in the operation's schema: a variable that is not one gets a
    JSON-RPC error, and no request leaves for the upstream."""
    answer = Mcp(target.url).rpc("resources/read", {"uri": f"api://items/{variable}/label"})
    assert "error" in answer and api.received == [], [r.target for r in api.received]


def test_extra_arguments_cannot_replace_the_credentials(target: Server, api: Upstream) -> None:
    """Arguments named like the credentials (``X-API-Key``, ``api_key``, ``Cookie``...):
    refused as arguments the operation does not take (its input schema is closed), so no
    request carries them; without them the upstream receives the operator's key."""
    client = Mcp(target.url)
    extras = {
        "X-API-Key": "ATTACKER",
        "api_key": "ATTACKER",
        "Cookie": "ATTACKER=1",
        "headers": {"X-API-Key": "ATTACKER"},
    }
    answer = client.call("get_profile", {"userId": "u1", **extras})
    assert refused(answer) and api.received == []
    client.call("get_profile", {"userId": "u1"})
    (request,) = api.received
    assert request.all("x-api-key") == ["SECRET-HEADER-KEY"]
    assert "ATTACKER" not in request.raw_head


@pytest.mark.parametrize("arguments", [["userId", "u1"], "userId=u1", 7])
def test_arguments_that_are_not_an_object(target: Server, api: Upstream, arguments: object) -> None:
    """``arguments`` as a list, a string or a number: refused, nothing sent upstream."""
    client = Mcp(target.url)
    answer = client.send("tools/call", {"name": "get_profile", "arguments": arguments})
    assert answer.status >= 400 or refused(answer.only), answer.text[:300]
    assert api.received == []


# -- what is shown to clients and written to logs ----------------------------------------------


def test_upstream_error_echoing_the_key_is_redacted(target: Server, api: Upstream) -> None:
    """The upstream answers 500 with a body that repeats the request URL (and so the query
    key). The tool error tells the status; the key the server holds never appears in it."""
    api.routes["/api/v1/files"] = Reply(
        500, [("Content-Type", "text/plain")], b"no such file: /files/x?api_key=SECRET-QUERY-KEY"
    )
    answer = Mcp(target.url).call("get_file", {"fileId": "x"})
    assert refused(answer) and "500" in tool_text(answer)
    assert "SECRET-QUERY-KEY" not in json.dumps(answer), tool_text(answer)


def test_upstream_credentials_never_reach_the_log(target: Server, api: Upstream) -> None:
    """After calls authenticated by a header key and by a query key, the server's stderr
    (INFO, its default) holds neither key."""
    api.routes["/api/v1/files"] = Reply.binary(b"bytes")
    client = Mcp(target.url)
    client.call("get_file", {"fileId": "logged"})
    client.call("get_profile", {"userId": "logged"})
    assert len(api.received) == 2
    time.sleep(0.2)
    log = target.stderr()
    assert "/mcp" in log  # the log is the server's (its access log)
    assert "SECRET-QUERY-KEY" not in log and "SECRET-HEADER-KEY" not in log


def test_inbound_tokens_are_never_logged_nor_forwarded(
    gate: Server, api: Upstream, tokens: Tokens
) -> None:
    """With debug logs on, a good token, an expired one and a forged one pass through the
    server: none of them appears in its stderr, and the upstream call made for the good one
    carries no Authorization header and no part of the token."""
    good = tokens.token(["user"])
    expired = tokens.token(["user"], exp=int(time.time()) - 60)
    forged = good[:-8] + "AAAAAAAA"
    Mcp(gate.url, {"Authorization": "Bearer " + good}).call(
        "call_operation", {"name": "get_profile", "arguments": {"userId": "fwd"}}
    )
    for bad in (expired, forged):
        assert Mcp(gate.url, {"Authorization": "Bearer " + bad}).send("tools/list").status == 401
    assert len(api.received) == 1
    assert api.received[0].header("authorization") is None
    assert good.split(".")[2][:16] not in api.received[0].raw_head
    time.sleep(0.2)
    log = gate.stderr()
    assert "DEBUG" in log
    for token in (good, expired, forged):
        assert token.split(".")[2][:16] not in log and token.split(".")[1][:24] not in log


# -- authorization across JSON tricks, transports and eras -----------------------------------


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_batch_mixing_allowed_and_forbidden_calls(
    gate_stateful: Server, api: Upstream, tokens: Tokens, era: str
) -> None:
    """A JSON array with an allowed call and a forbidden one (batches are gone from MCP
    since 2025-06-18): the forbidden tool never runs."""
    client = Mcp(gate_stateful.url, tokens.bearer(["user"]), era=era)
    if era == "handshake":
        client.initialize()
    batch = [
        client.message("tools/list"),
        client.message("tools/call", {"name": "admin_reset", "arguments": {}}),
    ]
    answer = client.post(batch)
    assert answer.status >= 400 or all("error" in m for m in answer.messages), answer.text[:300]
    assert resets(api) == []


@pytest.mark.parametrize(
    "names", [("admin_reset", "search_operations"), ("search_operations", "admin_reset")]
)
def test_duplicate_json_keys_cannot_swap_the_tool(
    gate: Server, api: Upstream, tokens: Tokens, names: tuple[str, str]
) -> None:
    """``{"name": A, "name": B}``: whichever copy each layer reads, the authorization check
    and the dispatcher must read the same one, so admin_reset never runs for a user."""
    client = Mcp(gate.url, tokens.bearer(["user"]))
    body = client.message("tools/call", {"name": "NAME", "arguments": {}})
    raw = json.dumps(body).replace('"name": "NAME"', f'"name": "{names[0]}", "name": "{names[1]}"')
    answer = client.post(body, raw=raw.encode(), headers={"Mcp-Name": names[1]})
    assert resets(api) == [], answer.text[:300]


def test_mcp_name_header_disagreeing_with_the_body(
    gate: Server, api: Upstream, tokens: Tokens
) -> None:
    """2026-07-28: ``Mcp-Name: search_operations`` over a body that calls admin_reset.
    Whatever a proxy in front believes, the server refuses (403 or header mismatch)."""
    client = Mcp(gate.url, tokens.bearer(["user"]))
    body = client.message("tools/call", {"name": "admin_reset", "arguments": {}})
    answer = client.post(body, headers={"Mcp-Name": "search_operations"})
    assert answer.status >= 400 or refused(answer.only), answer.text[:300]
    assert resets(api) == []


def test_tools_call_sent_as_a_notification(gate: Server, api: Upstream, tokens: Tokens) -> None:
    """A tools/call without an id (a notification, which the scope check used to skip):
    nothing runs."""
    client = Mcp(gate.url, tokens.bearer(["user"]))
    body = client.message("tools/call", {"name": "admin_reset", "arguments": {}}, request_id=None)
    client.post(body)
    body = client.message(
        "tools/call",
        {"name": "call_operation", "arguments": {"name": "admin_reset"}},
        request_id=None,
    )
    client.post(body)
    time.sleep(1.0)
    assert resets(api) == []


@pytest.mark.parametrize(
    "name",
    [
        "\u0430dmin_reset",
        "\uff41dmin_reset",
        "admin_reset ",
        "ADMIN_RESET",
        "admin_reset\u200b",
        "admin\u2010reset",
    ],
)
def test_homoglyph_operation_names_resolve_to_nothing(
    gate: Server, api: Upstream, tokens: Tokens, name: str
) -> None:
    """Look-alike names (Cyrillic a, fullwidth a, trailing space, case, zero-width space,
    Unicode hyphen) never reach admin_reset, even for a token that may call it: names are
    compared exactly, so no check on one spelling can be dodged with another."""
    client = Mcp(gate.url, tokens.bearer(["admin"]))
    direct = client.call(name, {})
    meta = client.call("call_operation", {"name": name, "arguments": {}})
    assert refused(direct) and refused(meta), (direct, meta)
    assert resets(api) == []


@pytest.mark.parametrize("scope", ["ADMIN", "\uff41dmin", "admin\u200b", "*", "admin:*", "adm in"])
def test_scope_names_compare_exactly(
    gate: Server, api: Upstream, tokens: Tokens, scope: str
) -> None:
    """A token whose scope only looks like ``admin`` (case, fullwidth, zero-width space,
    wildcards, split words) does not grant it."""
    answer = Mcp(gate.url, tokens.bearer(["user", scope])).send(
        "tools/call", {"name": "admin_reset", "arguments": {}}
    )
    assert answer.status == 403 or refused(answer.only), answer.text[:300]
    assert resets(api) == []


@pytest.mark.parametrize("transport", ["sse", "websocket"])
def test_direct_call_without_the_scope_over_sse_and_websocket(
    request: pytest.FixtureRequest, api: Upstream, tokens: Tokens, transport: str
) -> None:
    """Legacy SSE and WebSocket carry calls inside one long connection: the direct call
    is still refused (today -32003 naming the scope)."""
    connection = _open(request, transport, tokens.bearer(["user"]))
    answer = connection.rpc("tools/call", {"name": "admin_reset", "arguments": {}})
    assert refused(answer), answer
    assert resets(api) == []


@pytest.mark.parametrize("transport", ["sse", "websocket"])
def test_meta_call_without_the_scope_over_sse_and_websocket(
    request: pytest.FixtureRequest, api: Upstream, tokens: Tokens, transport: str
) -> None:
    """The same forbidden call through call_operation over SSE and WebSocket: refused as an
    operation that does not exist for this caller (the server hides what a caller may not
    call), and the upstream gets nothing."""
    connection = _open(request, transport, tokens.bearer(["user"]))
    answer = connection.rpc(
        "tools/call", {"name": "call_operation", "arguments": {"name": "admin_reset"}}
    )
    assert refused(answer) and "no operation named 'admin_reset'" in json.dumps(answer), answer
    assert resets(api) == []


def _open(
    request: pytest.FixtureRequest, transport: str, headers: dict[str, str]
) -> LegacySse | Ws:
    if transport == "sse":
        server: Server = request.getfixturevalue("gate_sse")
        connection: LegacySse | Ws = LegacySse(server.url, headers)
    else:
        server = request.getfixturevalue("gate_ws")
        connection = Ws(server.port, headers)
    request.addfinalizer(connection.close)
    connection.initialize()
    return connection


def test_sse_session_cannot_be_used_by_another_caller(
    gate_sse: Server, api: Upstream, tokens: Tokens
) -> None:
    """Bob posts a call into Alice's legacy SSE session (its id is in the endpoint URL):
    404, and nothing reaches Alice's stream or the upstream."""
    alice = LegacySse(gate_sse.url, tokens.bearer(["user"]))
    try:
        alice.initialize()
        assert alice.endpoint
        bob = httpx2.post(
            gate_sse.url + alice.endpoint,
            json={
                "jsonrpc": "2.0",
                "id": 77,
                "method": "tools/call",
                "params": {
                    "name": "call_operation",
                    "arguments": {"name": "get_profile", "arguments": {"userId": "b"}},
                },
            },
            headers=tokens.bearer(["user", "admin"], subject="bob"),
        )
        assert bob.status_code == 404, bob.text
        time.sleep(0.3)
        assert not any(m.get("id") == 77 for m in alice.inbox) and api.received == []
    finally:
        alice.close()


def test_session_id_reuse_by_another_caller(gate_stateful: Server, tokens: Tokens) -> None:
    """A streamable HTTP session opened by Alice, presented by Bob (valid token, more
    scopes): 404 as if it did not exist; Alice keeps using it."""
    alice = Mcp(gate_stateful.url, tokens.bearer(["user"]))
    assert alice.initialize().status == 200 and alice.session
    bob = Mcp(gate_stateful.url, tokens.bearer(["user", "admin"], subject="bob"), era="handshake")
    bob.session = alice.session
    assert bob.send("tools/list").status == 404
    assert alice.send("tools/list").status == 200


def test_last_event_id_does_not_replay_another_sessions_stream(target: Server) -> None:
    """Stream ids are request ids, alike in every session: Bob resumes his request 5 by its
    event id after Alice's request 5 was answered, and is sent nothing of hers."""
    bob, alice = Mcp(target.url), Mcp(target.url)
    bob.initialize(), alice.initialize()
    mine = bob.post(bob.message("tools/call", {"name": "measure", "arguments": {"x": 1}}, 5))
    first = next(line[4:] for line in mine.text.splitlines() if line.startswith("id: "))
    alice.post(alice.message("tools/call", {"name": "measure", "arguments": {"x": 21}}, 5))
    headers = {"Accept": ACCEPT, "MCP-Protocol-Version": HANDSHAKE, "Last-Event-ID": first}
    replayed = ""
    with bob.http.stream(
        "GET", bob.endpoint, headers={**headers, "Mcp-Session-Id": bob.session or ""}
    ) as r:
        for chunk in r.iter_text():
            replayed += chunk
            if "retry:" in replayed:  # the replay is over: the stream is primed anew
                break
    # Bob's own answer comes again; Alice's (21 doubled) never does. Not a bare "42":
    # the random event ids are hex and may hold it.
    assert '"doubled":2.0' in replayed and '"doubled":42' not in replayed, replayed


def test_session_fixation(target: Server) -> None:
    """An initialize that brings its own Mcp-Session-Id is refused (404) or given a fresh
    id: a chosen id never names a live session."""
    client = Mcp(target.url)
    client.session = "attacker-chosen-session-id"
    answer = client.initialize()
    assert answer.status == 404 or (answer.status == 200 and client.session), answer.text[:200]
    assert client.session != "attacker-chosen-session-id"
    replay = Mcp(target.url, era="handshake")
    replay.session = "attacker-chosen-session-id"
    assert replay.send("tools/list").status in (400, 404)


def test_session_ids_are_unguessable(target: Server) -> None:
    """Five sessions: five different ids of at least 128 random bits (32 hex digits)."""
    ids = []
    for _ in range(5):
        client = Mcp(target.url)
        client.initialize()
        assert client.session
        ids.append(client.session)
    assert len(set(ids)) == 5
    assert all(len(i) >= 32 and all(c in "0123456789abcdefABCDEF-" for c in i) for i in ids), ids


@pytest.mark.parametrize("claims", [{"exp": -60}, {"nbf": 600}, {"iat": None, "exp": None}])
@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_tokens_outside_their_lifetime_in_both_eras(
    gate_stateful: Server, tokens: Tokens, claims: dict[str, int | None], era: str
) -> None:
    """Expired, not yet valid, and without ``exp`` at all: 401 in both eras."""
    now = int(time.time())
    shifted = {k: (None if v is None else now + v) for k, v in claims.items()}
    client = Mcp(gate_stateful.url, tokens.bearer(["user"], **shifted), era=era)
    answer = client.initialize() if era == "handshake" else client.send("tools/list")
    assert answer.status == 401, answer.text[:200]


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unsigned(claims: dict[str, object]) -> str:
    """A JWT with ``alg: none`` and no signature."""
    head = _b64url(json.dumps({"alg": "none", "typ": "JWT", "kid": "k1"}).encode())
    return f"{head}.{_b64url(json.dumps(claims).encode())}."


def _forgeries(tokens: Tokens) -> dict[str, str]:
    """Tokens a careful resource server refuses, each wrong in one way only."""
    import jwt
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    good = jwt.decode(tokens.token(["user"]), options={"verify_signature": False})
    public_pem = tokens.key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return {
        "audience of another server": tokens.token(["user"], aud="https://other.example.com/mcp"),
        "no audience": tokens.token(["user"], aud=None),
        "another issuer": tokens.token(["user"], iss="https://evil.example.com"),
        "no issuer": tokens.token(["user"], iss=None),
        "alg none": _unsigned(good),
        # the RSA public key used as an HMAC secret: the classic algorithm confusion
        "HS256 keyed with the public key": _hs256(good, public_pem),
        "another key, same kid": str(
            jwt.encode(good, stranger, algorithm="RS256", headers={"kid": "k1"})
        ),
        "unknown kid": str(jwt.encode(good, tokens.key, algorithm="RS256", headers={"kid": "k9"})),
    }


def _hs256(claims: dict[str, object], secret: bytes) -> str:
    """HS256 by hand (PyJWT refuses a PEM key as an HMAC secret, which is the point)."""
    import hashlib
    import hmac

    head = _b64url(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "k1"}).encode())
    body = _b64url(json.dumps(claims).encode())
    signature = hmac.new(secret, f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{_b64url(signature)}"


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_tokens_for_someone_else_or_forged_are_refused_over_the_wire(
    gate_stateful: Server, tokens: Tokens, era: str
) -> None:
    """Against a generated OAuth server: a token for another audience or from another
    issuer, unsigned (``alg: none``), HMAC-signed with the public key, signed by a stranger
    under the right key id, or naming an unknown key id: 401 with a ``WWW-Authenticate``
    challenge, no result, in both eras. The same claims, properly signed, are served."""
    for what, token in _forgeries(tokens).items():
        client = Mcp(gate_stateful.url, {"Authorization": "Bearer " + token}, era=era)
        answer = client.initialize() if era == "handshake" else client.send("tools/list")
        assert answer.status == 401, (what, answer.status, answer.text[:200])
        assert "invalid_token" in answer.headers.get("www-authenticate", ""), what
        assert '"tools"' not in answer.text, what
    client = Mcp(gate_stateful.url, tokens.bearer(["user"]), era=era)
    answer = client.initialize() if era == "handshake" else client.send("tools/list")
    assert answer.status == 200, answer.text[:200]


def test_token_in_the_query_string_is_not_accepted(gate: Server, tokens: Tokens) -> None:
    """``?access_token=`` (RFC 6750 §2.3, which MCP forbids): 401; only the header counts."""
    token = tokens.token(["user"])
    client = Mcp(gate.url)
    client.endpoint += "?access_token=" + token
    assert client.send("tools/list").status == 401


# -- the HTTP front door ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        "127.0.0.1.evil.example",
        "127.0.0.1:1@evil.example",
        "localhost:80 evil",
        "LOCALHOST.:80",
        "",
    ],
)
def test_host_header_tricks(target: Server, api: Upstream, host: str) -> None:
    """DNS rebinding with odd Host headers (a suffix, userinfo, a space, a trailing dot,
    none at all): refused before anything runs."""
    body = json.dumps(
        Mcp(target.url).message("tools/call", {"name": "get_profile", "arguments": {"userId": "h"}})
    )
    head = "POST /mcp HTTP/1.1\r\n" + (f"Host: {host}\r\n" if host else "")
    head += (
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        f"MCP-Protocol-Version: {MODERN}\r\nMcp-Method: tools/call\r\nMcp-Name: get_profile\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    reply = raw_http(target.port, head.encode() + body.encode())
    assert status_of(reply) in (400, 421), reply[:200]
    assert api.received == []


def test_foreign_origin_and_cors_preflight(gate: Server, tokens: Tokens) -> None:
    """A page on https://evil.example: its preflight gets no Access-Control-Allow-Origin for
    it, and its POST is refused (403); the configured web app's preflight is allowed."""
    http = httpx2.Client(timeout=10)
    preflight = {
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type",
    }
    evil = http.options(gate.url + "/mcp", headers={"Origin": "https://evil.example", **preflight})
    assert evil.headers.get("access-control-allow-origin") in (None, ""), evil.headers
    app = http.options(
        gate.url + "/mcp", headers={"Origin": "https://app.example.com", **preflight}
    )
    assert app.headers.get("access-control-allow-origin") == "https://app.example.com"
    post = Mcp(gate.url, {**tokens.bearer(["user"]), "Origin": "https://evil.example"})
    assert post.send("tools/list").status == 403
    for origin in ("null", "https://app.example.com.evil.example", "http://app.example.com"):
        client = Mcp(gate.url, {**tokens.bearer(["user"]), "Origin": origin})
        assert client.send("tools/list").status == 403, origin
    http.close()


def test_simple_request_content_type(gate: Server, api: Upstream, tokens: Tokens) -> None:
    """A browser's "simple" cross-site POST (``text/plain`` or form encoded: no preflight)
    with a JSON-RPC body: refused, nothing runs."""
    client = Mcp(gate.url, tokens.bearer(["user"]))
    body = client.message(
        "tools/call",
        {
            "name": "call_operation",
            "arguments": {"name": "get_profile", "arguments": {"userId": "csrf"}},
        },
    )
    for kind in ("text/plain", "application/x-www-form-urlencoded"):
        answer = client.post(body, headers={"Content-Type": kind})
        assert answer.status in (400, 415), (kind, answer.status, answer.text[:200])
    assert api.received == []


def test_oversized_body_is_refused_before_anything_runs(target: Server, api: Upstream) -> None:
    """A 4.5 MB body (the limit is 4 MiB), once with Content-Length and once chunked: 413,
    and the call inside never runs."""
    client = Mcp(target.url)
    body = client.message(
        "tools/call",
        {"name": "get_profile", "arguments": {"userId": "big", "pad": "x" * 4_500_000}},
    )
    assert client.post(body).status == 413
    data = json.dumps(body).encode()

    def chunks():  # type: ignore[no-untyped-def]
        for start in range(0, len(data), 65536):
            yield data[start : start + 65536]

    response = client.http.post(
        client.endpoint, content=chunks(), headers=client.request_headers(body)
    )
    assert response.status_code == 413
    assert api.received == []


def test_request_smuggling_with_content_length_and_chunked(target: Server, api: Upstream) -> None:
    """Content-Length and Transfer-Encoding together, a complete second request hidden after
    the chunked body. RFC 9112 §6.3: such a message "ought to be handled as an error"; a
    server that processes it MUST close the connection after responding. Either way the
    hidden call never runs (behind a proxy that reads Content-Length, it would be a request
    nobody checked)."""
    hidden = json.dumps(
        Mcp(target.url).message(
            "tools/call", {"name": "get_profile", "arguments": {"userId": "smuggled"}}
        )
    )
    inner = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{target.port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {MODERN}\r\n"
        f"Mcp-Method: tools/call\r\nMcp-Name: get_profile\r\nContent-Length: {len(hidden)}\r\n\r\n"
        + hidden
    )
    outer = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{target.port}\r\nContent-Type: application/json\r\n"
        "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + inner
    )
    with socket.create_connection(("127.0.0.1", target.port)) as sock:
        sock.sendall(outer.encode())
        sock.settimeout(0.5)
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and not api.matching("smuggled"):
            try:
                if sock.recv(65536) == b"":
                    break  # closed by the server: nothing more will be read from it
            except TimeoutError:
                pass
    assert api.matching("smuggled") == [], "the request hidden behind the chunked body ran"


@pytest.mark.parametrize(
    "cursor",
    [
        base64.urlsafe_b64encode(b"-1").decode(),
        base64.urlsafe_b64encode(b"999").decode(),
        base64.urlsafe_b64encode(b"9" * 5000).decode(),
        base64.urlsafe_b64encode(b"1e3").decode(),
        "not base64 at all!",
        "x" * 100_000,
    ],
)
def test_cursor_forgery(target: Server, cursor: str) -> None:
    """tools/list with forged cursors (negative, past the end, 5,000 digits, exponent,
    garbage, 100 KB): each gets -32602 Invalid params, and the server keeps serving."""
    answer = Mcp(target.url).rpc("tools/list", {"cursor": cursor})
    assert answer.get("error", {}).get("code") == -32602, str(answer)[:300]


def test_walking_every_cursor_lists_each_tool_once(target: Server) -> None:
    """Page size 2: following nextCursor visits every tool exactly once and ends."""
    client = Mcp(target.url)
    names: list[str] = []
    cursor = None
    for _ in range(20):
        result = client.rpc("tools/list", {"cursor": cursor} if cursor else {})["result"]
        names += [tool["name"] for tool in result["tools"]]
        cursor = result.get("nextCursor")
        if not cursor:
            break
    assert cursor is None and len(names) == len(set(names)) == 7, names


@pytest.mark.parametrize(
    "name", ["m\u0435asure", "\uff4deasure", "measure ", "MEASURE", "measure\u200b", "../measure"]
)
def test_homoglyph_tool_names_on_an_open_server(target: Server, name: str) -> None:
    """Look-alikes of a real tool name are unknown tools (JSON-RPC -32602), never the tool."""
    answer = Mcp(target.url).call(name, {"x": 1})
    assert "error" in answer and answer["error"]["code"] == -32602, answer


@pytest.mark.parametrize("request_id", [{"x": 1}, [1], True, 1.5])
def test_json_rpc_ids_of_the_wrong_type(target: Server, api: Upstream, request_id: object) -> None:
    """An id that is an object, an array, a boolean or a fraction: Invalid Request, and
    the call does not run."""
    client = Mcp(target.url)
    body = client.message(
        "tools/call", {"name": "get_profile", "arguments": {"userId": "ids"}}, request_id=request_id
    )
    answer = client.post(body)
    assert answer.status >= 400 or "error" in answer.only, answer.text[:200]
    assert api.received == []


def test_prompt_arguments_are_not_templates(target: Server) -> None:
    """Jinja in a prompt argument is text, never evaluated: ``{{ 7*7 }}`` stays as sent."""
    topic = "{{ 7*7 }}{% for i in range(3) %}x{% endfor %}{{ ''.__class__ }}"
    answer = Mcp(target.url).rpc("prompts/get", {"name": "brief", "arguments": {"topic": topic}})
    text = answer["result"]["messages"][0]["content"]["text"]
    assert text == f"Brief me on {topic}.", text


def test_websocket_refuses_foreign_origins_missing_tokens_and_big_messages(
    gate_ws: Server, api: Upstream, tokens: Tokens
) -> None:
    """WebSocket handshakes from a foreign Origin (403) or without a token (401) fail; a
    message over the 64 KiB limit closes the connection (1009) and runs nothing."""
    from websockets.exceptions import ConnectionClosed, InvalidStatus

    with pytest.raises(InvalidStatus) as foreign:
        Ws(gate_ws.port, {**tokens.bearer(["user"]), "Origin": "https://evil.example"})
    assert foreign.value.response.status_code == 403
    with pytest.raises(InvalidStatus) as anonymous:
        Ws(gate_ws.port, {})
    assert anonymous.value.response.status_code == 401
    ws = Ws(gate_ws.port, tokens.bearer(["user"]))
    ws.initialize()
    big = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tools/call",
        "params": {
            "name": "call_operation",
            "arguments": {
                "name": "get_profile",
                "arguments": {"userId": "big", "pad": "x" * 100_000},
            },
        },
    }
    with pytest.raises(ConnectionClosed) as closed:
        ws.send(big)
        ws.receive(timeout=5)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    assert api.received == []
