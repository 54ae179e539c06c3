"""Generated clients against real server processes: the calculator example's typed client
over streamable HTTP, and the conformance example (which offers legacy SSE too) over SSE, in both
protocol eras (the typed client connects by URL, with its own HTTP client); a transport a
package does not offer is refused on its command line. Every transport and era of the
runtime itself is tested in process in tests/runtime (rtconnect's matrix)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import free_port, running

EXAMPLES = Path(__file__).resolve().parent.parent / "generated_examples"
EXAMPLE = {"http": EXAMPLES / "calculator", "sse": EXAMPLES / "conformance"}
PACKAGE = {"http": "calculator_mcp", "sse": "conformance_mcp"}

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
                result = await c.call_tool("test_simple_text", {})
                assert "simple text response" in result.content[0].text, result
    print("ok")

anyio.run(main, sys.argv[1], int(sys.argv[2]))
"""


@pytest.fixture(params=["http", "sse"])
def server(request: pytest.FixtureRequest) -> Iterator[tuple[str, int, dict[str, str]]]:
    transport: str = request.param
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(EXAMPLE[transport] / "src")}
    command = [
        sys.executable,
        "-m",
        PACKAGE[transport],
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


@pytest.mark.parametrize("transport", ["sse", "websocket"])
def test_a_transport_not_offered_is_refused(transport: str) -> None:
    """The calculator offers stdio and streamable HTTP only (``transports.offer`` by
    default): its command line refuses the others, by flag and by variable, in one line."""
    env = {**os.environ, "PYTHONPATH": str(EXAMPLE["http"] / "src")}
    command = [sys.executable, "-m", "calculator_mcp", "--transport", transport]
    flag = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert flag.returncode == 2, flag.stderr
    assert f"--transport: invalid choice: '{transport}'" in flag.stderr
    assert flag.stderr.rstrip().endswith(("'stdio', 'http')", "stdio, http)")), flag.stderr
    variable = subprocess.run(
        command[:3],
        env={**env, "CALCULATOR_TRANSPORT": transport},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert variable.returncode == 1 and "Traceback" not in variable.stderr, variable.stderr
    assert f"CALCULATOR_TRANSPORT: this server does not offer '{transport}'" in variable.stderr
