"""What a stateless streamable HTTP server promises a client, and keeps: raw requests to the
conformance example (every capability on) run with ``--stateless``, with SSE or JSON answers.

In the handshake era a connection lives one request. Resource subscriptions are refused
there, so ``resources.subscribe`` is not advertised; a list change a handler announces rides
its own request's SSE answer, as do log messages, so ``listChanged`` and ``logging`` are
advertised with SSE answers and not with JSON ones (which carry nothing but the result). On 2026-07-28 ``subscriptions/listen`` is a
request like any other, so every capability stays advertised."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from support import running

from mcpgen.runtime.testing import free_port

EXAMPLE = Path(__file__).resolve().parent.parent / "generated_examples" / "conformance"
MODERN = "2026-07-28"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
HELLO = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"},
}


@pytest.fixture(scope="module", params=["sse", "json"])
def server(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(EXAMPLE / "src")}
    answers = ["--json-response"] if request.param == "json" else ["--no-json-response"]
    command = [sys.executable, "-m", "conformance_mcp", "--transport", "http"]
    with running([*command, "--port", str(port), "--stateless", *answers], port, env):
        yield request.param, f"http://127.0.0.1:{port}/mcp"


def post(url: str, method: str, params: dict[str, Any], version: str) -> list[dict[str, Any]]:
    """The messages of one POST's answer (the lines of an SSE stream, or one JSON body)."""
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": version}
    if version == MODERN:
        headers["Mcp-Method"] = method
        params = {**params, "_meta": MODERN_META}
        if method == "tools/call":
            headers["Mcp-Name"] = params["name"]
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    answer = httpx2.post(url, json=message, headers=headers, timeout=30)
    assert answer.status_code == 200, answer.text
    if answer.headers["content-type"].startswith("application/json"):
        return [answer.json()]
    lines = answer.text.splitlines()
    return [json.loads(line[5:]) for line in lines if line.startswith("data:") and line[5:].strip()]


def test_a_handshake_client_is_promised_only_what_reaches_it(server: tuple[str, str]) -> None:
    answers, url = server
    (hello,) = post(url, "initialize", HELLO, HELLO["protocolVersion"])
    capabilities = hello["result"]["capabilities"]
    assert capabilities["resources"]["subscribe"] is False  # resources/subscribe is refused
    streamed = answers == "sse"
    for kind in ("tools", "resources", "prompts"):
        assert capabilities[kind]["listChanged"] is streamed, capabilities
    assert ("logging" in capabilities) is streamed  # a JSON answer carries no log message
    messages = post(url, "tools/call", {"name": "test_trigger_tool_change"}, "2025-11-25")
    methods = [m.get("method") for m in messages]
    expected = ["notifications/tools/list_changed", None] if streamed else [None]
    assert methods == expected, messages  # the notification comes before the result
    assert messages[-1]["result"]["isError"] is False
    messages = post(url, "tools/call", {"name": "test_tool_with_logging"}, "2025-11-25")
    logged = [m for m in messages if m.get("method") == "notifications/message"]
    assert len(logged) == (3 if streamed else 0), messages


def test_a_2026_client_is_promised_what_listen_carries(server: tuple[str, str]) -> None:
    url = server[1]
    (discovered,) = post(url, "server/discover", {}, MODERN)
    capabilities = discovered["result"]["capabilities"]
    assert capabilities["resources"] == {"listChanged": True, "subscribe": True}
    assert capabilities["tools"] == capabilities["prompts"] == {"listChanged": True}
