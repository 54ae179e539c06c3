"""Review r14 (merged o3 on main): proofs of what the differential checks found."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpgen.model.types import Manifest
from mcpgen.pipeline import load_source_text
from tests.test_openapi_kept import imported


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def built(data: dict[str, Any]) -> Manifest:
    loaded = load_source_text(json.dumps(data), "api.json", Path("."))
    assert loaded.manifest is not None, loaded.problems
    return loaded.manifest


def query(op: str, schema: Any) -> dict[str, Any]:
    return {
        "get": {"operationId": op, "parameters": [{"name": "q", "in": "query", "schema": schema}]}
    }


# seed 910447 of r14's one_way fuzz (/tmp/r14/f2.py), shrunk: a cycle D -> C -> E -> D
ORDERED: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "T", "version": "1"},
    "paths": {"/q0": query("q0", ref("E")), "/q1": query("q1", ref("B"))},
    "components": {
        "schemas": {
            "B": {"properties": {"p2": {"items": ref("D")}}},
            "C": {
                "properties": {
                    "p0": {"properties": {"i1": {"items": ref("E")}}},
                    "p1": {"readOnly": True},
                }
            },
            "D": {"anyOf": [{"properties": {"p0": {"allOf": [ref("D")]}}}, ref("C")]},
            "E": {
                "allOf": [
                    ref("C"),
                    {"properties": {"p0": {"allOf": [{"properties": {"k": ref("E")}}, ref("D")]}}},
                ]
            },
        }
    },
}


def test_the_copies_of_a_cycle_do_not_depend_on_the_order_of_paths() -> None:
    forward = built(ORDERED)
    backward = built({**ORDERED, "paths": dict(reversed(list(ORDERED["paths"].items())))})
    assert sorted(backward.shared_defs) == sorted(forward.shared_defs)
    assert backward.shared_defs == forward.shared_defs


# r11's harness (bench/r11_kept/fuzz.py, R11EDITS=3), seed 902540 shrunk by its mini.py:
# S1 is allOf S0 (p0: S2) and p0: S1; S2's p0 (allOf S1) is readOnly
CYCLE = {
    "S0": {"properties": {"p0": ref("S2")}},
    "S1": {"allOf": [ref("S0"), {"properties": {"p0": ref("S1")}}]},
    "S2": {"properties": {"p0": {"allOf": [ref("S1")], "readOnly": True}}},
}


def bodies(a: Any) -> dict[str, Any]:
    """POST /a sends ``a`` (a multipart body of S1, or none), PUT /b an S0."""
    json_s0 = {"content": {"application/json": {"schema": ref("S0")}}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "T", "version": "1"},
        "servers": [{"url": "https://x.example"}],
        "paths": {"/a": {"post": {"requestBody": a}}, "/b": {"put": {"requestBody": json_s0}}},
        "components": {"schemas": CYCLE},
    }


MULTIPART_S1 = {"content": {"multipart/form-data": {"schema": ref("S1")}}}


def test_a_rebuild_of_an_operation_entering_a_cycle_is_a_fresh_build_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCPGEN_CACHE_DIR", str(tmp_path / "cache"))
    imported(bodies({"content": {"application/json": {}}}), tmp_path, keep=True)
    fresh = imported(bodies(MULTIPART_S1), tmp_path, keep=False)
    assert imported(bodies(MULTIPART_S1), tmp_path, keep=True) == fresh


def declared(schema: Any, defs: dict[str, Any], path: list[str]) -> set[str]:
    """The property names declared at ``path`` under ``schema`` (through allOf and $ref)."""
    found: set[str] = set()
    todo, seen = [(schema, 0)], set()
    while todo:
        node, depth = todo.pop()
        if not isinstance(node, dict) or (id(node), depth) in seen:
            continue
        seen.add((id(node), depth))
        if isinstance(node.get("$ref"), str):
            todo.append((defs[node["$ref"].rsplit("/", 1)[-1]], depth))
        todo += [(m, depth) for m in node.get("allOf", ())]
        props = node.get("properties", {})
        if depth == len(path):
            found |= set(props)
        elif path[depth] in props:
            todo.append((props[path[depth]], depth + 1))
    return found


def test_a_property_read_only_through_a_member_in_a_cycle_is_left_out_of_the_input() -> None:
    (a,) = [t for t in built(bodies(MULTIPART_S1)).tools if t.name == "post_a"]
    schema = a.input_schema
    body = schema["properties"]["body"]
    assert "p0" not in declared(body, schema["$defs"], ["p0"])
