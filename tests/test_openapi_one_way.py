"""A property required in one place and ``readOnly`` in another (an ``allOf`` member, the
definition a ``$ref`` beside other keywords names, a ``patternProperties`` entry matching
its name) is left out of requests, so the tool's input schema must not require it either."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from mcpgen.load import load_text
from mcpgen.openapi import import_openapi
from mcpgen.openapi.schema import SchemaConverter
from mcpgen.pipeline import load_source_text

PLAIN = {
    "type": "object",
    "required": ["id", "name"],
    "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
}
MARKED = {"type": "object", "properties": {"id": {"type": "string", "readOnly": True}}}
BODIES = {
    "allOf": {
        "allOf": [{"$ref": "#/components/schemas/Plain"}, {"$ref": "#/components/schemas/Marked"}]
    },
    "allOf, deeper": {
        "allOf": [
            {"allOf": [{"$ref": "#/components/schemas/Plain"}]},
            {"$ref": "#/components/schemas/Marked"},
        ]
    },
    "$ref beside": {"$ref": "#/components/schemas/Plain", "properties": MARKED["properties"]},
    "required beside": {
        "type": "object",
        "required": ["id"],
        "properties": {"name": {"type": "string"}},
        "allOf": [{"$ref": "#/components/schemas/Marked"}],
    },
    # a pattern's schema applies to the properties it matches: id is read-only
    "pattern": {
        **PLAIN,
        "additionalProperties": False,
        "patternProperties": {"^i": MARKED["properties"]["id"]},
    },
    # ... in any allOf member (or definition) applying to the object, wherever id is declared
    "pattern in another member": {
        "allOf": [
            {"$ref": "#/components/schemas/Plain"},
            {"allOf": [{"patternProperties": {"^i": MARKED["properties"]["id"]}}]},
        ]
    },
    "pattern in the definition referred to": {**PLAIN, "$ref": "#/components/schemas/ByPattern"},
    # the mark beside a oneOf: each branch's plan applies to an answer (a request) too
    "beside a oneOf": {"oneOf": [{"$ref": "#/components/schemas/Plain"}], **MARKED},
}


def tool_input(
    body: dict[str, Any], media_schema: dict[str, Any], marked: Any = MARKED, part: str = "input"
) -> dict[str, Any]:
    """The ``part`` schema of the tool whose body, and answer, is ``media_schema``."""
    content = {"application/json": {"schema": media_schema}}
    operation = {
        "operationId": "send",
        "requestBody": {"required": True, "content": content},
        "responses": {"200": {"description": "ok", "content": content}},
    }
    data = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/a": {"post": operation}},
        "components": {
            "schemas": {
                "Plain": PLAIN,
                "Marked": marked,
                "Body": body,
                "ByPattern": {"patternProperties": {"^i": marked["properties"]["id"]}},
            }
        },
    }
    doc = load_text(json.dumps(data, indent=1), "inline.json", Path("."), json_first=True)
    result = import_openapi(doc)
    assert not [p for p in result.problems if p.level.value == "error"]
    (tool,) = result.tools
    schema: dict[str, Any] = tool[part]
    return schema


@pytest.mark.parametrize("case", list(BODIES))
def test_read_only_elsewhere_is_not_required_of_the_body(case: str) -> None:
    schema = tool_input(BODIES[case], {"$ref": "#/components/schemas/Body"})
    valid = Draft202012Validator(schema).is_valid
    assert valid({"body": {"name": "n"}})  # id is never sent: not asked for
    if case != "required beside":
        assert not valid({"body": {}})  # name still is


@pytest.mark.parametrize("case", list(BODIES))
def test_read_only_elsewhere_is_not_required_of_a_nested_object(case: str) -> None:
    spread = {
        "type": "object",
        "required": ["inner"],
        "properties": {"inner": {"$ref": "#/components/schemas/Body"}, "n": {"type": "integer"}},
    }
    schema = tool_input(BODIES[case], spread)
    assert "inner" in schema["properties"]  # spread: one argument per property
    valid = Draft202012Validator(schema).is_valid
    assert valid({"inner": {"name": "n"}})
    if case != "required beside":
        assert not valid({"inner": {}})


@pytest.mark.parametrize("case", list(BODIES))
def test_write_only_elsewhere_is_not_required_of_the_output(case: str) -> None:
    """The same with ``writeOnly``: an answer leaves ``id`` out (OpenAPI: SHOULD NOT be
    sent in a response), so the output schema must not require it; it did, and an answer
    without it was a tool error (the server checks a result against the output schema)."""
    body, marked = json.loads(json.dumps([BODIES[case], MARKED]).replace("readOnly", "writeOnly"))
    schema = tool_input(body, {"$ref": "#/components/schemas/Body"}, marked, "output")
    valid = Draft202012Validator(schema).is_valid
    assert valid({"name": "n"})  # id is never in an answer: not asked for
    if case != "required beside":
        assert not valid({})  # name still is


def test_a_pattern_no_engine_compiles_marks_nothing() -> None:
    """A ``patternProperties`` pattern that neither engine compiles (an unbalanced group, a
    repeat count past the limit) is no traceback: it matches no property's name."""
    for pattern in ("(", "a{99999999999}"):
        body = {**PLAIN, "patternProperties": {pattern: MARKED["properties"]["id"]}}
        schema = tool_input(body, {"$ref": "#/components/schemas/Body"})
        assert schema["$defs"]["Body"]["required"] == ["id", "name"]


@pytest.mark.parametrize("name", ["inner", "default", "enum"])
def test_read_only_elsewhere_under_a_property_named_as_a_data_keyword(name: str) -> None:
    """The walk to each object skipped a property named ``default`` (or ``enum``, ``const``,
    ``examples``) as if it were data: its allOf still required the readOnly ``id``."""
    both = {"allOf": [{"$ref": "#/components/schemas/Plain"}, MARKED]}
    spread = {"type": "object", "required": [name], "properties": {name: both}}
    schema = tool_input(BODIES["allOf"], spread)
    assert Draft202012Validator(schema).is_valid({name: {"name": "n"}})


def test_write_only_stays_required_of_the_input() -> None:
    """``writeOnly``: sent, never answered. A password the API requires on create was
    optional in the tool's input (``finish`` unrequired it in both directions), so a model
    could leave it out and the API answered 400; the output still leaves it out."""
    password = {"type": "string", "writeOnly": True}
    properties = {**PLAIN["properties"], "password": password}
    body = {**PLAIN, "required": ["name", "password"], "properties": properties}
    nested = {"type": "object", "properties": {"inner": {"$ref": "#/components/schemas/Body"}}}
    spread = tool_input(body, {"$ref": "#/components/schemas/Body"})
    assert spread["required"] == ["name", "password"]
    inner = tool_input(body, nested)["$defs"]["Body"]
    assert inner["required"] == ["name", "password"]
    output = tool_input(body, {"$ref": "#/components/schemas/Body"}, part="output")
    assert "password" not in output["properties"] and output["required"] == ["name"]


def test_read_only_nested_in_the_body_is_not_offered() -> None:
    """A nested ``readOnly`` property (an ``id`` the server sets, in a body's object) was
    advertised as input, though the server leaves it out of what it sends; its definition is
    given as a ``<name>Request`` copy without it (the answer keeps it)."""
    inner = {"inner": {"$ref": "#/components/schemas/Marked"}, "n": {"type": "integer"}}
    for body in ({"type": "object", "properties": inner}, {"additionalProperties": inner["inner"]}):
        schema = tool_input(PLAIN, body)
        assert '"readOnly"' not in json.dumps(schema)
        assert schema["$defs"]["MarkedRequest"] == {"type": "object", "properties": {}}
    answer = tool_input(PLAIN, {"type": "object", "properties": inner}, part="output")
    assert answer["$defs"]["Marked"] == MARKED
    # the tool's own arguments stay, though a schema marks one readOnly (a path id's)
    data = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/a/{id}": {"put": {"parameters": [{"name": "id", "in": "path"}]}}},
    }
    put = data["paths"]["/a/{id}"]["put"]  # type: ignore[index]
    put["parameters"][0] |= {"required": True, "schema": MARKED["properties"]["id"]}
    body = {"type": "object", "properties": {"inner": MARKED}}
    put |= {"requestBody": {"content": {"application/json": {"schema": body}}}, "responses": {}}
    doc = load_text(json.dumps(data), "inline.json", Path("."), json_first=True)
    schema = import_openapi(doc).tools[0]["input"]
    assert schema["required"] == ["id"] and schema["properties"]["inner"]["properties"] == {}


def test_write_only_beside_a_reference_stays_required_of_the_input() -> None:
    """A ``writeOnly`` mark in an ``allOf`` member beside the definition that requires the
    property (``allOf: [User, {password: writeOnly}]``): it is sent, so the input must still
    require it (``relax`` unrequired it in the shared definition, both ways); the output
    leaves it out and requires it not."""
    user = {**PLAIN, "required": ["name", "password"]}
    user = {**user, "properties": {**PLAIN["properties"], "password": {"type": "string"}}}
    mark = {"properties": {"password": {"writeOnly": True}}}
    body = {"allOf": [{"$ref": "#/components/schemas/Marked"}, mark]}
    nested = {"type": "object", "properties": {"inner": {"$ref": "#/components/schemas/Body"}}}
    for media in ({"$ref": "#/components/schemas/Body"}, nested):
        schema = tool_input(body, media, user)  # (user as ``Marked``)
        valid = Draft202012Validator(schema).is_valid
        key = "inner" if media is nested else "body"
        assert valid({key: {"name": "n", "password": "p"}})
        assert not valid({key: {"name": "n"}})  # it was valid: the API answered 400
    output = tool_input(body, {"$ref": "#/components/schemas/Body"}, user, "output")
    assert Draft202012Validator(output).is_valid({"name": "n"})
    assert "password" not in json.dumps(output)


def test_read_only_beside_a_reference_is_not_offered() -> None:
    """The same with ``readOnly``: the property is left out of the input, not just not
    required (the definition beside the mark still offered it)."""
    body = {"allOf": [{"$ref": "#/components/schemas/Plain"}, MARKED]}
    schema = tool_input(body, {"$ref": "#/components/schemas/Body"})
    assert Draft202012Validator(schema).is_valid({"body": {"name": "n"}})
    assert '"id"' not in json.dumps(schema)


def test_a_recursive_definition_beside_a_mark_imports() -> None:
    """``Body: allOf: [User, {password: writeOnly}]`` where ``User`` has a property of the
    same ``allOf``: ``relax``'s copies, made in place, nested past the depth mcpgen walks and
    the document was refused. The input requires the password at each level."""
    both = {"allOf": [{"$ref": "#/components/schemas/Marked"}, {"properties": {"password": {}}}]}
    both["allOf"][1]["properties"]["password"]["writeOnly"] = True
    user = {**PLAIN, "required": ["name", "password"], "properties": {**PLAIN["properties"]}}
    user["properties"] |= {"password": {"type": "string"}, "again": both, "id": {}}
    schema = tool_input(both, {"$ref": "#/components/schemas/Body"}, user)
    valid = Draft202012Validator(schema).is_valid
    assert valid({"body": {"name": "a", "password": "p", "again": {"name": "b", "password": "q"}}})
    assert not valid({"body": {"name": "a", "password": "p", "again": {"name": "b"}}})
    output = tool_input(both, {"$ref": "#/components/schemas/Body"}, user, "output")
    assert Draft202012Validator(output).is_valid({"name": "a"})


@pytest.mark.parametrize("keyword, part", [("readOnly", "input"), ("writeOnly", "output")])
def test_a_mark_on_a_nested_property_in_a_sibling_member_is_not_required(
    keyword: str, part: str
) -> None:
    """``Body: allOf[{u: Plain (requires id)}, {u: {id: readOnly}}]``: a request leaves
    ``u.id`` out (the second member's plan), but the schema asked for it (``writeOnly``: every
    answer, stripped of it, was refused as not matching the output schema)."""
    nested = {"properties": {"u": {"properties": {"id": {"type": "string", keyword: True}}}}}
    outer = {
        "type": "object",
        "required": ["u"],
        "properties": {"u": {"$ref": "#/components/schemas/Plain"}},
    }
    schema = tool_input(
        {"allOf": [outer, nested]}, {"$ref": "#/components/schemas/Body"}, part=part
    )
    valid = Draft202012Validator(schema).is_valid
    value = {"u": {"name": "n"}}
    assert valid({"body": value} if part == "input" else value)
    assert not valid({"body": {"u": {}}} if part == "input" else {"u": {}})  # name still is


def chain(name: str, depth: int, bottom: dict[str, Any]) -> dict[str, Any]:
    """``<name>0`` is ``bottom``; each next link has five properties referring to the last."""
    links = {f"{name}0": bottom}
    for d in range(1, depth + 1):
        to = {"$ref": f"#/components/schemas/{name}{d - 1}"}
        links[f"{name}{d}"] = {"type": "object", "properties": {f"p{i}": to for i in range(5)}}
    return links


@pytest.mark.parametrize("shape", ["marks in a sibling chain", "a chain"])
def test_a_chain_of_references_imports_at_once(shape: str) -> None:
    """Each definition is looked at once, and a copy of one without a sibling's marks (the
    readOnly ``n`` at the bottom of ``M8``, in ``L8``'s ``p0.p0...n``) is a definition, not
    one copy per path to it: a 5 KB document took 35 s and 800 MB (5 ** 8 paths)."""
    bottom = {"type": "string", "writeOnly": True}
    schemas = chain("L", 8, {"required": ["pw"], "properties": {"pw": bottom, "n": {}}})
    top: dict[str, Any] = {"$ref": "#/components/schemas/L8"}
    if shape == "marks in a sibling chain":
        schemas |= chain("M", 8, {"properties": {"n": {"type": "string", "readOnly": True}}})
        top = {"allOf": [top, {"$ref": "#/components/schemas/M8"}]}
    content = {"application/json": {"schema": {"$ref": "#/components/schemas/Top"}}}
    operation = {
        "operationId": "doIt",
        "requestBody": {"content": content},
        "responses": {"200": {"description": "ok", "content": content}},
    }
    data = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": "http://127.0.0.1:1"}],
        "paths": {"/x": {"post": operation}},
        "components": {"schemas": {**schemas, "Top": top}},
    }
    started = time.monotonic()
    loaded = load_source_text(json.dumps(data), "chain.json", Path("."))
    assert time.monotonic() - started < 5  # (0.1 s)
    assert loaded.manifest is not None, loaded.problems
    (tool,) = loaded.manifest.tools
    size = len(json.dumps([tool.input_schema, tool.output_schema]))
    assert size < 20_000, size  # (linear in the document)
    text = json.dumps(tool.input_schema)
    assert ('"n"' in text) is (shape == "a chain") and '"pw"' in text  # (n is readOnly in M)
    assert '"pw"' not in json.dumps(tool.output_schema)


def test_the_first_pass_takes_no_name() -> None:
    """``leave_out`` first asks which definitions change, making copies of those a mark
    beside them lifts; it named them (taken, kept in the converter's definitions), though
    the copies used are made again once the changed definitions have their new names
    (``User``'s copy refers to ``FriendAnswer``, not ``Friend``): a name reserved for
    nothing (``UserAnswer2c48aa``) beside the one used."""
    made: list[SchemaConverter] = []
    init = SchemaConverter.__init__

    def spied(self: SchemaConverter, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        made.append(self)

    def ref(name: str) -> dict[str, str]:
        return {"$ref": f"#/components/schemas/{name}"}

    secret = {"type": "string", "writeOnly": True}
    schemas = {
        "User": {"required": ["pw"], "properties": {"pw": {}, "friend": ref("Friend")}},
        "Friend": {"type": "object", "properties": {"secret": secret, "n": {}}},
        "Body": {"allOf": [ref("User"), {"properties": {"pw": secret}}]},
        "Top": {"type": "object", "properties": {"b": ref("Body")}},
    }
    answer = {"description": "ok", "content": {"application/json": {"schema": ref("Top")}}}
    data = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/a": {"get": {"operationId": "get", "responses": {"200": answer}}}},
        "components": {"schemas": schemas},
    }
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SchemaConverter, "__init__", spied)
        (tool,) = import_openapi(load_text(json.dumps(data), "a.json", Path("."))).tools
    used = set(tool["output"]["$defs"])
    (lifted,) = [n for n in used if n.startswith("UserAnswer")]
    assert Draft202012Validator(tool["output"]).is_valid({"b": {"friend": {"n": "x"}}})
    assert {n for n in made[0].naming.taken if n.startswith("UserAnswer")} <= {lifted, "UserAnswer"}
    assert {n for n in made[0].defs if n.startswith("UserAnswer")} <= {lifted, "UserAnswer"}
