"""Telemetry exported on stdio, attacked as a confused user (round 23, m5).

``OTEL_TRACES_EXPORTER=console`` (and its metrics and logs twins) is how the OpenTelemetry
docs suggest looking at spans. While a stdio server serves, fd 1 writes to stderr, so a
console exporter's output never reaches the client; but the flush at the end ran once fd
1 was the wire again: about 480 lines of pretty-printed spans and metrics followed the
last answer on stdout, where the client reads nothing but JSON-RPC messages.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sec_harness import HANDSHAKE, WORKTREE, Built, build

pytestmark = [pytest.mark.security, pytest.mark.timeout(120)]

CONSOLE = {
    "OTEL_TRACES_EXPORTER": "console",
    "OTEL_METRICS_EXPORTER": "console",
    "OTEL_LOGS_EXPORTER": "console",
}
TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


@pytest.fixture(scope="module")
def calculator(workdir: Path) -> Built:
    manifest = (WORKTREE / "manifests" / "calculator.yaml").read_text(encoding="utf-8")
    return build(workdir / "calculator_exporters", manifest, "calculator_mcp")


def test_console_exporters_never_write_to_the_wire(calculator: Built) -> None:
    """A session on stdio with console exporters, its client closing stdin at the end:
    stdout holds the answers and nothing else; the spans went to stderr."""
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": HANDSHAKE,
                "capabilities": {},
                "clientInfo": {"name": "attacker", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "add",
                "arguments": {"numbers": [1, 2]},
                "_meta": {"traceparent": TRACEPARENT},
            },
        },
    ]
    done = subprocess.run(
        [sys.executable, "-m", calculator.package],
        input="".join(json.dumps(m) + "\n" for m in messages).encode(),
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(calculator.src), **CONSOLE},
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    lines = done.stdout.decode().splitlines()
    assert [json.loads(line).get("id") for line in lines] == [0, 1], lines[:20]
    assert TRACEPARENT.split("-")[1] in done.stderr.decode()  # the span was exported
