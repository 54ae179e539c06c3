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


def answer(op: str, schema: Any) -> dict[str, Any]:
    content = {"application/json": {"schema": schema}}
    return {
        "get": {"operationId": op, "responses": {"200": {"description": "ok", "content": content}}}
    }


# seed 931770 of the fuzz (bench/r14_one_way/), shrunk: a copy lifted while another
# definition's was made (D -> A -> C -> B -> D) was reused by the next: the first made won
LIFTED: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "T", "version": "1"},
    "paths": {"/g0": answer("g0", ref("D")), "/q2": answer("q2", ref("B"))},
    "components": {
        "schemas": {
            "A": {"properties": {"p0": {"items": ref("C"), "writeOnly": True}}},
            "B": {"anyOf": [{"properties": {"p0": {"writeOnly": True}}}, ref("D")]},
            "C": {"properties": {"p1": ref("B")}},
            "D": {"allOf": [ref("E"), {"properties": {"p1": ref("A")}}]},
            "E": {"properties": {"p0": {"items": ref("D")}, "p1": {"allOf": [ref("D")]}}},
        }
    },
}


def test_each_definition_s_copy_is_made_afresh_whichever_operation_is_first() -> None:
    forward = built(LIFTED)
    backward = built({**LIFTED, "paths": dict(reversed(list(LIFTED["paths"].items())))})
    assert backward.shared_defs == forward.shared_defs
    assert {t.name: t.output_schema for t in backward.tools} == {
        t.name: t.output_schema for t in forward.tools
    }


# seed 931375 of the fuzz, shrunk: equal marks (a cycle's, where what its values hold is
# unknown) were lifted as other objects, each a new copy: a chain too deep to build
# (with paths() walked from each node; main cut that cycle short)
def test_equal_marks_in_a_cycle_are_lifted_once() -> None:
    def member(schema: Any) -> dict[str, Any]:
        return {"allOf": [schema]}

    keyed = {"properties": {"k": ref("B")}}
    schemas = {
        "A": {"oneOf": [ref("E")]},
        "B": {"properties": {"p0": member(ref("A"))}},
        "C": {"allOf": [ref("D"), {"properties": {"p0": member(keyed), "p2": ref("A")}}]},
        "D": {
            "allOf": [
                ref("B"),
                {"properties": {"p0": {"allOf": [{"properties": {"k": ref("E")}}, ref("B")]}}},
            ]
        },
        "E": {
            "allOf": [
                {
                    "properties": {
                        "p0": {"items": ref("E")},
                        "p1": {"readOnly": True},
                        "p2": {"properties": {"i1": ref("C")}},
                    }
                },
                member(ref("C")),
            ]
        },
    }
    body = {"content": {"application/json": {"schema": ref("C")}}}
    post = {"post": {"operationId": "p0", "requestBody": body}}
    data = {"openapi": "3.1.0", "info": {"title": "T", "version": "1"}}
    (tool,) = built({**data, "paths": {"/p0": post}, "components": {"schemas": schemas}}).tools
    assert '"readOnly"' not in json.dumps(tool.input_schema)  # (p1 left out: built at all)


# seed 913494 of the fuzz, shrunk: a copy named while a cycle's copy was under way was named by
# what it held then (a placeholder): 'CRequest29efcc' referred to 'BRequest' with /q1 first,
# to 'BRequestd06be7' with /p2 first (the first made was kept)
NAMED: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "T", "version": "1"},
    "paths": {
        "/q1": query("q1", ref("A")),
        "/p2": {
            "post": {
                "operationId": "p2",
                "requestBody": {"content": {"application/json": {"schema": {"items": ref("C")}}}},
            }
        },
    },
    "components": {
        "schemas": {
            "A": {
                "oneOf": [
                    {
                        "properties": {
                            "p0": {
                                "allOf": [
                                    {"properties": {"k": {"additionalProperties": ref("C")}}},
                                    ref("B"),
                                ]
                            }
                        }
                    }
                ]
            },
            "B": {
                "allOf": [
                    {
                        "properties": {
                            "p1": {"readOnly": True},
                            "p2": {"additionalProperties": ref("C")},
                        }
                    },
                    {"allOf": [ref("C")]},
                ]
            },
            "C": {
                "properties": {"p2": {"allOf": [{"properties": {"k": ref("D")}}, ref("B")]}},
                "required": ["p1"],
            },
            "D": {"properties": {"p2": ref("B")}},
        }
    },
}


def test_a_copy_named_under_way_does_not_depend_on_the_order_of_paths() -> None:
    forward = built(NAMED)
    backward = built({**NAMED, "paths": dict(reversed(list(NAMED["paths"].items())))})
    assert backward.shared_defs == forward.shared_defs
