"""A variable of an imported resource template that the API marks secret (``format:
password`` or ``writeOnly``): the URI a client reads carries its value, which f1 kept out
of the upstream span's ``url.full`` only. The server's own span (``mcp.resource.uri``, its
status), its log lines and the error texts of a failing read showed it whole (y3)."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import wirekit
import yaml
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from opentelemetry import trace
from test_telemetry_unit import traced_middleware

from mcpgen.pipeline import load_manifest
from mcpgen.render.spec import spec_data
from mcpgen.runtime import logs
from mcpgen.runtime.resources import ResourceBinding, ResourceTable
from mcpgen.runtime.server import Handlers, build_server

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]
PIN, KEY, SHORT = "pin-4242-SECRET", "q-7777-SECRET", "Zq9x"  # (SHORT: below minLength)


def imported(
    tmp_path: Path, path: str = "/items/{id}/{pin}", rule: str = "resourceTemplate"
) -> dict[str, Any]:
    """The ``_spec.json`` data of ``GET /items/{id}/{pin}?q=&page=`` read as a resource
    template: ``pin`` is ``format: password``, ``q`` is ``writeOnly``."""
    where = "path" if "{pin}" in path else "query"
    pin = {"type": "string", "format": "password", "minLength": 6}
    params: list[dict[str, Any]] = [
        {"name": "id", "in": "path", "required": True, "schema": {}},
        {"name": "pin", "in": where, "required": where == "path", "schema": pin},
        {"name": "q", "in": "query", "schema": {"type": "string", "writeOnly": True}},
        {"name": "page", "in": "query", "schema": {"type": "string"}},
    ]
    get = {
        "operationId": "getItem",
        "parameters": params,
        "responses": {"200": {"description": "ok", "content": {"text/plain": {}}}},
    }
    document = {
        "openapi": "3.1.0",
        "info": {"title": "Items", "version": "1"},
        "servers": [{"url": "http://127.0.0.1:1"}],
        "paths": {path: {"get": get}},
    }
    (tmp_path / "api.yaml").write_text(yaml.safe_dump(document))
    options = {
        "source": "api.yaml",
        "rules": [{"operationId": "getItem", "as": rule}],
    }
    source = {"mcpgen": 1, "server": {"name": "items"}, "openapi": options}
    (tmp_path / "mcpgen.yaml").write_text(yaml.safe_dump(source))
    loaded = load_manifest(tmp_path / "mcpgen.yaml")
    assert loaded.manifest is not None
    return spec_data(loaded.manifest)


async def read_all(data: dict[str, Any], uris: list[str], handlers: Any = None) -> list[str]:
    """Each read's error text (message and data), or its contents."""
    shown = []
    async with Client(build_server(data, handlers or Handlers()), mode="legacy") as client:
        for uri in uris:
            try:
                shown.append(str((await client.read_resource(uri)).contents))
            except MCPError as exc:
                shown.append(f"{exc.error.message} {exc.error.data}")
    return shown


def spans_text(exported: Any) -> str:
    return "\n".join(
        f"{s.name} {dict(s.attributes or {})} {s.status.description} {s.events}"
        for s in exported.get_finished_spans()
    )


@pytest.fixture(params=["text", "json"])
def log_lines(request: pytest.FixtureRequest) -> Iterator[io.StringIO]:
    """What the server logs at DEBUG in each ``--log-format`` (the root logger put back)."""
    root = logging.getLogger()
    level, handlers = root.level, root.handlers[:]
    logs.configure_logging("DEBUG", request.param)
    stream = io.StringIO()
    root.handlers[0].setStream(stream)  # type: ignore[attr-defined]
    yield stream
    root.handlers[:] = handlers
    root.setLevel(level)


async def test_a_secret_variable_is_in_no_span_log_line_or_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, log_lines: io.StringIO
) -> None:
    """A good read, a read the API answers 404 (echoing the values), one the API is down
    for (the error's ``data.uri``), one whose secret is too short (jsonschema quotes it)."""
    _, exported, _ = traced_middleware(monkeypatch)
    from mcpgen.runtime import telemetry

    assert telemetry.ACTIVE is not None
    telemetry.ACTIVE.tracer = trace.get_tracer_provider().get_tracer("test")  # (url.full)
    data = imported(tmp_path)
    uri = f"api://items/7/{PIN}?q={KEY}&page=2"
    with wirekit.recorder() as rec:
        monkeypatch.setenv(data["upstream"]["baseUrlEnv"], rec.url)
        good = await read_all(data, [uri])
        rec.answer(404, "text/plain", f"no item for {PIN} nor {KEY}".encode())
        failed = await read_all(data, [uri, f"api://items/7/{SHORT}"])
    assert [s.target for s in rec.seen] == [f"/items/7/{PIN}?q={KEY}&page=2"] * 2
    monkeypatch.setenv(data["upstream"]["baseUrlEnv"], "http://127.0.0.1:1")
    failed += await read_all(data, [uri])
    assert "TextResourceContents" in good[0], good
    assert failed[0].startswith("Resource not found: api://items/7/REDACTED?q=REDACTED&page=2")
    assert failed[1].startswith("Invalid resource URI: REDACTED is too short"), failed[1]
    assert "{'uri': 'api://items/7/REDACTED?q=REDACTED&page=2'}" in failed[2], failed[2]
    shown = spans_text(exported)
    assert "'mcp.resource.uri': 'api://items/7/REDACTED?q=REDACTED&page=2'" in shown, shown
    for text in (shown, log_lines.getvalue(), *failed):
        assert PIN not in text and KEY not in text and SHORT not in text, text


async def test_a_failing_handler_logs_the_uri_without_the_secret(
    tmp_path: Path, log_lines: io.StringIO
) -> None:
    """The server's own handler for an imported resource (whose read raised) is logged by
    the URI read, and the client told to see that log: both without the secret."""
    handlers = Handlers()

    @handlers.resource("get_item")
    async def broken(variables: dict[str, str], ctx: object) -> str:
        raise RuntimeError("it broke")

    uri = f"api://items/7?pin={PIN}&q={KEY}&page=2"  # (pin: a query parameter here)
    (failed,) = await read_all(imported(tmp_path, "/items/{id}"), [uri], handlers)
    assert failed.startswith("Reading 'api://items/7?pin=REDACTED&q=REDACTED&page=2' failed")
    logged = log_lines.getvalue()
    assert "reading resource api://items/7?pin=REDACTED&q=REDACTED&page=2 failed" in logged
    assert "it broke" in logged and PIN not in logged and KEY not in logged, logged


def table(*templates: tuple[str, set[str]]) -> ResourceTable:
    return ResourceTable(
        [
            ResourceBinding({"uriTemplate": t, "name": f"r{i}"}, secret=frozenset(s))
            for i, (t, s) in enumerate(templates)
        ]
    )


@pytest.mark.parametrize(
    "uri, shown",
    [
        # percent-encoded: the value as written is cut, whatever it decodes to
        ("api://items/7/%70in%2F42?q=a%26b&page=2", "api://items/7/REDACTED?q=REDACTED&page=2"),
        # a value that is also elsewhere in the URI: only where the variable is
        ("api://items/items/items?q=items", "api://items/items/REDACTED?q=REDACTED"),
        ("api://items/7/7?q=7&page=7", "api://items/7/REDACTED?q=REDACTED&page=7"),
        # empty, and absent
        ("api://items/7/x?q=&page=2", "api://items/7/REDACTED?q=REDACTED&page=2"),
        ("api://items/7/x", "api://items/7/REDACTED"),
        # query variables in another order, or some left out (y8)
        ("api://items/7/x?page=2&q=k", "api://items/7/REDACTED?page=2&q=REDACTED"),
        ("api://items/7/x?q=k", "api://items/7/REDACTED?q=REDACTED"),
        # no match: only the credential-like query values, as ever
        ("api://items/7?token=t0k&pin=x", "api://items/7?token=REDACTED&pin=x"),
        # {+var}: what the read would take, across "/" and "?"
        ("api://files/a/b?c=d/e", "api://files/REDACTED/e"),
        ("api://files/x/e?q=k-1&page=3", "api://files/REDACTED/e?q=REDACTED&page=3"),
        # a variable name that is percent-encoded in the template
        ("api://named?x%2Dpin=s3&x=s3", "api://named?x%2Dpin=REDACTED&x=s3"),
    ],
)
def test_what_a_resource_uri_shows(uri: str, shown: str) -> None:
    made = table(
        ("api://items/{id}/{pin}{?q,page}", {"pin", "q"}),
        ("api://files/{+path}/e{?q,page}", {"path", "q"}),
        ("api://named{?x%2Dpin,x}", {"x-pin"}),
    )
    assert made.shown(uri) == shown


def test_templates_that_both_match_cut_each_ones_secrets() -> None:
    """A URI two templates match has the secret values of both cut (one REDACTED where
    their cuts overlap): the read takes the first, but more hidden is never less safe."""
    made = table(("api://{a}/{b}", {"b"}), ("api://{+c}", {"c"}), ("api://{d}/{e}", {"d"}))
    assert made.shown("api://one/two") == "api://REDACTED"
    made = table(("api://{a}/{b}", {"b"}), ("api://{d}/{e}", {"d"}))
    assert made.shown("api://one/two") == "api://REDACTED/REDACTED"


def test_a_table_without_secret_variables_matches_nothing_more(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made = table(("api://items/{id}{?token}", set()))
    monkeypatch.setattr(ResourceBinding, "cuts", None)  # (never called)
    assert made.secret == []
    assert made.shown("api://items/7?token=t") == "api://items/7?token=REDACTED"


async def test_a_file_argument_naming_the_resource_is_refused_without_the_secret() -> None:
    """A tool's file argument may name a resource (``files.read``): the tool error saying
    its read failed named the URI whole."""
    from types import SimpleNamespace

    from mcpgen.runtime import files
    from mcpgen.runtime.errors import ResourceNotFound, ToolError
    from mcpgen.runtime.identity import Identity

    async def missing(variables: dict[str, str], ctx: Any) -> bytes:
        raise ResourceNotFound("no such item")

    template = {"uriTemplate": "api://items/{pin}", "name": "item"}
    made = ResourceTable([ResourceBinding(template, read=missing, secret=frozenset({"pin"}))])
    ctx = SimpleNamespace(identity=Identity("ann", frozenset()), registry={"resources": made})
    with pytest.raises(ToolError) as refused:
        await files.read(made, f"api://items/{PIN}", "photo", ctx, 100)
    assert str(refused.value) == "'photo': reading 'api://items/REDACTED' failed: no such item"


async def test_a_tool_argument_error_does_not_quote_a_secret_argument(
    tmp_path: Path, log_lines: io.StringIO
) -> None:
    """The same operation read as a tool: jsonschema's "'Zq9x' is too short" quoted the
    secret ``pin`` to the client and the log (y8); a value of another argument still shows."""
    data = imported(tmp_path, rule="tool")
    async with Client(build_server(data, Handlers()), mode="legacy") as client:
        (tool,) = (await client.list_tools()).tools
        short = await client.call_tool(tool.name, {"id": "7", "pin": SHORT, "page": 5})
        wrong = await client.call_tool(tool.name, {"id": "7", "pin": 4242})
    texts = [str(short.content[0]), str(wrong.content[0])]
    assert "pin: REDACTED is too short" in texts[0] and "page: 5 is not of type" in texts[0]
    assert "pin: REDACTED is not of type 'string'" in texts[1], texts
    for text in (*texts, log_lines.getvalue()):
        assert SHORT not in text and "4242" not in text, text
