"""An optional request body is flattened like a required one (issue 34 item 9): its
properties are the tool's arguments, the body is sent only when one of them is given, and
the properties the body requires come together (``dependentRequired``). The server is
built from an OpenAPI document, the upstream is a local server that records what it got."""

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

SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Pets", "version": "1"},
    "servers": [{"url": "http://127.0.0.1:1"}],
    "paths": {
        "/pets/{id}": {
            "patch": {
                "operationId": "updatePet",
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}
                ],
                "requestBody": {
                    "required": False,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["name", "kind"],
                                "properties": {
                                    "name": {"type": "string", "description": "The new name"},
                                    "kind": {"type": "string", "enum": ["cat", "dog"]},
                                    "tag": {"type": "string"},
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


def loaded_manifest(tmp_path: Path) -> Any:
    (tmp_path / "api.yaml").write_text(yaml.safe_dump(SPEC, sort_keys=False))
    source = {"mcpgen": 1, "server": {"name": "pets"}, "openapi": {"source": "api.yaml"}}
    (tmp_path / "mcpgen.yaml").write_text(yaml.safe_dump(source))
    loaded = load_manifest(tmp_path / "mcpgen.yaml")
    assert loaded.manifest is not None, [p.format() for p in loaded.problems.items]
    return loaded.manifest


def test_the_optional_body_is_flattened_with_its_required_properties_together(
    tmp_path: Path,
) -> None:
    (tool,) = loaded_manifest(tmp_path).tools
    schema = tool.input_schema
    assert "body" not in schema["properties"]
    assert list(schema["properties"]) == ["id", "name", "kind", "tag"]
    assert schema["required"] == ["id"]
    assert schema["dependentRequired"] == {
        "name": ["kind"],
        "kind": ["name"],
        "tag": ["name", "kind"],
    }
    advertised = tool.definition["inputSchema"]
    assert advertised["dependentRequired"] == schema["dependentRequired"]
    assert advertised["properties"]["name"]["description"] == "The new name"


@pytest.mark.anyio
async def test_the_body_is_sent_only_when_one_of_its_properties_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = spec_data(loaded_manifest(tmp_path))
    with wirekit.recorder() as rec:
        monkeypatch.setenv(spec["upstream"]["baseUrlEnv"], rec.url)
        rec.answer(204, "application/json", b"")
        async with Client(build_server(spec, Handlers()), mode="legacy") as client:
            bare = await client.call_tool("update_pet", {"id": 1})
            named = await client.call_tool("update_pet", {"id": 2, "name": "Rex", "kind": "dog"})
            half = await client.call_tool("update_pet", {"id": 3, "tag": "x"})
    assert not bare.is_error and not named.is_error
    assert half.is_error and "'name' is a dependency of 'tag'" in half.content[0].text  # type: ignore[union-attr]
    first, second = rec.seen  # the half call never left the server
    assert (first.target, first.body) == ("/pets/1", b"")
    assert "content-type" not in first.headers
    assert second.target == "/pets/2" and json.loads(second.body) == {"name": "Rex", "kind": "dog"}
    assert second.headers["content-type"] == "application/json"
