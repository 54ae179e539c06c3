"""At ``--log-level debug`` no transport logs a request or answer body: the SDK's legacy
SSE transport logged each one whole ("Received JSON: ...", "Sending message via SSE: ..."),
and the WebSocket library uvicorn runs each frame (its first and last characters), a
tool's arguments and a secret among them (y8)."""

from __future__ import annotations

import io
import logging
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp.client import Client
from mcp.client.sse import sse_client
from rtconnect import NETWORK, connect, rtserve
from rtstdio import INITIALIZE, INITIALIZED, call, env, lines, popen
from support import wait_for_port

from mcpgen.runtime import logs
from mcpgen.runtime.testing import free_port
from mcpgen.runtime.websocket import websocket_client

pytestmark = pytest.mark.timeout(120)
SECRET = "hunter2-y8-SECRET"


@pytest.fixture
def debug_log() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    level, handlers = root.level, root.handlers[:]
    logs.configure_logging("DEBUG", "text")
    stream = io.StringIO()
    root.handlers[0].setStream(stream)  # type: ignore[attr-defined]
    yield stream
    logs.configure_logging("INFO", "text")
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.mark.anyio
@pytest.mark.parametrize("transport", NETWORK)
async def test_no_body_is_logged_at_debug(transport: str, debug_log: io.StringIO) -> None:
    async with connect(transport, "legacy") as client:
        result = await client.call_tool("echo", {"text": SECRET})
    assert SECRET in str(result.content)
    # (the client runs here too: its own lines are not the server's)
    text = "\n".join(s for s in debug_log.getvalue().splitlines() if " mcp.client." not in s)
    assert "DEBUG mcp.server" in text and SECRET not in text, text


def test_no_body_is_logged_at_debug_over_stdio() -> None:
    process = popen(
        "--log-level",
        "debug",
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = process.communicate(
        lines([INITIALIZE, INITIALIZED, call(1, "echo", {"text": SECRET})]), timeout=60
    )
    assert SECRET.encode() in out
    assert b"DEBUG" in err and SECRET.encode() not in err, err.decode()[-3000:]


@pytest.mark.parametrize("transport", ["websocket", "sse"])
def test_no_body_is_logged_at_debug_by_the_server_process(transport: str, tmp_path: Path) -> None:
    """The server's own uvicorn (the in-process arms above run without it)."""
    port = free_port()
    flags = ("--transport", transport, "--port", str(port), "--log-level", "debug")
    with (tmp_path / "stderr").open("wb") as stderr:
        process = subprocess.Popen(rtserve(*flags), env=env(), stderr=stderr)
    try:
        wait_for_port(port, process)
        url = f"http://127.0.0.1:{port}"
        streams = (
            websocket_client(f"ws://127.0.0.1:{port}/ws")
            if transport == "websocket"
            else sse_client(url + "/sse")
        )

        async def echo() -> str:
            async with Client(streams, mode="legacy") as client:
                return str((await client.call_tool("echo", {"text": SECRET})).content)

        assert SECRET in anyio.run(echo)
    finally:
        process.terminate()
        process.wait(30)
    text = (tmp_path / "stderr").read_text()
    assert "DEBUG" in text and SECRET not in text, text
