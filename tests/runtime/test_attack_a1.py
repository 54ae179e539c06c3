"""Round 25 attacks (a1) that found something: each test fails now and passes once fixed
(``xfail(strict=True)``: the day it passes, the mark must go)."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider

from mcpgen.runtime import telemetry
from mcpgen.runtime.telemetry import Telemetry

pytestmark = pytest.mark.timeout(30)


def traced_in_memory(monkeypatch: pytest.MonkeyPatch) -> Any:
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exported = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exported))
    made = Telemetry(None, True, False, "http")
    made.names = frozenset()
    made.tracing, made.tracer = True, provider.get_tracer("test")
    monkeypatch.setattr(telemetry, "ACTIVE", made)
    return exported


@pytest.mark.xfail(
    strict=True,
    reason="a1: a query parameter the document marks secret (format: password, writeOnly) "
    "is exported in the CLIENT span's url.full; only credential-like names are REDACTED",
)
def test_a_secret_query_parameter_is_not_exported_in_url_full(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``GET /items/{id}?pin=...`` where ``pin`` is ``{type: string, format: password,
    writeOnly: true}``: the collector (a third party: a tracing vendor) received
    ``url.full = .../items/1?pin=4242-SECRET``. A body's ``writeOnly`` strings are kept out
    of answers (``wire_body.write_only``); the same parameter in the query reaches the span
    and the tool error text (``(GET http://...?pin=4242-SECRET)``) whole."""
    import anyio
    from wirekit import operations, recorder, upstream

    exported = traced_in_memory(monkeypatch)
    pin = {"type": "string", "format": "password", "writeOnly": True}
    op = {
        "operationId": "getItem",
        "parameters": [
            {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}},
            {"name": "pin", "in": "query", "schema": pin},
        ],
        "responses": {"200": {"description": "ok"}},
    }
    data = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/items/{id}": {"get": op}},
    }
    with recorder() as rec:
        call = upstream(rec.url).call
        result = anyio.run(call, operations(data)["get_item"], {"id": "1", "pin": "4242-SECRET"})
    assert not result.is_error and rec.seen[0].target == "/items/1?pin=4242-SECRET"
    [span] = exported.get_finished_spans()
    assert span.attributes is not None
    assert "4242-SECRET" not in str(span.attributes["url.full"]), span.attributes["url.full"]
