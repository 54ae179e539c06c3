"""What a wrapped operation refuses before anything leaves for the API: an argument whose
``format`` (uuid, date-time, date, email, ipv4, uri, hostname, duration...) it does not have, and an argument the
operation does not take (its input schema is closed). The server is built from an OpenAPI
document; the upstream is a local server on 127.0.0.1 that records every request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import wirekit
import yaml
from mcp.client import Client
from mcp.shared.exceptions import MCPError

from mcpgen.pipeline import load_manifest
from mcpgen.render.spec import spec_data
from mcpgen.runtime.server import Handlers, build_server
from mcpgen.vendoring import carried, requirements

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def string(format: str) -> dict[str, str]:
    return {"type": "string", "format": format}


SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Pets", "version": "1"},
    "servers": [{"url": "http://127.0.0.1:1"}],
    "paths": {
        "/pets/{petId}": {
            "put": {
                "operationId": "updatePet",
                "parameters": [
                    {"name": "petId", "in": "path", "required": True, "schema": string("uuid")},
                    {"name": "since", "in": "query", "schema": string("date-time")},
                    {"name": "X-Client-Ip", "in": "header", "schema": string("ipv4")},
                ],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {
                                    "owner": string("email"),
                                    "born": string("date"),
                                    "homepage": string("uri"),
                                    "host": string("hostname"),
                                    "every": string("duration"),
                                },
                            }
                        }
                    },
                },
                "responses": {"204": {"description": "updated"}},
            }
        }
    },
}
PET = "0b6c1c5e-6a55-4a3e-9a7e-2f1f4a9d3c11"
GOOD = {
    "petId": PET,
    "since": "2024-05-01T12:00:00Z",
    "X-Client-Ip": "10.0.0.1",
    "owner": "ann@example.com",
    "born": "2020-02-29",
    "homepage": "https://example.com/a",
    "host": "api.example.com",
    "every": "PT1H30M",
}


def spec(tmp_path: Path) -> dict[str, Any]:
    (tmp_path / "api.yaml").write_text(yaml.safe_dump(SPEC, sort_keys=False))
    source = {"mcpgen": 1, "server": {"name": "pets"}, "openapi": {"source": "api.yaml"}}
    (tmp_path / "mcpgen.yaml").write_text(yaml.safe_dump(source))
    loaded = load_manifest(tmp_path / "mcpgen.yaml")
    assert loaded.manifest is not None, [p.format() for p in loaded.problems.items]
    assert "formats" in carried(loaded.manifest)  # and the package depends on its library
    assert any(r.startswith("rfc3339-validator") for r in requirements(loaded.manifest))
    return spec_data(loaded.manifest)


async def calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *arguments: dict[str, Any]
) -> tuple[list[Any], list[wirekit.Seen]]:
    data = spec(tmp_path)
    with wirekit.recorder() as rec:
        monkeypatch.setenv(data["upstream"]["baseUrlEnv"], rec.url)
        rec.answer(204, "application/json", b"")
        async with Client(build_server(data, Handlers()), mode="legacy") as client:
            results = [await client.call_tool("update_pet", a) for a in arguments]
    return results, rec.seen


@pytest.mark.parametrize(
    ("argument", "value"),
    [
        ("petId", "not-a-uuid"),
        ("petId", "0b6c1c5e6a554a3e9a7e2f1f4a9d3c11"),  # UUID() takes it, the format does not
        ("since", "yesterday"),
        ("since", "2024-05-01 12:00:00"),  # no T, no offset
        ("X-Client-Ip", "10.0.0.256"),
        ("owner", "ann.example.com"),
        ("born", "2020-02-30"),
        # these three were not checked
        ("homepage", "example.com/a"),  # no scheme: a relative reference
        ("host", "api_1.example.com"),
        ("every", "90 minutes"),
    ],
)
async def test_a_value_outside_its_format_never_reaches_the_api(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argument: str, value: str
) -> None:
    (bad, good), seen = await calls(tmp_path, monkeypatch, {**GOOD, argument: value}, GOOD)
    assert bad.is_error, bad
    text = bad.content[0].text  # type: ignore[union-attr]
    assert text.startswith("Invalid arguments for tool 'update_pet': "), text
    assert f"{argument}: {value!r} is not a" in text, text
    assert not good.is_error, good.content
    (only,) = seen  # the good call's
    assert only.target == f"/pets/{PET}?since=2024-05-01T12%3A00%3A00Z"
    assert json.loads(only.body)["born"] == "2020-02-29"


@pytest.mark.parametrize(
    ("argument", "value"),
    [
        ("homepage", "urn:isbn:0451450523"),
        ("homepage", "mailto:ann@example.com"),
        ("homepage", "https://例え.jp/パス"),  # an IRI: the model's AnyUrl takes it too
        ("host", "example.com."),
        ("host", "localhost"),
        ("every", "P1Y2M10DT2H30M"),
        ("every", "PT1H5S"),
        ("every", "PT0.5S"),
        ("every", "P2W"),
    ],
)
async def test_values_in_the_newly_checked_formats_are_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argument: str, value: str
) -> None:
    (good,), seen = await calls(tmp_path, monkeypatch, {**GOOD, argument: value})
    assert not good.is_error, good.content
    assert json.loads(seen[0].body)[argument] == value


async def test_an_unknown_argument_is_refused_naming_it_and_the_known_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (bad,), seen = await calls(tmp_path, monkeypatch, {**GOOD, "petID": PET, "color": "red"})
    assert bad.is_error and seen == []
    text = bad.content[0].text  # type: ignore[union-attr]
    assert "('color', 'petID' were unexpected)" in text, text
    assert text.endswith("known: petId, since, X-Client-Ip, owner, born, homepage, host, every")


def test_the_input_schema_of_an_operation_is_closed(tmp_path: Path) -> None:
    (tool,) = spec(tmp_path)["tools"]
    assert tool["definition"]["inputSchema"]["additionalProperties"] is False


async def test_a_manifest_tool_checks_the_formats_of_its_arguments_too() -> None:
    """A tool of the user's (``format: email`` is a plain ``str`` of its model, so only the
    schema check stood between "x" and the handler)."""
    seen: list[Any] = []

    async def handler(arguments: Any, ctx: Any) -> Any:
        seen.append(arguments)
        return "ok"

    schema = {"type": "object", "properties": {"to": string("email")}, "required": ["to"]}
    data = {
        "format": 2,
        "server": {"name": "mail", "version": "1", "package": "mail_mcp", "script": "mail"},
        "auth": {"type": "none"},
        "tools": [{"definition": {"name": "send", "inputSchema": schema}, "ident": "send"}],
    }
    async with Client(build_server(data, Handlers(tools={"send": handler})), mode="legacy") as c:
        bad = await c.call_tool("send", {"to": "x"})
        good = await c.call_tool("send", {"to": "ann@example.com"})
    assert bad.is_error and "to: 'x' is not a 'email'" in bad.content[0].text  # type: ignore[union-attr]
    assert not good.is_error and seen == [{"to": "ann@example.com"}]


async def test_an_imported_resource_templates_variables_are_checked_for_their_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same check on a GET read as a resource template (its only format user here)."""
    get = {
        "operationId": "getPet",
        "parameters": [
            {"name": "petId", "in": "path", "required": True, "schema": string("uuid")},
            {"name": "since", "in": "query", "schema": string("date-time")},
        ],
        "responses": {"200": {"description": "a pet", "content": {"text/plain": {}}}},
    }
    document = {**SPEC, "paths": {"/pets/{petId}": {"get": get}}}
    (tmp_path / "api.yaml").write_text(yaml.safe_dump(document, sort_keys=False))
    options = {"source": "api.yaml", "rules": [{"operationId": "getPet", "as": "resourceTemplate"}]}
    source = {"mcpgen": 1, "server": {"name": "pets"}, "openapi": options}
    (tmp_path / "mcpgen.yaml").write_text(yaml.safe_dump(source))
    loaded = load_manifest(tmp_path / "mcpgen.yaml")
    assert loaded.manifest is not None and not loaded.manifest.tools
    assert "formats" in carried(loaded.manifest)
    data = spec_data(loaded.manifest)
    with wirekit.recorder() as rec:
        monkeypatch.setenv(data["upstream"]["baseUrlEnv"], rec.url)
        rec.answer(200, "text/plain", b"Rex")
        async with Client(build_server(data, Handlers()), mode="legacy") as client:
            refused = []
            for uri in ("api://pets/not-a-uuid", f"api://pets/{PET}?since=yesterday"):
                with pytest.raises(MCPError) as error:
                    await client.read_resource(uri)
                refused.append(error.value.error.message)
            good = await client.read_resource(f"api://pets/{PET}?since=2024-05-01T12:00:00Z")
    assert refused == [
        "Invalid resource URI: 'not-a-uuid' is not a 'uuid'",
        "Invalid resource URI: 'yesterday' is not a 'date-time'",
    ]
    assert good.contents[0].text == "Rex"  # type: ignore[union-attr]
    (only,) = rec.seen  # the good read's
    assert only.target == f"/pets/{PET}?since=2024-05-01T12%3A00%3A00Z"


def listed_as_template(tmp_path: Path, document: dict[str, Any]) -> dict[str, Any]:
    """The ``_spec.json`` data of a server whose ``listPets`` is a resource template."""
    (tmp_path / "api.yaml").write_text(yaml.safe_dump(document))
    options = {
        "source": "api.yaml",
        "rules": [{"operationId": "listPets", "as": "resourceTemplate"}],
    }
    source = {"mcpgen": 1, "server": {"name": "pets"}, "openapi": options}
    (tmp_path / "mcpgen.yaml").write_text(yaml.safe_dump(source))
    loaded = load_manifest(tmp_path / "mcpgen.yaml")
    assert loaded.manifest is not None
    return spec_data(loaded.manifest)


async def test_a_resource_templates_nullable_and_array_variables_are_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A variable is text: it is read as the type its parameter declares, also when that
    type is a list (OpenAPI 3.0's ``nullable``), an ``anyOf`` or the items of an array.
    ``?limit=5`` of a nullable integer was refused: "'5' is not of type 'integer', 'null'"."""
    integer = {"type": "integer", "nullable": True}
    get = {
        "operationId": "listPets",
        "parameters": [
            {"name": "limit", "in": "query", "schema": integer},
            {"name": "ids", "in": "query", "schema": {"type": "array", "items": integer}},
            {"name": "min", "in": "query", "schema": {"anyOf": [{"type": "number"}]}},
        ],
        "responses": {"200": {"description": "pets", "content": {"text/plain": {}}}},
    }
    data = listed_as_template(tmp_path, {**SPEC, "paths": {"/pets": {"get": get}}})
    with wirekit.recorder() as rec:
        monkeypatch.setenv(data["upstream"]["baseUrlEnv"], rec.url)
        rec.answer(200, "text/plain", b"Rex")
        async with Client(build_server(data, Handlers()), mode="legacy") as client:
            read = await client.read_resource("api://pets?limit=5&ids=1,2&min=1.5")
    assert read.contents[0].text == "Rex"  # type: ignore[union-attr]
    (only,) = rec.seen
    assert only.target == "/pets?limit=5&ids=1&ids=2&min=1.5"


async def test_a_resource_templates_list_items_are_split_before_they_are_decoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A list variable is split on its literal commas, each item decoded after: ``a%2Cb``
    (what the typed client writes for the item ``"a,b"``) is one item, in the query and in
    the path. It was decoded first and sent as two (``tags=a&tags=b``)."""
    words = {"type": "array", "items": {"type": "string"}}
    get = {
        "operationId": "listPets",
        "parameters": [
            {"name": "kinds", "in": "path", "required": True, "schema": words},
            {"name": "tags", "in": "query", "schema": words},
        ],
        "responses": {"200": {"description": "pets", "content": {"text/plain": {}}}},
    }
    data = listed_as_template(tmp_path, {**SPEC, "paths": {"/pets/{kinds}": {"get": get}}})
    with wirekit.recorder() as rec:
        monkeypatch.setenv(data["upstream"]["baseUrlEnv"], rec.url)
        rec.answer(200, "text/plain", b"Rex")
        rec.answer(200, "text/plain", b"Rex")
        async with Client(build_server(data, Handlers()), mode="legacy") as client:
            await client.read_resource("api://pets/x?tags=a%2Cb")
            await client.read_resource("api://pets/c%2Cd,e?tags=a%2Cb,c")
    assert [seen.target for seen in rec.seen] == [
        "/pets/x?tags=a%2Cb",
        "/pets/c%2Cd,e?tags=a%2Cb&tags=c",
    ]
