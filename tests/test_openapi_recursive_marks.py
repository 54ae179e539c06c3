"""A recursive definition used with a mark (``allOf: [Node, {id: readOnly}]``) whose own
self-reference carries a mark too (``child: allOf: [Node, {id: ...}]``): the copy of
``Node`` made for the outer use referred, for its ``child``, to the copy that keeps ``id``
(a reference to a definition being copied was not copied again), so the model was offered
the ``readOnly`` ``child.id`` (request) or shown the ``writeOnly`` one (answer), which the
server never sends (never returns)."""

from __future__ import annotations

from typing import Any

import pytest
from wirekit import imported, operations, recorder, upstream

pytestmark = pytest.mark.timeout(60)

REF = {"$ref": "#/components/schemas/Node"}


def document(keyword: str) -> Any:
    mark = {"properties": {"id": {"type": "string", keyword: True}}}
    node = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "id": {"type": "string"},
            "child": {"allOf": [REF, mark]},
        },
    }
    way = "requestBody" if keyword == "readOnly" else "responses"
    content = {"content": {"application/json": {"schema": {"allOf": [REF, mark]}}}}
    op: dict[str, Any] = {"operationId": "send", "responses": {"204": {"description": "ok"}}}
    op[way] = content if way == "requestBody" else {"200": {"description": "ok", **content}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/n": {"post": op}},
        "components": {"schemas": {"Node": node}},
    }


def declared(schema: Any, defs: dict[str, Any], path: list[str]) -> set[str]:
    """The properties ``schema`` declares for the value at ``path`` (through ``allOf`` and
    ``$ref``; each definition once on a path)."""
    names: set[str] = set()
    todo, seen = [(schema, 0)], set()
    while todo:
        node, depth = todo.pop()
        if not isinstance(node, dict) or (id(node), depth) in seen:
            continue
        seen.add((id(node), depth))
        if "$ref" in node:
            todo.append((defs[node["$ref"].rsplit("/", 1)[1]], depth))
        todo += [(m, depth) for m in node.get("allOf", ())]
        props = node.get("properties", {})
        if depth == len(path):
            names |= set(props)
        elif path[depth] in props:
            todo.append((props[path[depth]], depth + 1))
    return names


@pytest.mark.parametrize("keyword", ["readOnly", "writeOnly"])
def test_the_model_is_not_offered_a_mark_of_the_inner_self_reference(keyword: str) -> None:
    (tool,) = imported(document(keyword)).tools
    schema = tool["input"] if keyword == "readOnly" else tool["output"]
    if keyword == "readOnly":
        schema = {**schema["properties"]["body"], "$defs": schema["$defs"]}
    defs = schema["$defs"]
    for path in ([], ["child"], ["child", "child"]):
        assert declared(schema, defs, path) == {"name", "child"}, (path, schema)


@pytest.mark.anyio
async def test_neither_is_sent_nor_returned() -> None:
    value = {"name": "a", "id": "1", "child": {"name": "b", "id": "2", "child": {"id": "3"}}}
    op = operations(document("readOnly"))["send"]
    with recorder() as rec:
        rec.answer(204, "application/json", b"")
        await upstream(rec.url).call(op, {"body": value})
    assert rec.seen[0].body == b'{"name": "a", "child": {"name": "b", "child": {}}}'
