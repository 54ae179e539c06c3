"""``GET /metrics``: the metrics kept in this process, in the Prometheus text format 0.0.4
(``mcp.server.operation.duration`` in seconds becomes
``mcp_server_operation_duration_seconds_bucket{mcp_method_name="tools/call",le="0.1"}``)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
METRICS_PATH = "/metrics"
_INVALID = re.compile(r"[^a-zA-Z0-9_]")


def _value(text: Any) -> str:
    return str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(attributes: Any, extra: tuple[str, str] | None = None) -> str:
    pairs = [(_INVALID.sub("_", str(k)), _value(v)) for k, v in sorted((attributes or {}).items())]
    if extra is not None:
        pairs.append(extra)
    return "{" + ",".join(f'{k}="{v}"' for k, v in pairs) + "}" if pairs else ""


def _number(value: float) -> str:
    if math.isinf(value):
        return "+Inf"
    return repr(float(value)) if not float(value).is_integer() else str(int(value))


def metrics_route(
    histograms: Sequence[Any], allowed: Callable[[Any], bool], worker: str | None
) -> Any:
    """The ``GET /metrics`` route (behind the app's authentication unless made public;
    ``allowed(ASGI scope)`` says whether this caller may read them). ``worker``: a label of
    every point, under ``--workers`` (a scrape reaches one worker, which counts its own)."""
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    async def metrics(request: Request) -> Response:
        if not allowed(request.scope):
            refused = "Forbidden: the metrics name tools or prompts hidden from this caller\n"
            return Response(refused, status_code=403, media_type="text/plain")
        return Response(render(histograms, worker), media_type=CONTENT_TYPE)

    return Route(METRICS_PATH, metrics, methods=["GET"])


def render(histograms: Sequence[Any], worker: str | None = None) -> str:
    """The text of this process's histograms (``telemetry.Histogram``, in seconds: ``name``,
    ``description``, ``bounds`` and ``points``, each [labels, bucket counts, sum, count])."""
    lines: list[str] = []
    for histogram in histograms:
        name = _INVALID.sub("_", histogram.name) + "_seconds"
        lines.append(f"# HELP {name} {_value(histogram.description or histogram.name)}")
        lines.append(f"# TYPE {name} histogram")
        bounds = [*histogram.bounds, math.inf]
        for attributes, counts, total, count in histogram.points.values():
            attributes = {**attributes, "worker": worker} if worker else attributes
            running = 0
            for bound, found in zip(bounds, counts, strict=True):
                running += found
                lines.append(
                    f"{name}_bucket{_labels(attributes, ('le', _number(bound)))} {running}"
                )
            lines.append(f"{name}_sum{_labels(attributes)} {_number(total)}")
            lines.append(f"{name}_count{_labels(attributes)} {count}")
    return "\n".join(lines) + "\n"
