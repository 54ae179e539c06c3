"""``GET /metrics`` x scopes: with ``hideUnauthorizedTools`` the metrics name tools (and
prompts) a caller without their scopes must not learn of, so only a caller that may see
every tool and prompt reads them; without the flag any authenticated caller does."""

from __future__ import annotations

from typing import Any

import pytest
import rtkit
from rtbridge import http_client, running

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
MODERN = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "0"},
}


async def metrics_seen_by(hide: bool, scopes: list[str]) -> tuple[int, str]:
    spec = rtkit.make_spec("oauth", hide=hide)
    async with running(rtkit.app(spec, json_response=True)) as app, http_client(app) as http:
        await metrics_called(http)
        shown = await http.get("/metrics", headers=rtkit.bearer(rtkit.token(scopes)))
        return shown.status_code, shown.text


async def metrics_called(http: Any) -> None:
    """One tools/call of read_notes, so that the metrics have a point."""
    headers = {
        **rtkit.bearer(rtkit.token(rtkit.SCOPES)),
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "read_notes",
    }
    params = {"name": "read_notes", "arguments": {}, "_meta": MODERN}
    called = await http.post("/mcp", json={**CALL, "params": params}, headers=headers)
    assert called.status_code == 200 and "first" in called.text, called.text


async def test_metrics_name_hidden_tools_only_to_a_caller_that_sees_them_all() -> None:
    status, text = await metrics_seen_by(True, [])
    assert status == 403 and "read_notes" not in text, (status, text[:300])
    status, text = await metrics_seen_by(True, [rtkit.READ])  # write_note is still hidden
    assert status == 403 and "read_notes" not in text
    status, text = await metrics_seen_by(True, rtkit.SCOPES)
    assert status == 200 and 'gen_ai_tool_name="read_notes"' in text


async def test_without_hiding_any_authenticated_caller_reads_the_metrics() -> None:
    status, text = await metrics_seen_by(False, [])
    assert status == 200 and 'gen_ai_tool_name="read_notes"' in text


async def test_public_metrics_are_rate_limited_by_address() -> None:
    """A scraper without a credential is limited as an anonymous caller (it was not)."""
    spec = rtkit.make_spec("oauth")
    spec["observability"] = {"metrics": "public"}
    app = rtkit.app(spec, json_response=True, rate_limit=0.1, rate_burst=2)
    async with running(app) as app, http_client(app) as http:
        statuses = [(await http.get("/metrics")).status_code for _ in range(3)]
        health = await http.get("/healthz")
    assert statuses == [200, 200, 429] and health.status_code == 200


@pytest.mark.parametrize("workers", [1, 2])
async def test_each_worker_labels_its_own_metrics(workers: int) -> None:
    """Under ``--workers 2`` each worker keeps its own counts and a scrape reaches one of
    them: unlabelled, a counter seemed to go back (2, 4, 4, 2: a reset to Prometheus)."""
    import os

    spec = rtkit.make_spec("oauth")
    spec["observability"] = {"metrics": "public"}
    app = rtkit.app(spec, json_response=True, workers=workers, stateless=True)
    async with running(app) as app, http_client(app) as http:
        await metrics_called(http)
        text = (await http.get("/metrics")).text
    lines = [line for line in text.splitlines() if line.startswith("mcp_server_")]
    label = f'worker="{os.getpid()}"'
    assert lines and all((label in line) is (workers > 1) for line in lines), text
