"""Telemetry of a running server, against a real OTLP/HTTP receiver on 127.0.0.1 and an
upstream that records the headers it gets: a trace from the caller's ``_meta.traceparent``
through the SERVER span to the CLIENT span the upstream sees as its parent (both eras),
metrics flushed on SIGTERM, nothing exported and no connection when no ``OTEL_*`` is set,
one line saying what to install without the extra, ``GET /metrics`` behind the MCP auth
unless public, and no secret in any span, metric or log line."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from typing import Any

import httpx2
import otelkit as k
import pytest

from mcpgen.runtime.telemetry import BUCKETS
from mcpgen.runtime.testing import free_port

pytestmark = pytest.mark.timeout(90)
TRACE_1 = "0af7651916cd43dd8448eb211c80319c"
TRACE_2 = "1af7651916cd43dd8448eb211c80319c"
PARENT_1, PARENT_2 = "b7ad6b7169203331", "c7ad6b7169203331"
PROXY_TRACE = "2af7651916cd43dd8448eb211c80319c"  # the HTTP request's own context
JSON = {"content-type": "application/json", "accept": k.ACCEPT}
AUTHORIZED = {**JSON, "Authorization": f"Bearer {k.KEY}"}


def query_key_spec(**options: Any) -> dict[str, Any]:
    """The shop with its upstream key sent in the query (so url.full must redact it), its
    own callers authenticated with a bearer key."""
    spec = k.shop_spec(auth="bearer", **options)
    scheme = {"type": "apiKey", "in": "query", "name": "api_key"}
    spec["upstream"]["securitySchemes"] = {"apiKey": scheme}
    return spec


def stop(process: Any) -> str:
    """SIGTERM, as an orchestrator stops a server; its stderr."""
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=30)
    return str(err.decode())


@pytest.fixture(scope="module")
def traced() -> Iterator[dict[str, Any]]:
    """A server exporting to the receiver, called in both eras, then stopped by SIGTERM."""
    with k.receiver() as receiver, k.upstream() as upstream:
        port = free_port()
        env = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url,  # a base URL: /v1/... appended
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_BSP_SCHEDULE_DELAY": "50",
            "OTEL_METRIC_EXPORT_INTERVAL": "600000",  # metrics only come from the flush
            "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=test",
            "SHOP_API_BASE_URL": upstream.url + "/api",
            "SHOP_API_APIKEY": k.UPSTREAM_KEY,
            k.KEYS_ENV: k.KEY,
        }
        args = ["--transport", "http", "--port", str(port), "--log-format", "json"]
        process = k.start(query_key_spec(), args, env)
        try:
            url = k.wait_ready(process, port) + "/mcp"
            with httpx2.Client(timeout=30) as client:
                session = k.handshake_session(client, url, AUTHORIZED)
                params = {
                    "name": "list_items",
                    "arguments": {"limit": 3},
                    "_meta": {"traceparent": f"00-{TRACE_1}-{PARENT_1}-01"},
                }
                proxied = {**session, "traceparent": f"00-{PROXY_TRACE}-{PARENT_2}-01"}
                first = k.reply(k.rpc(client, url, "tools/call", params, proxied, 5))
                meta = {"traceparent": f"00-{TRACE_2}-{PARENT_2}-01"}
                second = k.modern_call(client, url, "get_item", {"itemId": 99}, AUTHORIZED, meta)
        finally:
            log = stop(process)
        yield {
            "receiver": receiver,
            "upstream": upstream,
            "log": log,
            "results": (first, second),
        }


def by_name(spans: list[dict[str, Any]], name: str, trace: str) -> dict[str, Any]:
    [found] = [s for s in spans if s["name"] == name and s["trace_id"] == trace]
    return found


def test_a_trace_runs_from_the_callers_meta_to_the_upstream_in_both_eras(
    traced: dict[str, Any],
) -> None:
    first, second = traced["results"]
    assert not first["result"]["isError"] and second["result"]["isError"]
    spans = k.spans(traced["receiver"])
    server = by_name(spans, "tools/call list_items", TRACE_1)
    assert server["kind"] == 2 and server["parent"] == PARENT_1  # SERVER, on _meta
    assert server["links"] == [PROXY_TRACE]  # the HTTP request's context: a link
    attributes = server["attributes"]
    assert attributes["mcp.method.name"] == "tools/call"
    assert attributes["gen_ai.tool.name"] == "list_items"
    assert attributes["network.transport"] == "tcp"
    assert attributes["mcp.protocol.version"] == k.HANDSHAKE
    assert len(attributes["mcp.session.id"]) >= 16  # the handshake era has a session
    assert server["resource"]["service.name"] == "shop"  # the server's name by default
    assert server["resource"]["deployment.environment.name"] == "test"

    client = by_name(spans, "GET", TRACE_1)
    assert client["kind"] == 3 and client["parent"] == server["span_id"]  # CLIENT
    assert client["attributes"]["http.request.method"] == "GET"
    assert client["attributes"]["http.response.status_code"] == 200
    assert client["attributes"]["server.address"] == "127.0.0.1"
    assert client["attributes"]["url.full"].endswith("/api/items?limit=3&api_key=REDACTED")
    # the upstream saw the CLIENT span as its parent: injected inside it
    [(_, headers, _)] = [r for r in traced["upstream"].received if "items?" in r[0]]
    sent = {name.lower(): value for name, value in headers.items()}
    assert sent["traceparent"] == f"00-{TRACE_1}-{client['span_id']}-01"

    modern = by_name(spans, "tools/call get_item", TRACE_2)
    assert modern["parent"] == PARENT_2
    assert modern["attributes"]["mcp.protocol.version"] == k.MODERN
    assert "mcp.session.id" not in modern["attributes"]  # 2026-07-28 has no session
    assert modern["attributes"]["error.type"] == "tool_error" and modern["status"] == 2
    upstream_404 = by_name(spans, "GET", TRACE_2)
    assert upstream_404["parent"] == modern["span_id"]
    assert upstream_404["attributes"]["error.type"] == "404"


def test_metrics_are_flushed_on_sigterm_with_the_convention_buckets(
    traced: dict[str, Any],
) -> None:
    metrics = k.metrics(traced["receiver"])
    operations = metrics["mcp.server.operation.duration"]
    calls = [p for p in operations if p["attributes"]["mcp.method.name"] == "tools/call"]
    assert {p["attributes"].get("gen_ai.tool.name") for p in calls} == {"list_items", "get_item"}
    assert [p["attributes"].get("error.type") for p in calls if p["count"]] == [None, "tool_error"]
    assert all(p["bounds"] == list(BUCKETS) and p["unit"] == "s" for p in operations)
    sessions = metrics["mcp.server.session.duration"]  # the session closed at shutdown
    assert sum(p["count"] for p in sessions) == 1
    assert all("mcp.session.id" not in p["attributes"] for p in operations + sessions)


def test_no_secret_in_any_span_metric_or_log_line(traced: dict[str, Any]) -> None:
    exported = b"".join(body for _, _, body in traced["receiver"].received)
    for secret in (k.UPSTREAM_KEY, k.KEY):  # the API's key, the MCP caller's key
        assert exported and secret.encode() not in exported
        assert secret not in traced["log"]
    log = traced["log"]
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    assert lines and all("message" in line for line in lines)


def test_off_by_default_no_exporter_and_no_connection() -> None:
    try:
        default = k.serving(k._Otlp, ("127.0.0.1", 4318))  # the exporters' default endpoint
        receiver = default.__enter__()
    except OSError:
        pytest.skip("port 4318 is in use here")
    try:
        with k.upstream() as upstream:
            port = free_port()
            env = {"SHOP_API_BASE_URL": upstream.url + "/api", "SHOP_API_APIKEY": "k" * 8}
            process = k.start(k.shop_spec(), ["--transport", "http", "--port", str(port)], env)
            try:
                url = k.wait_ready(process, port) + "/mcp"
                with httpx2.Client(timeout=30) as client:
                    answer = k.modern_call(client, url, "list_items", {}, JSON, {})
                assert not answer["result"]["isError"]
                assert upstream.received  # the call went through
                assert "traceparent" not in {h.lower() for h in upstream.received[0][1]}
            finally:
                log = stop(process)
        assert receiver.connections == 0 and not receiver.received
        assert "exported" not in log
    finally:
        default.__exit__(None, None, None)


def test_without_the_extra_the_server_runs_and_says_once_what_to_install() -> None:
    with k.receiver() as receiver, k.upstream() as upstream:
        port = free_port()
        env = {
            "HIDE_OTEL_SDK": "1",
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url,
            "SHOP_API_BASE_URL": upstream.url + "/api",
            "SHOP_API_APIKEY": "k" * 8,
        }
        process = k.start(k.shop_spec(), ["--transport", "http", "--port", str(port)], env)
        try:
            base = k.wait_ready(process, port)
            with httpx2.Client(timeout=30) as client:
                answer = k.modern_call(client, base + "/mcp", "list_items", {}, JSON, {})
                assert not answer["result"]["isError"]
                assert client.get(base + "/metrics").status_code == 404
        finally:
            log = stop(process)
        assert log.count("'otel' extra") == 1, log
        assert receiver.connections == 0


@pytest.mark.parametrize("access", ["protected", "public"])
def test_get_metrics_is_behind_the_mcp_authentication_unless_public(access: str) -> None:
    with k.upstream() as upstream:
        port = free_port()
        env = {
            k.KEYS_ENV: k.KEY,
            "SHOP_API_BASE_URL": upstream.url + "/api",
            "SHOP_API_APIKEY": "k" * 8,
        }
        spec = k.shop_spec(auth="bearer", metrics=None if access == "protected" else "public")
        process = k.start(spec, ["--transport", "http", "--port", str(port)], env)
        try:
            base = k.wait_ready(process, port)
            authorized = AUTHORIZED
            with httpx2.Client(timeout=30) as client:
                k.modern_call(client, base + "/mcp", "list_items", {}, authorized, {})
                anonymous = client.get(base + "/metrics")
                assert client.post(base + "/mcp", content=b"{}", headers=JSON).status_code == 401
                shown = client.get(base + "/metrics", headers=authorized)
        finally:
            stop(process)
    assert anonymous.status_code == (401 if access == "protected" else 200)
    assert shown.headers["content-type"].startswith("text/plain; version=0.0.4")
    text = shown.text
    assert "# TYPE mcp_server_operation_duration_seconds histogram" in text
    [bucket] = [
        line
        for line in text.splitlines()
        if line.startswith("mcp_server_operation_duration_seconds_bucket{")
        and 'mcp_method_name="tools/call"' in line
        and 'le="+Inf"' in line
    ]
    assert bucket.endswith(" 1") and 'gen_ai_tool_name="list_items"' in bucket
    assert k.KEY not in text


@pytest.mark.parametrize("propagators", [None, "b3", "b3, baggage"])
def test_stdio_traces_with_the_pipe_transport_and_flushes_at_eof(propagators: str | None) -> None:
    """A propagator not installed (``b3``) once made OpenTelemetry raise inside the SDK's
    ``import mcp``: no server. It is dropped with one warning; the others named are used
    (``baggage`` alone: the caller's ``traceparent`` is not), none left, the default."""
    with k.receiver() as receiver:
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_METRICS_EXPORTER": "none"}
        if propagators is not None:
            env["OTEL_PROPAGATORS"] = propagators
        process = k.start(k.shop_spec(), ["--transport", "stdio"], env)
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": k.HANDSHAKE,
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        }
        lines = [init, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
        meta = {"traceparent": f"00-{TRACE_1}-{PARENT_1}-01"}
        lines.append({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}})
        payload = "".join(json.dumps(line) + "\n" for line in lines).encode()
        _, err = process.communicate(payload, timeout=30)  # EOF after the list: it exits
        spans = k.spans(receiver)
        assert not any(path == "/v1/metrics" for path, _, _ in receiver.received)
    log = err.decode()
    assert log.count("b3 not installed") == (0 if propagators is None else 1), log
    [listed] = [s for s in spans if s["name"] == "tools/list"]
    assert (listed["trace_id"] == TRACE_1) is (propagators != "b3, baggage")
    assert listed["attributes"]["network.transport"] == "pipe"
    assert "mcp.session.id" not in listed["attributes"]


def test_a_collector_away_neither_shows_its_key_nor_holds_a_sigterm() -> None:
    """An OTLP exporter logs a failed export with the HTTP client's error, whose text has
    the endpoint's URL (a collector key in its query): now its type only. With logs
    exported those lines were exported too, each failure a new record to export: a loop
    that never let the flush on SIGTERM end."""
    import time

    key = "collector-key-0451"
    with k.upstream() as upstream:
        port = free_port()
        env = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{free_port()}/otlp?api_key={key}",
            "OTEL_LOGS_EXPORTER": "otlp",
            "OTEL_EXPORTER_OTLP_TIMEOUT": "2",
            "OTEL_BSP_SCHEDULE_DELAY": "50",
            "SHOP_API_BASE_URL": upstream.url + "/api",
            "SHOP_API_APIKEY": "k" * 8,
        }
        process = k.start(k.shop_spec(), ["--transport", "http", "--port", str(port)], env)
        try:
            url = k.wait_ready(process, port) + "/mcp"
            with httpx2.Client(timeout=30) as client:
                k.modern_call(client, url, "list_items", {}, JSON, {})
            time.sleep(1.5)  # an export failed, and was retried
            started = time.monotonic()
            log = stop(process)
            assert time.monotonic() - started < 20, log[-2000:]
        finally:
            process.kill()
    assert "Transient error ConnectionError" in log and key not in log, log[-2000:]
