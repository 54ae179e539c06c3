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
from support import running

from mcpgen.runtime.testing import free_port

EXAMPLES = Path(__file__).resolve().parent.parent / "generated_examples"
EXAMPLE = {"http": EXAMPLES / "calculator", "sse": EXAMPLES / "conformance"}
PACKAGE = {"http": "calculator_mcp", "sse": "conformance_mcp"}

PROBE = """
import anyio, sys
from mcp.client import Client
from mcp.client.sse import sse_client

async def main(transport, port):
    for mode in ("legacy", "2026-07-28"):
        if transport == "http":  # only the calculator is on PYTHONPATH
            from calculator_mcp.client import CalculatorClient

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
    assert variable.returncode == 2 and "Traceback" not in variable.stderr, variable.stderr
    assert f"CALCULATOR_TRANSPORT: this server does not offer '{transport}'" in variable.stderr


SOLO = """\
mcpgen: 1
server: {name: solo, description: A desktop-only server.}
transports: {offer: [stdio]}
tools:
  - name: ping
    description: Reply.
    input: {type: object, properties: {}}
"""
PONG = """\
from __future__ import annotations

from ... import ToolReturn
from ...models import PingInput


async def handle(args: PingInput) -> ToolReturn:
    return "pong"
"""


@pytest.mark.slow
def test_a_stdio_only_package_carries_no_http_stack_and_passes_its_tests(tmp_path: Path) -> None:
    """``offer: [stdio]``: no HTTP module nor uvicorn, ``--transport http`` refused, and the
    project's own tests (memory and stdio) pass."""
    from click.testing import CliRunner

    from mcpgen.cli import main

    (tmp_path / "m.yaml").write_text(SOLO, "utf-8")
    out = tmp_path / "out"
    built = CliRunner().invoke(main, ["build", str(tmp_path / "m.yaml"), "-o", str(out)])
    assert built.exit_code == 0, built.output
    runtime = {p.stem for p in (out / "src" / "solo_mcp" / "_runtime").glob("*.py")}
    assert {"server", "stdio", "cli"} <= runtime
    assert not runtime & {"http_app", "http_guard", "serve", "h11guard", "websocket", "auth"}
    assert "uvicorn" not in (out / "pyproject.toml").read_text("utf-8")
    (out / "src" / "solo_mcp" / "handlers" / "tools" / "ping.py").write_text(PONG, "utf-8")
    env = {**os.environ, "PYTHONPATH": str(out / "src")}
    refused = subprocess.run(
        [sys.executable, "-m", "solo_mcp", "--transport", "http"],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert refused.returncode == 2 and "invalid choice: 'http'" in refused.stderr
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--stubs=fail", "tests",
         "-k", "not type_checks"],
        cwd=out, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout, done.stdout[-2000:]
