"""A property the document marks ``writeOnly`` (OpenAPI: SHOULD NOT be in a response) is
left out of what a tool answers, wherever the answer's schema puts it: an upstream that
echoes a ``password`` back to a local recorder on 127.0.0.1 never reaches the MCP client,
in the structured content nor in its text. Only an operation whose answer has one pays."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from wirekit import imported, operations, recorder, upstream

from mcpgen.runtime.schemas import validator

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

USER = {
    "type": "object",
    "required": ["name", "password"],
    "properties": {
        "name": {"type": "string"},
        "password": {"type": "string", "writeOnly": True},
        "pin": {"$ref": "#/components/schemas/Secret"},
    },
}
PLAIN = {"type": "object", "properties": {"name": {"type": "string"}}}
BOT = {  # its password is no secret: only User's is
    "type": "object",
    "required": ["name", "password"],
    "properties": {"name": {"type": "string"}, "password": {"type": "string"}, "bot": {}},
}
EITHER = {"oneOf": [{"$ref": "#/components/schemas/User"}, {"$ref": "#/components/schemas/Bot"}]}
SECRET = {"type": "string", "writeOnly": True}
REF = {"$ref": "#/components/schemas/User"}
NODE = {  # a child: this, its password writeOnly (its own kept)
    "type": "object",
    "required": ["name", "password"],
    "properties": {
        "name": {"type": "string"},
        "password": {"type": "string"},
        "child": {
            "allOf": [{"$ref": "#/components/schemas/Node"}, {"properties": {"password": SECRET}}]
        },
    },
}
ECHO = {"name": "ann", "password": "hunter2", "pin": "1234"}
PW = {"name": "c", "password": "hunter2"}
SHAPES: dict[str, tuple[Any, Any, Any]] = {  # response schema, upstream answer, the result
    "object": (REF, ECHO, {"name": "ann"}),
    "nested": (
        {"type": "object", "properties": {"user": REF}},
        {"user": ECHO, "n": 1},
        {"user": {"name": "ann"}, "n": 1},
    ),
    "array": ({"type": "array", "items": REF}, [ECHO, ECHO], {"result": [{"name": "ann"}] * 2}),
    "map": (
        {"type": "object", "additionalProperties": REF},
        {"a": ECHO},
        {"a": {"name": "ann"}},
    ),
    "allOf": (
        {"allOf": [{"$ref": "#/components/schemas/Plain"}, REF]},
        ECHO,
        {"name": "ann"},
    ),
    "allOf member's mark": (
        {"allOf": [USER | {"properties": {"name": {}, "password": {}, "pin": {}}}, REF]},
        ECHO,
        {"name": "ann"},
    ),
    "pattern in another allOf member": (
        {"allOf": [{"$ref": "#/components/schemas/Plain"}, {"patternProperties": {"^p": SECRET}}]},
        ECHO,
        {"name": "ann"},
    ),
    "mark beside a oneOf": (
        {"oneOf": [USER | {"properties": PLAIN["properties"] | {"password": {}}}], **PLAIN}
        | {"properties": {"password": SECRET}},
        {"name": "ann", "password": "hunter2"},
        {"name": "ann"},
    ),
    "mark on a nested property in a sibling member": (
        {
            "allOf": [
                {"type": "object", "properties": {"user": USER | {"properties": {}}}},
                {"properties": {"user": {"properties": {"password": SECRET}}}},
            ]
        },
        {"user": {"name": "ann", "password": "hunter2"}},
        {"user": {"name": "ann"}},
    ),
    "mark on array items' property in a sibling member": (
        {
            "allOf": [
                {
                    "type": "object",
                    "properties": {"users": {"type": "array", "items": USER | {"properties": {}}}},
                },
                {"properties": {"users": {"items": {"properties": {"password": SECRET}}}}},
            ]
        },
        {"users": [{"name": "ann", "password": "hunter2"}]},
        {"users": [{"name": "ann"}]},
    ),
    "a self-reference beside its mark": (
        {"$ref": "#/components/schemas/Node"},
        {
            "name": "a",
            "password": "top",
            "child": {"name": "b", "password": "hunter2", "child": PW},
        },
        {"name": "a", "password": "top", "child": {"name": "b", "child": {"name": "c"}}},
    ),
    "mark in one oneOf branch": (EITHER, PW, {"name": "c"}),
    "mark in one oneOf branch, nested": (
        {"type": "object", "properties": {"who": EITHER}},
        {"who": PW},
        {"who": {"name": "c"}},
    ),
    "array of writeOnly items": (
        {"type": "object", "properties": {"keys": {"type": "array", "items": SECRET}}},
        {"keys": ["k1", "k2"], "n": 1},
        {"keys": [], "n": 1},
    ),
}


def document(response: Any) -> Any:
    """``POST /users``: a User body (its password sent) answered with ``response``."""
    body = {"content": {"application/json": {"schema": REF}}, "required": True}
    answer = {"description": "ok", "content": {"application/json": {"schema": response}}}
    op = {"operationId": "send", "requestBody": body, "responses": {"200": answer}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/users": {"post": op}},
        "components": {
            "schemas": {"User": USER, "Plain": PLAIN, "Secret": SECRET, "Node": NODE, "Bot": BOT}
        },
    }


@pytest.mark.parametrize("shape", list(SHAPES))
async def test_a_write_only_property_an_upstream_echoes_is_left_out_of_the_result(
    shape: str,
) -> None:
    """It passed through to the client (only the output schema knew of it), at the top, in
    a nested object, an array's items, a map's values, an ``allOf`` member (the mark in one
    member, the property in another) and behind a ``$ref`` (``pin``). A definition whose
    child is itself beside the mark: the child's copy without it referred, for the child's
    child, to the definition requiring it (every answer two levels deep was refused). A
    mark in one ``oneOf`` branch: the value may be that branch's, so it is left out whichever
    the value matches (it reached the client; at the top, the answer still matching both
    branches failed the ``oneOf``: the output schema's is an ``anyOf``, its branches cut)."""
    schema, echoed, expected = SHAPES[shape]
    data = document(schema)
    (tool,) = imported(data).tools
    op = operations(data)["send"]
    with recorder() as rec:
        rec.answer(200, "application/json", json.dumps(echoed).encode())
        result = await upstream(rec.url).call(op, ECHO, None, validator(tool["output"]))
    assert json.loads(rec.seen[0].body) == ECHO  # a request sends it: only answers omit it
    assert not result.is_error, result.content
    assert result.structured_content == expected
    shown = json.dumps(result.structured_content) + str(result.content)
    assert "hunter2" not in shown and "1234" not in shown and "k1" not in shown


async def test_an_answer_without_write_only_properties_costs_nothing_per_call() -> None:
    """The build decides: an operation whose answer has no ``writeOnly`` property carries no
    plan, so ``answers.result`` does no extra walk of its answers."""
    op = operations(document({"type": "object", "properties": {"password": {}}}))["send"]
    assert "writeOnly" not in op
    with recorder() as rec:
        rec.answer(200, "application/json", b'{"password": "p"}')
        result = await upstream(rec.url).call(op, ECHO)
    assert result.structured_content == {"password": "p"}
    assert "writeOnly" in operations(document(REF))["send"]


async def test_through_the_mcp_server_the_client_never_sees_it() -> None:
    """The whole way: the model built from the document, its ``_spec.json``, the
    runtime's server and an SDK client in memory. On main the client got the password in
    ``structuredContent`` and in the text (the SDK checks a result, it strips nothing)."""
    from mcp.client import Client

    from mcpgen.load import load_text
    from mcpgen.pipeline import load_document
    from mcpgen.render.spec import spec_json
    from mcpgen.runtime.server import Handlers, build_server

    with recorder() as rec:
        data = document(REF)
        data["servers"] = [{"url": rec.url}]
        doc = load_text(json.dumps(data), "api.json", Path("."), json_first=True)
        loaded = load_document(doc)
        assert loaded.manifest is not None, loaded.problems
        spec = json.loads(spec_json(loaded.manifest))  # the _spec.json a build writes
        rec.answer(200, "application/json", json.dumps(ECHO).encode())
        async with Client(build_server(spec, Handlers())) as client:
            result = await client.call_tool("send", {"name": "ann", "password": "p"})
    assert json.loads(rec.seen[0].body) == {"name": "ann", "password": "p"}
    assert result.structured_content == {"name": "ann"}
    assert "hunter2" not in str(result.content) and "1234" not in str(result.content)


async def test_an_answer_whose_tool_has_no_output_schema_leaves_it_out_too() -> None:
    """A 204 beside the 200 takes the tool's output schema away (a client would refuse a
    result without structured content); the 200's JSON still reached the client with the
    password, the build having made no plan for an answer without a schema."""
    data = document(REF)
    data["paths"]["/users"]["post"]["responses"]["204"] = {"description": "none"}
    (tool,) = imported(data).tools
    assert "output" not in tool or tool["output"] is None
    with recorder() as rec:
        rec.answer(200, "application/json", json.dumps(ECHO).encode())
        result = await upstream(rec.url).call(operations(data)["send"], ECHO)
    assert result.structured_content == {"name": "ann"}
    assert "hunter2" not in str(result.content)


async def test_each_success_status_has_its_own_plan() -> None:
    """A 201 whose schema differs from the 200's: only the 200's plan existed, so the 201
    echoing the password passed through. A 200's own readable ``password`` stays."""
    data = document({"type": "object", "properties": {"password": {"type": "string"}}})
    created = {"description": "made", "content": {"application/json": {"schema": REF}}}
    data["paths"]["/users"]["post"]["responses"]["201"] = created
    (tool,) = imported(data).tools
    op = operations(data)["send"]
    for status, answer, expected in [
        (201, ECHO, {"name": "ann"}),
        (200, {"password": "made-up"}, {"password": "made-up"}),
        (202, ECHO, {"name": "ann"}),  # undocumented: what any documented answer marks
    ]:
        with recorder() as rec:
            rec.answer(status, "application/json", json.dumps(answer).encode())
            result = await upstream(rec.url).call(op, ECHO, None, validator(tool["output"]))
        assert result.structured_content == expected, (status, result.content)


WRONG_SHAPES: dict[str, tuple[Any, Any]] = {  # response schema, an answer it refuses
    "array for an object": (REF, [ECHO]),
    "object for an array of writeOnly items": (
        {"type": "object", "properties": {"keys": {"type": "array", "items": SECRET}}},
        {"keys": {"a": "hunter2"}},
    ),
    "string for a map's object": (
        {"type": "object", "additionalProperties": REF},
        {"a": "hunter2"},
    ),
    "wrong type of a writeOnly value": (
        {"type": "object", "properties": {"user": REF}},
        {"user": [{"password": "hunter2"}]},
    ),
}


@pytest.mark.parametrize("shape", [*WRONG_SHAPES, "JSON sent as text/plain"])
async def test_an_answer_of_the_wrong_shape_is_refused_without_quoting_it(shape: str) -> None:
    """The plan cannot strip an answer of another shape, and the output schema's error
    quoted it (``[{'name': 'ann', 'password': 'hunter2', ...}] is not of type 'object'``),
    as the error for an answer not JSON quoted its start."""
    schema, answer = WRONG_SHAPES.get(shape, (REF, ECHO))
    data = document(schema)
    (tool,) = imported(data).tools
    media = "text/plain" if shape not in WRONG_SHAPES else "application/json"
    with recorder() as rec:
        rec.answer(200, media, json.dumps(answer).encode())
        result = await upstream(rec.url).call(
            operations(data)["send"], ECHO, None, validator(tool["output"])
        )
    assert result.is_error
    message = " ".join(c.text for c in result.content)
    assert ("does not match" if media != "text/plain" else "where application/json") in message
    assert "hunter2" not in message and "1234" not in message


@pytest.mark.parametrize("schema", [{"$ref": "#/components/schemas/Secret"}, SECRET])
async def test_an_answer_wholly_write_only_answers_nothing(schema: Any) -> None:
    """A response whose whole body is ``writeOnly`` (a bare secret string) was passed on
    as ``{"result": "hunter2"}``; now the tool advertises no output schema (the build warns)
    and its result is a success with no content, as a 204 is."""
    data = document(schema)
    (tool,) = imported(data).tools
    assert tool.get("output") is None
    with recorder() as rec:
        rec.answer(200, "application/json", b'"hunter2"')
        result = await upstream(rec.url).call(operations(data)["send"], ECHO)
    assert not result.is_error
    assert result.content == [] and result.structured_content is None


async def test_the_shapes_advertised_leave_it_out() -> None:
    """The answer never has it, so no shape of an answer shows it: tools/list's
    ``outputSchema`` (compact and full), the code-mode docs of the result, the typed
    client's output model. They listed ``password`` and ``pin`` (a nested ``user`` too, its
    definition shared with the body, whose input still has both); a ``pin`` required through
    a ``$ref`` to a ``writeOnly`` definition failed the output schema once left out."""
    from mcp.client import Client

    from mcpgen.load import load_text
    from mcpgen.pipeline import load_document
    from mcpgen.render.models import model_schemas
    from mcpgen.render.spec import spec_json
    from mcpgen.runtime.code_docs import detail
    from mcpgen.runtime.operation_docs import docs_from_spec
    from mcpgen.runtime.server import Handlers, build_server

    nested = {"type": "object", "properties": {"user": REF, "me": REF}, "required": ["user"]}
    pinned = {
        "type": "object",
        "required": ["pin"],
        "properties": {"pin": USER["properties"]["pin"]},
    }
    for schema, seen in [(REF, ECHO), (nested, {"user": ECHO, "me": ECHO}), (pinned, ECHO)]:
        with recorder() as rec:
            data = document(schema)
            data["servers"] = [{"url": rec.url}]
            doc = load_text(json.dumps(data), "api.json", Path("."), json_first=True)
            manifest = load_document(doc).manifest
            assert manifest is not None
            spec = json.loads(spec_json(manifest))
            rec.answer(200, "application/json", json.dumps(seen).encode())
            async with Client(build_server(spec, Handlers())) as client:
                (listed,) = (await client.list_tools()).tools
                result = await client.call_tool("send", {"name": "ann", "password": "p"})
        assert not result.is_error, result.content
        (doc_,) = docs_from_spec(spec)
        model = model_schemas(manifest)[manifest.tools[0].output_model or ""]
        shapes = [listed.output_schema, doc_.output_schema, model]
        for shape in [*shapes, detail(doc_).split("->")[1].splitlines()[0]]:
            text = json.dumps(shape)
            assert "password" not in text and "pin" not in text, text
        assert "password" in json.dumps(listed.input_schema)
