"""``GET /metrics``: the metrics kept in this process, in the Prometheus text format 0.0.4
(``mcp.server.operation.duration`` in seconds becomes
``mcp_server_operation_duration_seconds_bucket{mcp_method_name="tools/call",le="0.1"}``)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
METRICS_PATH = "/metrics"
_UNITS = {"s": "seconds", "ms": "milliseconds", "By": "bytes"}
_INVALID = re.compile(r"[^a-zA-Z0-9_]")


def metric_name(name: str, unit: str | None) -> str:
    base = _INVALID.sub("_", name)
    suffix = _UNITS.get(unit or "")
    return f"{base}_{suffix}" if suffix and not base.endswith("_" + suffix) else base


def _value(text: Any) -> str:
    return str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(attributes: Any, extra: tuple[str, str] | None = None) -> str:
    pairs = [(_INVALID.sub("_", str(k)), _value(v)) for k, v in sorted((attributes or {}).items())]
    if extra is not None:
        pairs.append(extra)
    return "{" + ",".join(f'{k}="{v}"' for k, v in pairs) + "}" if pairs else ""


def _number(value: float) -> str:
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value)) if not float(value).is_integer() else str(int(value))


def metrics_route(reader: Any, allowed: Callable[[Any], bool] = lambda scope: True) -> Any:
    """The ``GET /metrics`` route (behind the app's authentication unless made public;
    ``allowed(ASGI scope)`` says whether this caller may read them)."""
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    async def metrics(request: Request) -> Response:
        if not allowed(request.scope):
            refused = "Forbidden: the metrics name tools or prompts hidden from this caller\n"
            return Response(refused, status_code=403, media_type="text/plain")
        return Response(render(reader), media_type=CONTENT_TYPE)

    return Route(METRICS_PATH, metrics, methods=["GET"])


def render(reader: Any) -> str:
    """The text of every metric ``reader`` (an SDK ``InMemoryMetricReader``) collects."""
    data = reader.get_metrics_data()
    lines: list[str] = []
    for resource_metrics in getattr(data, "resource_metrics", None) or ():
        for scope in resource_metrics.scope_metrics:
            for metric in scope.metrics:
                lines += _metric(metric)
    return "\n".join(lines) + "\n"


def _metric(metric: Any) -> list[str]:
    name = metric_name(metric.name, metric.unit)
    points = metric.data.data_points
    kind = type(metric.data).__name__
    lines = [f"# HELP {name} {_value(metric.description or metric.name)}"]
    if kind == "Histogram":
        lines.append(f"# TYPE {name} histogram")
        for point in points:
            total = 0
            bounds = [*point.explicit_bounds, math.inf]
            for bound, count in zip(bounds, point.bucket_counts, strict=False):
                total += count
                labels = _labels(point.attributes, ("le", _number(bound)))
                lines.append(f"{name}_bucket{labels} {total}")
            lines.append(f"{name}_sum{_labels(point.attributes)} {_number(point.sum)}")
            lines.append(f"{name}_count{_labels(point.attributes)} {point.count}")
    else:
        monotonic = kind == "Sum" and getattr(metric.data, "is_monotonic", False)
        shown = f"{name}_total" if monotonic and not name.endswith("_total") else name
        lines[0] = f"# HELP {shown} {_value(metric.description or metric.name)}"
        lines.append(f"# TYPE {shown} {'counter' if monotonic else 'gauge'}")
        lines += [f"{shown}{_labels(p.attributes)} {_number(p.value)}" for p in points]
    return lines
