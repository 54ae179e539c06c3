"""The WebSocket transport over a real socket (uvicorn in a thread): the runtime's client
(``websocket_client``) against its server, in both eras, and handshakes refused with the
HTTP status uvicorn's denial responses carry."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
from collections.abc import Iterator

import anyio
import pytest
import rtkit
from authserver import serve
from mcp.client import Client
from rtconnect import MODES, Mode, process_env, rtserve
from rtstdio import INITIALIZE, INITIALIZED, call
from support import wait_for_port

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


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("first", [False, True], ids=["after-a-message", "first-frame"])
async def test_a_binary_frame_closes_with_unsupported_data(
    ws_url: str, mode: Mode, first: bool
) -> None:
    """MCP over WebSocket is one JSON-RPC message per text frame: a binary frame ends the
    connection with 1003 (RFC 6455 "unsupported data"), not a normal closure."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed
    from websockets.typing import Subprotocol

    if mode == "legacy":
        method, params = (
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        )
    else:
        meta = {
            "io.modelcontextprotocol/protocolVersion": mode,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        method, params = "server/discover", {"_meta": meta}
    request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    headers = rtkit.bearer(rtkit.token([rtkit.READ]))
    async with connect(
        ws_url, subprotocols=[Subprotocol("mcp")], additional_headers=headers
    ) as websocket:
        if not first:
            await websocket.send(json.dumps(request))
            answer = json.loads(await websocket.recv())
            assert answer["id"] == 1 and "result" in answer, answer
        await websocket.send(b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}')
        with pytest.raises(ConnectionClosed) as closed:
            await websocket.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1003, closed.value


async def test_frames_that_are_no_message_get_the_answers_stdio_gives(ws_url: str) -> None:
    """A lone surrogate escape: -32700 (the SDK reads no such string); a request whose id is
    an object, however the name "id" is written: -32600 (the SDK: a notification, never
    answered); a method that is no string, params that are no object, a name given twice:
    -32600 with the request's id; the connection keeps serving."""
    from websockets.asyncio.client import connect
    from websockets.typing import Subprotocol

    frames = [
        ('{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":"\\ud800"}}', -32700),
        ('{"jsonrpc":"2.0","id":{},"method":"ping"}', -32600),
        ('{"jsonrpc":"2.0","\\u0069d":{},"method":"ping"}', -32600),
        ('{"jsonrpc":"2.0","i\\u0064":null,"method":"ping"}', -32600),
        ('{"jsonrpc":"2.0","id":4,"method":5}', -32600),
        ('{"jsonrpc":"2.0","id":4,"method":"ping","params":"x"}', -32600),
        ('{"jsonrpc":"2.0","id":4,"method":"ping","jsonrpc":2}', -32600),
    ]
    ids = [4 if '"id":4' in frame else None for frame, _ in frames]
    headers = rtkit.bearer(rtkit.token([rtkit.READ]))
    async with connect(
        ws_url, subprotocols=[Subprotocol("mcp")], additional_headers=headers
    ) as websocket:
        answers = []
        for frame, _ in frames:
            await websocket.send(frame)
            with anyio.fail_after(10):  # (a frame taken for a notification: no answer)
                answers.append(json.loads(await websocket.recv()))
        await websocket.send('{"jsonrpc":"2.0","id":"\\u0069","method":"ping"}')
        served = json.loads(await websocket.recv())
    assert [(a["id"], a["error"]["code"]) for a in answers] == [
        (i, c) for i, (_, c) in zip(ids, frames, strict=True)
    ]
    assert served == {"jsonrpc": "2.0", "id": "i", "result": {}}, served


async def test_a_request_before_initialize_is_told_to_initialize(ws_url: str) -> None:
    """SDK 2.3 answers a bare -32602 "Invalid request parameters"; the runtime -32600 with
    the reason (what streamable HTTP answers a request without a session, with a 400)."""
    from websockets.asyncio.client import connect
    from websockets.typing import Subprotocol

    headers = rtkit.bearer(rtkit.token([rtkit.READ]))
    async with connect(
        ws_url, subprotocols=[Subprotocol("mcp")], additional_headers=headers
    ) as websocket:
        await websocket.send('{"jsonrpc":"2.0","id":7,"method":"tools/list"}')
        with anyio.fail_after(10):
            answer = json.loads(await websocket.recv())
    assert answer["id"] == 7 and answer["error"]["code"] == -32600, answer
    assert "send initialize first" in answer["error"]["message"], answer


@pytest.mark.parametrize(("seconds", "answer"), [(1, "slept 1 s"), (30, "shut down")])
def test_sigterm_answers_the_call_in_flight_before_closing(seconds: int, answer: str) -> None:
    """SIGTERM with a call in flight on a WebSocket: the call finishes (or, past the shutdown
    timeout of 3 s, ends with an error saying why) and is answered before the close (1012),
    as over HTTP; uvicorn closed every WebSocket at once, the call unanswered."""
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    flags = ["--transport", "websocket", "--port", str(port), "--shutdown-timeout", "3"]
    env = process_env(rtkit.make_spec())
    server = subprocess.Popen(rtserve(*flags), env=env, stderr=subprocess.PIPE)
    try:
        wait_for_port(port, server)
        headers = rtkit.bearer(rtkit.token([rtkit.READ]))
        with connect(f"ws://127.0.0.1:{port}/ws", additional_headers=headers) as websocket:
            websocket.send(json.dumps(INITIALIZE))
            websocket.recv(10)
            websocket.send(json.dumps(INITIALIZED))
            websocket.send(json.dumps(call(1, "slow", {"seconds": seconds})))
            time.sleep(0.5)  # (the call is running)
            started = time.monotonic()
            server.send_signal(signal.SIGTERM)
            answered = json.loads(websocket.recv(10))
            with pytest.raises(ConnectionClosed) as closed:
                websocket.recv(10)
        assert answered["id"] == 1 and answer in json.dumps(answered), answered
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1012
        assert time.monotonic() - started < 3.5
        _, errors = server.communicate(timeout=10)
        assert b"Traceback" not in errors, errors.decode()[-2000:]
    finally:
        server.kill()
        server.wait()
