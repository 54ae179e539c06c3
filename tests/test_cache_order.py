"""A rebuild through the build cache writes the bytes a fresh build writes when a change only
reorders a schema (properties, enum values, required, oneOf branches): the generator writes
fields in property order, so the cache keys that guard its output keep key order."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mcpgen.cli import main

Json = Any

MANIFEST: Json = {
    "mcpgen": 1,
    "server": {"name": "order"},
    "$defs": {
        "Person": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
            "required": ["name", "age"],
        },
        "Pet": {
            "oneOf": [
                {"type": "object", "properties": {"bark": {"type": "boolean"}}},
                {"type": "object", "properties": {"purr": {"type": "string"}}},
            ]
        },
    },
    "tools": [
        {
            "name": "t",
            "description": "d",
            "input": {
                "type": "object",
                "properties": {
                    "who": {"$ref": "#/$defs/Person"},
                    "size": {"type": "string", "enum": ["small", "big"]},
                    "pet": {"$ref": "#/$defs/Pet"},
                },
                "required": ["who", "size"],
            },
        }
    ],
}

OPENAPI: Json = {
    "openapi": "3.1.0",
    "info": {"title": "Order", "version": "1"},
    "servers": [{"url": "https://example.com"}],
    "paths": {
        "/people": {
            "post": {
                "operationId": "addPerson",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/Person"}}
                    },
                },
                "responses": {"200": {"description": "ok"}},
            },
            "get": {
                "operationId": "listPeople",
                "parameters": [
                    {"name": "first", "in": "query", "schema": {"type": "string"}},
                    {"name": "after", "in": "query", "schema": {"type": "integer"}},
                ],
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "array",
                                    "items": {"$ref": "#/components/schemas/Person"},
                                }
                            }
                        },
                    }
                },
            },
        }
    },
    "components": {
        "schemas": {
            "Person": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "age": {"type": "integer"},
                    "kind": {"type": "string", "enum": ["friend", "foe"]},
                    "home": {"$ref": "#/components/schemas/Place"},
                },
                "required": ["name", "age"],
            },
            "Place": {
                "oneOf": [
                    {"type": "object", "properties": {"city": {"type": "string"}}},
                    {"type": "object", "properties": {"lat": {"type": "number"}}},
                ]
            },
        }
    },
}


def _reverse_keys(node: dict[str, Json], key: str) -> None:
    node[key] = dict(reversed(list(node[key].items())))


def _reverse(node: dict[str, Json], key: str) -> None:
    node[key] = list(reversed(node[key]))


def _tool_input(doc: Json) -> Json:
    return doc["tools"][0]["input"]


def _component(name: str) -> Callable[[Json], Json]:
    return lambda doc: doc["components"]["schemas"][name]


CASES: dict[str, tuple[Json, Callable[[Json], None]]] = {
    "shared properties": (MANIFEST, lambda d: _reverse_keys(d["$defs"]["Person"], "properties")),
    "tool properties": (MANIFEST, lambda d: _reverse_keys(_tool_input(d), "properties")),
    "enum values": (MANIFEST, lambda d: _reverse(_tool_input(d)["properties"]["size"], "enum")),
    "required": (MANIFEST, lambda d: _reverse(d["$defs"]["Person"], "required")),
    "oneOf branches": (MANIFEST, lambda d: _reverse(d["$defs"]["Pet"], "oneOf")),
    "openapi component properties": (
        OPENAPI,
        lambda d: _reverse_keys(_component("Person")(d), "properties"),
    ),
    "openapi enum values": (
        OPENAPI,
        lambda d: _reverse(_component("Person")(d)["properties"]["kind"], "enum"),
    ),
    "openapi required": (OPENAPI, lambda d: _reverse(_component("Person")(d), "required")),
    "openapi oneOf branches": (OPENAPI, lambda d: _reverse(_component("Place")(d), "oneOf")),
    "openapi parameters": (
        OPENAPI,
        lambda d: _reverse(d["paths"]["/people"]["get"], "parameters"),
    ),
}


def _build(source: Path, out: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("MCPGEN_CACHE_DIR", str(cache))
    result = CliRunner().invoke(main, ["build", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return {
        str(p.relative_to(out)): p.read_text("utf-8")
        for p in sorted(out.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.mark.parametrize("case", list(CASES))
def test_a_cached_rebuild_after_a_reordering_writes_what_a_fresh_build_writes(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original, reorder = CASES[case]
    source = tmp_path / ("m.json" if "mcpgen" in original else "api.json")
    source.write_text(json.dumps(original), "utf-8")
    cache = tmp_path / "cache"
    before = _build(source, tmp_path / "cached", cache, monkeypatch)
    changed = copy.deepcopy(original)
    reorder(changed)
    source.write_text(json.dumps(changed), "utf-8")
    rebuilt = _build(source, tmp_path / "cached", cache, monkeypatch)
    fresh = _build(source, tmp_path / "fresh", tmp_path / "fresh-cache", monkeypatch)
    assert fresh != before  # the reordering shows in the project (the case tests something)
    assert {p for p in rebuilt if rebuilt[p] != fresh.get(p)} == set()
    assert rebuilt == fresh
