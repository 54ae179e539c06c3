"""Clients that hang up mid-call, attacked across transports and eras (see also
``test_rt_handlers.test_http_clients_that_hang_up_cancel_their_calls``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
import rtkit
from rtbridge import http_client, running
from rtstdio import cleaned_up
from test_rt_handlers import HEADERS, _call

from mcpgen.runtime import authz
from mcpgen.runtime.lifecycle import INFLIGHT

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


@pytest.fixture
def outcomes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What leaves ``run_request`` for each request (what telemetry labels error.type)."""
    seen: list[str] = []
    real = authz.run_request

    async def observed(ctx: Any, call: Any) -> Any:
        try:
            result = await real(ctx, call)
        except BaseException as exc:
            seen.append(f"{ctx.method}:{type(exc).__name__}")
            raise
        seen.append(f"{ctx.method}:ok")
        return result

    monkeypatch.setattr(authz, "run_request", observed)
    return seen


async def _open(http: Any, headers: dict[str, str]) -> dict[str, str]:
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}}  # fmt: skip
    opened = await http.post("/mcp", json=init, headers=headers)
    return {**headers, "Mcp-Session-Id": opened.headers["mcp-session-id"]}


async def _hang_up(http: Any, body: Any, headers: dict[str, str], started: Path) -> None:
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: http.post("/mcp", json=body, headers=headers))
        with anyio.fail_after(10):
            while not started.exists():
                await anyio.sleep(0.01)
        tg.cancel_scope.cancel()


async def test_same_id_on_two_sessions(tmp_path: Path, outcomes: list[str]) -> None:
    """Two sessions each run a request with id 7; one client hangs up: only its call is
    cancelled, the other session's call with the same id finishes and answers."""
    app = rtkit.app(rtkit.make_spec("none"), "http", event_store_size=0)
    headers = {**HEADERS, "MCP-Protocol-Version": "2025-11-25"}
    async with running(app), http_client(app) as http:
        a, b = await _open(http, headers), await _open(http, headers)
        kept: list[str] = []

        async def finish() -> None:
            body = _call(7, "slow", {"seconds": 1.5, "marker": str(tmp_path / "b")}, "legacy")
            kept.append((await http.post("/mcp", json=body, headers=b)).text)

        async with anyio.create_task_group() as tg:
            tg.start_soon(finish)
            while not (tmp_path / "b.started").exists():
                await anyio.sleep(0.01)
            body = _call(7, "slow", {"seconds": 60, "marker": str(tmp_path / "a")}, "legacy")
            await _hang_up(http, body, a, tmp_path / "a.started")
        await anyio.to_thread.run_sync(cleaned_up, tmp_path / "a", 10.0)
        assert (tmp_path / "a.cancelled").exists() and not (tmp_path / "b.cancelled").exists()
        assert "slept 1.5 s" in kept[0], kept
        later = await http.post("/mcp", json=_call(8, "echo", {"text": "on"}, "legacy"), headers=a)
        assert '"on"' in later.text
    assert not INFLIGHT.scopes, outcomes
    assert outcomes.count("tools/call:CancelledError") == 1, outcomes


async def test_a_2026_json_call_whose_client_left_is_a_cancelled_span(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Answered as JSON, a 2026-07-28 call has no SDK dispatcher: the client's hang-up was
    ``run_request``'s -32800 error inside the SDK's span, which said ``error.type=-32800``
    (its metric ``cancelled``). It is a cancellation now, as on every other road: the span
    says ``cancelled`` (status ERROR), and a call that ends well has no ``error.type``."""
    from opentelemetry.trace import StatusCode
    from test_telemetry_unit import traced_middleware

    from mcpgen.runtime import telemetry

    observed, exported, _ = traced_middleware(monkeypatch)
    monkeypatch.setattr(telemetry, "ACTIVE", observed)
    app = rtkit.app(rtkit.make_spec("none"), "http-json")
    headers = {**HEADERS, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call"}
    async with running(app), http_client(app) as http:
        body = _call(1, "slow", {"seconds": 60, "marker": str(tmp_path / "m")}, "2026-07-28")
        await _hang_up(http, body, {**headers, "Mcp-Name": "slow"}, tmp_path / "m.started")
        await anyio.to_thread.run_sync(cleaned_up, tmp_path / "m", 10.0)
        body = _call(2, "echo", {"text": "on"}, "2026-07-28")
        assert (
            '"on"'
            in (await http.post("/mcp", json=body, headers={**headers, "Mcp-Name": "echo"})).text
        )
    left, echo = sorted(
        exported.get_finished_spans(), key=lambda s: s.attributes["jsonrpc.request.id"]
    )
    assert left.name == "tools/call slow" and echo.name == "tools/call echo"
    assert left.attributes["error.type"] == "cancelled", dict(left.attributes)
    assert left.status.status_code == StatusCode.ERROR
    assert "error.type" not in echo.attributes and echo.status.status_code != StatusCode.ERROR
    assert not INFLIGHT.scopes
