"""Who may use what the server keeps: a streamable HTTP session (or a legacy SSE session)
belongs to the caller that opened it, and every network transport asks for credentials
before it serves anything, whatever the auth kind."""

from __future__ import annotations

from typing import Any

import pytest
import rtkit
from rtbridge import Refused, http_client, running, websocket

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
PING = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
AUTH_KINDS = ["oauth", "bearer", "apiKey"]


def two_callers(kind: str) -> tuple[dict[str, str], dict[str, str]]:
    """Credentials of two different callers, both valid."""
    if kind == "oauth":
        return (
            rtkit.bearer(rtkit.token(subject="alice")),
            rtkit.bearer(rtkit.token(subject="someone-else")),
        )
    if kind == "bearer":
        return rtkit.bearer(rtkit.STATIC_KEYS[1]), rtkit.bearer(rtkit.STATIC_KEYS[0])
    return {"X-API-Key": rtkit.STATIC_KEYS[1]}, {"X-API-Key": rtkit.STATIC_KEYS[0]}


@pytest.mark.parametrize("kind", AUTH_KINDS)
async def test_a_session_belongs_to_the_caller_that_opened_it(kind: str) -> None:
    """A session id is not a credential: another caller presenting it gets 404, exactly as
    if the session did not exist (MCP security best practices: session hijacking)."""
    opener, someone_else = two_callers(kind)
    spec = rtkit.make_spec(kind)
    async with (
        running(rtkit.app(spec, "http", json_response=True)) as app,
        http_client(app) as http,
    ):
        opened = await http.post("/mcp", json=INITIALIZE, headers={**POST, **opener})
        assert opened.status_code == 200
        joined = {**POST, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
        joined["MCP-Protocol-Version"] = "2025-11-25"
        own = await http.post("/mcp", json=PING, headers={**joined, **opener})
        theirs = await http.post("/mcp", json=PING, headers={**joined, **someone_else})
        unknown = await http.post(
            "/mcp", json=PING, headers={**joined, **opener, "Mcp-Session-Id": "nope"}
        )
        again = await http.post("/mcp", json=PING, headers={**joined, **opener})
    assert own.status_code == 200 and own.json()["id"] == 2
    assert theirs.status_code == 404
    assert theirs.content == unknown.content and unknown.status_code == 404
    assert again.status_code == 200  # the owner keeps using it


async def test_a_legacy_sse_session_belongs_to_its_caller() -> None:
    """The SSE session id travels in the endpoint URL: another caller posting to it gets
    404 and nothing reaches the stream."""
    alice, bob = two_callers("oauth")
    app = rtkit.app(transport="sse")
    async with (
        running(app),
        http_client(app) as http,
        http.stream("GET", "/sse", headers=alice) as stream,
    ):
        assert stream.status_code == 200
        lines = stream.aiter_lines()
        endpoint = await _endpoint(lines)
        theirs = await http.post(endpoint, json=INITIALIZE, headers=bob)
        own = await http.post(endpoint, json=INITIALIZE, headers=alice)
        answer = await _next_data(lines)
    assert theirs.status_code == 404
    assert own.status_code == 202
    assert '"id":1' in answer.replace(" ", "") and "serverInfo" in answer


async def _endpoint(lines: Any) -> str:
    data = await _next_data(lines, event="endpoint")
    assert data.startswith("/messages/?session_id="), data
    return data


async def _next_data(lines: Any, event: str | None = None) -> str:
    current = None
    async for line in lines:
        if line.startswith("event:"):
            current = line[6:].strip()
        elif line.startswith("data:") and (event is None or current == event):
            return str(line[5:].strip())
    raise AssertionError("the stream ended")


def _endpoint_of(transport: str) -> tuple[str, str]:
    return {"sse": ("GET", "/sse")}.get(transport, ("POST", "/mcp"))


@pytest.mark.parametrize("kind", AUTH_KINDS)
@pytest.mark.parametrize("transport", ["http", "http-stateless", "http-json", "sse"])
async def test_every_http_transport_requires_credentials(transport: str, kind: str) -> None:
    spec = rtkit.make_spec(kind)
    method, path = _endpoint_of(transport)
    async with running(rtkit.app(spec, transport)) as app, http_client(app) as http:
        body = INITIALIZE if method == "POST" else None
        response = await http.request(method, path, json=body, headers=POST)
        if transport == "sse":  # the message endpoint too
            messages = await http.post("/messages/?session_id=0", json=PING, headers=POST)
            assert messages.status_code == 401
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.split(" ")[0] == ("ApiKey" if kind == "apiKey" else "Bearer")
    assert challenge == challenge.strip()  # "Bearer " is an illegal header value: h11 refuses it


@pytest.mark.parametrize("kind", AUTH_KINDS)
async def test_the_websocket_handshake_requires_credentials(kind: str) -> None:
    spec = rtkit.make_spec(kind)
    app = rtkit.app(spec, "websocket")
    async with running(app):
        with pytest.raises(Refused) as refused:
            async with websocket(app):
                pass
        assert refused.value.status == 401
        with pytest.raises(Refused) as wrong:
            async with websocket(app, headers=rtkit.bearer("wrong") | {"X-API-Key": "wrong"}):
                pass
        assert wrong.value.status == 401
        async with websocket(app, headers=rtkit.credentials(spec)) as peer:
            assert peer.subprotocol == "mcp"
