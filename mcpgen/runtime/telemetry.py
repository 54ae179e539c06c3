"""OpenTelemetry (the ``otel`` extra): traces, metrics and logs on the MCP semantic conventions,
exported when an ``OTEL_*`` variable is set; on HTTP, ``GET /metrics`` shows this process's
metrics. ``Telemetry.middleware`` describes the SDK's span of each message and records durations.
"""

from __future__ import annotations

import copy
import importlib.util
import logging
import os
import time
from asyncio import CancelledError
from bisect import bisect_left
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from .errors import redact_query

logger = logging.getLogger(__name__)
BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)
_SESSION_KEY = "mcpgen.telemetry.session"
# served with MCP tasks (tasks.py), absent from the SDK's method maps
TASK_METHODS = frozenset(
    ("tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "tasks/update")
)
NAMED = ("tools/call", "prompts/get")  # the methods whose params name a tool or prompt
TOOL_RESULTS = ("tools/call", "tasks/result")  # answered with a CallToolResult
TRACE_KEYS = frozenset(("traceparent", "tracestate", "baggage"))  # params._meta's (SEP-414)
URI_METHODS = ("resources/read", "resources/subscribe", "resources/unsubscribe")
REQUEST_CANCELLED = -32800  # LSP's RequestCancelled: the SDK's answer to a cancelled request


def configured(environ: Mapping[str, str]) -> bool:
    """Whether the deployment asks for telemetry: any non-empty ``OTEL_*`` variable (a
    compose file's ``${OTEL_...:-}`` is not a request), unless ``OTEL_SDK_DISABLED`` is true."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return any(key.startswith("OTEL_") and value.strip() for key, value in environ.items())


class Telemetry:
    """The providers of this process and the instruments a generated server records."""

    def __init__(self, meter_provider: Any, local: bool, tracing: bool, transport: str) -> None:
        from opentelemetry import trace

        self.meter_provider = meter_provider  # the SDK's when metrics are exported, else None
        # what GET /metrics shows, in the order of their first measurement (None on stdio)
        self.metrics: list[Histogram] | None = [] if local else None
        self.tracing = tracing
        self.tracer = trace.get_tracer(__name__) if tracing else None
        self.transport = transport
        self.network = "pipe" if transport == "stdio" else "tcp"
        self.flushers: list[Callable[[], Any]] = []
        self.operations = Histogram(
            "mcp.server.operation.duration",
            "Duration of an MCP request or notification as the server saw it",
            self,
        )
        self.sessions = Histogram(
            "mcp.server.session.duration", "Duration of an MCP session as the server saw it", self
        )
        self.names: frozenset[str] = frozenset()  # tool and prompt names that may be labels
        self.uris: Callable[[str], str] = redact_query  # a resource URI as spans show it
        self.methods = known_methods()

    def middleware(self) -> Any:
        """A server middleware: runs inside the SDK's span of each inbound message."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import INVALID_PARAMS, CallToolResult
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS
        from opentelemetry.trace import INVALID_SPAN, get_current_span
        from pydantic import ValidationError

        operations, network, tracing, uris = self.operations, self.network, self.tracing, self.uris
        protocol = "websocket" if self.transport == "websocket" else "http"
        perf_counter, labelled = time.perf_counter, self._labelled

        async def observe(ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
            start = perf_counter()
            method, version = ctx.method, ctx.protocol_version
            span: Any = INVALID_SPAN
            if tracing:
                span = get_current_span()
                if span.is_recording():
                    _describe(span, ctx, network, protocol, uris)
            if version not in SUPPORTED_PROTOCOL_VERSIONS:
                version = "_OTHER"  # a label, bounded like the method
            if version not in MODERN_PROTOCOL_VERSIONS:
                connection = getattr(ctx.session, "_connection", None)
                self._track_session(connection, SUPPORTED_PROTOCOL_VERSIONS)
            error: str | None = None
            try:
                result = await call_next(ctx)
            except MCPError as exc:  # (the span's copy of its message is cut: telemetry_sdk)
                code = exc.error.code  # -32800, however raised, is "cancelled" as everywhere
                error = "cancelled" if code == REQUEST_CANCELLED else str(code)  # (run_request)
                raise
            except CancelledError:  # the client cancelled it or left: no answer, no success
                error = _failed(span, "cancelled")  # (the SDK's span lets it pass unmarked)
                raise
            except ValidationError:
                error = str(INVALID_PARAMS)
                raise
            except Exception as exc:
                error = type(exc).__qualname__
                raise
            else:
                if method in TOOL_RESULTS and _tool_error(result, CallToolResult):
                    error = _failed(span, "tool_error")  # (the SDK's marks tools/call only)
                if method == "initialize" and isinstance(result, dict):
                    agreed = result.get("protocolVersion")  # (stateless HTTP: the
                    if agreed in SUPPORTED_PROTOCOL_VERSIONS:  # connection's is a default)
                        version = agreed
                        if span.is_recording():
                            span.set_attribute("mcp.protocol.version", agreed)
                return result
            finally:
                operations.record(
                    perf_counter() - start, labelled(method, ctx.params, version, error)
                )

        return observe

    def _labelled(
        self, method: str, params: Any, version: str, error: str | None
    ) -> dict[str, str]:
        """Metric attributes: bounded values only (a method or tool name a client made up
        becomes ``_OTHER`` or is left out), never a session id."""
        if method not in self.methods:
            method = "_OTHER"
        name = params.get("name") if params and method in NAMED else None
        labels = {
            "mcp.method.name": method,
            "mcp.protocol.version": version,
            "network.transport": self.network,
        }
        if isinstance(name, str) and name in self.names:
            labels["gen_ai.tool.name" if method == "tools/call" else "gen_ai.prompt.name"] = name
        if error is not None:
            labels["error.type"] = error
            if error.lstrip("-").isdigit():
                labels["rpc.response.status_code"] = error
        return labels

    def _track_session(self, connection: Any, known: Any) -> None:
        """Time a handshake-era connection (None: none) from its first message to its close
        (a stateless HTTP POST is no session); ``known``: the supported versions."""
        state = getattr(connection, "state", None)
        if state is None or _SESSION_KEY in state:
            return
        if self.transport == "http" and not getattr(connection, "session_id", None):
            return
        state[_SESSION_KEY] = started = time.perf_counter()

        def closed() -> None:  # the version agreed, not the one before initialize
            version = getattr(connection, "protocol_version", None)
            labels = {
                "mcp.protocol.version": version if version in known else "_OTHER",
                "network.transport": self.network,
            }
            self.sessions.record(time.perf_counter() - started, labels)

        connection.exit_stack.callback(closed)


def known_methods() -> frozenset[str]:
    """The methods a metric or span may name, the spec's (any other becomes "_OTHER": a
    client cannot grow the label set or the span names)."""
    from mcp_types.methods import SPEC_CLIENT_METHODS, SPEC_CLIENT_NOTIFICATION_METHODS

    return frozenset(SPEC_CLIENT_METHODS | SPEC_CLIENT_NOTIFICATION_METHODS | TASK_METHODS)


def bounded(ctx: Any, methods: frozenset[str], names: frozenset[str]) -> Any:
    """``ctx`` as the SDK's span should see it: the SDK names its span ``METHOD NAME`` from
    whatever method and ``params.name`` a client sends. A method the spec does not define
    becomes ``_OTHER``, and a name that is no tool or prompt of this server is left out
    (``tools/call``, no ``gen_ai.tool.name``): random names make no new span names."""
    params, method = ctx.params, ctx.method if ctx.method in methods else "_OTHER"
    name = params.get("name") if params else None
    if name is not None and (method not in NAMED or not isinstance(name, str) or name not in names):
        params = {key: value for key, value in params.items() if key != "name"}
    elif method == ctx.method:
        return ctx
    shown = copy.copy(ctx)
    shown.method, shown.params = method, params
    return shown


class Histogram:
    """Durations in seconds kept in this process for ``GET /metrics`` (``prometheus``): the
    cumulative buckets the SDK's in-memory reader kept, without its work per measurement
    (about 8 µs: attributes cleaned and hashed, locks, exemplars), and past OVERFLOW_AFTER
    attribute sets one overflow point, as its cardinality limit; recorded with the SDK's
    instrument too when metrics are exported."""

    OVERFLOW_AFTER = 2000
    OVERFLOW: Mapping[str, Any] = {"otel.metric.overflow": True}

    def __init__(self, name: str, description: str, owner: Telemetry) -> None:
        self.name, self.description, self.bounds = name, description, BUCKETS
        self.points: dict[frozenset[tuple[str, Any]], list[Any]] = {}  # [labels, buckets, sum, n]
        self.shown, self.exported = owner.metrics, None
        if owner.meter_provider is not None:
            self.exported = owner.meter_provider.get_meter(__name__).create_histogram(
                name,
                unit="s",
                description=description,
                explicit_bucket_boundaries_advisory=list(BUCKETS),
            )

    def record(self, amount: float, attributes: Mapping[str, Any]) -> None:
        if self.exported is not None:
            self.exported.record(amount, attributes)
        if self.shown is None:
            return
        key = frozenset(attributes.items())
        point = self.points.get(key)
        if point is None:
            if len(self.points) >= self.OVERFLOW_AFTER:
                attributes, key = self.OVERFLOW, frozenset(self.OVERFLOW.items())
            new = [dict(attributes), [0] * (len(BUCKETS) + 1), 0, 0]
            point = self.points.setdefault(key, new)
            if self not in self.shown:
                self.shown.append(self)
        point[1][bisect_left(BUCKETS, amount)] += 1
        point[2] += amount
        point[3] += 1


def _describe(span: Any, ctx: Any, network: str, protocol: str, uris: Callable[..., str]) -> None:
    """The SDK's span of ``ctx``'s message: where it came from, on which session."""
    span.set_attribute("network.transport", network)
    if network == "tcp":
        span.set_attribute("network.protocol.name", protocol)
    session_id = getattr(getattr(ctx.session, "_connection", None), "session_id", None)
    if session_id:
        span.set_attribute("mcp.session.id", session_id)
    uri = ctx.params.get("uri") if ctx.method in URI_METHODS and ctx.params else None
    if isinstance(uri, str):
        span.set_attribute("mcp.resource.uri", uris(uri))
    # The HTTP request's own ``traceparent`` (a proxy's, say) is a link of the MCP span,
    # whose parent is the one in ``params._meta`` (as the conventions say).
    headers = getattr(ctx.request, "headers", None)
    if headers is None or "traceparent" not in headers:
        return
    from opentelemetry.propagate import extract
    from opentelemetry.trace import get_current_span

    linked = get_current_span(extract(dict(headers))).get_span_context()
    if linked.is_valid:
        span.add_link(linked)


def _failed(span: Any, error: str) -> str:
    """``error`` as the span's ``error.type``, its status ERROR."""
    if span.is_recording():
        from opentelemetry.trace import StatusCode

        span.set_attribute("error.type", error)
        span.set_status(StatusCode.ERROR)
    return error


def _tool_error(result: Any, model: type[Any]) -> bool:
    """Whether a tools/call result goes out as a tool error (as the SDK's span decides)."""
    if isinstance(result, dict):  # (first: a model's isinstance costs more)
        return result.get("isError") is True
    return isinstance(result, model) and bool(result.is_error)


ACTIVE: Telemetry | None = None
_WARNED: list[bool] = []


def setup(
    spec: Mapping[str, Any], transport: str, environ: Mapping[str, str] | None = None
) -> Telemetry | None:
    """Telemetry for this process, made once (None when off). ``transport`` decides
    ``network.transport`` and whether ``GET /metrics`` keeps metrics in process."""
    global ACTIVE
    if ACTIVE is not None:
        return ACTIVE
    environ = os.environ if environ is None else environ
    exporting = configured(environ)
    disabled = environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true"
    if disabled or (not exporting and transport == "stdio"):
        return None  # (disabled: everything off, GET /metrics included)
    find = importlib.util.find_spec  # (the SDK not imported: the parent first, or it raises)
    if find("opentelemetry") is None or find("opentelemetry.sdk") is None:
        if exporting and not _WARNED:
            _WARNED.append(True)
            logger.warning(
                "OTEL_* variables are set but OpenTelemetry is not installed: no telemetry. "
                "Install this package's 'otel' extra (pip install '<package>[otel]'), that is "
                "opentelemetry-sdk and opentelemetry-exporter-otlp-proto-http"
            )
        return None
    from .telemetry_sdk import build

    meter_provider, flushers = build(spec, transport, environ, exporting)
    ACTIVE = Telemetry(meter_provider, transport != "stdio", exporting, transport)
    ACTIVE.flushers = flushers
    return ACTIVE


def install(server: Any) -> None:
    """Add the metrics and span attributes to ``server`` when telemetry is on (right after
    the SDK's own tracing middleware, so its span is current). That one runs only where a
    span can come of it: a tracer provider is set, or ``_meta`` carries a trace context
    (current while the request runs); else its span does nothing, for ~80k instructions.
    The SDK's span and the metrics name only the server's tools and prompts (``bounded``)."""
    from mcp.shared._otel import extract_trace_context  # (SDK 2.3's, as its middleware)
    from opentelemetry import trace

    sdk_spans, methods = server.middleware[0], known_methods()
    tables = (getattr(server, "tools", None), getattr(server, "prompts", None))
    names = frozenset(name for table in tables if table is not None for name in table.by_name)

    async def when_traced(ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        meta = ctx.meta  # a trace key that is not text ("baggage": [5]) made extract raise
        traced = meta and not TRACE_KEYS.isdisjoint(meta)  # (one C call when none is there)
        if traced and any(not isinstance(meta.get(key, ""), str) for key in TRACE_KEYS):
            ctx.meta = {k: v for k, v in meta.items() if k not in TRACE_KEYS or isinstance(v, str)}
        unset = isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
        if unset and extract_trace_context(ctx.meta) is None:
            return await call_next(ctx)
        if (shown := bounded(ctx, methods, names)) is ctx:
            return await sdk_spans(ctx, call_next)
        return await sdk_spans(shown, lambda _: call_next(ctx))  # (the rest sees ``ctx``)

    server.middleware[0] = when_traced
    if ACTIVE is not None:
        ACTIVE.names = names
        resources = getattr(server, "resources", None)
        ACTIVE.uris = resources.shown if resources and resources.secret else redact_query
        server.middleware.insert(1, ACTIVE.middleware())


def flush() -> None:
    """Export what is pending (spans, metrics, logs): on shutdown, before exit."""
    for export in ACTIVE.flushers if ACTIVE is not None else ():
        try:
            export()
        except Exception as exc:  # a collector away must not stop a shutdown
            logger.warning("telemetry flush failed: %s", type(exc).__name__)


def flush_on_shutdown(app: Any) -> None:
    """Flush spans and metrics when the app's lifespan ends: uvicorn re-raises SIGTERM
    after its graceful stop, so the SDK's own exit hooks never run."""
    from contextlib import asynccontextmanager

    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(application: Any) -> Any:
        try:
            async with inner(application) as state:
                yield state
        finally:
            import anyio

            await anyio.to_thread.run_sync(flush)

    app.router.lifespan_context = lifespan


def trace_ids() -> dict[str, str]:
    """``trace_id`` and ``span_id`` of the current span for a log line ({} when none)."""
    if ACTIVE is None or not ACTIVE.tracing:
        return {}
    from opentelemetry.trace import get_current_span

    context = get_current_span().get_span_context()
    if not context.is_valid:
        return {}
    return {"trace_id": f"{context.trace_id:032x}", "span_id": f"{context.span_id:016x}"}
