"""The calculator example's generated typed client against its real server process over
streamable HTTP and legacy SSE, in both protocol eras (the typed client connects by URL,
with its own HTTP client). Every transport and era of the runtime itself is tested in
process in tests/runtime (rtconnect's matrix)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import free_port, running

EXAMPLE = Path(__file__).resolve().parent.parent / "generated_examples" / "calculator"

PROBE = """
import anyio, sys
from calculator_mcp.client import CalculatorClient
from mcp.client import Client
from mcp.client.sse import sse_client

async def main(transport, port):
    for mode in ("legacy", "2026-07-28"):
        if transport == "http":
            async with CalculatorClient.http(f"http://127.0.0.1:{port}/mcp", mode=mode) as c:
                assert (await c.add(numbers=[1.5, 2.5])).sum == 4.0
                assert (await c.divide(a=7, b=2)).quotient == 3.5
                assert c.client.protocol_version == ("2025-11-25" if mode == "legacy" else mode)
        else:
            async with Client(sse_client(f"http://127.0.0.1:{port}/sse"), mode=mode) as c:
                result = await c.call_tool("add", {"numbers": [1, 2]})
                assert result.structured_content == {"sum": 3.0}, result
    print("ok")

anyio.run(main, sys.argv[1], int(sys.argv[2]))
"""


@pytest.fixture(params=["http", "sse"])
def server(request: pytest.FixtureRequest) -> Iterator[tuple[str, int, dict[str, str]]]:
    transport: str = request.param
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(EXAMPLE / "src")}
    command = [
        sys.executable,
        "-m",
        "calculator_mcp",
        "--transport",
        transport,
        "--port",
        str(port),
    ]
    with running(command, port, env):
        yield transport, port, env


@pytest.mark.slow
def test_typed_client_over_http_transports(server: tuple[str, int, dict[str, str]]) -> None:
    transport, port, env = server
    done = subprocess.run(
        [sys.executable, "-c", PROBE, transport, str(port)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-3000:]
