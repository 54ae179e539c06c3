"""The one-way copies of definitions (``ItemRequest`` without ``readOnly`` properties,
``CredAnswer`` without ``writeOnly`` ones) do not depend on the order of ``paths`` (review
r11, finding 1): a copy was made once, for the first operation needing it, and referred to
the copies only that operation needed; an operation reaching a definition only through a
property it leaves out made a copy keeping a mark, which a later operation then reused."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from mcpgen.check.schemas import def_name
from mcpgen.model.types import Manifest
from mcpgen.pipeline import load_source_text


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def get(op: str, schema: Any = None, query: Any = None) -> dict[str, Any]:
    """A GET operation answering ``schema`` (none: 204) with a query ``q`` of ``query``."""
    content = {"content": {"application/json": {"schema": schema}}}
    answer = {"200": {"description": "ok", **content}} if schema else {"204": {"description": "-"}}
    params = [{"name": "q", "in": "query", "schema": query}] if query else []
    return {"get": {"operationId": op, "parameters": params, "responses": answer}}


def spec(paths: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "T", "version": "1"},
        "servers": [{"url": "https://x.example"}],
        "paths": paths,
        "components": {"schemas": schemas},
    }


# Base.id is readOnly; Item redeclares id (allOf List); List's items say child (an Item) is
# readOnly: a sends a List (never an Item), c's query is an Item (without Base's id)
ITEMS = {
    "Base": {"type": "object", "properties": {"id": {"type": "string", "readOnly": True}}},
    "Item": {
        "allOf": [ref("Base"), {"type": "object", "properties": {"id": {"allOf": [ref("List")]}}}]
    },
    "List": {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"child": {"allOf": [ref("Item")], "readOnly": True}},
        },
    },
}
BODY = {"content": {"application/json": {"schema": ref("List")}}}
# Cred.token is writeOnly; Tree (allOf List) says node: a list of Cred; List says its items'
# node (a Tree) is writeOnly: c answers a List (never a Cred), b a Page (Trees, Creds)
TREES = {
    "Cred": {"type": "object", "properties": {"token": {"type": "string", "writeOnly": True}}},
    "List": {
        "type": "array",
        "items": {"type": "object", "properties": {"node": {**ref("Tree"), "writeOnly": True}}},
    },
    "Tree": {
        "allOf": [ref("List"), {"properties": {"node": {"type": "array", "items": ref("Cred")}}}]
    },
    "Page": {
        "type": "object",
        "properties": {"trees": {"type": "object", "additionalProperties": ref("Tree")}},
    },
}
# no allOf: Owner's holder is writeOnly as a whole, Holder's secret has a writeOnly key: x
# answers an Owner (never a Secret), y Holders
HOLDERS = {
    "Secret": {
        "type": "object",
        "properties": {"key": {"type": "string", "writeOnly": True}, "label": {"type": "string"}},
    },
    "Holder": {"type": "object", "properties": {"secret": ref("Secret"), "owner": ref("Owner")}},
    "Owner": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "holder": {**ref("Holder"), "writeOnly": True}},
    },
}
# Base and Node refer to each other (Node is allOf Base), Secret to itself through a property
# of the same name, its key is writeOnly: a and b answer a Node; the second's copies were
# made after the first's, their cycles entered elsewhere (unrolled deeper)
CYCLE = {
    "Base": {"properties": {"up": ref("Node")}},
    "Node": {"allOf": [ref("Base"), {"properties": {"up": {"allOf": [ref("Secret")]}}}]},
    "Secret": {
        "properties": {"up": {"additionalProperties": ref("Secret")}, "key": {"writeOnly": True}}
    },
}
SPECS = {
    "items": spec(
        {
            "/a": {"post": {**get("a")["get"], "requestBody": BODY}},
            "/c": get("c", query=ref("Item")),
        },
        ITEMS,
    ),
    "trees": spec({"/b": get("b", ref("Page")), "/c": get("c", ref("List"))}, TREES),
    "holders": spec(
        {"/x": get("x", ref("Owner")), "/y": get("y", {"type": "array", "items": ref("Holder")})},
        HOLDERS,
    ),
    "cycle": spec({"/a": get("a", ref("Node")), "/b": get("b", ref("Node"))}, CYCLE),
}


def built(data: dict[str, Any]) -> Manifest:
    loaded = load_source_text(json.dumps(data), "api.json", Path("."))
    assert loaded.manifest is not None, loaded.problems
    return loaded.manifest


def marked(schema: Any, defs: dict[str, Any], keyword: str) -> list[str]:
    """The properties of ``schema`` that say ``keyword``, at any depth (through ``defs``)."""
    found, todo, seen = [], [schema], set()
    while todo:
        node = todo.pop()
        if isinstance(node, list):
            todo += node
        elif isinstance(node, dict):
            name = def_name(node.get("$ref"))
            if name in defs and name not in seen:
                seen.add(name)
                todo.append(defs[name])
            props = node.get("properties", {})
            found += [p for p, sub in props.items() if isinstance(sub, dict) and sub.get(keyword)]
            todo += [v for k, v in node.items() if k not in ("$ref", "$defs", "enum", "const")]
    return found


@pytest.mark.parametrize("case", list(SPECS))
def test_the_copies_do_not_depend_on_the_order_of_paths(case: str) -> None:
    data = SPECS[case]
    other = {**data, "paths": dict(reversed(list(data["paths"].items())))}
    first, second = built(data), built(other)
    tools = [
        {t.name: json.dumps(asdict(t), sort_keys=True, default=str) for t in m.tools}
        for m in (first, second)
    ]
    assert tools[0] == tools[1]
    assert first.shared_defs == second.shared_defs
    for manifest in (first, second):  # the direction's marks are left out, at any depth
        for tool in manifest.tools:
            assert not marked(tool.input_schema, manifest.shared_defs, "readOnly"), tool.name
            assert not marked(tool.output_schema, manifest.shared_defs, "writeOnly"), tool.name
