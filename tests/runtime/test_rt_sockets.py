"""The WebSocket transport over a real socket (uvicorn in a thread): the runtime's client
(``websocket_client``) against its server, in both eras, and handshakes refused with the
HTTP status uvicorn's denial responses carry."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import rtkit
from authserver import serve
from mcp.client import Client
from rtconnect import MODES, Mode

from mcpgen.runtime.websocket import websocket_client

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


@pytest.fixture(scope="module")
def ws_url() -> Iterator[str]:
    with serve(rtkit.app(transport="websocket")) as url:
        yield "ws" + url.removeprefix("http") + "/ws"


@pytest.mark.parametrize("mode", MODES)
async def test_the_websocket_client_round_trip(ws_url: str, mode: Mode) -> None:
    headers = rtkit.bearer(rtkit.token([rtkit.READ], subject="ws-user"))
    async with Client(websocket_client(ws_url, headers), mode=mode) as client:
        if mode == "legacy":
            assert client.protocol_version == "2025-11-25"
        tools = {t.name for t in (await client.list_tools()).tools}
        echoed = await client.call_tool("echo", {"text": "over the wire"})
        who = await client.call_tool("whoami", {})
    assert {"echo", "read_notes"} <= tools
    assert echoed.structured_content == {"text": "over the wire"}
    assert who.structured_content == {"subject": "ws-user", "scopes": [rtkit.READ]}


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({}, 401),
        (rtkit.bearer("not-a-token"), 401),
        ({"Origin": "https://evil.example"}, 403),
    ],
    ids=["no-token", "bad-token", "foreign-origin"],
)
async def test_refused_handshakes_carry_their_status(
    ws_url: str, headers: dict[str, str], status: int
) -> None:
    from websockets.exceptions import InvalidStatus

    if "Origin" in headers:
        headers = {**rtkit.bearer(rtkit.token()), **headers}
    with pytest.raises(InvalidStatus) as refused:
        async with websocket_client(ws_url, headers):
            pass
    assert refused.value.response.status_code == status
