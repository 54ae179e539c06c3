"""Schema keywords no value meets, in a document imported from OpenAPI: warnings (its author
cannot be asked, and the rest of the document is still usable), located in the document.
The same keywords written in a manifest are errors (``manifests/invalid/unmeetable-schema``)."""

from __future__ import annotations

from pathlib import Path

from mcpgen.check.schemas import schema_nodes
from mcpgen.check.unmeetable import unmeetable
from mcpgen.pipeline import load_manifest

API = """\
openapi: 3.1.0
info: {title: Rooms, version: "1"}
components:
  schemas:
    Code: {type: string, enum: []}
paths:
  /rooms:
    post:
      operationId: bookRoom
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              properties:
                name: {type: string, minLength: 3, maxLength: 2}
                nights: {type: integer, minimum: 2, exclusiveMaximum: 2}
                kind: {type: string, const: 3}
                code: {$ref: "#/components/schemas/Code"}
                legacy: false
              required: [legacy]
      responses: {"200": {description: ok}}
  /rooms/list:
    get:
      operationId: listRooms
      responses: {"200": {description: ok}}
"""


def test_unmeetable_keywords_of_an_imported_document_are_located_warnings(tmp_path: Path) -> None:
    (tmp_path / "rooms.yaml").write_text(API, "utf-8")
    loaded = load_manifest(tmp_path / "rooms.yaml")
    assert not loaded.problems.has_errors(), [p.format() for p in loaded.problems.items]
    assert loaded.manifest is not None and len(loaded.manifest.tools) == 2  # still usable
    found = {p.field: p for p in loaded.problems.warnings}
    expected = {
        "#/components/schemas/Code ($defs.Code.enum)": "an empty enum allows no value",
        "#/paths/~1rooms/post (tools[0].input.properties.name.minLength)": "leave no string",
        "#/paths/~1rooms/post (tools[0].input.properties.nights.minimum)": "leave no number",
        "#/paths/~1rooms/post (tools[0].input.properties.kind.const)": "3 is not of type string",
        "#/paths/~1rooms/post (tools[0].input.required[0])": "'legacy' has the schema false",
    }
    for field, words in expected.items():
        assert field in found and words in found[field].message, (field, sorted(found))
    assert found["#/components/schemas/Code ($defs.Code.enum)"].location.line == 5


def test_malformed_keywords_are_left_to_the_metaschema_check() -> None:
    """Keywords of the wrong shape (reported by the metaschema check) raise nothing here."""
    malformed = [
        {"type": [["string"]], "enum": [1], "minLength": "3", "maxLength": 2},
        {"type": [], "const": 1, "required": "abc", "properties": {"a": False}},
        {"type": "object", "required": [["a"]], "properties": {"a": False}, "enum": "x"},
        {"minimum": True, "maximum": 0, "exclusiveMinimum": None, "exclusiveMaximum": 0},
    ]
    for schema in malformed:
        assert not list(unmeetable(list(schema_nodes(schema)))), schema
