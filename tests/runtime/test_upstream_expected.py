"""A wrapped API's success answer that is not what the tool's output schema promises
(issue 34 item 9): the server is built from an OpenAPI document as a user builds it, the
upstream is a local server on 127.0.0.1, and the caller is the SDK's client, which raised
"did not return structured content" when an HTML page passed through as text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import wirekit
import yaml
from mcp.client import Client

from mcpgen.pipeline import load_manifest
from mcpgen.render.spec import spec_data
from mcpgen.runtime.server import Handlers, build_server

pytestmark = pytest.mark.timeout(60)

PET = {
    "type": "object",
    "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
    "required": ["id", "name"],
}
SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Pets", "version": "1"},
    "servers": [{"url": "http://127.0.0.1:1"}],
    "paths": {
        "/pets/{id}": {
            "get": {
                "operationId": "getPet",
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}
                ],
                "responses": {
                    "200": {
                        "description": "the pet",
                        "content": {"application/json": {"schema": PET}},
                    }
                },
            }
        },
        "/notes": {
            "get": {
                "operationId": "getNotes",
                "responses": {
                    "200": {"description": "text", "content": {"text/plain": {"schema": {}}}}
                },
            }
        },
    },
}
PAGE = (
    b"<!DOCTYPE html><html><head><title>Pet shop</title><style>body {margin: 0}</style>"
    b"<script>" + b"var app = 1;" * 200 + b"</script></head><body><div id='root'>"
    b"<h1>Welcome to the pet shop</h1><p>Sign in to continue.</p></div></body></html>"
)


def server_spec(tmp_path: Path) -> dict[str, Any]:
    (tmp_path / "api.yaml").write_text(yaml.safe_dump(SPEC))
    source = {"mcpgen": 1, "server": {"name": "pets"}, "openapi": {"source": "api.yaml"}}
    (tmp_path / "mcpgen.yaml").write_text(yaml.safe_dump(source))
    loaded = load_manifest(tmp_path / "mcpgen.yaml")
    assert loaded.manifest is not None, [p.format() for p in loaded.problems.items]
    return spec_data(loaded.manifest)


@pytest.mark.anyio
async def test_a_success_answer_the_output_schema_cannot_describe_is_a_tool_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = server_spec(tmp_path)
    with wirekit.recorder() as rec:
        monkeypatch.setenv(spec["upstream"]["baseUrlEnv"], rec.url)
        async with Client(build_server(spec, Handlers()), mode="legacy") as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            assert listed["get_pet"].output_schema is not None  # what the client checks

            rec.answer(200, "application/json", json.dumps({"id": 7, "name": "Rex"}).encode())
            good = await client.call_tool("get_pet", {"id": 7})
            assert not good.is_error and good.structured_content == {"id": 7, "name": "Rex"}

            # a wrong base URL: the website's page, 200 text/html, where JSON was documented
            rec.answer(200, "text/html; charset=utf-8", PAGE)
            page = await client.call_tool("get_pet", {"id": 7})
            assert page.is_error and page.structured_content is None
            message = page.content[0].text  # type: ignore[union-attr]
            assert message.startswith(
                f"GET /pets/{{id}} answered HTTP 200 OK with text/html ({len(PAGE)} bytes) where"
                f" application/json was expected (the tool's output schema describes JSON; GET"
                f" {rec.url}/pets/7): Pet shop / Welcome to the pet shop / Sign in to continue."
            )
            assert "<" not in message and "var app" not in message

            rec.answer(200, "application/json", b'{"id": "seven"}')
            shape = await client.call_tool("get_pet", {"id": 7})
            assert shape.is_error
            assert shape.content[0].text == (  # type: ignore[union-attr]
                "GET /pets/{id} answered HTTP 200 OK with JSON that does not match the tool's"
                f" output schema: id: 'seven' is not of type 'integer' (GET {rec.url}/pets/7)"
            )

            rec.answer(200, "application/json", b"")
            empty = await client.call_tool("get_pet", {"id": 7})
            assert empty.is_error and "with an empty body where application/json" in (
                empty.content[0].text  # type: ignore[union-attr]
            )

            # an operation documented as text has no output schema: text is its answer
            rec.answer(200, "text/plain", b"hello")
            notes = await client.call_tool("get_notes", {})
            assert not notes.is_error and notes.content[0].text == "hello"  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_a_500_html_page_is_a_short_readable_tool_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = server_spec(tmp_path)
    page = (
        b"<!DOCTYPE html><html><head><title>500 Internal Server Error</title><style>"
        + b"h1 {color: red} " * 60
        + b"</style></head><body><h1>Internal Server Error</h1><p>The server encountered an"
        b" internal error and was unable to complete your request.</p>"
        + b"<!-- padding -->" * 40
        + b"</body></html>"
    )
    assert len(page) > 1500
    with wirekit.recorder() as rec:
        monkeypatch.setenv(spec["upstream"]["baseUrlEnv"], rec.url)
        async with Client(build_server(spec, Handlers()), mode="legacy") as client:
            rec.answer(500, "text/html", page)
            failed = await client.call_tool("get_pet", {"id": 7})
    assert failed.is_error
    assert failed.content[0].text == (  # type: ignore[union-attr]
        f"GET /pets/{{id}} failed: HTTP 500 Internal Server Error (GET {rec.url}/pets/7): 500"
        " Internal Server Error / Internal Server Error / The server encountered an internal"
        " error and was unable to complete your request."
    )
