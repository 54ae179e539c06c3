"""Review r12 (round 25): proofs of what the merged changes left open (the one-way copies)."""

from __future__ import annotations

from typing import Any


def _schema_ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


# One POST sending a B; C (allOf D) refers to itself and, writeOnly, to A; D is oneOf A or
# an object holding a B; A holds a C; B has a readOnly p0 (fuzz seed 1056, minimised)
DANGLING = {
    "A": {"properties": {"p0": _schema_ref("C")}},
    "B": {"properties": {"p0": {"readOnly": True}, "p2": _schema_ref("D")}},
    "C": {
        "allOf": [
            _schema_ref("D"),
            {
                "type": "object",
                "properties": {
                    "p0": {**_schema_ref("A"), "writeOnly": True},
                    "p1": _schema_ref("C"),
                    "p2": _schema_ref("D"),
                },
            },
        ]
    },
    "D": {"oneOf": [_schema_ref("A"), {"type": "object", "properties": {"p0": _schema_ref("B")}}]},
}


# One GET answering an A: A, C and D are each oneOf another (a cycle through composition)
# or an object; readOnly and writeOnly properties on the way (fuzz seed 730, minimised)
PLACEHOLDER = {
    "A": {
        "oneOf": [
            _schema_ref("B"),
            {
                "type": "object",
                "properties": {
                    "p0": _schema_ref("C"),
                    "p1": {"allOf": [_schema_ref("D")], "readOnly": True},
                },
            },
        ]
    },
    "B": {"properties": {"p1": {"items": _schema_ref("C")}, "p2": {"writeOnly": True}}},
    "C": {
        "oneOf": [
            _schema_ref("A"),
            {
                "type": "object",
                "properties": {
                    "p0": _schema_ref("D"),
                    "p1": _schema_ref("B"),
                    "p2": {**_schema_ref("D"), "readOnly": True},
                },
            },
        ]
    },
    "D": {
        "oneOf": [
            _schema_ref("A"),
            {
                "type": "object",
                "properties": {
                    "p0": {"type": "string"},
                    "p1": _schema_ref("B"),
                    "p2": {"type": "array", "items": _schema_ref("A"), "readOnly": True},
                },
            },
        ]
    },
}


def _problems(schemas: dict[str, Any], operation: dict[str, Any]) -> list[str] | None:
    """The errors of a build of one operation over ``schemas`` (None: it built)."""
    import json
    from pathlib import Path

    from mcpgen.pipeline import load_source_text

    path = "post" if "requestBody" in operation else "get"
    data = {
        "openapi": "3.1.0",
        "info": {"title": "T", "version": "1"},
        "servers": [{"url": "https://x.example"}],
        "paths": {"/p1": {path: {"operationId": "p1", **operation}}},
        "components": {"schemas": schemas},
    }
    loaded = load_source_text(json.dumps(data), "api.json", Path("."))
    if loaded.manifest is not None:
        return None
    return [p.message for p in loaded.problems.items if p.level.name == "ERROR"]


def test_one_way_copies_leave_no_placeholder() -> None:
    answer = {"content": {"application/json": {"schema": _schema_ref("A")}}}
    operation = {"responses": {"200": {"description": "ok", **answer}}}
    unmarked = json_without(PLACEHOLDER, ("readOnly", "writeOnly"))
    assert _problems(unmarked, operation) is None  # (the spec itself builds)
    assert _problems(PLACEHOLDER, operation) is None  # "not 'D\\x00'"


def json_without(node: Any, keys: tuple[str, ...]) -> Any:
    if isinstance(node, dict):
        return {k: json_without(v, keys) for k, v in node.items() if k not in keys}
    if isinstance(node, list):
        return [json_without(v, keys) for v in node]
    return node


def test_one_way_copies_never_refer_to_a_missing_copy() -> None:
    body = {"content": {"application/json": {"schema": _schema_ref("B")}}}
    operation = {"responses": {"204": {"description": "-"}}, "requestBody": body}
    unmarked = json_without(DANGLING, ("readOnly", "writeOnly"))
    assert _problems(unmarked, operation) is None  # (the spec itself builds)
    assert _problems(DANGLING, operation) is None  # "'#/$defs/CRequest…' does not resolve"
