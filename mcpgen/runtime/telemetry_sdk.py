"""The OpenTelemetry SDK's providers for ``telemetry.setup`` (telemetry on, the ``otel`` extra
installed). Exporters are found as the SDK's auto-configuration finds them (entry points
``opentelemetry_<signal>_exporter``), configured by the SDK from its ``OTEL_*`` variables;
``otlp`` means OTLP/HTTP (protobuf) unless ``..._PROTOCOL=grpc``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from importlib.metadata import entry_points
from typing import Any

from opentelemetry.sdk.trace import SpanProcessor

from .errors import redact_query

logger = logging.getLogger(__name__)
# What a client chooses (the method and tool name in a span's name, the request id) stays
# this short in the spans kept for export (unless OTEL_*ATTRIBUTE_VALUE_LENGTH_LIMIT says)
NAME_LIMIT, VALUE_LIMIT = 256, 4096


def build(
    spec: Mapping[str, Any], transport: str, environ: Mapping[str, str], exporting: bool
) -> tuple[Any, list[Any]]:
    """The SDK's meter provider (None: no exporter) and what ``telemetry.flush`` calls."""
    from opentelemetry import trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

    logging.getLogger("opentelemetry.attributes").addFilter(once)  # (added once)
    if not exporting:  # HTTP, the extra installed, no OTEL_* variable
        logger.info("OpenTelemetry: no OTEL_* variable set, no spans; metrics on GET /metrics")
        return None, []
    resource = _resource(spec)
    # GET /metrics reads the histograms kept in process (telemetry.Histogram): the SDK's
    # metrics only when an exporter takes them
    meter_provider, flushers, traced = None, list[Any](), True
    readers = [PeriodicExportingMetricReader(e) for e in exporters("metrics", environ)]
    if readers:
        meter_provider = MeterProvider(resource=resource, metric_readers=readers)
        flushers.append(meter_provider.force_flush)
    current = trace.get_tracer_provider()
    # (a provider set already, by opentelemetry-instrument say: spans go there)
    if isinstance(current, trace.ProxyTracerProvider):
        from opentelemetry.sdk.trace import SpanLimits, TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        given = any(k.endswith("ATTRIBUTE_VALUE_LENGTH_LIMIT") for k in environ)
        limits = SpanLimits(max_attribute_length=None if given else VALUE_LIMIT)
        # sampler: OTEL_TRACES_SAMPLER
        tracer_provider = TracerProvider(resource=resource, span_limits=limits)
        tracer_provider.add_span_processor(_ShortNames())
        spans = exporters("traces", environ)
        for exporter in spans:
            tracer_provider.add_span_processor(BatchSpanProcessor(exporter))
        trace.set_tracer_provider(tracer_provider)
        current, traced = tracer_provider, bool(spans)
    if hasattr(current, "force_flush"):
        flushers.append(current.force_flush)
    if environ.get("OTEL_LOGS_EXPORTER", "none").strip() not in ("", "none"):
        flushers.append(_logs(resource, environ))
    exported = [n for n, on in (("traces", traced), ("metrics", meter_provider)) if on]
    logger.info(
        "OpenTelemetry on: %s%s",
        " and ".join(exported) + " exported" if exported else "no exporter",
        ", GET /metrics" if transport != "stdio" else "",
    )
    return meter_provider, flushers


def _resource(spec: Mapping[str, Any]) -> Any:
    """The SDK's resource (``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_SERVICE_NAME``), with the
    server's name and version where those leave them unset."""
    from opentelemetry.sdk.resources import Resource

    base = Resource.create()
    info = spec["server"]
    defaults: dict[str, str] = {}
    if str(base.attributes.get("service.name", "")).startswith("unknown_service"):
        defaults["service.name"] = info["name"]
    if "service.version" not in base.attributes and info.get("version"):
        defaults["service.version"] = str(info["version"])
    return base.merge(Resource(defaults)) if defaults else base


def exporters(signal: str, environ: Mapping[str, str]) -> list[Any]:
    """The exporters ``OTEL_<SIGNAL>_EXPORTER`` names (default ``otlp``; ``none`` for none)."""
    upper = signal.upper()
    default = "none" if signal == "logs" else "otlp"
    names = [n.strip() for n in environ.get(f"OTEL_{upper}_EXPORTER", default).split(",")]
    found = []
    for name in names:
        if name in ("", "none"):
            continue
        if name == "otlp":
            protocol = (
                environ.get(f"OTEL_EXPORTER_OTLP_{upper}_PROTOCOL")
                or environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
                or "http/protobuf"
            ).strip()
            if protocol not in ("grpc", "http/protobuf"):
                logger.warning("OTLP protocol %r is not supported: using http/protobuf", protocol)
            name = "otlp_proto_grpc" if protocol == "grpc" else "otlp_proto_http"
        points = entry_points(group=f"opentelemetry_{signal}_exporter", name=name)
        if not points:
            hint = " (pip install opentelemetry-exporter-otlp-proto-grpc)" if "grpc" in name else ""
            logger.warning(
                "no %s exporter %r is installed%s: %s not exported", signal, name, hint, signal
            )
            continue
        found.append(next(iter(points)).load()())
    return found


def _logs(resource: Any, environ: Mapping[str, str]) -> Any:
    """Log records exported too: a handler on the root logger (stderr unchanged); its flush."""
    from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor

    provider = LoggerProvider(resource=resource)
    for exporter in exporters("logs", environ):
        provider.add_log_record_processor(BatchLogRecordProcessor(exporter))
    root = logging.getLogger()
    handler = LoggingHandler(level=root.level, logger_provider=provider)
    # not the exporters' own lines (a failed export's): each a new record to export, endlessly
    handler.addFilter(lambda record: not record.name.startswith(("opentelemetry", "urllib3")))
    root.addHandler(handler)
    return provider.force_flush


# The generated package type-checks without the SDK's types (SpanProcessor is Any there).
class _ShortNames(SpanProcessor):  # type: ignore[misc, unused-ignore]
    """Cuts a span's name to ``NAME_LIMIT`` characters as the span starts, and its status
    (an error message that may echo the client: "Unknown tool: <name>", "Resource not
    found: <uri>") to ``VALUE_LIMIT`` in the copy the exporters get as it ends, without a
    URI's credential-like query value (as ``mcp.resource.uri``): the client's own answer
    is left whole."""

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        if len(span.name) > NAME_LIMIT:
            span.update_name(span.name[:NAME_LIMIT])

    def on_end(self, span: Any) -> None:
        from opentelemetry.trace import Status

        status = span.status
        if status.description is None:
            return
        shown = redact_query(status.description)
        if len(shown) > VALUE_LIMIT:
            shown = shown[:VALUE_LIMIT] + "..."
        if shown != status.description:
            span._status = Status(status.status_code, shown)  # (the SDK's ReadableSpan)


SEEN: set[str] = set()  # the warnings ``once`` let through


def once(record: logging.LogRecord) -> bool:
    """Lets each warning of the SDK's attribute checks through once per process: a client's
    long tool name or request id, cut to ``VALUE_LIMIT``, would otherwise log "String
    attribute value exceeds max length" on every request. Keyed by the SDK's own format
    strings (a few), never by a value."""
    kind = str(record.msg)
    if kind in SEEN:
        return False
    SEEN.add(kind)
    record.msg = f"{kind} (logged once per process)"
    return True
