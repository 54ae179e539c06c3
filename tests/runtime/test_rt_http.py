"""The HTTP apps (``http_app.create_app``) and their guard (``http_guard``), in this process:
health checks, Host and Origin checks on every network transport, JSON responses,
resumable streams and their bounded event store, the body limit, the rate limit, CORS, and
an app mounted under a prefix."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
import pytest
import rtkit
from rtbridge import BASE, Refused, http_client, running, websocket
from starlette.applications import Starlette
from starlette.routing import Mount

from mcpgen.runtime import eventstore
from mcpgen.runtime.eventstore import MemoryEventStore
from mcpgen.runtime.http_guard import WELL_KNOWN

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
POST = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
ENDPOINTS = {"http": "/mcp", "http-stateless": "/mcp", "http-json": "/mcp", "sse": "/sse"}
NETWORK = [*ENDPOINTS, "websocket"]


@asynccontextmanager
async def serving(
    spec: dict[str, Any] | None = None, transport: str = "http", **changes: Any
) -> AsyncIterator[Any]:
    """An HTTP client into the fixture app (stateless JSON answers unless told otherwise)."""
    spec = spec or rtkit.make_spec()
    arm = "http-json" if transport == "http" and not changes.pop("stateful", False) else transport
    async with (
        running(rtkit.app(spec, arm, **changes)) as app,
        http_client(app, rtkit.credentials(spec)) as http,
    ):
        yield http


async def first_event(http: Any, path: str, headers: dict[str, str]) -> int:
    """The status of a GET that opens an event stream (closed at once)."""
    async with http.stream("GET", path, headers=headers) as response:
        return int(response.status_code)


@pytest.mark.parametrize("transport", NETWORK)
async def test_health_check_answers_without_credentials(transport: str) -> None:
    async with running(rtkit.app(transport=transport)) as app, http_client(app) as http:
        response = await http.get("/healthz", headers={"Host": "evil.example"})
    assert response.status_code == 200
    body = response.json()
    assert (body["status"], body["server"], body["version"]) == ("ok", "fixture", "1.2.3")
    assert set(body) == {"status", "server", "version", "sharedState"}  # no process id


@pytest.mark.parametrize("transport", NETWORK)
async def test_a_foreign_host_header_is_refused(transport: str) -> None:
    """DNS rebinding: a page on evil.example that resolves to 127.0.0.1 gets 421."""
    spec = rtkit.make_spec()
    app = rtkit.app(spec, transport)
    foreign = {**rtkit.credentials(spec), "Host": "evil.example"}
    async with running(app), http_client(app) as http:
        if transport == "websocket":
            with pytest.raises(Refused) as refused:
                async with websocket(app, headers=foreign):
                    pass
            assert refused.value.status == 421
            return
        if transport == "sse":
            status = await first_event(http, "/sse", foreign)
        else:
            status = (
                await http.post("/mcp", json=INITIALIZE, headers={**POST, **foreign})
            ).status_code
        assert status == 421
        allowed = {**rtkit.credentials(spec), "Host": "localhost:8000"}
        if transport != "sse":
            ok = await http.post("/mcp", json=INITIALIZE, headers={**POST, **allowed})
            assert ok.status_code == 200


@pytest.mark.parametrize("transport", NETWORK)
async def test_a_foreign_origin_is_refused(transport: str) -> None:
    spec = rtkit.make_spec()
    app = rtkit.app(spec, transport)
    evil = {**rtkit.credentials(spec), "Origin": "https://evil.example"}
    async with running(app), http_client(app) as http:
        if transport == "websocket":
            with pytest.raises(Refused) as refused:
                async with websocket(app, headers=evil):
                    pass
            assert refused.value.status == 403
            async with websocket(app, headers={**evil, "Origin": "http://localhost:5173"}):
                pass  # a local page may (the server is bound to localhost)
            return
        if transport == "sse":
            assert await first_event(http, "/sse", evil) == 403
            return
        response = await http.post("/mcp", json=INITIALIZE, headers={**POST, **evil})
    assert response.status_code == 403
    assert response.json()["error"] == "invalid_origin"


@pytest.mark.parametrize("transport", ["http-stateless", "http-json"])
async def test_a_stateless_server_opens_no_get_stream(transport: str) -> None:
    """Stateless HTTP has nothing to send on a GET stream (no session, no standalone
    channel), yet SDK 2.3 held one open, counted by no session cap, for as long as the
    client liked (1,000 of them: +85 MB): 405 Method Not Allowed, as MCP allows. A stateful
    server still opens its session's stream."""
    spec = rtkit.make_spec("none")
    stream = {"Accept": "text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    app = rtkit.app(spec, transport)
    async with (
        running(app),
        http_client(app) as http,
        http.stream("GET", "/mcp", headers=stream) as refused,
    ):
        assert refused.status_code == 405  # (not a stream that never ends)
        await refused.aread()
    assert refused.headers["allow"] == "POST"
    assert refused.json()["error"]["code"] == -32600
    async with running(rtkit.app(spec, "http")) as app, http_client(app) as http:
        opened = await http.post("/mcp", json=INITIALIZE, headers=POST)
        session = {**stream, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
        assert await first_event(http, "/mcp", session) == 200


async def test_json_response_mode() -> None:
    async with serving() as http:
        response = await http.post("/mcp", json=INITIALIZE, headers=POST)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["result"]["serverInfo"]["name"] == "fixture"


async def test_stateful_streams_are_resumable() -> None:
    """Stateful HTTP numbers its events for Last-Event-ID and tells clients when to return."""
    async with serving(stateful=True, retry_interval=1500) as http:
        response = await http.post("/mcp", json=INITIALIZE, headers=POST)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["mcp-session-id"]
    lines = response.text.splitlines()
    assert "retry: 1500" in lines
    assert any(line.startswith("id: ") for line in lines)


async def test_without_an_event_store_streams_are_not_resumable() -> None:
    async with serving(stateful=True, event_store_size=0) as http:
        response = await http.post("/mcp", json=INITIALIZE, headers=POST)
    lines = response.text.splitlines()
    assert response.status_code == 200
    assert not any(line.startswith(("id: ", "retry:")) for line in lines), lines


async def test_a_broken_stream_resumes_with_last_event_id() -> None:
    """A client that lost a response stream gets its missed events again by Last-Event-ID."""
    async with serving(stateful=True) as http:
        opened = await http.post("/mcp", json=INITIALIZE, headers=POST)
        session = {**POST, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
        session["MCP-Protocol-Version"] = "2025-11-25"
        await http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                        headers=session)  # fmt: skip
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "again"}}}  # fmt: skip
        answered = await http.post("/mcp", json=call, headers=session)
        ids = [line[4:] for line in answered.text.splitlines() if line.startswith("id: ")]
        first = ids[0]
        async with http.stream("GET", "/mcp", headers={**session, "Last-Event-ID": first}) as again:
            assert again.status_code == 200
            replayed = b""
            async for chunk in again.aiter_bytes():
                replayed += chunk
                if b'"again"' in replayed:
                    break
    assert b'"id":2' in replayed.replace(b" ", b"")


async def test_last_event_id_replays_only_the_sessions_own_events() -> None:
    """Stream ids are request ids, the same in every session: Bob resuming his request 2
    must not be sent Alice's answer to her request 2 (one store serves every session)."""
    async with serving(stateful=True) as http:
        sessions = []
        for _ in range(2):
            opened = await http.post("/mcp", json=INITIALIZE, headers=POST)
            session = {**POST, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
            session["MCP-Protocol-Version"] = "2025-11-25"
            await http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                            headers=session)  # fmt: skip
            sessions.append(session)
        bob, alice = sessions
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "bob's"}}}  # fmt: skip
        answered = await http.post("/mcp", json=call, headers=bob)
        first = next(line[4:] for line in answered.text.splitlines() if line.startswith("id: "))
        call["params"] = {"name": "echo", "arguments": {"text": "alice's secret"}}
        await http.post("/mcp", json=call, headers=alice)
        async with http.stream("GET", "/mcp", headers={**bob, "Last-Event-ID": first}) as again:
            replayed = b""
            async for chunk in again.aiter_bytes():
                replayed += chunk
                if b"retry:" in replayed:  # the replay is over: the stream is primed anew
                    break
    assert b"alice" not in replayed, replayed


async def test_the_event_store_replays_one_stream_and_is_bounded() -> None:
    store = MemoryEventStore(max_events=4)
    ping = types.JSONRPCNotification(jsonrpc="2.0", method="notifications/progress")
    first = await store.store_event("a", None)
    await store.store_event("a", ping)
    await store.store_event("b", ping)
    last_a = await store.store_event("a", ping)
    replayed: list[Any] = []

    async def collect(event: Any) -> None:
        replayed.append(event)

    assert await store.replay_events_after(first, collect) == "a"
    assert [e.event_id for e in replayed][-1] == last_a and len(replayed) == 2
    await store.store_event("b", ping)  # the fifth event pushes out the first
    assert await store.replay_events_after(first, collect) is None
    assert await store.replay_events_after("never-issued", collect) is None


async def test_the_event_store_is_bounded_in_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """An API's result may reach 10 MB: 1,000 of them kept for replay were gigabytes. The
    store keeps at most ``MAX_EVENT_BYTES`` (here 1 MB) of events, the oldest out first: an
    evicted id replays nothing, as an unknown one."""
    monkeypatch.setattr(eventstore, "MAX_EVENT_BYTES", 1 << 20, raising=False)
    store, replayed = MemoryEventStore(), []

    async def collect(event: Any) -> None:
        replayed.append(event)

    tracemalloc.start()
    try:
        ids = [await store.store_event("a", None)]
        for i in range(16):  # 4 MB of answers, each its own 256 kB
            text = f"{i:x}" * (256 << 10)
            answer = types.JSONRPCResponse(jsonrpc="2.0", id=i, result={"text": text})
            ids.append(await store.store_event("a", answer))
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert held < 1.5 * (1 << 20), held  # (4.2 MB before the bound)
    assert await store.replay_events_after(ids[0], collect) is None
    assert await store.replay_events_after(ids[-2], collect) == "a"
    assert [e.message.id for e in replayed] == [15]  # (made again of the JSON kept)


async def test_json_answers_are_not_kept_for_replay() -> None:
    """A session answered with JSON sees no event id of a POST's stream: its answers were
    kept (and made JSON twice) for a replay no one can ask for; its GET stream's are kept."""
    store = MemoryEventStore().for_session("s", json_response=True)
    ping = types.JSONRPCNotification(jsonrpc="2.0", method="notifications/progress")
    await store.store_event("1", ping)
    kept = await store.store_event("_GET_stream", ping)
    assert list(store.events) == [kept]


async def test_a_body_over_the_limit_is_refused() -> None:
    big = {**INITIALIZE, "padding": "x" * 4096}
    data = json.dumps(big).encode()

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: the limit still holds
        for start in range(0, len(data), 512):
            yield data[start : start + 512]

    async with serving(max_body_size=2048) as http:
        declared = await http.post("/mcp", content=data, headers=POST)
        streamed = await http.post("/mcp", content=chunks(), headers=POST)
        small = await http.post("/mcp", json=INITIALIZE, headers=POST)
    assert declared.status_code == 413 and streamed.status_code == 413
    assert small.status_code == 200


async def test_rate_limit_answers_429_with_retry_after() -> None:
    async with serving(rate_limit=0.5, rate_burst=2) as http:
        statuses = []
        for _ in range(3):
            response = await http.post("/mcp", json=INITIALIZE, headers=POST)
            statuses.append(response.status_code)
        health = await http.get("/healthz")
    assert statuses == [200, 200, 429]
    assert int(response.headers["retry-after"]) >= 1
    assert response.json()["error"] == "rate_limited"
    assert health.status_code == 200  # health checks are never limited


async def test_rate_limit_is_per_verified_caller_and_per_address_for_the_rest() -> None:
    """Two callers from one address each get their own bucket; refused credentials are
    limited by address, so garbage tokens cannot mint fresh buckets."""
    alice = rtkit.bearer(rtkit.token(subject="alice"))
    bob = rtkit.bearer(rtkit.token(subject="bob"))
    async with (
        running(rtkit.app(transport="http-json", rate_limit=0.1, rate_burst=1)) as app,
        http_client(app) as http,
    ):
        first = [
            (await http.post("/mcp", json=INITIALIZE, headers={**POST, **who})).status_code
            for who in (alice, bob, alice)
        ]
        garbage = [
            (
                await http.post("/mcp", json=INITIALIZE, headers={**POST, **rtkit.bearer(f"x{i}")})
            ).status_code
            for i in range(2)
        ]
        async with http_client(app, address="10.0.0.2") as elsewhere:
            other = await elsewhere.post(
                "/mcp", json=INITIALIZE, headers={**POST, **rtkit.bearer("y")}
            )
    assert first == [200, 200, 429]
    assert garbage == [401, 429]
    assert other.status_code == 401  # another address has its own bucket


async def test_anonymous_callers_are_limited_by_address() -> None:
    """Without auth every caller is anonymous: one bucket per client address."""
    app = rtkit.app(rtkit.make_spec("none"), "http-json", rate_limit=0.1, rate_burst=1)
    one, other = http_client(app, address="10.0.0.7"), http_client(app, address="10.0.0.8")
    async with running(app), one, other:
        statuses = [
            (await http.post("/mcp", json=INITIALIZE, headers=POST)).status_code
            for http in (one, other, one)
        ]
    assert statuses == [200, 200, 429]


async def test_one_ipv6_network_is_one_address_to_the_rate_limit() -> None:
    """A client commonly holds a whole /64 (2**64 addresses): a bucket per IPv6 address
    would be a fresh bucket per request. One /64 shares a bucket; an IPv4 address written
    as IPv6 (a dual-stack listener) is that IPv4 address."""
    app = rtkit.app(rtkit.make_spec("none"), "http-json", rate_limit=0.1, rate_burst=1)
    addresses = ["2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:3::1", "10.0.0.9"]
    addresses.append("::ffff:10.0.0.9")
    async with running(app):
        statuses = []
        for address in addresses:
            async with http_client(app, address=address) as http:
                statuses.append(
                    (await http.post("/mcp", json=INITIALIZE, headers=POST)).status_code
                )
    assert statuses == [200, 429, 200, 200, 429]


async def test_cors_for_browser_clients() -> None:
    origin = "https://app.example"
    async with serving(cors_origins=(origin,)) as http:
        preflight = await http.options(
            "/mcp",
            headers={
                "Origin": origin,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type, mcp-session-id",
            },
        )
        response = await http.post("/mcp", json=INITIALIZE, headers={**POST, "Origin": origin})
        other = await http.options(
            "/mcp",
            headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
        )
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == origin
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == origin
    assert "mcp-session-id" in response.headers["access-control-expose-headers"].lower()
    assert "www-authenticate" in response.headers["access-control-expose-headers"].lower()
    assert other.headers.get("access-control-allow-origin") is None


async def test_mounted_under_a_prefix() -> None:
    """Mounted at /api: every route moves, and the metadata URL in the challenge and the
    resource in the metadata document carry the prefix."""
    app = rtkit.app(transport="http-json")

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with app.router.lifespan_context(app):  # the session manager runs in the parent
            yield

    parent = Starlette(routes=[Mount("/api", app=app)], lifespan=lifespan)
    async with running(parent), http_client(parent) as http:
        health = await http.get("/api/healthz")
        good = {**POST, **rtkit.credentials(rtkit.make_spec())}
        response = await http.post("/api/mcp", json=INITIALIZE, headers=good)
        refused = await http.post("/api/mcp", json=INITIALIZE, headers=POST)
        challenge = refused.headers["www-authenticate"]
        metadata_url = challenge.split('resource_metadata="')[1].split('"')[0]
        metadata = await http.get(metadata_url)
    assert health.status_code == 200 and response.status_code == 200
    assert refused.status_code == 401
    assert metadata_url == BASE + "/api" + WELL_KNOWN + "/mcp"
    assert metadata.status_code == 200
    assert metadata.json()["resource"] == BASE + "/api/mcp"
