"""Compact definitions a model can use (issue 34 item 9): an imported operation's
advertised input keeps the descriptions of a body's nested fields (within a budget), and
its advertised output shows the fields inside a ``{data: {...}}`` envelope, where it once
said only ``{data: object}``. Built from an OpenAPI document as a user builds it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from mcpgen.model import compact
from mcpgen.pipeline import load_manifest

Json = Any
AGENT = {
    "type": "object",
    "properties": {
        "accountId": {"type": "string", "description": "Account ID associated with the agent."},
        "symbol": {"type": "string", "description": "Symbol of the agent."},
        "headquarters": {"type": "string", "description": "The headquarters of the agent."},
        "credits": {"type": "integer", "format": "int64", "description": "Credits held."},
        "startingFaction": {"type": "string", "description": "The faction the agent started with."},
        "shipCount": {"type": "integer", "description": "How many ships are owned by the agent."},
    },
    "required": ["symbol", "headquarters", "credits", "startingFaction", "shipCount"],
}
ADDRESS = {
    "type": "object",
    "description": "Where the ship is delivered.",
    "properties": {
        "system": {"type": "string", "description": "The system symbol, such as X1-DF55."},
        "waypoint": {"type": "string", "description": "The waypoint symbol inside the system."},
    },
}


def doc(fields: int = 0) -> dict[str, Json]:
    extra = {
        f"note{i}": {
            "type": "object",
            "properties": {"x": {"type": "string", "description": f"{i} " + "word " * 20}},
        }
        for i in range(fields)
    }
    return {
        "openapi": "3.0.3",
        "info": {"title": "SpaceTraders API", "version": "2"},
        "servers": [{"url": "https://api.spacetraders.io/v2"}],
        "components": {"schemas": {"Agent": AGENT}},
        "paths": {
            "/my/agent": {
                "get": {
                    "operationId": "get-my-agent",
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object",
                                        "properties": {
                                            "data": {"$ref": "#/components/schemas/Agent"}
                                        },
                                        "required": ["data"],
                                    }
                                }
                            },
                        }
                    },
                }
            },
            "/my/ships": {
                "post": {
                    "operationId": "purchase-ship",
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {
                                        "shipType": {
                                            "type": "string",
                                            "description": "Type of ship",
                                        },
                                        "deliverTo": ADDRESS,
                                        **extra,
                                    },
                                    "required": ["shipType"],
                                }
                            }
                        },
                    },
                    "responses": {"201": {"description": "bought"}},
                }
            },
        },
    }


def tools(tmp_path: Path, fields: int = 0) -> dict[str, Json]:
    (tmp_path / "api.yaml").write_text(yaml.safe_dump(doc(fields), sort_keys=False))
    source = {"mcpgen": 1, "server": {"name": "space-traders"}, "openapi": {"source": "api.yaml"}}
    (tmp_path / "mcpgen.yaml").write_text(yaml.safe_dump(source))
    loaded = load_manifest(tmp_path / "mcpgen.yaml")
    assert loaded.manifest is not None, [p.format() for p in loaded.problems.items]
    return {t.name: t.definition for t in loaded.manifest.tools}


def descriptions(schema: Json) -> list[str]:
    found: list[str] = []
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("description"), str):
                found.append(node["description"])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


def test_nested_body_fields_keep_their_descriptions(tmp_path: Path) -> None:
    purchase = tools(tmp_path)["purchase_ship"]["inputSchema"]
    deliver = purchase["properties"]["deliverTo"]
    assert deliver["description"] == "Where the ship is delivered."
    assert deliver["properties"]["system"]["description"] == "The system symbol, such as X1-DF55."
    assert deliver["properties"]["waypoint"]["description"] == (
        "The waypoint symbol inside the system."
    )


def test_nested_descriptions_stay_within_their_budget_shallowest_first(tmp_path: Path) -> None:
    purchase = tools(tmp_path, fields=30)["purchase_ship"]["inputSchema"]
    nested = [
        d
        for name, prop in purchase["properties"].items()
        for d in descriptions(prop.get("properties", {}))
    ]
    assert 0 < sum(len(d) for d in nested) <= compact.NESTED_DESCRIPTION_BUDGET
    assert len(nested) < 31  # some went
    assert all(len(d) <= compact.PROPERTY_DESCRIPTION_CHARS for d in nested)


def test_an_envelope_output_shows_the_fields_inside(tmp_path: Path) -> None:
    output = tools(tmp_path)["get_my_agent"]["outputSchema"]
    data = output["properties"]["data"]
    assert set(data["properties"]) == set(AGENT["properties"])
    assert data["properties"]["credits"] == {"type": "integer"} or (
        data["properties"]["credits"]["type"] == "integer"
    )
    assert compact.size(output) <= compact.OUTPUT_BUDGET
