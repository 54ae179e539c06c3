"""Round 25 attacks (a1) that found something: each test failed until its fix (f1)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider

from mcpgen.runtime import telemetry
from mcpgen.runtime.errors import ToolError
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


@pytest.mark.parametrize("where", ["query", "path"])
def test_a_secret_parameter_is_not_exported_in_url_full(
    monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """``GET /items/{id}?pin=...`` (or ``/items/{id}/{pin}``) where ``pin`` is ``{type:
    string, format: password, writeOnly: true}``: the collector (a third party: a tracing
    vendor) received ``url.full = .../items/1?pin=4242-SECRET``. A body's ``writeOnly``
    strings are kept out of answers (``wire_body.write_only``); the same value as a
    parameter reaches the span, and the tool error text (``(GET http://...?pin=...)``),
    whole."""
    import anyio
    from wirekit import operations, recorder, upstream

    exported = traced_in_memory(monkeypatch)
    pin = {"type": "string", "format": "password", "writeOnly": True}
    op = {
        "operationId": "getItem",
        "parameters": [
            {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}},
            {"name": "pin", "in": where, "required": where == "path", "schema": pin},
        ],
        "responses": {"200": {"description": "ok"}},
    }
    data = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/items/{id}" + ("/{pin}" if where == "path" else ""): {"get": op}},
    }
    with recorder() as rec:
        call = upstream(rec.url).call
        result = anyio.run(call, operations(data)["get_item"], {"id": "1", "pin": "4242-SECRET"})
    sent = "/items/1/4242-SECRET" if where == "path" else "/items/1?pin=4242-SECRET"
    assert not result.is_error and rec.seen[0].target == sent
    [span] = exported.get_finished_spans()
    assert span.attributes is not None
    assert "4242-SECRET" not in str(span.attributes["url.full"]), span.attributes["url.full"]


def test_a_write_only_value_does_not_rewrite_the_answers_keys() -> None:
    """``POST /login {user, password (writeOnly)}`` answered ``{"user": "bob", "status":
    "active"}``: with the password ``user`` the caller got ``{"REDACTED": "bob", ...}`` (the
    structured content loses a field its output schema may require; a password ``active``
    blanks the status, and as the scrub replaces substrings, ``name`` turns ``username`` into
    ``userREDACTED``). ``answers.scrubbed`` scrubs keys and substrings, right for a random
    API key; a ``writeOnly`` value (``upstream.py``: ``request.secrets |= write_only(...)``)
    is a caller's choice, so only a string equal to it should be hidden, never a key."""
    import json

    import anyio
    from wirekit import operations, recorder, upstream

    body = {
        "type": "object",
        "properties": {
            "user": {"type": "string"},
            "password": {"type": "string", "writeOnly": True},
        },
    }
    op = {
        "operationId": "login",
        "requestBody": {"content": {"application/json": {"schema": body}}},
        "responses": {"200": {"description": "ok", "content": {"application/json": {}}}},
    }
    data = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/login": {"post": op}},
    }
    with recorder() as rec:
        rec.answer(200, "application/json", json.dumps({"user": "bob", "ok": "yes"}).encode())
        result = anyio.run(
            upstream(rec.url).call, operations(data)["login"], {"user": "bob", "password": "user"}
        )
    assert json.loads(rec.seen[0].body) == {"user": "bob", "password": "user"}
    assert not result.is_error
    assert result.structured_content == {"user": "bob", "ok": "yes"}, result.structured_content


def test_a_write_only_value_does_not_follow_a_redirect_to_another_origin() -> None:
    """``POST /login {user, password (writeOnly)}`` answered ``307 Location:
    http://other/collect``: the other origin received ``{"user": "bob", "password":
    "hunter2-secret"}``. The credentials are dropped there, and a Location URL holding the
    password is refused (``Request.leaving``: ``request.secrets`` has the writeOnly values),
    but the body that holds it is sent as is."""
    import json

    import anyio
    from wirekit import operations, recorder, upstream

    body = {
        "type": "object",
        "properties": {
            "user": {"type": "string"},
            "password": {"type": "string", "writeOnly": True},
        },
    }
    op = {
        "operationId": "login",
        "requestBody": {"content": {"application/json": {"schema": body}}},
        "responses": {"200": {"description": "ok", "content": {"application/json": {}}}},
    }
    data = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/login": {"post": op}},
    }
    arguments = {"user": "bob", "password": "hunter2-secret"}
    with recorder() as rec, recorder() as other:
        rec.moved, rec.moved_status = {"/login": other.url + "/collect"}, 307
        shown = re.escape(f"(307) to another origin, {other.url}, ")
        with pytest.raises(ToolError, match=shown) as caught:
            anyio.run(upstream(rec.url).call, operations(data)["login"], arguments)
    assert "hunter2-secret" not in str(caught.value)
    assert json.loads(rec.seen[0].body) == arguments
    assert all(b"hunter2-secret" not in seen.body for seen in other.seen), other.seen


def test_a_write_only_value_is_cut_only_where_it_stands_alone() -> None:
    """The rule that replaced the text scrub for what the caller chose (f1): a password
    ``name`` cut ``username`` to ``userREDACTED``; now a string equal to it is ``REDACTED``
    (any length), one holding it beside no letter, digit or ``_`` has it cut, a key and a
    word holding it stay; a credential is still cut anywhere, keys included."""
    from mcpgen.runtime.answers import scrubbed

    answer = {"name": "username", "note": "bad name: x", "k": "name", "by": "q7z", "s3cret-key": 1}
    assert scrubbed(answer, {"s3cret-key"}, {"name", "q7z"}) == {
        "name": "username", "note": "bad REDACTED: x", "k": "REDACTED", "by": "REDACTED",
        "REDACTED": 1,
    }  # fmt: skip


@pytest.mark.parametrize("where", ["query", "path"])
def test_a_secret_parameter_is_not_shown_in_a_tool_error(where: str) -> None:
    """The same ``pin`` in the URL a tool error names (``(GET http://...?pin=...)``): shown
    ``REDACTED`` as a query key is (f1), in its segment for a path; the rest kept."""
    import anyio
    from wirekit import operations, recorder, upstream

    pin = {"type": "string", "format": "password"}
    op = {
        "operationId": "getItem",
        "parameters": [
            {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}},
            {"name": "pin", "in": where, "required": where == "path", "schema": pin},
        ],
        "responses": {"200": {"description": "ok"}},
    }
    path = "/items/{id}" + ("/{pin}" if where == "path" else "")
    data = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {path: {"get": op}},
    }
    with recorder() as rec:
        rec.answer(404, "text/plain", b"no item 7 for 4242-SECRET")
        call = upstream(rec.url).call
        result = anyio.run(call, operations(data)["get_item"], {"id": "7", "pin": "4242-SECRET"})
    message = " ".join(getattr(c, "text", "") for c in result.content)
    shown = "/items/7/REDACTED)" if where == "path" else "/items/7?pin=REDACTED)"
    assert result.is_error and shown in message and "4242-SECRET" not in message, message
    assert message.endswith("no item 7 for REDACTED"), message
