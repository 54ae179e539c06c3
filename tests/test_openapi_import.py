"""The OpenAPI importer: OpenAPI 3.0 / 3.1 and Swagger 2.0 documents as manifest tools."""

from __future__ import annotations

import json
import random
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from mcpgen.check.semantics import check_semantics
from mcpgen.check.structure import check_structure
from mcpgen.cli import main
from mcpgen.load import MAX_DOCUMENT_BYTES, Document, load_file, load_text
from mcpgen.openapi import (
    BODY_CONTENT_TYPES,
    OPTIONS_FILE,
    Body,
    OpenAPIImport,
    Operation,
    Param,
    import_openapi,
    is_openapi,
    naming,
    sources,
)
from mcpgen.openapi import importer as importer_module
from mcpgen.openapi.inputs import FILE_NOTE
from mcpgen.openapi.schema import SchemaConverter
from mcpgen.problems import Level, Problem

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "openapi"


# -- helpers ---------------------------------------------------------------------------------


def load(name: str) -> Document:
    return load_file(FIXTURES / name, max_bytes=MAX_DOCUMENT_BYTES)


def fixture(name: str, options: dict[str, Any] | None = None) -> OpenAPIImport:
    return import_openapi(load(name), options)


def inline(
    data: Any, options: dict[str, Any] | None = None, folder: Path = FIXTURES
) -> OpenAPIImport:
    """Import a document given as data (JSON text, so positions are known)."""
    doc = load_text(json.dumps(data, indent=1), "inline.json", folder, json_first=True)
    return import_openapi(doc, options)


def doc30(paths: dict[str, Any], schemas: dict[str, Any] | None = None, **extra: Any) -> Any:
    return {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": paths,
        "components": {"schemas": schemas or {}},
        **extra,
    }


def ok(description: str = "ok", schema: Any = None, media: str = "application/json") -> Any:
    response: dict[str, Any] = {"description": description}
    if schema is not None:
        response["content"] = {media: {"schema": schema}}
    return response


def by_name(result: OpenAPIImport) -> dict[str, tuple[dict[str, Any], Operation]]:
    return {t["name"]: (t, o) for t, o in zip(result.tools, result.operations, strict=True)}


def errors(result: OpenAPIImport) -> list[Problem]:
    return [p for p in result.problems if p.level is Level.ERROR]


def warnings(result: OpenAPIImport) -> list[Problem]:
    return [p for p in result.problems if p.level is Level.WARNING]


def find(problems: list[Problem], text: str) -> Problem:
    matching = [p for p in problems if text in p.message]
    assert matching, f"no problem mentions {text!r}: {[p.format() for p in problems]}"
    return matching[0]


def without_defs(schema: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k != "$defs"}


ALL_FIXTURES = ["petstore.yaml", "zoo-3.1.yaml", "swagger-2.0.yaml", "broken.yaml"]


# -- detection -------------------------------------------------------------------------------


def test_is_openapi() -> None:
    assert is_openapi({"openapi": "3.0.3"})
    assert is_openapi({"openapi": "3.1.0"})
    assert is_openapi({"openapi": 3.0})  # an unquoted YAML version
    assert is_openapi({"swagger": "2.0"})
    assert not is_openapi({"swagger": "1.2"})
    assert not is_openapi({"openapi": "4.0.0"})
    assert not is_openapi({"mcpgen": 1, "server": {"name": "x"}})
    assert not is_openapi(["openapi"])
    assert not is_openapi(None)
    assert all(is_openapi(load(name).data) for name in ALL_FIXTURES)


# -- the Petstore (3.0) ----------------------------------------------------------------------


def test_petstore_tools_and_operations() -> None:
    result = fixture("petstore.yaml", {"deprecated": True})
    assert result.version == "3.0"
    assert result.info["title"] == "Petstore"
    assert errors(result) == []
    tools = by_name(result)
    assert list(tools) == [
        "list_pets",
        "create_pet",
        "get_pet",
        "replace_pet",
        "delete_pet",
        "put_pets_by_pet_id_photo",
        "get_owners_by_owner_id",
        "list_categories",
        "sample_errors",
        "get_stats",
    ]
    tool, op = tools["list_pets"]
    assert tool["title"] == "List pets"
    assert tool["description"] == "Returns the pets, a page at a time."
    assert tool["annotations"] == {
        "readOnlyHint": True,
        "idempotentHint": True,
        "openWorldHint": True,
    }
    assert op.method == "GET" and op.path == "/pets" and op.operation_id == "listPets"
    assert op.tags == ["pets"]
    assert op.security == [{"apiKey": []}]
    assert [p.name for p in op.parameters] == ["limit", "status"]  # Accept is set by mcpgen
    assert tools["delete_pet"][0]["annotations"]["destructiveHint"] is True
    assert tools["delete_pet"][0]["description"].startswith("Deprecated.")
    assert tools["delete_pet"][1].security == []  # operation-level `security: []`
    # by default an operation marked deprecated is left out
    assert "delete_pet" not in by_name(fixture("petstore.yaml"))
    assert (
        'expected boolean, got string "yes"'
        in errors(fixture("petstore.yaml", {"deprecated": "yes"}))[0].message
    )
    assert tools["create_pet"][0]["annotations"]["idempotentHint"] is False
    assert tools["replace_pet"][0]["annotations"]["idempotentHint"] is True
    for tool, _ in tools.values():
        assert set(tool) <= {"name", "title", "description", "input", "output", "annotations"}
        assert tool["input"]["type"] == "object"
        assert tool["annotations"]["openWorldHint"] is True


def test_petstore_servers_and_security_schemes() -> None:
    result = fixture("petstore.yaml")
    assert result.servers == [
        {"url": "https://eu.petstore.example/v1", "description": "Production"},
        {"url": "/relative"},
    ]
    assert result.security_schemes == {
        "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
        "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
        "oauth": {
            "type": "oauth2",
            "tokenUrl": "https://auth.petstore.example/token",
            "scopes": {"pets:read": "Read pets"},
        },
        # kept for openapi.credentials (token exchange or a header), with a warning
        "browser": {"type": "oauth2", "flows": ["authorizationCode"], "scopes": {}},
    }
    problem = find(warnings(result), "authorizationCode")  # not dropped silently
    assert problem.field == "#/components/securitySchemes/browser"
    assert "openapi.credentials.browser" in problem.message


def test_schemes_that_would_read_one_environment_variable_are_refused() -> None:
    """``api-key`` and ``api_key``: one SEC_API_API_KEY sent to both headers."""
    schemes = {n: {"type": "apiKey", "in": "header", "name": n} for n in ("api-key", "api_key")}
    result = inline(doc30({}, components={"securitySchemes": schemes}))
    problem = find(errors(result), "API_KEY")
    assert problem.field == "#/components/securitySchemes/api_key"


@pytest.mark.parametrize(
    ("second", "credentials", "variable"),
    [  # basic's _USERNAME; a token exchange's _CLIENT_ID; the server's own <PREFIX>_TIMEOUT
        ({"type": "apiKey", "in": "header", "name": "U"}, {}, "BASIC_USERNAME"),
        (
            {"type": "apiKey", "in": "query", "name": "c"},
            {"basic": {"from": "tokenExchange"}},
            "BASIC_CLIENT_ID",
        ),
        ({"type": "http", "scheme": "bearer"}, {}, "TIMEOUT"),
    ],
)
def test_every_variable_a_scheme_reads_is_its_own(
    second: dict[str, Any], credentials: dict[str, Any], variable: str
) -> None:
    name = variable.lower()
    schemes = {"basic": {"type": "http", "scheme": "basic"}, name: second}
    data = doc30({}, components={"securitySchemes": schemes})
    problem = find(errors(inline(data, {"credentials": credentials})), f"..._{variable},")
    assert problem.field == f"#/components/securitySchemes/{name}"
    if variable.startswith("BASIC_"):  # from a header, the basic scheme reads no variable
        assert not errors(
            inline(data, {"credentials": {"basic": {"from": "header", "header": "X-B"}}})
        )


def test_path_level_ref_parameter() -> None:
    tool, op = by_name(fixture("petstore.yaml"))["get_pet"]
    assert op.parameters == [Param("petId", "path", "petId", True)]
    assert tool["input"] == {
        "type": "object",
        "properties": {
            "petId": {"type": "integer", "format": "int64", "description": "The pet's id"}
        },
        "additionalProperties": False,
        "required": ["petId"],
    }


def test_ref_request_body_is_spread_and_clash_rule() -> None:
    tool, op = by_name(fixture("petstore.yaml"))["create_pet"]
    # query `tag` and body property `tag` clash: both get their location as a prefix
    assert op.parameters == [Param("tag", "query", "query_tag", False)]
    assert op.body == Body(
        argument=None,
        content_type="application/json",
        required=True,
        properties=["name", "tag", "pet", "owner"],  # readOnly createdAt is not sent
        arguments=["name", "body_tag", "pet", "owner"],
        media_type="application/json",
        # owner.pets[] are Pets (NewPet and more): their readOnly createdAt is not sent either
        read_only={
            "properties": {"owner": {"ref": "Owner"}},
            "$defs": {
                "NewPet": {"drop": ["createdAt"], "properties": {"owner": {"ref": "Owner"}}},
                "Owner": {"properties": {"pets": {"items": {"ref": "Pet"}}}},
                "Pet": {"drop": ["createdAt"], "all": [{"ref": "NewPet"}]},
            },
        },
    )
    schema = tool["input"]
    assert list(schema["properties"]) == ["query_tag", "name", "body_tag", "pet", "owner"]
    assert schema["required"] == ["name", "pet"]  # createdAt: readOnly, so not required
    assert schema["properties"]["query_tag"]["description"].startswith("Reject the pet")
    assert schema["properties"]["body_tag"] == {"type": ["string", "null"]}


def test_argument_names_rule() -> None:
    assert naming.argument_names([("path", "id"), ("query", "limit"), ("body", "id")]) == [
        "path_id",
        "limit",
        "body_id",
    ]
    # compared as Python identifiers: petId and pet_id clash
    assert naming.argument_names([("query", "petId"), ("body", "pet_id")]) == [
        "query_petId",
        "body_pet_id",
    ]
    # a prefixed name that is taken gets a number
    assert naming.argument_names([("query", "id"), ("body", "id"), ("body", "query_id")]) == [
        "query_id",
        "body_id",
        "query_id_2",
    ]
    assert naming.argument_names([("query", "body"), ("body", "body")]) == [
        "query_body",
        "body_body",
    ]


def test_ref_response_and_allof_output() -> None:
    tool, op = by_name(fixture("petstore.yaml"))["replace_pet"]
    output = tool["output"]
    assert output["type"] == "object"  # allOf of objects: an object, said explicitly
    assert output["allOf"][0] == {"$ref": "#/$defs/NewPet"}
    assert set(output["$defs"]) >= {"NewPet", "Category", "Cat", "Dog", "Owner"}
    assert op.wrapped_output is False
    # a body that is not a plain object (allOf) is passed whole
    assert op.body is not None and op.body.argument == "body"
    assert tool["input"]["properties"]["body"] == {"$ref": "#/$defs/PetRequest"}
    assert "createdAt" not in tool["input"]["$defs"]["NewPetRequest"]["properties"]  # readOnly


def test_recursive_schema_stays_a_reference_cycle() -> None:
    tool, _ = by_name(fixture("petstore.yaml"))["list_categories"]
    output = tool["output"]
    assert output["properties"]["parent"] == {"$ref": "#/$defs/Category"}
    assert output["properties"]["children"]["items"] == {"$ref": "#/$defs/Category"}
    category = output["$defs"]["Category"]
    assert category["properties"]["parent"] == {"$ref": "#/$defs/Category"}
    assert list(output["$defs"]) == ["Category"]


def test_external_file_refs(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded: list[str] = []
    real = sources.load_file

    def counting(path: Path, max_bytes: int) -> Document:
        loaded.append(path.name)
        return real(path, max_bytes=max_bytes)

    monkeypatch.setattr(sources, "load_file", counting)
    result = fixture("petstore.yaml")
    assert loaded == ["common.yaml"]  # once, however many references point into it
    tools = by_name(result)
    owner = tools["get_owners_by_owner_id"][0]["output"]
    assert owner["required"] == ["name"]
    assert owner["properties"]["address"] == {"$ref": "#/$defs/Address"}
    # common.yaml refers back to the main document's Pet: the same definition
    assert owner["properties"]["pets"]["items"] == {"$ref": "#/$defs/Pet"}
    assert "Pet" in owner["$defs"] and "Address" in owner["$defs"]
    # both files have an Error: the main document's keeps the name
    sample = tools["sample_errors"][0]["output"]
    ours, theirs = sample["properties"]["ours"]["$ref"], sample["properties"]["theirs"]["$ref"]
    assert ours == "#/$defs/Error"
    assert re.fullmatch(r"#/\$defs/Error[0-9a-f]{6}", theirs)
    assert sample["$defs"]["Error"]["type"] == "string"
    assert sample["$defs"][theirs.rsplit("/", 1)[1]]["required"] == ["code", "message"]


def test_discriminator_kept_with_explicit_mapping() -> None:
    tool, _ = by_name(fixture("petstore.yaml"))["create_pet"]
    pet = tool["input"]["properties"]["pet"]
    # each branch told apart by its tags (see the discriminated oneOf test below)
    assert pet["oneOf"] == [
        {
            "$ref": "#/$defs/Cat",
            "properties": {"petType": {"enum": ["Cat"]}},
            "required": ["petType"],
        },
        {
            "$ref": "#/$defs/Dog",
            "properties": {"petType": {"enum": ["dog"]}},
            "required": ["petType"],
        },
    ]
    assert pet["discriminator"] == {
        "propertyName": "petType",
        "mapping": {"dog": "#/$defs/Dog", "Cat": "#/$defs/Cat"},
    }
    assert {"Cat", "Dog"} <= set(tool["input"]["$defs"])


def test_nullable_exclusive_and_example_conversion() -> None:
    tools = by_name(fixture("petstore.yaml"))
    properties = tools["list_pets"][0]["input"]["properties"]
    assert properties["limit"] == {
        "type": "integer",
        "exclusiveMinimum": 0,  # `minimum: 0, exclusiveMinimum: true`
        "maximum": 100,
        "examples": [20],
        "description": "How many pets to return",
    }
    assert properties["status"] == {
        "type": ["string", "null"],
        "enum": ["available", "sold", None],
    }
    defs = tools["get_pet"][0]["output"]["$defs"]
    assert defs["Dog"]["properties"]["bark"] == {
        "type": ["string", "null"],
        "enum": ["loud", "quiet", None],
    }
    # nullable next to a $ref (or allOf...) becomes anyOf with null
    assert defs["Pet"]["allOf"][1]["properties"]["category"] == {
        "anyOf": [{"$ref": "#/$defs/Category"}, {"type": "null"}]
    }
    assert defs["NewPet"]["properties"]["name"]["examples"] == ["Rex"]


def test_nullable_keeps_annotations_outside() -> None:
    schemas = {
        "A": {"type": "object", "properties": {"x": {"type": "string"}}},
        "B": {
            "allOf": [{"$ref": "#/components/schemas/A"}],
            "nullable": True,
            "description": "maybe an A",
            "default": None,
        },
        "C": {"nullable": True, "enum": ["a"]},
        "D": {"type": "number", "maximum": 5, "exclusiveMaximum": True, "x-nullable": True},
        "E": {"type": "integer", "exclusiveMinimum": False, "minimum": 1},
    }
    data = doc30(
        {
            "/x": {
                "get": {
                    "responses": {
                        "200": ok(
                            schema={"type": "array", "items": {"$ref": "#/components/schemas/B"}}
                        )
                    }
                }
            }
        },
        schemas,
    )
    for name in "CDE":
        data["paths"][f"/{name.lower()}"] = {
            "get": {"responses": {"200": ok(schema={"$ref": f"#/components/schemas/{name}"})}}
        }
    tools = by_name(inline(data))
    b = tools["get_x"][0]["output"]["$defs"]["B"]
    assert b == {
        "description": "maybe an A",
        "default": None,
        "anyOf": [{"allOf": [{"$ref": "#/$defs/A"}]}, {"type": "null"}],
    }
    assert tools["get_c"][0]["output"]["properties"]["result"] == {"$ref": "#/$defs/C"}
    assert tools["get_c"][0]["output"]["$defs"]["C"] == {"enum": ["a", None]}
    assert tools["get_d"][0]["output"]["$defs"]["D"] == {
        "type": ["number", "null"],
        "exclusiveMaximum": 5,
    }
    assert tools["get_e"][0]["output"]["$defs"]["E"] == {"type": "integer", "minimum": 1}


def test_warnings_are_located_with_json_pointers() -> None:
    result = fixture("petstore.yaml")
    accept = find(warnings(result), "header parameter 'Accept' is ignored")
    assert accept.field == "#/paths/~1pets/get/parameters/2"
    assert accept.location.file.endswith("petstore.yaml")
    assert (accept.location.line, accept.location.column) == (32, 11)
    callbacks = find(warnings(result), "callbacks are not supported")
    assert callbacks.field == "#/paths/~1pets/post/callbacks"
    assert callbacks.location.line == 63
    differs = find(warnings(result), "response 202 differs from response 200")
    assert differs.field == "#/paths/~1stats/get/responses/202/content/application~1json/schema"
    for problem in result.problems:
        assert problem.location.line > 0
        assert problem.field.startswith("#")


def test_unrepresentable_schema_keywords_warn() -> None:
    schemas = {
        "Odd": {
            "type": "object",
            "required": True,  # a common mistake: required belongs in the parent's list
            "properties": {"a": {"type": "int"}, "b": {"type": "string", "minLength": -1}},
            "$id": "https://x/odd",
            "exclusiveMinimum": True,
            "patternProperties": {"^x": {"type": "string"}},
            "xml": {"name": "odd"},
            "x-anything": {"$ref": "#/nowhere"},
            "frobnicate": 1,
        }
    }
    data = doc30(
        {"/odd": {"get": {"responses": {"200": ok(schema={"$ref": "#/components/schemas/Odd"})}}}},
        schemas,
    )
    result = inline(data)
    assert errors(result) == []
    fields = {p.field: p.message for p in warnings(result)}
    assert fields == {
        "#/components/schemas/Odd/required": "schema keyword 'required' must be a list of property names; left out",
        "#/components/schemas/Odd/properties/a/type": "schema keyword 'type' has an unknown type 'int'; left out",
        "#/components/schemas/Odd/properties/b/minLength": "schema keyword 'minLength' must be a non-negative integer; left out",
        "#/components/schemas/Odd/$id": "schema keyword '$id' is not supported (references are resolved by mcpgen); left out",
        "#/components/schemas/Odd/exclusiveMinimum": "schema keyword 'exclusiveMinimum' is true without a numeric 'minimum'; left out",
        "#/components/schemas/Odd/frobnicate": "schema keyword 'frobnicate' is not a JSON Schema 2020-12 keyword; left out",
    }
    output = by_name(result)["get_odd"][0]["output"]
    assert output == {
        "type": "object",
        "properties": {"a": {}, "b": {"type": "string"}},
        "patternProperties": {"^x": {"type": "string"}},
    }


# -- bodies and responses --------------------------------------------------------------------


def body_op(schema: Any, required: bool = True, media: str = "application/json") -> Any:
    return {
        "post": {
            "requestBody": {"required": required, "content": {media: {"schema": schema}}},
            "responses": {"204": {"description": "done"}},
        }
    }


def test_form_and_multipart_encoding_objects() -> None:
    props = {
        "f": {"type": "string", "format": "binary"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "n": {"type": "integer"},
    }
    schema = {"type": "object", "properties": props}
    multipart = body_op(schema, media="multipart/form-data")
    content = multipart["post"]["requestBody"]["content"]["multipart/form-data"]
    content["encoding"] = {
        "f": {"contentType": "image/png", "headers": {"X-Part": {"schema": {}}}},
        "tags": {"style": "form", "explode": "no"},
        "n": "text/plain",
    }
    form = body_op(schema, media="application/x-www-form-urlencoded")
    form["post"]["requestBody"]["content"]["application/x-www-form-urlencoded"]["encoding"] = [1]
    result = inline(doc30({"/m": multipart, "/f": form}))
    assert errors(result) == []
    bodies = {op.path: op.body for op in result.operations}
    assert bodies["/m"] is not None and bodies["/m"].parts == {
        "f": {"file": True, "contentType": "image/png"},
        "tags": {"style": "form"},
    }
    assert bodies["/f"] is not None and bodies["/f"].parts == {}
    at = "#/paths/~1m/post/requestBody/content/multipart~1form-data/encoding"
    parts_headers = [(p.name, p.location, p.part) for p in result.operations[0].parameters]
    assert parts_headers == [("X-Part", "header", "f")]  # an argument sent on the part
    assert find(warnings(result), "'explode' is malformed").field == at + "/tags/explode"
    assert find(warnings(result), "an encoding must be a mapping").field == at + "/n"
    find(warnings(result), "'encoding' must be a mapping")


def test_when_bodies_are_spread() -> None:
    obj = {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}}
    cases = {
        "/spread": (body_op(obj), None),
        "/optional-with-required": (body_op(obj, required=False), None),  # flattened too
        "/optional-no-required": (
            body_op({"type": "object", "properties": {"a": {"type": "string"}}}, required=False),
            None,
        ),
        "/open": (body_op({**obj, "additionalProperties": True}), "body"),
        "/closed": (body_op({**obj, "additionalProperties": False}), None),
        "/array": (body_op({"type": "array", "items": {"type": "string"}}), "body"),
        "/composed": (body_op({"oneOf": [obj, {"type": "string"}]}), "body"),
        "/form": (body_op(obj, media="application/x-www-form-urlencoded"), None),
        "/text": (body_op({"type": "string"}, media="text/plain"), "body"),
        "/binary": (body_op({"type": "string", "format": "binary"}, media="image/png"), "body"),
    }
    result = inline(doc30({path: op for path, (op, _) in cases.items()}))
    assert errors(result) == []
    ops = {op.path: (tool, op) for tool, op in zip(result.tools, result.operations, strict=True)}
    for path, (_, argument) in cases.items():
        _, op = ops[path]
        assert op.body is not None
        assert op.body.argument == argument, path
        assert op.body.content_type in BODY_CONTENT_TYPES
    assert ops["/spread"][0]["input"]["required"] == ["a"]
    assert "required" not in ops["/optional-with-required"][0]["input"]
    assert ops["/optional-no-required"][1].body == Body(
        None, "application/json", False, ["a"], ["a"], "application/json"
    )
    assert ops["/form"][1].body.content_type == "application/x-www-form-urlencoded"  # type: ignore[union-attr]
    assert ops["/text"][0]["input"]["properties"]["body"] == {"type": "string"}
    binary = ops["/binary"]
    assert binary[1].body == Body("body", "application/octet-stream", True, media_type="image/png")
    assert binary[0]["input"]["properties"]["body"] == {
        "type": "string",
        "contentEncoding": "base64",
        "description": FILE_NOTE,  # base64, or a resource URI (docs/openapi.md, "Files")
    }


def test_media_type_preference_and_vendor_json() -> None:
    content = {
        "application/xml": {"schema": {"type": "object"}},
        "application/vnd.api+json": {
            "schema": {"type": "object", "properties": {"a": {"type": "integer"}}}
        },
    }
    data = doc30(
        {
            "/x": {
                "post": {
                    "requestBody": {"content": content},
                    "responses": {"200": {"description": "ok", "content": content}},
                }
            }
        }
    )
    tool, op = by_name(inline(data))["post_x"]
    assert op.body == Body(
        None, "application/json", False, ["a"], ["a"], "application/vnd.api+json"
    )
    assert op.response_content_type == "application/vnd.api+json"
    assert without_defs(tool["output"]) == content["application/vnd.api+json"]["schema"]


def test_xml_only_body_warns() -> None:
    data = doc30({"/x": body_op({"type": "object"}, media="application/xml")})
    result = inline(data)
    _, op = by_name(result)["post_x"]
    assert op.body == Body("body", "text/plain", True, media_type="application/xml")
    problem = find(warnings(result), "passed as raw text")
    assert problem.field == "#/paths/~1x/post/requestBody/content/application~1xml"


def test_output_wrapping() -> None:
    obj = {"type": "object", "properties": {"a": {"type": "string"}}}
    schemas = {"Obj": obj, "Alias": {"$ref": "#/components/schemas/Obj"}}
    cases = {
        "/object": (obj, False),
        "/alias": ({"$ref": "#/components/schemas/Alias"}, False),
        "/array": ({"type": "array", "items": obj}, True),
        "/string": ({"type": "string"}, True),
        "/nullable-object": ({**obj, "nullable": True}, True),
        "/one-of-objects": ({"oneOf": [{"$ref": "#/components/schemas/Obj"}, obj]}, False),
    }
    paths = {p: {"get": {"responses": {"200": ok(schema=s)}}} for p, (s, _) in cases.items()}
    paths["/empty"] = {"get": {"responses": {"204": {"description": "nothing"}}}}
    paths["/text"] = {
        "get": {"responses": {"200": ok(schema={"type": "string"}, media="text/csv")}}
    }
    result = inline(doc30(paths, schemas))
    ops = {op.path: (tool, op) for tool, op in zip(result.tools, result.operations, strict=True)}
    for path, (_, wrapped) in cases.items():
        tool, op = ops[path]
        assert op.wrapped_output is wrapped, path
        assert tool["output"]["type"] == "object", path
        if wrapped:
            assert tool["output"]["required"] == ["result"]
    assert ops["/alias"][0]["output"] == obj  # a reference to an object is inlined
    assert ops["/one-of-objects"][0]["output"]["type"] == "object"
    assert "output" not in ops["/empty"][0] and ops["/empty"][1].response_content_type is None
    assert "output" not in ops["/text"][0] and ops["/text"][1].response_content_type == "text/csv"


# -- names -----------------------------------------------------------------------------------


def test_base_names() -> None:
    assert naming.base_name("get", "/pets/{petId}", None) == "get_pets_by_pet_id"
    assert naming.base_name("GET", "/pets/{petId}", None) == "get_pets_by_pet_id"
    assert naming.base_name("post", "/", None) == "post"
    assert naming.base_name("get", "/files/{name}.json", None) == "get_files_by_name_json"
    assert naming.base_name("get", "/x", "listPets") == "list_pets"
    assert naming.base_name("get", "/x", "repos/get-content") == "repos_get_content"
    assert naming.base_name("get", "/x", "getHTTPResponse") == "get_http_response"
    assert naming.base_name("get", "/pets", "???") == "get_pets"  # nothing usable in the id


def test_long_names_are_cut_with_a_stable_hash() -> None:
    long_id = "getTheVeryLongNameOf" + "SomethingDeeplyNested" * 5
    first = naming.base_name("get", "/x", long_id)
    assert len(first) == 64
    assert first == naming.base_name("get", "/x", long_id)
    assert first[-9] == "_" and all(c in "0123456789abcdef" for c in first[-8:])
    other = naming.base_name("get", "/x", long_id + "Else")
    assert other != first and other[:55] == first[:55]
    unique = naming.unique_names([(first, "get", "/a"), (first, "get", "/b")])
    assert unique[0] == first and len(unique[1]) <= 64 and unique[1].endswith("_2")


def test_collisions_resolved_by_method_and_path() -> None:
    wanted = [("get_a_b", "get", "/a_b"), ("get_a_b", "get", "/a-b"), ("get_a_b_2", "post", "/z")]
    # /a-b sorts before /a_b; get_a_b_2 is wanted by another operation, so it is skipped
    assert naming.unique_names(wanted) == ["get_a_b_3", "get_a_b", "get_a_b_2"]
    # names that become the same Python identifier or class name clash too
    assert naming.unique_names([("v2x", "get", "/a"), ("v_2x", "get", "/b")]) == ["v2x", "v_2x_2"]


def test_a_repeated_operation_id_is_warned_about_where_it_repeats() -> None:
    op = {"responses": {"200": ok()}}
    paths = {
        "/a": {"get": {**op, "operationId": "same"}, "post": {**op, "operationId": "same"}},
        "/b": {"get": {**op, "operationId": "same"}, "put": {**op, "operationId": 12}},
    }
    result = inline(doc30(paths))
    found = sorted((p.level.value, p.field, p.message) for p in result.problems)
    assert found == [
        ("error", "#/paths/~1b/put/operationId", "operationId must be a string"),
        (
            "warning",
            "#/paths/~1a/post/operationId",
            "operationId 'same' is not unique (also GET /a)",
        ),
        (
            "warning",
            "#/paths/~1b/get/operationId",
            "operationId 'same' is not unique (also GET /a)",
        ),
    ]
    assert len(result.tools) == 4  # each is still imported, under a name of its own


def shuffled(data: Any, seed: int) -> Any:
    rnd = random.Random(seed)

    def shuffle_map(mapping: dict[str, Any]) -> dict[str, Any]:
        keys = list(mapping)
        rnd.shuffle(keys)
        return {k: mapping[k] for k in keys}

    data = dict(data)
    data["paths"] = shuffle_map({p: shuffle_map(item) for p, item in data["paths"].items()})
    components = dict(data["components"])
    components["schemas"] = shuffle_map(components["schemas"])
    data["components"] = components
    return data


def test_names_and_schemas_stable_when_the_document_is_reordered(tmp_path: Path) -> None:
    original = fixture("petstore.yaml")
    assert errors(original) == []
    shutil.copy(FIXTURES / "common.yaml", tmp_path / "common.yaml")
    data = load("petstore.yaml").data
    for seed in range(3):
        (tmp_path / "petstore.yaml").write_text(json.dumps(shuffled(data, seed)))
        again = import_openapi(load_file(tmp_path / "petstore.yaml", max_bytes=MAX_DOCUMENT_BYTES))
        assert errors(again) == []
        assert [t["name"] for t in again.tools] != [t["name"] for t in original.tools] or seed
        assert by_name(again) == by_name(original)


def test_colliding_names_stable_when_reordered() -> None:
    paths = {
        "/a_b": {"get": {"responses": {"204": {"description": "x"}}}},
        "/a-b": {"get": {"responses": {"204": {"description": "x"}}}},
        "/a/b": {
            "get": {"responses": {"204": {"description": "x"}}},
            "post": {"operationId": "get_a_b", "responses": {"204": {"description": "x"}}},
        },
    }
    expected = {
        ("GET", "/a-b"): "get_a_b",
        ("GET", "/a/b"): "get_a_b_2",
        ("GET", "/a_b"): "get_a_b_3",
        ("POST", "/a/b"): "get_a_b_4",
    }
    for order in (["/a_b", "/a-b", "/a/b"], ["/a/b", "/a-b", "/a_b"], ["/a-b", "/a/b", "/a_b"]):
        result = inline(doc30({p: paths[p] for p in order}))
        assert {(o.method, o.path): o.tool for o in result.operations} == expected


# -- options ---------------------------------------------------------------------------------


def test_include_exclude_and_rules() -> None:
    names = lambda result: [t["name"] for t in result.tools]  # noqa: E731
    assert names(fixture("petstore.yaml", {"include": [{"tags": ["pets"]}]})) == [
        "list_pets",
        "create_pet",
        "get_pet",
        "replace_pet",
    ]
    only_reads = fixture(
        "petstore.yaml",
        {
            "include": [{"methods": ["get"], "path": "/pets*"}],
            "exclude": [{"operationId": "list*"}],
        },
    )
    assert names(only_reads) == ["get_pet"]
    excluded = fixture("petstore.yaml", {"rules": [{"path": "/pets*", "as": "exclude"}]})
    assert "list_pets" not in names(excluded) and "get_stats" in names(excluded)
    unused = fixture("petstore.yaml", {"exclude": [{"tags": ["nothing"]}]})
    problem = find(unused.problems, "matches no operation")
    assert problem.field == "openapi.exclude[0]"
    assert problem.location.file == OPTIONS_FILE and problem.level is Level.WARNING


def test_overrides() -> None:
    result = fixture(
        "petstore.yaml",
        {
            "overrides": {
                "getStats": {
                    "name": "stats",
                    "description": "Counts",
                    "annotations": {"openWorldHint": False},
                },
                "list_pets": {"title": "Pets"},
                "nope": {"description": "x"},
                "get_pet": {"colour": "red"},
            }
        },
    )
    tools = by_name(result)
    assert tools["stats"][0]["description"] == "Counts"
    assert tools["stats"][0]["annotations"]["openWorldHint"] is False
    assert tools["stats"][0]["annotations"]["readOnlyHint"] is True
    assert tools["stats"][1].tool == "stats"
    assert tools["list_pets"][0]["title"] == "Pets"
    assert find(result.problems, "'nope'").field == "openapi.overrides.nope"
    assert find(result.problems, "'colour'").field == "openapi.overrides.get_pet.colour"
    assert errors(result) == []


def test_a_poll_override_applies_to_a_resource_too() -> None:
    """A GET answered 202 + Location read as a resource: ``poll`` overrides its operation
    as it would a tool's, renamed or not."""
    later = {"description": "later", "headers": {"Location": {"schema": {"type": "string"}}}}
    get = {"operationId": "getReport", "responses": {"202": later}}
    data = doc30({"/report": {"get": get}})
    rules = [{"operationId": "getReport", "as": "resource"}]
    for override in ({"poll": False}, {"poll": False, "name": "report"}):
        result = inline(data, {"rules": rules, "overrides": {"getReport": override}})
        assert [o.poll for o in result.resource_operations] == [None], override
    tuned = {"getReport": {"poll": {"interval": 1, "timeout": 5}}}
    result = inline(data, {"rules": rules, "overrides": tuned})
    assert result.resource_operations[0].poll == {"interval": 1, "timeout": 5}


def validate_overrides(tmp_path: Path, overrides: str) -> tuple[int, list[str]]:
    """``mcpgen validate`` on a manifest that imports the petstore with these overrides:
    the exit status and the error lines."""
    for name in ("petstore.yaml", "common.yaml"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    manifest = tmp_path / "m.yaml"
    manifest.write_text(
        "mcpgen: 1\nserver: {name: pets}\nopenapi:\n  source: petstore.yaml\n"
        f"  overrides: {overrides}\n"
    )
    result = CliRunner().invoke(main, ["validate", str(manifest)], env={"CI": "1"})
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if ": error: " in line]
    return result.exit_code, [line.replace(str(tmp_path), "") for line in lines]


def test_a_bad_rename_is_one_error_at_the_override(tmp_path: Path) -> None:
    assert validate_overrides(tmp_path, "{getPet: {name: list_pets}}") == (
        2,
        [
            "/m.yaml:5:30: error: openapi.overrides.getPet.name: duplicate tool name "
            "'list_pets' (first at #/paths/~1pets/get (tools[0]))"
        ],
    )
    # the rename is blamed even when the renamed operation comes first
    assert validate_overrides(tmp_path, "{listPets: {name: getPet}}") == (
        2,
        [
            "/m.yaml:5:32: error: openapi.overrides.listPets.name: tool 'getPet' and "
            "'get_pet' both become the Python name 'get_pet'; rename one"
        ],
    )
    assert validate_overrides(tmp_path, "{get_pet: {name: 'get pet!'}}") == (
        2,
        [
            "/m.yaml:5:31: error: openapi.overrides.get_pet.name: tool name 'get pet!' may "
            "only hold letters, digits, '_', '-' and '.' (found ' ', '!')"
        ],
    )
    swap = "{getPet: {name: list_pets}, listPets: {name: get_pet}}"
    assert validate_overrides(tmp_path, swap) == (0, [])


def test_bad_overrides_and_options_are_errors() -> None:
    broken = fixture(
        "petstore.yaml",
        {"include": "all", "rules": [{"as": "prompt"}, {"path": 3}, "x"], "overrides": []},
    )
    assert {p.field for p in errors(broken)} == {
        "openapi.include",
        "openapi.rules[0].as",
        "openapi.rules[1].path",
        "openapi.rules[2]",
        "openapi.overrides",
    }
    assert len(broken.tools) == 9  # the document itself still imports (not deletePet: deprecated)
    assert "options must be a mapping" in errors(fixture("petstore.yaml", ["x"]))[0].message  # type: ignore[arg-type]


def test_resources() -> None:
    result = fixture(
        "petstore.yaml",
        {
            "rules": [
                {"operationId": "getPet", "as": "resourceTemplate"},
                {"operationId": "listPets", "as": "resourceTemplate"},
                {"operationId": "listCategories", "as": "resource"},
                {"operationId": "getStats", "as": "resourceTemplate"},
                {"operationId": "createPet", "as": "resource"},
                {"path": "/owners/*", "as": "resource"},
            ]
        },
    )
    resources = {r["name"]: r for r in result.resources}
    assert resources["get_pet"] == {
        "name": "get_pet",
        "uriTemplate": "api://pets/{petId}",
        "title": "Get a pet",
        "description": "Get a pet",
        "mimeType": "application/json",
    }
    # the schemas its variables are checked against before the call is made
    assert result.resource_inputs[list(resources).index("get_pet")] == {
        "type": "object",
        "properties": {
            "petId": {"type": "integer", "format": "int64", "description": "The pet's id"}
        },
        "additionalProperties": False,
        "required": ["petId"],
    }
    assert resources["list_pets"]["uriTemplate"] == "api://pets{?limit,status}"
    assert resources["list_categories"]["uri"] == "api://categories"
    assert resources["get_stats"]["uri"] == "api://stats"  # no parameters: a fixed resource
    assert resources["get_owners_by_owner_id"]["uriTemplate"] == "api://owners/{ownerId}"
    ops = {o.tool: o for o in result.resource_operations}
    assert set(ops) == set(resources)
    assert ops["get_pet"].parameters[0].argument == "petId"
    assert "create_pet" in {t["name"] for t in result.tools}  # a POST stays a tool
    assert find(warnings(result), "only GET operations can be resources").field == (
        "#/paths/~1pets/post"
    )
    find(warnings(result), "is a resource template")
    find(warnings(result), "is a fixed resource")
    manifest = {"mcpgen": 1, "server": {"name": "pets"}, "resources": result.resources}
    assert_valid_manifest(manifest)


def test_path_parameters_side_by_side_stay_a_tool() -> None:
    """A URI template refuses ``{year}{month}`` (no URI says where the year ends), so the
    operation is imported as a tool, with a warning, rather than as a template that fails."""
    param = {"in": "path", "required": True, "schema": {"type": "string"}}
    get = {
        "operationId": "report",
        "parameters": [{**param, "name": "year"}, {**param, "name": "month"}],
        "responses": {"200": ok()},
    }
    result = inline(
        doc30({"/reports/{year}{month}": {"get": get}}), {"rules": [{"as": "resourceTemplate"}]}
    )
    assert result.resources == [] and [t["name"] for t in result.tools] == ["report"]
    assert find(warnings(result), "side by side").field == "#/paths/~1reports~1{year}{month}/get"


# -- Swagger 2.0 and OpenAPI 3.1 -------------------------------------------------------------


def test_swagger_conversion() -> None:
    result = fixture("swagger-2.0.yaml")
    assert result.version == "2.0"
    assert errors(result) == [] and warnings(result) == []
    assert result.servers == [
        {"url": "https://store.example/v2"},
        {"url": "http://store.example/v2"},
    ]
    assert result.security_schemes == {
        "key": {"type": "apiKey", "in": "query", "name": "api_key"},
        "basic": {"type": "http", "scheme": "basic"},
        "app": {
            "type": "oauth2",
            "tokenUrl": "https://store.example/token",
            "scopes": {"write": "modify"},
        },
    }
    tools = by_name(result)
    tool, op = tools["list_orders"]
    assert op.parameters == [
        Param("limit", "query", "limit", False),
        Param("status", "query", "status", False, "form", True),
        Param("ids", "query", "ids", False, "pipeDelimited", False),
    ]
    assert tool["input"]["properties"]["limit"] == {"type": "integer", "default": 10, "minimum": 1}
    assert tool["input"]["properties"]["status"]["items"]["enum"] == ["placed", "delivered"]
    assert op.wrapped_output and tool["output"]["properties"]["result"]["items"] == {
        "$ref": "#/$defs/Order"
    }
    order = tool["output"]["$defs"]["Order"]
    assert order["discriminator"] == {"propertyName": "kind"}
    assert order["properties"]["quantity"] == {"type": "integer", "exclusiveMinimum": 0}
    assert order["properties"]["note"] == {"type": ["string", "null"]}
    tool, op = tools["place_order"]  # a body parameter, spread
    assert op.body == Body(
        None,
        "application/json",
        True,
        ["kind", "quantity", "note"],
        ["kind", "quantity", "note"],
        "application/json",
    )
    assert tool["input"]["required"] == ["kind", "quantity"]
    tool, op = tools["upload_receipt"]  # formData with a file
    assert op.body == Body(
        None,
        "multipart/form-data",
        True,
        ["file", "note"],
        ["file", "note"],
        "multipart/form-data",
        {"file": {"file": True}},  # a base64 argument sent as bytes
    )
    assert tool["input"]["properties"]["file"] == {
        "type": "string",
        "contentEncoding": "base64",
        "description": FILE_NOTE,
    }
    assert tool["input"]["required"] == ["orderId", "file"]
    assert op.response_content_type == "application/pdf" and "output" not in tool


def test_swagger_without_host_and_collection_formats() -> None:
    data = {
        "swagger": "2.0",
        "info": {"title": "t", "version": "1"},
        "basePath": "/api",
        "paths": {
            "/x/{ids}": {
                "get": {
                    "parameters": [
                        {
                            "name": "ids",
                            "in": "path",
                            "required": True,
                            "type": "array",
                            "items": {"type": "string"},
                        },
                        {
                            "name": "t",
                            "in": "query",
                            "type": "array",
                            "items": {"type": "string"},
                            "collectionFormat": "tsv",
                        },
                        {"name": "f", "in": "formData", "type": "string"},
                    ],
                    "consumes": ["application/x-www-form-urlencoded"],
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }
    result = inline(data)
    assert result.servers == [{"url": "/api"}]
    _, op = by_name(result)["get_x_by_ids"]
    assert op.parameters[0] == Param("ids", "path", "ids", True, "simple", False)
    assert op.parameters[1] == Param("t", "query", "t", False, "form", False)
    assert op.body is not None and op.body.content_type == "application/x-www-form-urlencoded"
    assert (
        find(warnings(result), "tab-separated").field
        == "#/paths/~1x~1{ids}/get/parameters/1/collectionFormat"
    )


def test_openapi_31() -> None:
    result = fixture("zoo-3.1.yaml")
    assert result.version == "3.1"
    assert errors(result) == []
    tools = by_name(result)
    tool, op = tools["animals_get_one"]
    animal = tool["output"]
    assert animal["properties"]["kind"] == {"const": "animal"}
    assert animal["properties"]["name"] == {"type": ["string", "null"], "examples": ["Leo"]}
    assert animal["properties"]["weight"] == {"type": "number", "exclusiveMinimum": 0}
    assert animal["properties"]["tags"] == {
        "type": "array",
        "prefixItems": [{"type": "string"}],
        "items": False,
    }
    assert "x-internal" in animal["properties"]  # a property name, not an extension
    assert op.parameters == [
        Param("animal-id", "path", "animal-id", True),
        Param("fields", "query", "fields", False, "form", False),
        Param("filter", "query", "filter", False, content_type="application/json"),
    ]
    _, op = tools["animals_update"]
    assert op.body is not None
    assert (op.body.content_type, op.body.media_type) == (
        "application/json",
        "application/merge-patch+json",
    )
    tool, op = tools["animals_create"]
    assert op.body is not None and op.body.content_type == "multipart/form-data"
    assert op.response_content_type == "text/plain" and "output" not in tool
    assert op.body.parts == {"photo": {"file": True, "contentType": "image/png"}}
    find(warnings(result), "webhooks")


# -- every schema is valid -------------------------------------------------------------------


def assert_valid_manifest(manifest: dict[str, Any]) -> None:
    doc = load_text(json.dumps(manifest), "m.json", FIXTURES, json_first=True)
    problems = check_structure(doc)
    assert problems.errors == []
    problems = check_semantics(doc)
    assert problems.errors == [], [p.format() for p in problems.errors]


@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_every_schema_is_valid_2020_12(name: str) -> None:
    result = fixture(name)
    assert result.tools
    for tool in result.tools:
        Draft202012Validator.check_schema(tool["input"])
        assert tool["input"]["type"] == "object"
        if "output" in tool:
            Draft202012Validator.check_schema(tool["output"])
            assert tool["output"]["type"] == "object"
        # self-contained: every reference resolves inside the tool's own schema
        for part in ("input", "output"):
            schema = tool.get(part)
            text = json.dumps(schema)
            for ref in {r.split('"')[0] for r in text.split('"$ref": "')[1:]}:
                assert ref.startswith("#/$defs/"), ref
                assert ref[len("#/$defs/") :] in schema["$defs"], ref
    # and mcpgen's own manifest checks accept them
    assert_valid_manifest({"mcpgen": 1, "server": {"name": "api"}, "tools": result.tools})


# -- broken documents ------------------------------------------------------------------------


def test_broken_document_gives_located_errors() -> None:
    result = fixture("broken.yaml")
    found = {p.field: p.message for p in errors(result)}
    expected = {
        "#/paths/~1things~1{id": "has unbalanced",
        "#/paths/~1items/get/parameters/0/$ref": "'#/components/parameters/Missing' does not resolve",
        "#/paths/~1items/get/parameters/1": "a parameter needs a 'name'",
        "#/paths/~1items/get/parameters/2/in": "'in' must be one of",
        "#/paths/~1items/get/responses/200/content/application~1json/schema/$ref": "does not resolve",
        "#/paths/~1items/post": "an operation must be a mapping",
        "#/paths/~1loop/get/responses/200/content/application~1json/schema/$ref": "outside the OpenAPI document's folder",
        "#/paths/~1remote/get/responses/200/content/application~1json/schema/$ref": "remote reference",
        "#/paths/~1missing-file/get/responses/200/content/application~1json/schema/$ref": "cannot load referenced file 'no-such-file.yaml': file not found",
        "#/components/parameters/B": "reference cycle",
    }
    for field, text in expected.items():
        assert field in found, (field, found)
        assert text in found[field], (field, found[field])
    for problem in errors(result):
        assert problem.location.file.endswith("broken.yaml")
        assert problem.location.line > 0
    # what could be imported still is
    assert {t["name"] for t in result.tools} == {
        "list_items",
        "get_loop",
        "get_remote",
        "get_missing_file",
    }


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([1, 2], "is a mapping"),
        ({"info": {}}, "no 'openapi' or 'swagger' field"),
        ({"openapi": "4.0.0", "paths": {}}, "unsupported OpenAPI version '4.0.0'"),
        ({"swagger": "1.2"}, "unsupported Swagger version"),
        ({"openapi": "3.0.0", "info": {"title": "t", "version": "1"}}, "'paths' is required"),
        (
            {"openapi": "3.0.0", "info": {"title": "t", "version": "1"}, "paths": []},
            "must be a mapping",
        ),
        (
            {"openapi": "3.0.0", "info": {"title": "t", "version": "1"}, "paths": {"pets": {}}},
            "must start with '/'",
        ),
        (
            {"openapi": "3.0.0", "paths": {}},
            "'info' (with 'title' and 'version') is required",
        ),
        (
            {
                "openapi": "3.0.0",
                "info": {"title": "t", "version": "1"},
                "paths": {},
                "servers": [{"url": "https://{host}/"}],
            },
            "server variable 'host' has no default",
        ),
    ],
)
def test_broken_documents_never_raise(data: Any, message: str) -> None:
    result = inline(data)
    assert result.tools == []
    assert find(errors(result), message).location.line > 0


def test_broken_external_file_is_located_inside_it(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("Thing:\n  type: [unclosed\n")
    data = doc30({"/x": {"get": {"responses": {"200": ok(schema={"$ref": "bad.yaml#/Thing"})}}}})
    result = inline(data, folder=tmp_path)
    files = {p.location.file.rsplit("/", 1)[-1] for p in errors(result)}
    assert files == {"bad.yaml", "inline.json"}
    assert all(p.location.line > 0 for p in errors(result))


def test_unexpected_failures_become_problems(monkeypatch: pytest.MonkeyPatch) -> None:
    real_build = importer_module._Importer.build

    def flaky(self: Any, cand: Any, name: str) -> Any:
        if cand.url == "/stats":
            raise RuntimeError("boom")
        return real_build(self, cand, name)

    monkeypatch.setattr(importer_module._Importer, "build", flaky)
    result = fixture("petstore.yaml")
    problem = find(errors(result), "boom")
    assert problem.field == "#/paths/~1stats/get" and problem.location.line > 0
    assert len(result.tools) == 8  # the others are imported (not deletePet: deprecated)

    def broken_run(self: Any) -> Any:
        raise KeyError("worse")

    monkeypatch.setattr(importer_module._Importer, "run", broken_run)
    result = fixture("petstore.yaml")
    assert result.tools == [] and "internal error" in errors(result)[0].message


def test_security_requirements() -> None:
    data = doc30(
        {
            "/a": {"get": {"responses": {"204": {"description": "x"}}}},
            "/b": {
                "get": {
                    "security": [{"oauth": ["read"], "key": []}, {}],
                    "responses": {"204": {"description": "x"}},
                }
            },
            "/c": {
                "get": {"security": [{"ghost": []}], "responses": {"204": {"description": "x"}}}
            },
        },
        security=[{"key": []}],
    )
    data["components"]["securitySchemes"] = {
        "key": {"type": "apiKey", "in": "cookie", "name": "session"},
        "oauth": {
            "type": "oauth2",
            "flows": {"clientCredentials": {"tokenUrl": "/token", "scopes": {"read": "r"}}},
        },
        "digest": {"type": "http", "scheme": "digest"},
        "oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://x/.well-known"},
    }
    result = inline(data)
    ops = {o.path: o for o in result.operations}
    assert ops["/a"].security == [{"key": []}]
    assert ops["/b"].security == [{"oauth": ["read"], "key": []}, {}]
    assert set(result.security_schemes) == {"key", "oauth", "oidc"}
    assert result.security_schemes["oidc"] == {
        "type": "openIdConnect",
        "openIdConnectUrl": "https://x/.well-known",
    }
    assert (
        find(warnings(result), "no security scheme named 'ghost'").field
        == "#/paths/~1c/get/security/0/ghost"
    )
    find(warnings(result), "'digest' authentication is not supported")
    find(warnings(result), "an openIdConnect scheme gives this server no token of its own")


def test_path_parameters_checked_against_the_template() -> None:
    data = doc30(
        {
            "/a/{x}/{y}": {
                "get": {
                    "parameters": [
                        {"name": "x", "in": "path", "schema": {"type": "integer"}},
                        {"name": "z", "in": "path", "required": True, "schema": {"type": "string"}},
                    ],
                    "responses": {"204": {"description": "x"}},
                }
            }
        }
    )
    result = inline(data)
    tool, op = by_name(result)["get_a_by_x_by_y"]
    assert [(p.name, p.required) for p in op.parameters] == [("x", True), ("y", True)]
    assert tool["input"]["required"] == ["x", "y"]
    find(warnings(result), "must be 'required: true'")
    find(warnings(result), "path parameter 'z' is not in the path")
    find(warnings(result), "path parameter 'y' is not declared")


# -- scale -----------------------------------------------------------------------------------


def synthetic_spec(operations: int = 1500, schemas: int = 1000) -> dict[str, Any]:
    """A big spec: schemas referring to each other (one long cycle), shared ids, long names."""
    rnd = random.Random(7)
    components: dict[str, Any] = {}
    for i in range(schemas):
        properties: dict[str, Any] = {
            f"field{j}": {"type": rnd.choice(["string", "integer", "boolean"])} for j in range(8)
        }
        properties["next"] = {"$ref": f"#/components/schemas/S{(i + 1) % schemas}"}
        properties["other"] = {
            "$ref": f"#/components/schemas/S{rnd.randrange(schemas)}",
            "nullable": True,
        }
        components[f"S{i}"] = {"type": "object", "required": ["field0"], "properties": properties}
    paths: dict[str, Any] = {}
    for k in range(operations // 2):
        schema = {"$ref": f"#/components/schemas/S{rnd.randrange(schemas)}"}
        paths[f"/things{k}/{{thingId}}"] = {
            "parameters": [
                {"name": "thingId", "in": "path", "required": True, "schema": {"type": "integer"}}
            ],
            "get": {
                # every tenth shares an operationId; some are far too long
                "operationId": "getThing" if k % 10 == 0 else f"getThing{k}" + "Long" * (k % 20),
                "parameters": [{"name": "limit", "in": "query", "schema": {"type": "integer"}}],
                "responses": {"200": ok(schema=schema)},
            },
            "post": {
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": schema}},
                },
                "responses": {"201": ok(schema={"type": "array", "items": schema})},
            },
        }
    return doc30(paths, components)


def test_scale_1500_operations() -> None:
    result = inline(synthetic_spec())
    assert errors(result) == []
    names = [t["name"] for t in result.tools]
    assert len(names) == 1500
    assert len(set(names)) == 1500
    assert all(len(name) <= 64 for name in names)
    assert len(result.operations) == 1500
    assert len(result.tools[0]["output"]["$defs"]) == 1000  # the cycle reaches every schema
    # a set of definitions is bundled once and shared by the tools that need all of it
    assert result.tools[0]["output"]["$defs"] is result.tools[2]["output"]["$defs"]


def test_nested_files_and_quiet_scan(tmp_path: Path) -> None:
    (tmp_path / "schemas" / "parts").mkdir(parents=True)
    (tmp_path / "schemas" / "models.yaml").write_text(
        "Model:\n"
        "  type: object\n"
        "  properties:\n"
        "    part: {$ref: 'parts/part.yaml'}\n"  # relative to this file, a whole file
        "    local: {$ref: '../api.yaml#/components/schemas/Local'}\n"
    )
    (tmp_path / "schemas" / "parts" / "part.yaml").write_text("type: string\nminLength: 1\n")
    data = doc30(
        {
            "/a": {
                "get": {"responses": {"200": ok(schema={"$ref": "schemas/models.yaml#/Model"})}}
            },
            "/bad": {
                "get": {"responses": {"200": ok(schema={"$ref": "#/components/schemas/Nope"})}}
            },
        },
        {"Local": {"type": "integer"}},
    )
    (tmp_path / "api.yaml").write_text(json.dumps(data))
    doc = load_file(tmp_path / "api.yaml", max_bytes=MAX_DOCUMENT_BYTES)
    result = import_openapi(doc, {"exclude": [{"path": "/bad"}]})
    assert result.problems == []  # the excluded operation's broken reference is not used
    output = by_name(result)["get_a"][0]["output"]
    assert output["properties"] == {
        "part": {"$ref": "#/$defs/Part"},
        "local": {"$ref": "#/$defs/Local"},
    }
    assert output["$defs"] == {
        "Local": {"type": "integer"},
        "Part": {"type": "string", "minLength": 1},
    }
    assert errors(import_openapi(doc)) != []  # included, it is reported


def test_definition_names_are_identifiers() -> None:
    schemas = {
        name: {"type": "object", "properties": {"n": {"type": "integer"}}}
        for name in ("simple-user", "simple_user", "2fa", "v1.User", "Field", "Pet")
    }
    refs = {name: {"$ref": f"#/components/schemas/{name}"} for name in schemas}
    paths = {
        "/x": {"get": {"responses": {"200": ok(schema={"type": "object", "properties": refs})}}}
    }
    result = inline(doc30(paths, schemas))
    output = by_name(result)["get_x"][0]["output"]
    names = {key: value["$ref"][len("#/$defs/") :] for key, value in output["properties"].items()}
    assert names["simple-user"] == "SimpleUser"  # sorts before simple_user
    assert re.fullmatch("SimpleUser[0-9a-f]{6}", names["simple_user"])
    assert names["2fa"] == "N2fa" and names["v1.User"] == "V1User"
    assert names["Field"] != "Field"  # the models import pydantic's Field
    assert names["Pet"] == "Pet"
    assert sorted(result.defs) == sorted(names.values())


@pytest.mark.parametrize("name", ["petstore.yaml", "swagger-2.0.yaml", "zoo-3.1.yaml"])
def test_definitions_can_be_hoisted_into_the_manifest(name: str) -> None:
    result = fixture(name)
    tools = [
        {k: without_defs(v) if k in ("input", "output") else v for k, v in tool.items()}
        for tool in result.tools
    ]
    used = {
        n
        for tool in result.tools
        for part in ("input", "output")
        for n in tool.get(part, {}).get("$defs", {})
    }
    assert set(result.defs) == used
    assert_valid_manifest(
        {"mcpgen": 1, "server": {"name": "api"}, "$defs": result.defs, "tools": tools}
    )


_JUNK = [None, 1, -1, 2.5, True, "x", "{x}", [], {}, ["a"], {"$ref": 3}, {"$ref": "#/nowhere"},
         {"type": "object"}, {"nullable": True}, {"type": ["string", "string"]}, {"items": [1]}]  # fmt: skip


@pytest.mark.parametrize("name", ["petstore.yaml", "zoo-3.1.yaml", "swagger-2.0.yaml"])
def test_mutated_documents(name: str) -> None:
    """Random damage gives problems, never an internal error; no errors means valid schemas."""
    base = load(name).data
    rnd = random.Random(name)
    meta = Draft202012Validator(Draft202012Validator.META_SCHEMA)
    for _ in range(100):
        data = json.loads(json.dumps(base))
        for _ in range(rnd.randint(1, 3)):
            node, parent, key = data, None, None
            for _ in range(rnd.randint(1, 9)):
                if isinstance(node, dict) and node:
                    key = rnd.choice(list(node))
                elif isinstance(node, list) and node:
                    key = rnd.randrange(len(node))
                else:
                    break
                parent, node = node, node[key]
            if parent is not None:
                parent[key] = json.loads(json.dumps(rnd.choice(_JUNK)))
        result = inline(data)
        assert not [p for p in result.problems if "internal error" in p.message]
        if errors(result):
            continue
        for tool in result.tools:  # each definition once: the bundles repeat them
            for part in ("input", "output"):
                if part in tool:
                    assert not list(meta.iter_errors(without_defs(tool[part]))), tool["name"]
        for definition in result.defs.values():
            assert not list(meta.iter_errors(definition))


def test_a_component_named_like_a_tools_model_class_gets_another_name(tmp_path: Path) -> None:
    """A component ``TopicSentimentOutput`` beside the operation ``topicSentiment`` (whose
    output model is ``TopicSentimentOutput``): the component yields, so the import builds
    (found in the corpus: the spec was refused with "model class ... collides with $defs")."""
    output = {"type": "object", "properties": {"score": {"type": "number"}}}
    listing = {"type": "array", "items": {"$ref": "#/components/schemas/TopicSentimentOutput"}}
    data = doc30(
        {
            "/sentiment": {
                "get": {
                    "operationId": "topicSentiment",
                    "responses": {
                        "200": ok(schema={"type": "object", "properties": {"items": listing}})
                    },
                }
            }
        },
        {"TopicSentimentOutput": output},
    )
    result = inline(data)
    assert errors(result) == []
    (tool,) = result.tools
    (name,) = tool["output"]["$defs"]
    assert name.startswith("TopicSentimentOutput") and name != "TopicSentimentOutput"
    manifest = tmp_path / "mcpgen.yaml"
    (tmp_path / "api.json").write_text(json.dumps(data), encoding="utf-8")
    manifest.write_text("mcpgen: 1\nserver: {name: s}\nopenapi: {source: api.json}\n", "utf-8")
    from click.testing import CliRunner

    from mcpgen.cli import main

    done = CliRunner().invoke(main, ["validate", str(manifest)])
    assert done.exit_code == 0, done.output


# -- the structural check of imported entries ------------------------------------------------


def _checked_tools(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The names of the tools the manifest schema is checked on, per check."""
    from mcpgen.check import structure

    seen: list[list[str]] = []
    validator = structure._validator()

    class Spy:
        def iter_errors(self, data: Any) -> Any:
            seen.append([t.get("name") for t in data.get("tools", []) if isinstance(t, dict)])
            return validator.iter_errors(data)

    monkeypatch.setattr(structure, "_validator", Spy)
    return seen


SHOP = Path(__file__).resolve().parents[1] / "manifests" / "openapi" / "shop.yaml"


def _shop_manifest(tmp_path: Path, openapi: str) -> Path:
    shutil.copy(SHOP, tmp_path / "shop.yaml")
    path = tmp_path / "m.yaml"
    path.write_text(
        "mcpgen: 1\nserver: {name: shop, version: 1.0.0}\n"
        f"openapi: {{source: shop.yaml{openapi}}}\n"
        "tools:\n  - {name: mine, description: 7}\n",
        encoding="utf-8",
    )
    return path


def test_imported_entries_are_not_checked_against_the_manifest_schema_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The importer's entries fit the schema by construction (every fixture's do:
    ``test_every_schema_is_valid_2020_12``); a declared tool beside them is still checked,
    and its problem located at its own index."""
    from mcpgen.pipeline import load_manifest

    seen = _checked_tools(monkeypatch)
    loaded = load_manifest(_shop_manifest(tmp_path, ""))
    assert seen == [["mine"]]
    [problem] = loaded.problems.errors
    assert problem.field == "tools[0].description" and "expected string" in problem.message
    assert (problem.location.line, problem.location.column) == (5, 31)
    seen.clear()
    assert load_manifest(SHOP).manifest is not None  # a bare document: nothing to check
    assert seen == [[]]


def test_entries_with_overrides_are_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``openapi.overrides`` puts the user's values into imported entries (annotations the
    override's own schema only requires to be an object): those are checked as always."""
    from mcpgen.pipeline import load_manifest

    seen = _checked_tools(monkeypatch)
    overrides = ", overrides: {deleteItem: {annotations: {readOnlyHint: 'yes'}}}"
    loaded = load_manifest(_shop_manifest(tmp_path, overrides))
    assert len(seen[0]) > 1
    found = {p.field: p.message for p in loaded.problems.errors}
    assert (
        "expected boolean"
        in found["#/paths/~1items~1{itemId}/delete (tools[4].annotations.readOnlyHint)"]
    )
    assert "expected string" in found["tools[0].description"]


def test_a_relative_server_url_is_a_warning_unless_the_manifest_gives_the_base_url() -> None:
    """``servers: [{url: /api}]`` (or Swagger 2.0 without ``host``) names no host: the
    generated server's calls fail ("UnsupportedProtocol") until a base URL is set."""
    paths = {"/x": {"get": {"operationId": "getX", "responses": {"200": ok()}}}}
    relative = inline(doc30(paths, servers=[{"url": "/api"}, {"url": "https://a.example"}]))
    problem = find(warnings(relative), "relative")
    assert problem.field == "#/servers/0/url" and "'/api'" in problem.message
    swagger = {"swagger": "2.0", "info": {"title": "t", "version": "1"}, "paths": paths}
    find(warnings(inline(swagger)), "relative")
    for fine in (
        inline(doc30(paths, servers=[{"url": "/api"}]), {"baseUrl": "https://a.example"}),
        inline(doc30(paths, servers=[{"url": "https://a.example/api"}])),
    ):
        assert not [p for p in fine.problems if "relative" in p.message]


def test_an_operation_server_is_kept_unless_the_manifest_gives_the_base_url() -> None:
    """An operation's own server (GitHub's uploads host) is where its calls go
    (``operation_data``'s ``server``); the manifest's ``openapi.baseUrl`` replaces the
    document's servers, so an absolute one is then left out, with a located warning."""
    own = [{"url": "https://uploads.example"}]
    paths = {"/x": {"post": {"operationId": "up", "servers": own, "responses": {"200": ok()}}}}
    kept = inline(doc30(paths, servers=[{"url": "https://api.example"}]))
    assert kept.operations[0].server == "https://uploads.example" and not kept.problems
    given = inline(doc30(paths), {"baseUrl": "https://staging.example"})
    assert given.operations[0].server is None
    assert find(warnings(given), "not used").field == "#/paths/~1x/post/servers"
    own[0]["url"] = "//uploads.example/steal"  # (a host of its own too: r4)
    given = inline(doc30(paths), {"baseUrl": "https://staging.example"})
    assert given.operations[0].server is None and find(warnings(given), "not used")


def test_a_discriminated_one_of_accepts_a_value_its_open_branches_share() -> None:
    """OpenAPI's own example: ``oneOf: [Cat, Dog]`` with a ``petType`` discriminator, each
    branch an open object. Every Cat is also a valid Dog, so JSON Schema's ``oneOf`` refused
    every body ("valid under each of"); the discriminator is what picks the branch, and the
    input schema asks each branch for its tag."""
    pet = {"type": "object", "required": ["petType"], "properties": {"petType": {"type": "string"}}}
    schemas = {
        "Pet": {**pet, "discriminator": {"propertyName": "petType"}},
        "Cat": {"allOf": [{"$ref": "#/components/schemas/Pet"}, {"properties": {"name": {}}}]},
        "Dog": {"allOf": [{"$ref": "#/components/schemas/Pet"}, {"properties": {"bark": {}}}]},
    }
    body = {
        "oneOf": [{"$ref": "#/components/schemas/Cat"}, {"$ref": "#/components/schemas/Dog"}],
        "discriminator": {"propertyName": "petType"},
    }
    content = {"application/json": {"schema": body}}
    operation = {
        "operationId": "addPet",
        "requestBody": {"required": True, "content": content},
        "responses": {"200": ok()},
    }
    tool, _ = by_name(inline(doc30({"/pets": {"post": operation}}, schemas)))["add_pet"]
    validator = Draft202012Validator(tool["input"])
    for pet_body in ({"petType": "Cat", "name": "Tom"}, {"petType": "Dog", "bark": True}):
        assert [e.message for e in validator.iter_errors({"body": pet_body})] == []
    for wrong in ({"name": "no tag"}, {"petType": "Cow"}):
        assert list(validator.iter_errors({"body": wrong}))


@pytest.mark.parametrize("schemes", [["http", "https"], ["https", "http"], ["ws", "https"]])
def test_swagger_prefers_https_among_its_schemes(schemes: list[str]) -> None:
    """The first server is the base URL: ``schemes: [http, https]`` sent the API's
    credentials in clear text although the API takes https."""
    data = {
        "swagger": "2.0",
        "info": {"title": "t", "version": "1"},
        "host": "api.example.com",
        "schemes": schemes,
        "paths": {},
    }
    assert inline(data).servers[0] == {"url": "https://api.example.com"}


@pytest.mark.parametrize("empty", ["204", "202"])
def test_an_operation_that_may_answer_no_content_advertises_no_output_schema(empty: str) -> None:
    """A client refuses a result without structured content from a tool that advertises an
    output schema (the SDK raises "did not return structured content"): ``DELETE`` answering
    200 with JSON or 204 with nothing made every 204 an exception in the caller."""
    item = {"type": "object", "properties": {"id": {"type": "integer"}}}
    responses = {
        "200": {"description": "ok", "content": {"application/json": {"schema": item}}},
        empty: {"description": "done"},
    }
    data = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {"/x": {"delete": {"operationId": "drop", "responses": responses}}},
    }
    result = inline(data)
    tool, op = by_name(result)["drop"]
    assert "output" not in tool and op.response_content_type == "application/json"
    where = find(warnings(result), f"response {empty} has no content").field
    assert where == f"#/paths/~1x/delete/responses/{empty}"


@pytest.mark.parametrize("name", ["default", "enum", "settings"])
def test_read_only_under_a_property_named_as_a_data_keyword_is_not_sent(name: str) -> None:
    """The search for whether a body has any ``readOnly`` at all skipped a property named
    ``default`` (or ``enum``, ``const``, ``examples``) as if it were data: its readOnly
    ``id`` was sent."""
    inner = {"type": "object", "properties": {"id": {"type": "string", "readOnly": True}}}
    body = {"type": "object", "properties": {name: inner, "n": {"type": "string"}}}
    content = {"application/json": {"schema": body}}
    operation = {"operationId": "make", "requestBody": {"content": content}, "responses": {}}
    _, op = by_name(inline(doc30({"/x": {"post": operation}})))["make"]
    assert op.body is not None
    assert op.body.read_only == {"properties": {name: {"drop": ["id"]}}}


def test_references_resolved_and_answers_converted_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each reference is resolved once however many places name it, and an operation converts
    its answer schema once (its writeOnly plan and its output schema share the conversion)."""
    resolved: list[tuple[int, str]] = []
    converted: list[tuple[int, Any]] = []
    parse_ref, convert = sources.Sources._parse_ref, SchemaConverter.convert

    def resolving(self: sources.Sources, src: int, ref: str) -> Any:
        resolved.append((src, ref))
        return parse_ref(self, src, ref)

    def converting(self: SchemaConverter, src: int, path: Any, node: Any) -> Any:
        converted.append((src, path))
        return convert(self, src, path, node)

    monkeypatch.setattr(sources.Sources, "_parse_ref", resolving)
    monkeypatch.setattr(SchemaConverter, "convert", converting)
    assert len(fixture("petstore.yaml").tools) > 5
    assert len(resolved) == len(set(resolved)) > 5
    answers = [c for c in converted if "responses" in c[1]]
    assert len(answers) == len(set(answers)) > 5


def test_each_schema_with_a_default_is_checked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The importer checks every default against its schema (``keywords.default_fits``, a
    validator made each time); an API repeats a few such schemas (GitHub: 924 checks of
    226, such as ``per_page``): each is checked once, whatever its key order."""
    import jsonschema

    from mcpgen.openapi import keywords

    made: list[object] = []
    real = jsonschema.Draft202012Validator
    monkeypatch.setattr(
        jsonschema, "Draft202012Validator", lambda *a, **k: made.append(a) or real(*a, **k)
    )
    schema = {"type": "integer", "default": 30, "minimum": 1, "description": "once, per page"}
    assert keywords.default_fits(schema)
    assert keywords.default_fits(dict(reversed(schema.items())))  # the same schema
    assert not keywords.default_fits({**schema, "default": "30"})  # another: a string
    assert not keywords.default_fits({**schema, "default": 0})
    assert len(made) == 3
