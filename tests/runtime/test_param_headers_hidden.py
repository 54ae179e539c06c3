"""2026-07-28 ``Mcp-Param-*`` headers x discovery: the SDK checks them against the tool's
input schema before any handler runs, so a tool hidden from the caller (its scope under
``hideUnauthorizedTools``, or disabled) must have no schema there: its 400 "header is
missing but the request body's 'text' argument is present" told it from a tool that does
not exist, and named its arguments."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest
import rtkit

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]
MODERN = "2026-07-28"
HEADED = {"type": "object", "properties": {"text": {"type": "string", "x-mcp-header": "Text"}}}


def spec() -> dict[str, Any]:
    made = rtkit.make_spec(hide=True)
    for tool in made["tools"]:
        if tool["definition"]["name"] in ("write_note", "echo"):
            tool["definition"]["inputSchema"] = HEADED
            tool["definition"].pop("outputSchema", None)
        if tool["definition"]["name"] == "echo":
            tool["enabled"] = False
    return made


async def call(http: httpx2.AsyncClient, name: str, scopes: list[str]) -> Any:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
    }
    params = {"name": name, "arguments": {"text": "x"}, "_meta": meta}
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
        **rtkit.bearer(rtkit.token(scopes)),
    }
    response = await http.post("/mcp", content=json.dumps(message), headers=headers)
    return response.json()["error"]


async def test_a_hidden_tool_is_unknown_before_its_headers_are_checked() -> None:
    app = rtkit.app(spec(), json_response=True)
    transport = httpx2.ASGITransport(app=app)
    client = httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1")
    async with app.router.lifespan_context(app), client as http:
        absent = await call(http, "no_such_tool", [])
        assert absent["message"] == "Unknown tool: no_such_tool"
        for name in ("write_note", "echo"):  # no scope; disabled
            assert (await call(http, name, []))["message"] == f"Unknown tool: {name}"
        allowed = await call(http, "write_note", [rtkit.WRITE])  # checked for its caller
        assert allowed["code"] == -32020 and "Mcp-Param-Text" in allowed["message"]
