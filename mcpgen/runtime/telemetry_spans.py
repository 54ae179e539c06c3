"""The spans of a server that wraps an HTTP API (``telemetry.py`` has the rest): a CLIENT
span around each upstream HTTP attempt, and an INTERNAL span around each operation that
search mode's ``call_operation`` or code mode's ``execute`` runs. Carried only by a package
with an upstream API."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any


async def operation_span(tracer: Any, name: str, call: Callable[[], Awaitable[Any]]) -> Any:
    """One operation run by search mode's ``call_operation`` or code mode's ``execute``
    (inside that tool's span): an INTERNAL span ``execute_tool <operation>``."""
    from anyio import current_effective_deadline
    from opentelemetry.trace import StatusCode

    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
    deadline = current_effective_deadline()  # the tool's timeout (or a caller's)
    with tracer.start_as_current_span(
        f"execute_tool {name}", attributes=attributes, record_exception=False
    ) as span:
        try:
            result = await call()
        except BaseException as exc:  # a cancellation too: a timeout is one
            span.set_attribute("error.type", _error(exc, deadline))
            span.set_status(StatusCode.ERROR)
            raise
        if getattr(result, "is_error", False):
            span.set_attribute("error.type", "tool_error")
            span.set_status(StatusCode.ERROR)
        return result


async def upstream_span(
    tracer: Any,
    send: Callable[[dict[str, str]], Awaitable[Any]],
    method: str,
    url: str,
    headers: dict[str, str],
) -> Any:
    """One upstream HTTP attempt in a CLIENT span (``url`` already without credentials),
    with ``traceparent`` injected into ``headers`` inside it. Not the baggage nor the
    ``tracestate``: the SDK took them from the client's ``params._meta``, and what a client
    chose never becomes a header."""
    from urllib.parse import urlsplit

    from anyio import current_effective_deadline
    from opentelemetry.baggage import clear
    from opentelemetry.propagate import inject
    from opentelemetry.trace import SpanKind, StatusCode

    from .errors import redact_query

    parts = urlsplit(url)
    attributes: dict[str, Any] = {
        "http.request.method": method,
        "url.full": redact_query(url),
        "server.address": parts.hostname or "",
    }
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    if port:
        attributes["server.port"] = port
    deadline = current_effective_deadline()  # the answer's timeout (or a caller's)
    with tracer.start_as_current_span(
        method, kind=SpanKind.CLIENT, attributes=attributes, record_exception=False
    ) as span:
        inject(headers, clear())
        headers.pop("tracestate", None)  # (the span inherits the client's)
        try:
            response = await send(headers)
        except BaseException as exc:  # a cancellation too: a timeout is one
            span.set_attribute("error.type", _error(exc, deadline))
            span.set_status(StatusCode.ERROR)
            raise
        status = int(response.status_code)
        span.set_attribute("http.response.status_code", status)
        if status >= 400:
            span.set_attribute("error.type", str(status))
            span.set_status(StatusCode.ERROR)
        return response


def _error(exc: BaseException, deadline: float) -> str:
    """``error.type`` of a span that ``exc`` ended: its type, or for a cancellation
    ``timeout`` when the deadline in effect as the span started has passed."""
    from anyio import current_time, get_cancelled_exc_class

    if not isinstance(exc, get_cancelled_exc_class()):
        return type(exc).__qualname__
    return "timeout" if current_time() >= deadline else "cancelled"
