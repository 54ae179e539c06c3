"""Telemetry pieces in process: when it is on, which exporters the ``OTEL_*`` variables name,
bounded metric labels, the Prometheus text, trace ids in JSON log lines, and the manifest's
``observability`` reaching ``_spec.json`` and the generated ``otel`` extra."""

from __future__ import annotations

import asyncio
import json
import logging
from types import SimpleNamespace
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider

from mcpgen.runtime import logs, prometheus, telemetry
from mcpgen.runtime.telemetry import BUCKETS, Telemetry, configured
from mcpgen.runtime.telemetry_sdk import exporters

pytestmark = pytest.mark.timeout(30)


def test_on_only_when_an_otel_variable_is_set_and_the_sdk_is_not_disabled() -> None:
    assert not configured({"PATH": "/bin", "SHOP_PORT": "1"})
    assert configured({"OTEL_SERVICE_NAME": "x"})
    assert not configured({"OTEL_EXPORTER_OTLP_ENDPOINT": ""})  # compose's ${VAR:-}
    assert not configured(
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}
    )


def test_stdio_without_otel_builds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(telemetry, "ACTIVE", None)
    assert telemetry.setup({"server": {"name": "s"}}, "stdio", {}) is None
    assert telemetry.ACTIVE is None


def test_exporters_follow_the_otel_variables(caplog: pytest.LogCaptureFixture) -> None:
    [otlp] = exporters("traces", {})
    assert type(otlp).__module__.startswith("opentelemetry.exporter.otlp.proto.http")
    assert exporters("traces", {"OTEL_TRACES_EXPORTER": "none"}) == []
    assert exporters("logs", {}) == []  # logs only when OTEL_LOGS_EXPORTER asks
    kinds = exporters("metrics", {"OTEL_METRICS_EXPORTER": "console,otlp"})
    assert [type(e).__name__ for e in kinds] == ["ConsoleMetricExporter", "OTLPMetricExporter"]
    with caplog.at_level(logging.WARNING):
        grpc = {"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}
        if not exporters("traces", grpc):  # the gRPC exporter is not an otel extra
            assert "opentelemetry-exporter-otlp-proto-grpc" in caplog.text


def telemetry_for(names: list[str]) -> Telemetry:
    made = Telemetry(None, True, False, "http")
    made.names = frozenset(names)
    return made


def labels_of(made: Telemetry, ctx: Any, version: str, error: str | None) -> dict[str, str]:
    return made._labelled(ctx.method, ctx.params, version, error)


def test_metric_labels_stay_bounded_whatever_a_client_sends() -> None:
    made = telemetry_for(["add"])
    call = SimpleNamespace(method="tools/call", params={"name": "add"})
    assert labels_of(made, call, "2025-11-25", None)["gen_ai.tool.name"] == "add"
    invented = SimpleNamespace(method="tools/call", params={"name": "x" * 40})
    assert "gen_ai.tool.name" not in labels_of(made, invented, "2025-11-25", "-32602")
    odd = SimpleNamespace(method="made/up-" + "y" * 30, params=None)
    labels = labels_of(made, odd, "2025-11-25", "-32601")
    assert labels["mcp.method.name"] == "_OTHER"
    assert labels["error.type"] == labels["rpc.response.status_code"] == "-32601"


def test_calls_with_the_same_labels_count_in_one_point() -> None:
    made = telemetry_for(["add"])
    observe = made.middleware()
    call = SimpleNamespace(
        method="tools/call",
        params={"name": "add"},
        protocol_version="2026-07-28",
        session=None,
        request=None,
    )

    async def answer(ctx: Any) -> dict[str, Any]:
        return {"content": [], "isError": False}

    async def twice() -> None:
        await observe(call, answer)
        await observe(call, answer)

    asyncio.run(twice())
    labels = made._labelled("tools/call", {"name": "add"}, "2026-07-28", None)
    [(attributes, _, _, count)] = made.operations.points.values()
    assert (attributes, count) == (labels, 2)


def test_prometheus_text_of_a_histogram() -> None:
    made = telemetry_for([])
    attributes = {"mcp.method.name": "tools/call", "network.transport": "tcp"}
    made.operations.record(0.03, attributes)
    made.operations.record(7, attributes)
    assert made.metrics is not None
    text = prometheus.render(made.metrics)
    name = "mcp_server_operation_duration_seconds"
    assert f"# TYPE {name} histogram" in text
    labels = 'mcp_method_name="tools/call",network_transport="tcp"'
    assert f'{name}_bucket{{{labels},le="0.02"}} 0' in text
    assert f'{name}_bucket{{{labels},le="0.05"}} 1' in text
    assert f'{name}_bucket{{{labels},le="10"}} 2' in text
    assert f'{name}_bucket{{{labels},le="+Inf"}} 2' in text
    assert f"{name}_count{{{labels}}} 2" in text
    assert f"{name}_sum{{{labels}}} 7.03" in text
    assert text.endswith("\n")


def test_the_histograms_get_metrics_shows_keep_what_the_sdk_keeps() -> None:
    reader = InMemoryMetricReader()
    meter = MeterProvider(metric_readers=[reader]).get_meter("t")
    sdk = meter.create_histogram("d", unit="s", explicit_bucket_boundaries_advisory=BUCKETS)
    made = telemetry_for([])
    labels = [{"mcp.method.name": m, "network.transport": "tcp"} for m in ("a", "b", "c")]
    for i, value in enumerate([0.01, 0.0, 0.5, 2.5, 300, 301, 0.011, 1e-9, 60, 7] * 3):
        made.operations.record(value, labels[i % 2 if i < 10 else i % 3])
        sdk.record(value, labels[i % 2 if i < 10 else i % 3])
    assert made.metrics == [made.operations]  # sessions: nothing recorded, not shown
    [metric] = reader.get_metrics_data().resource_metrics[0].scope_metrics[0].metrics
    kept = list(made.operations.points.values())
    expected = [
        [dict(p.attributes), list(p.bucket_counts), p.sum, p.count] for p in metric.data.data_points
    ]
    assert kept == expected
    assert made.operations.bounds == metric.data.data_points[0].explicit_bounds


def test_past_its_limit_of_label_sets_a_histogram_keeps_one_overflow_point() -> None:
    made = telemetry_for([])
    for i in range(made.operations.OVERFLOW_AFTER + 2):
        made.operations.record(0.1, {"mcp.method.name": str(i)})
    assert len(made.operations.points) == made.operations.OVERFLOW_AFTER + 1
    assert made.metrics is not None
    assert 'otel_metric_overflow="True",le="0.1"} 2' in prometheus.render(made.metrics)


def test_prometheus_label_values_are_escaped() -> None:
    assert prometheus._labels({"a.b": 'x"y\\z\nw'}) == '{a_b="x\\"y\\\\z\\nw"}'


def test_json_log_lines_carry_the_current_trace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(telemetry, "ACTIVE", SimpleNamespace(tracing=True))
    formatter = logs.JsonFormatter()
    record = logging.LogRecord("t", logging.INFO, __file__, 1, "hello", None, None)
    assert "trace_id" not in json.loads(formatter.format(record))  # no span current
    tracer = TracerProvider().get_tracer("test")  # not the global provider
    with tracer.start_as_current_span("work") as span:
        line: dict[str, Any] = json.loads(formatter.format(record))
    context = span.get_span_context()
    assert line["trace_id"] == f"{context.trace_id:032x}"
    assert line["span_id"] == f"{context.span_id:016x}"


def test_the_manifest_says_who_reads_metrics_and_the_package_has_an_otel_extra() -> None:
    from mcpgen.pipeline import load_document
    from mcpgen.render.spec import spec_data

    text = "mcpgen: 1\nserver: {name: watched}\nobservability: {metrics: public}\n"
    manifest = _model(text, load_document)
    assert manifest.observability.metrics == "public"
    assert spec_data(manifest)["observability"] == {"metrics": "public"}
    assert [r.split(">")[0] for r in manifest.extras["otel"]] == [
        "opentelemetry-sdk",
        "opentelemetry-exporter-otlp-proto-http",
    ]
    default = _model("mcpgen: 1\nserver: {name: watched}\n", load_document)
    assert "observability" not in spec_data(default)  # protected: nothing written


def _model(text: str, load_document: Any) -> Any:
    from pathlib import Path

    from mcpgen.load import load_text

    loaded = load_document(load_text(text, "m.yaml", Path(".")), strict=True)
    assert loaded.manifest is not None, loaded.problems
    return loaded.manifest


def traced_in_memory(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Telemetry on with spans kept in memory: the exporter that holds them."""
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exported = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exported))
    made = telemetry_for([])
    made.tracing, made.tracer = True, provider.get_tracer("test")
    monkeypatch.setattr(telemetry, "ACTIVE", made)
    return exported


def test_each_operation_of_search_and_code_mode_is_a_span_under_the_tool(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import anyio
    import mcp_types as types

    from mcpgen.runtime.metatools import Operations

    exported = traced_in_memory(monkeypatch)

    async def dispatch(name: str, arguments: Any, context: Any) -> types.CallToolResult:
        failed = name == "repos_delete"
        return types.CallToolResult(content=[], is_error=failed)

    operations = Operations.__new__(Operations)
    operations.entries = {"repos_get": {}, "repos_delete": {}}
    operations.table = SimpleNamespace(dispatch=dispatch)  # type: ignore[assignment]

    async def execute() -> None:
        with telemetry.ACTIVE.tracer.start_as_current_span("tools/call execute"):
            await operations.dispatch("repos_get", {}, SimpleNamespace())  # type: ignore[arg-type]
            await operations.dispatch("repos_delete", {}, SimpleNamespace())  # type: ignore[arg-type]

    anyio.run(execute)
    spans = {s.name: s for s in exported.get_finished_spans()}
    outer = spans["tools/call execute"]
    got, deleted = spans["execute_tool repos_get"], spans["execute_tool repos_delete"]
    assert got.parent is not None and got.parent.span_id == outer.context.span_id
    assert got.attributes is not None and got.attributes["gen_ai.tool.name"] == "repos_get"
    assert deleted.attributes is not None and deleted.attributes["error.type"] == "tool_error"


def test_task_methods_are_labelled_and_only_calls_and_prompts_name_a_target() -> None:
    made = telemetry_for(["add"])
    for method in ("tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "tasks/update"):
        task = SimpleNamespace(method=method, params={"taskId": "t" * 32})
        assert labels_of(made, task, "2025-11-25", None)["mcp.method.name"] == method
    named = SimpleNamespace(method="made/up", params={"name": "add"})
    assert set(labels_of(made, named, "2025-11-25", None)) == {
        "mcp.method.name",
        "mcp.protocol.version",
        "network.transport",
    }


def test_a_client_cannot_make_the_spans_kept_for_export_huge(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The SDK names a span after the method and tool a client sends and records its request
    id: each up to the 4 MB a request may hold, kept in the export queue (2048 spans)."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from mcpgen.runtime import telemetry_sdk

    made: list[Any] = []
    monkeypatch.setattr(trace, "get_tracer_provider", trace.ProxyTracerProvider)
    monkeypatch.setattr(trace, "set_tracer_provider", made.append)
    environ = {"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"}
    telemetry_sdk.build({"server": {"name": "s"}}, "stdio", environ, True)
    exported = InMemorySpanExporter()
    made[0].add_span_processor(SimpleSpanProcessor(exported))
    huge = "x" * 100_000
    attributes = {"gen_ai.tool.name": huge, "jsonrpc.request.id": huge}
    with (
        made[0]
        .get_tracer("mcp-python-sdk")
        .start_as_current_span("tools/call " + huge, attributes=attributes)
    ):
        pass
    [span] = exported.get_finished_spans()
    assert len(span.name) <= 256 and span.name.startswith("tools/call x")
    assert all(len(str(value)) <= 4096 for value in (span.attributes or {}).values())


def traced_middleware(
    monkeypatch: pytest.MonkeyPatch, transport: str = "http"
) -> tuple[Telemetry, Any, Any]:
    """The server's telemetry over HTTP (its spans kept in memory) and ``both(ctx, handler)``:
    a message through the SDK's span middleware, then ours, then ``handler``."""
    from mcp.server._otel import OpenTelemetryMiddleware
    from mcp.shared import _otel
    from opentelemetry import trace
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    made: list[Any] = []
    monkeypatch.setattr(trace, "get_tracer_provider", trace.ProxyTracerProvider)
    monkeypatch.setattr(trace, "set_tracer_provider", made.append)
    environ = {"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"}
    monkeypatch.setattr(telemetry, "ACTIVE", None)
    observed = telemetry.setup({"server": {"name": "s"}}, transport, environ)
    assert observed is not None
    ours = observed.middleware()
    exported = InMemorySpanExporter()
    made[0].add_span_processor(SimpleSpanProcessor(exported))
    monkeypatch.setattr(_otel, "_tracer", made[0].get_tracer("mcp-python-sdk"))
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: made[0])  # as if set

    async def both(ctx: Any, handler: Any) -> Any:
        return await OpenTelemetryMiddleware()(ctx, lambda ctx: ours(ctx, handler))

    return observed, exported, both


def request(method: str, params: dict[str, Any]) -> Any:
    return SimpleNamespace(
        session=None,
        request=None,
        meta=None,
        request_id=1,
        method=method,
        params=params,
        protocol_version="2025-11-25",
    )


def test_a_long_name_warns_once_and_a_long_error_is_cut_in_the_span_only(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Two requests naming a 100 KB tool, through the SDK's span middleware and ours: the
    SDK's "attribute value exceeds max length" warning is logged once, not per request;
    the span's status (the MCPError's message, "Unknown tool: <name>") is cut, and the
    client's answer is the same whole message as without tracing."""
    import anyio
    from mcp.shared.exceptions import MCPError

    from mcpgen.runtime import telemetry_sdk

    monkeypatch.setattr(telemetry_sdk, "SEEN", set())  # as in a new process
    _, exported, both = traced_middleware(monkeypatch)
    huge = "x" * 100_000
    ctx = request("tools/call", {"name": huge})

    async def unknown(ctx: Any) -> Any:
        raise MCPError(-32602, "Unknown tool: " + huge)

    with caplog.at_level(logging.WARNING):
        for _ in range(2):
            with pytest.raises(MCPError) as raised:
                anyio.run(both, ctx, unknown)
            assert raised.value.error.message == "Unknown tool: " + huge  # as without tracing
    warned = [r for r in caplog.records if "exceeds max length" in r.getMessage()]
    assert len(warned) == 1, [r.getMessage() for r in warned]
    assert warned[0].getMessage().endswith("(logged once per process)")
    spans = exported.get_finished_spans()
    assert len(spans) == 2
    for span in spans:
        description = span.status.description or ""
        assert description.startswith("Unknown tool: xxx") and len(description) <= 4100
        assert span.attributes is not None and len(str(span.attributes["gen_ai.tool.name"])) == 4096


def test_a_clients_baggage_and_tracestate_are_not_forwarded_to_the_upstream() -> None:
    """A client's ``params._meta`` becomes the call's context (the SDK ``extract``s it, W3C
    baggage and tracestate too), and the upstream request's headers are ``inject``ed from
    it: whatever baggage or vendor state a client chose (``tenant=admin``) reached the
    wrapped API as a ``baggage`` or ``tracestate`` header, even after a redirect to another
    origin. The trace context still goes."""
    import anyio
    from opentelemetry import context as otel_context
    from opentelemetry.propagate import extract

    from mcpgen.runtime.telemetry_spans import upstream_span

    trace = "0af7651916cd43dd8448eb211c80319c"
    meta = {
        "traceparent": f"00-{trace}-b7ad6b7169203331-01",
        "tracestate": "vendor=tenant-admin",
        "baggage": "tenant=admin",
    }
    sent: dict[str, str] = {}

    async def send(headers: dict[str, str]) -> Any:
        sent.update(headers)
        return SimpleNamespace(status_code=200)

    tracer = TracerProvider().get_tracer("test")
    token = otel_context.attach(extract(meta))
    try:
        anyio.run(upstream_span, tracer, send, "GET", "http://api.invalid/x", {})
    finally:
        otel_context.detach(token)
    assert sent["traceparent"].startswith(f"00-{trace}-")
    assert "baggage" not in sent and "tracestate" not in sent, sent


def test_a_cancelled_request_is_an_error_and_a_read_names_its_resource(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A request the client cancels (or leaves) never answers: the SDK's span let the
    cancellation pass unmarked and the duration was counted as a success. A
    ``resources/read`` span carries ``mcp.resource.uri`` (Conditionally Required), without
    a credential-like query value."""
    import anyio
    from opentelemetry.trace import StatusCode

    observed, exported, both = traced_middleware(monkeypatch)

    async def slow(ctx: Any) -> Any:
        await anyio.sleep(10)

    async def read(ctx: Any) -> Any:
        return {"contents": []}

    async def main() -> None:
        with anyio.move_on_after(0.05):
            await both(request("tools/call", {"name": "add"}), slow)
        await both(request("resources/read", {"uri": "notes://a?token=s3cret&v=1"}), read)

    anyio.run(main)
    cancelled, read_span = exported.get_finished_spans()
    assert cancelled.attributes is not None and cancelled.attributes["error.type"] == "cancelled"
    assert cancelled.status.status_code == StatusCode.ERROR
    assert read_span.attributes is not None
    assert read_span.attributes["mcp.resource.uri"] == "notes://a?token=REDACTED&v=1"
    first, _ = observed.operations.points.values()  # [labels, buckets, sum, count]
    assert first[0]["error.type"] == "cancelled"


def test_a_read_that_fails_names_its_resource_without_the_query_credential(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The span's status is the error's message, which names the URI the client sent: its
    credential-like query value is left out there too, as from ``mcp.resource.uri`` (the
    client's answer keeps the whole message)."""
    import anyio
    from mcp.shared.exceptions import MCPError

    _, exported, both = traced_middleware(monkeypatch)
    uri = "notes://a?token=s3cret&v=1"

    async def missing(ctx: Any) -> Any:
        raise MCPError(-32602, f"Resource not found: {uri}")

    with pytest.raises(MCPError) as raised:
        anyio.run(both, request("resources/read", {"uri": uri}), missing)
    assert raised.value.error.message == f"Resource not found: {uri}"
    (span,) = exported.get_finished_spans()
    assert span.status.description == "Resource not found: notes://a?token=REDACTED&v=1"


def test_a_call_whose_client_left_is_cancelled_in_every_era(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A client that hangs up: where the SDK's dispatcher runs the request its cancellation
    passes (``cancelled``); an error -32800 (request cancelled), however raised, is the
    same event and gets the same label on the duration metric."""
    import anyio
    from mcp.shared.exceptions import MCPError

    from mcpgen.runtime.telemetry import REQUEST_CANCELLED

    observed, _, both = traced_middleware(monkeypatch)

    async def left(ctx: Any) -> Any:
        raise MCPError(REQUEST_CANCELLED, "Request cancelled: the client disconnected")

    async def main() -> None:
        with pytest.raises(MCPError):
            await both(request("tools/call", {"name": "add"}), left)

    anyio.run(main)
    (point,) = observed.operations.points.values()
    assert point[0]["error.type"] == "cancelled"


@pytest.mark.parametrize(
    ("transport", "protocol"), [("http", "http"), ("sse", "http"), ("websocket", "websocket")]
)
def test_the_network_protocol_is_the_transports(
    monkeypatch: pytest.MonkeyPatch, transport: str, protocol: str
) -> None:
    import anyio

    _, exported, both = traced_middleware(monkeypatch, transport)

    async def listed(ctx: Any) -> Any:
        return {"tools": []}

    anyio.run(both, request("tools/list", {}), listed)
    [span] = exported.get_finished_spans()
    assert span.attributes is not None
    assert span.attributes["network.protocol.name"] == protocol
    assert span.attributes["network.transport"] == "tcp"


def test_url_full_hides_a_query_credential_whose_name_is_encoded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An API keyed by a query parameter whose name the URL encodes (``client id`` is sent
    as ``client%20id``): the CLIENT span's ``url.full`` showed the key to the collector."""
    import anyio
    from wirekit import operations, recorder, upstream

    exported = traced_in_memory(monkeypatch)
    schemes = {"key": {"type": "apiKey", "in": "query", "name": "client id"}}
    op = {"operationId": "send", "responses": {"200": {"description": "ok"}}}
    data = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {"/x": {"get": {**op, "security": [{"key": []}]}}},
        "components": {"securitySchemes": schemes},
    }
    with recorder() as rec:
        result = anyio.run(upstream(rec.url, schemes).call, operations(data)["send"], {})
    assert not result.is_error and rec.seen[0].target == "/x?client%20id=secret-key"
    [span] = exported.get_finished_spans()
    assert span.attributes is not None
    assert str(span.attributes["url.full"]).endswith("/x?client%20id=REDACTED")


@pytest.mark.parametrize(
    ("documented", "added", "shown"),
    [
        ("", "/KEY12345", "/REDACTED"),
        ("/v1", "/KEY12345", "/REDACTED/v1"),
        ("/v1", "/tenant/KEY12345", "/tenant/REDACTED/v1"),
        ("/v1", "/staging/shop", "/staging/shop/v1"),
    ],
)
def test_a_key_in_the_base_urls_path_is_not_shown(
    monkeypatch: pytest.MonkeyPatch, documented: str, added: str, shown: str
) -> None:
    """A deployment's base URL with a key in its path (``https://host/KEY12345/v1``, as bot
    and webhook APIs take it) showed the key in ``url.full`` and in the tool error a client
    reads; a segment the documented base URL lacks that may be a key (``wire.keylike``, as
    answers are scrubbed) is ``REDACTED``, as are the values of the query parameters it adds
    (``?cid=``: whatever its name). The rest of the path is shown: a gateway's prefix
    (``/staging/shop``) was hidden too, and the user could not see which call failed."""
    import anyio
    from wirekit import operations, recorder, upstream

    exported = traced_in_memory(monkeypatch)
    op = {"operationId": "send", "responses": {"200": {"description": "ok"}}}
    data = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {"/x": {"get": op}},
    }
    with recorder() as rec:
        rec.answer(404, "text/plain", b"no such item")
        api = upstream("https://api.example.test" + documented + "?v=1")
        base = rec.url + added + documented + "?v=1&cid=KEY456"
        monkeypatch.setenv(api.settings["baseUrlEnv"], base)
        result = anyio.run(api.call, operations(data)["send"], {})
    assert rec.seen[0].target == added + documented + "/x?v=1&cid=KEY456"
    text = result.content[0].text  # type: ignore[union-attr]
    url = f"{rec.url}{shown}/x?v=1&cid=REDACTED"
    assert result.is_error and f"(GET {url})" in text and "KEY" not in text, text
    [span] = exported.get_finished_spans()
    assert span.attributes is not None and span.attributes["url.full"] == url


def test_the_version_of_a_handshake_is_the_one_agreed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before ``initialize`` commits, a connection's version is a default (stateless HTTP:
    2025-03-26, a new session: the latest): the initialize span and metric, and the
    session's duration, were labelled with it, not with the version the client got."""
    import contextlib

    import anyio

    observed, exported, both = traced_middleware(monkeypatch)
    connection = SimpleNamespace(
        session_id="s1",
        state={},
        exit_stack=contextlib.ExitStack(),
        protocol_version="2025-03-26",
    )
    ctx = request("initialize", {"protocolVersion": "2025-06-18"})
    ctx.session, ctx.protocol_version = SimpleNamespace(_connection=connection), "2025-03-26"

    async def initialize(ctx: Any) -> Any:
        connection.protocol_version = "2025-06-18"  # as the SDK commits it
        return {"protocolVersion": "2025-06-18", "capabilities": {}}

    anyio.run(both, ctx, initialize)
    connection.exit_stack.close()
    [span] = exported.get_finished_spans()
    assert span.attributes is not None and span.attributes["mcp.protocol.version"] == "2025-06-18"
    for histogram in (observed.operations, observed.sessions):
        [(labels, *_)] = histogram.points.values()
        assert labels["mcp.protocol.version"] == "2025-06-18", histogram.name


def test_the_sdks_span_runs_only_where_a_span_can_come_of_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The SDK's tracing middleware (first in every server's list) is skipped when no tracer
    provider is set and ``_meta`` carries no trace context (its span would do nothing);
    with a trace context its span, the client's, is current while the request runs."""
    import anyio
    from mcp.server._otel import OpenTelemetryMiddleware
    from opentelemetry import trace

    ran: list[str] = []

    class Sdk(OpenTelemetryMiddleware):
        async def __call__(self, ctx: Any, call_next: Any) -> Any:
            ran.append(ctx.method)
            return await super().__call__(ctx, call_next)

    monkeypatch.setattr(telemetry, "ACTIVE", None)
    server = SimpleNamespace(middleware=[Sdk()])
    telemetry.install(server)

    async def handler(ctx: Any) -> Any:
        return f"{trace.get_current_span().get_span_context().trace_id:032x}"

    traced = "00-" + "ab" * 16 + "-" + "cd" * 8 + "-01"
    calls = [request("tools/call", {}), request("tools/list", {})]
    calls[1].meta = {"traceparent": traced}
    answers = [anyio.run(server.middleware[0], ctx, handler) for ctx in calls]
    assert ran == ["tools/list"] and answers == ["0" * 32, "ab" * 16]
    monkeypatch.setattr(trace, "get_tracer_provider", TracerProvider)  # one is set
    anyio.run(server.middleware[0], request("ping", {}), handler)
    assert ran == ["tools/list", "ping"]


@pytest.mark.parametrize("provider", [False, True])
def test_a_trace_context_that_is_not_text_is_ignored_not_an_internal_error(
    monkeypatch: pytest.MonkeyPatch, provider: bool
) -> None:
    """``_meta: {"baggage": [5]}`` made the propagators raise AttributeError in every
    request's middleware, with or without tracing: an internal error and a traceback
    logged per request. Keys that are not text are dropped; a valid ``traceparent`` stays."""
    import anyio
    from mcp.server._otel import OpenTelemetryMiddleware
    from opentelemetry import trace

    monkeypatch.setattr(telemetry, "ACTIVE", None)
    if provider:
        monkeypatch.setattr(trace, "get_tracer_provider", TracerProvider)
    server = SimpleNamespace(middleware=[OpenTelemetryMiddleware()])
    telemetry.install(server)

    async def handler(ctx: Any) -> Any:
        return f"{trace.get_current_span().get_span_context().trace_id:032x}", ctx.meta

    traced = "00-" + "ab" * 16 + "-" + "cd" * 8 + "-01"
    for meta in ({"baggage": [5]}, {"tracestate": {"a": 1}, "traceparent": traced, "x": 1}):
        ctx = request("tools/list", {})
        ctx.meta = meta
        trace_id, seen = anyio.run(server.middleware[0], ctx, handler)
        assert trace_id == ("ab" * 16 if "traceparent" in meta else "0" * 32)
        assert "baggage" not in seen and "tracestate" not in seen
        assert seen.get("x") == meta.get("x")


def test_a_tasks_failed_tool_result_is_a_tool_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """``tasks/result`` answers the task's ``CallToolResult``: one with ``isError`` is
    ``error.type=tool_error`` as the same call's answer without a task is."""
    import anyio
    from opentelemetry.trace import StatusCode

    observed, exported, both = traced_middleware(monkeypatch)

    async def failed(ctx: Any) -> Any:
        return {"content": [{"type": "text", "text": "HTTP 404"}], "isError": True}

    anyio.run(both, request("tasks/result", {"taskId": "t1"}), failed)
    [span] = exported.get_finished_spans()
    assert span.attributes is not None and span.attributes["error.type"] == "tool_error"
    assert span.status.status_code == StatusCode.ERROR
    [(labels, *_)] = observed.operations.points.values()
    assert labels["error.type"] == "tool_error"


def test_an_upstream_attempt_cut_off_is_a_timeout_or_cancelled_not_a_success() -> None:
    """The answer's timeout (``anyio.fail_after`` around the attempt), a cancelled call and
    a tool's timeout reach the CLIENT and operation spans as a cancellation, not an
    ``Exception``: the span ended with no ``error.type`` and no status, as a success."""
    import anyio
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import StatusCode

    from mcpgen.runtime.telemetry_spans import operation_span, upstream_span

    exported = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exported))
    tracer = provider.get_tracer("test")

    async def stalled(headers: dict[str, str]) -> Any:
        await anyio.sleep(10)

    async def main() -> None:
        with pytest.raises(TimeoutError), anyio.fail_after(0.05):
            await upstream_span(tracer, stalled, "GET", "http://api.invalid/x", {})
        async with anyio.create_task_group() as group:
            group.start_soon(upstream_span, tracer, stalled, "GET", "http://api.invalid/y", {})
            await anyio.sleep(0.05)
            group.cancel_scope.cancel()
        with pytest.raises(TimeoutError), anyio.fail_after(0.05):  # a tool's timeout
            await operation_span(tracer, "repos_get", lambda: anyio.sleep(10))

    anyio.run(main)
    spans = exported.get_finished_spans()
    errors = [s.attributes["error.type"] for s in spans if s.attributes]
    assert errors == ["timeout", "cancelled", "timeout"]
    assert all(s.status.status_code == StatusCode.ERROR for s in spans)


@pytest.mark.parametrize(
    ("traces", "metrics", "said"),
    [
        ("none", "none", "OpenTelemetry on: no exporter"),
        ("console", "none", "OpenTelemetry on: traces exported"),
        ("none", "console", "OpenTelemetry on: metrics exported"),
        ("console", "console", "OpenTelemetry on: traces and metrics exported"),
    ],
)
def test_the_start_line_says_what_is_exported(
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    traces: str,
    metrics: str,
    said: str,
) -> None:
    """With every exporter set to ``none`` the server exports nothing: its start line said
    "traces and metrics exported" whenever an ``OTEL_*`` variable turned telemetry on."""
    from opentelemetry import trace

    from mcpgen.runtime import telemetry_sdk

    monkeypatch.setattr(trace, "get_tracer_provider", trace.ProxyTracerProvider)
    monkeypatch.setattr(trace, "set_tracer_provider", lambda provider: None)
    environ = {"OTEL_TRACES_EXPORTER": traces, "OTEL_METRICS_EXPORTER": metrics}
    monkeypatch.setattr(telemetry, "ACTIVE", None)
    with caplog.at_level(logging.INFO, logger=telemetry_sdk.logger.name):
        observed = telemetry.setup({"server": {"name": "s"}}, "stdio", environ)
    assert observed is not None
    if observed.meter_provider is not None:  # (its reader's thread)
        observed.meter_provider.shutdown()
    assert [r.getMessage() for r in caplog.records if "OpenTelemetry on" in r.message] == [said]


def test_the_start_line_without_otel_variables_says_only_metrics_are_kept(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """No ``OTEL_*`` variable, an HTTP transport, the extra installed: the histograms are
    kept for ``GET /metrics`` and nothing else; the line said "OpenTelemetry on: no
    exporter", at odds with "off until an OTEL_* variable is set"."""
    from mcpgen.runtime import telemetry_sdk

    monkeypatch.setattr(telemetry, "ACTIVE", None)
    with caplog.at_level(logging.INFO, logger=telemetry_sdk.logger.name):
        observed = telemetry.setup({"server": {"name": "s"}}, "http", {})
    assert observed is not None and observed.meter_provider is None and observed.flushers == []
    assert [r.getMessage() for r in caplog.records if "OpenTelemetry" in r.message] == [
        "OpenTelemetry: no OTEL_* variable set, no spans; metrics on GET /metrics"
    ]
