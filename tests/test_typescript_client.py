"""The official TypeScript SDK client (npm ``@modelcontextprotocol/sdk``) against the
calculator example, over stdio and streamable HTTP: another implementation's view of the
generated server. Installs the SDK into tests/ts_client/node_modules when it is missing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import TS_CLIENT, running, ts_node

from mcpgen.runtime.testing import free_port

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "generated_examples" / "calculator"


@pytest.fixture(scope="module")
def node() -> str:
    return ts_node()


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(EXAMPLE / "src")}


def run_client(node: str, *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [node, "client.mjs", *args],
        cwd=TS_CLIENT,
        env=env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    data: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return data


def check(data: dict[str, Any]) -> None:
    assert data["server"]["name"] == "calculator"
    assert data["tools"] == ["add", "divide", "convert_units", "weather_current", "random_fact"]
    assert data["result"]["structuredContent"] == {"sum": 4}
    assert data["result"].get("isError") is not True
    assert data["divideByZero"]["isError"] is True


def test_typescript_client_over_stdio(node: str) -> None:
    check(run_client(node, "stdio", sys.executable, "calculator_mcp"))


@pytest.fixture
def http_server() -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "calculator_mcp", "--transport", "http", "--port", str(port)]
    with running(command, port, env()):
        yield f"http://127.0.0.1:{port}/mcp"


def test_typescript_client_over_streamable_http(node: str, http_server: str) -> None:
    data = run_client(node, "http", http_server)
    check(data)
    assert data["protocolVersion"] == "2025-11-25"
