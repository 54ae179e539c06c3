"""What the OpenAPI importer and the merge say about documents they cannot take as they are:
each problem located at the line it is about (the spec's, or the manifest's for its options)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcpgen.load import load_text
from mcpgen.openapi import import_openapi
from mcpgen.openapi.to_manifest import short_name
from mcpgen.pipeline import load_manifest, load_source_text
from mcpgen.problems import Level, Problem


def imported(data: Any, folder: Path) -> list[Problem]:
    """Import a document written as indented JSON (one key a line: positions are known)."""
    doc = load_text(json.dumps(data, indent=1), "spec.json", folder, json_first=True)
    return list(import_openapi(doc).problems)


def line_of(data: Any, text: str) -> int:
    """The 1-based line of the first line of the indented JSON holding ``text``."""
    lines = json.dumps(data, indent=1).splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def one(problems: list[Problem], text: str) -> Problem:
    matching = [p for p in problems if text in p.message]
    assert len(matching) == 1, [p.format() for p in problems]
    return matching[0]


def spec30(schemas: dict[str, Any], body: Any) -> dict[str, Any]:
    content = {"application/json": {"schema": body}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/things": {
                "post": {
                    "operationId": "make",
                    "requestBody": {"content": content},
                    "responses": {"204": {"description": "done"}},
                }
            }
        },
        "components": {"schemas": schemas},
    }


def test_dependencies_become_2020_12_keywords_or_are_left_out(tmp_path: Path) -> None:
    body = {
        "type": "object",
        "properties": {"card": {"type": "string"}, "zip": {"type": "string"}},
        "dependencies": {"card": ["zip"], "zip": {"required": ["card"]}},
    }
    bad = {"type": "object", "dependencies": ["card"]}
    data = spec30({"Bad": bad}, {"allOf": [body, {"$ref": "#/components/schemas/Bad"}]})
    doc = load_text(json.dumps(data, indent=1), "spec.json", tmp_path, json_first=True)
    result = import_openapi(doc)
    schema = json.dumps(result.tools[0]["input"])
    assert '"dependentRequired": {"card": ["zip"]}' in schema
    assert '"dependentSchemas": {"zip": {"required": ["card"]}}' in schema
    problem = one(list(result.problems), "must be a mapping")
    assert problem.level is Level.WARNING
    assert problem.message == "schema keyword 'dependencies' must be a mapping; left out"
    assert problem.location.line == line_of(data, '"dependencies": [')


def test_discriminator_problems_are_located(tmp_path: Path) -> None:
    cat = {"type": "object", "properties": {"kind": {"type": "string"}}}
    schemas = {
        "Cat": cat,
        "NoName": {"oneOf": [{"$ref": "#/components/schemas/Cat"}], "discriminator": {}},
        "NotAMapping": {
            "oneOf": [{"$ref": "#/components/schemas/Cat"}],
            "discriminator": {"propertyName": "kind", "mapping": ["cat"]},
        },
        "Values": {
            "oneOf": [{"$ref": "#/components/schemas/Cat"}],
            "discriminator": {"propertyName": "kind", "mapping": {"cat": 1, "dog": "Dog"}},
        },
    }
    body = {
        "type": "object",
        "properties": {n: {"$ref": f"#/components/schemas/{n}"} for n in list(schemas)[1:]},
    }
    problems = imported(spec30(schemas, body), tmp_path)
    no_name = one(problems, "needs a string 'propertyName'")
    assert no_name.field == "#/components/schemas/NoName/discriminator"
    assert (
        no_name.message == "schema keyword 'discriminator' needs a string 'propertyName'; left out"
    )
    mapping = one(problems, "discriminator mapping must be a mapping")
    assert mapping.field == "#/components/schemas/NotAMapping/discriminator/mapping"
    value = one(problems, "discriminator mapping values must be strings")
    assert value.field == "#/components/schemas/Values/discriminator/mapping/cat"
    missing = one(problems, "no schema named 'Dog'")
    assert missing.level is Level.ERROR
    assert missing.field == "#/components/schemas/Values/discriminator/mapping/dog"
    data = spec30(schemas, body)
    assert missing.location.line == line_of(data, '"dog": "Dog"')


def test_a_schema_that_is_only_a_reference_to_itself_is_an_error(tmp_path: Path) -> None:
    schemas = {"Loop": {"$ref": "#/components/schemas/Loop"}}
    data = spec30(schemas, {"$ref": "#/components/schemas/Loop"})
    problem = one(imported(data, tmp_path), "refers to itself")
    assert problem.level is Level.ERROR
    assert problem.field == "#/components/schemas/Loop"
    assert problem.location.line == line_of(data, '"Loop": {')


def test_swagger2_body_with_form_data_and_two_bodies(tmp_path: Path) -> None:
    body = {"name": "pet", "in": "body", "schema": {"type": "object"}}
    data = {
        "swagger": "2.0",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/mixed": {
                "post": {
                    "operationId": "mixed",
                    "parameters": [body, {"name": "file", "in": "formData", "type": "string"}],
                    "responses": {"204": {"description": "done"}},
                }
            },
            "/twice": {
                "post": {
                    "operationId": "twice",
                    "parameters": [body, {**body, "name": "other"}],
                    "responses": {"204": {"description": "done"}},
                }
            },
        },
    }
    problems = imported(data, tmp_path)
    mixed = one(problems, "cannot have both 'body' and 'formData' parameters")
    assert mixed.level is Level.ERROR
    assert mixed.field == "#/paths/~1mixed/post/parameters/1"
    twice = one(problems, "can have only one 'body' parameter")
    assert twice.field == "#/paths/~1twice/post/parameters/1"
    assert twice.location.line == line_of(data, '"name": "other"') - 1


def test_server_name_from_the_host_when_the_title_is_long() -> None:
    long_title = {"title": "The Very Long Name Of A Rather Large Public API"}
    servers = [{"url": "https://api.github.com/v3"}]
    assert short_name(long_title, servers, Path("x.yaml")) == "github"
    assert short_name(long_title, [{"url": "https://api.example.co.uk"}], Path("x")) == "example"
    for host, name in [
        ("api.example.com.au", "example"),
        ("shop.com.au", "shop"),
        ("www.example.ac.nz", "example"),
        ("api.example.gov.br", "example"),
    ]:
        assert short_name(long_title, [{"url": f"https://{host}/v1"}], Path("x")) == name, host
    local = [{"url": "http://localhost:8080"}]  # no name in it: the title's first words
    assert short_name(long_title, local, Path("x.yaml")) == "the-very-long"
    assert short_name({}, local, Path("my_spec.yaml")) == "my-spec"


def write_manifest(tmp_path: Path, extra: str, defs: str = "") -> Path:
    spec = spec30({"Thing": {"type": "object"}}, {"$ref": "#/components/schemas/Thing"})
    (tmp_path / "spec.json").write_text(json.dumps(spec, indent=1), encoding="utf-8")
    manifest = tmp_path / "mcp.yaml"
    text = "mcpgen: 1\nserver:\n  name: wrapped\n  description: d\n"
    text += defs + "openapi:\n  source: spec.json\n" + extra
    manifest.write_text(text, encoding="utf-8")
    return manifest


def test_option_problems_are_located_in_the_manifest(tmp_path: Path) -> None:
    extra = "  exclude:\n    - tags: [nothing]\n  overrides:\n    make:\n      colour: red\n"
    loaded = load_manifest(write_manifest(tmp_path, extra))
    unused = one(loaded.problems.items, "matches no operation")
    assert unused.location.file.endswith("mcp.yaml") and unused.field == "openapi.exclude[0]"
    assert (unused.location.line, unused.location.column) == (8, 7)
    unknown = one(loaded.problems.items, "unknown override 'colour'")
    assert unknown.field == "openapi.overrides.make.colour"
    assert unknown.location.file.endswith("mcp.yaml") and unknown.location.line == 11


def test_manifest_defs_clashing_with_components(tmp_path: Path) -> None:
    defs = "$defs:\n  Thing: {type: string}\n"
    loaded = load_manifest(write_manifest(tmp_path, "", defs))
    assert loaded.manifest is None
    clash = one(loaded.problems.items, "also components of spec.json")
    assert clash.level is Level.ERROR and clash.field == "$defs"
    assert clash.message == (
        "definition(s) Thing are also components of spec.json with different content; "
        "rename the manifest's"
    )
    assert clash.location.line == 6


def test_an_import_that_keeps_no_operation_warns(tmp_path: Path) -> None:
    loaded = load_manifest(write_manifest(tmp_path, "  include:\n    - operationId: other\n"))
    nothing = one(loaded.problems.items, "no operation was imported")
    assert nothing.level is Level.WARNING and nothing.field == "openapi.source"
    assert nothing.location.line == 6


def test_a_bare_document_without_operations_is_refused_at_its_info(tmp_path: Path) -> None:
    data = {
        "openapi": "3.1.0",
        "info": {"title": "Hooks", "version": "1"},
        "webhooks": {"ping": {"post": {"responses": {"200": {"description": "ok"}}}}},
    }
    loaded = load_source_text(json.dumps(data, indent=1), "hooks.json", tmp_path)
    assert loaded.manifest is None
    refused = one(loaded.problems.items, "no operation to serve")
    assert refused.level is Level.ERROR and refused.field == "paths"
    assert refused.location.file == "hooks.json"
    assert refused.location.line == line_of(data, '"info": {')
