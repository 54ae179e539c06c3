"""Change pairs: small hand-written locks, each diffed, each classification asserted.

Every case asserts the complete list of (level, item, path) the diff reports, so a rule
that reports too much fails as surely as one that reports too little.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from mcpgen.surface.diff import BREAKING, COMPATIBLE, DOCS, diff, summary

pytestmark = pytest.mark.timeout(60)

Json = Any


def tool(name: str = "t", properties: Json = None, **extra: Json) -> dict[str, Json]:
    schema: dict[str, Json] = {"type": "object", "properties": properties or {}}
    for key in ("required", "additionalProperties", "$defs"):
        if key in extra:
            schema[key] = extra.pop(key)
    return {"name": name, "inputSchema": schema, "scopes": [], **extra}


def lock(*tools: dict[str, Json], **extra: Json) -> dict[str, Json]:
    return {
        "mcpSurface": 1,
        "server": {"name": "s", "version": "1"},
        "capabilities": {"tools": {"listChanged": False}},
        "tools": list(tools),
        **extra,
    }


def prop(schema: Json, name: str = "a", **extra: Json) -> dict[str, Json]:
    """A lock with one tool whose input has one property."""
    return lock(tool(properties={name: schema}, **extra))


def out(schema: Json, **extra: Json) -> dict[str, Json]:
    """A lock with one tool whose output schema is ``schema``."""
    return lock(tool(outputSchema=schema, **extra))


def found(old: Json, new: Json) -> list[tuple[str, str, str]]:
    return [(c.level, c.item, c.path) for c in diff(old, new)]


A = "/inputSchema/properties/a"
T = "tool:t"
OBJ_X: Json = {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}

CASES: list[tuple[str, Json, Json, list[tuple[str, str, str]]]] = [
    # ---- input narrowed / widened
    ("type changed", prop({"type": "string"}), prop({"type": "integer"}),
     [(BREAKING, T, A + "/type")]),
    ("type removed from a list", prop({"type": ["string", "null"]}), prop({"type": "string"}),
     [(BREAKING, T, A + "/type")]),
    ("type added to a list", prop({"type": "string"}), prop({"type": ["string", "null"]}),
     [(COMPATIBLE, T, A + "/type")]),
    ("integer widened to number", prop({"type": "integer"}), prop({"type": "number"}),
     [(COMPATIBLE, T, A + "/type")]),
    ("number narrowed to integer", prop({"type": "number"}), prop({"type": "integer"}),
     [(BREAKING, T, A + "/type")]),
    ("type restricted where there was none", prop({}), prop({"type": "string"}),
     [(BREAKING, T, A + "/type")]),
    ("enum value removed", prop({"enum": ["a", "b", "c"]}), prop({"enum": ["a", "b"]}),
     [(BREAKING, T, A + "/enum")]),
    ("enum value added", prop({"enum": ["a"]}), prop({"enum": ["a", "b"]}),
     [(COMPATIBLE, T, A + "/enum")]),
    ("enum added", prop({"type": "string"}), prop({"type": "string", "enum": ["x"]}),
     [(BREAKING, T, A + "/enum")]),
    ("minimum raised", prop({"type": "integer", "minimum": 1}),
     prop({"type": "integer", "minimum": 2}), [(BREAKING, T, A + "/minimum")]),
    ("maximum lowered", prop({"maximum": 10}), prop({"maximum": 9}),
     [(BREAKING, T, A + "/maximum")]),
    ("maximum raised", prop({"maximum": 10}), prop({"maximum": 11}),
     [(COMPATIBLE, T, A + "/maximum")]),
    ("minimum made exclusive", prop({"minimum": 0}), prop({"exclusiveMinimum": 0}),
     [(BREAKING, T, A + "/exclusiveMinimum")]),
    ("minimum removed", prop({"minimum": 0}), prop({}), [(COMPATIBLE, T, A + "/minimum")]),
    ("minLength tightened", prop({"minLength": 1}), prop({"minLength": 2}),
     [(BREAKING, T, A + "/minLength")]),
    ("maxLength tightened", prop({"maxLength": 200}), prop({"maxLength": 100}),
     [(BREAKING, T, A + "/maxLength")]),
    ("maxLength added", prop({"type": "string"}), prop({"type": "string", "maxLength": 9}),
     [(BREAKING, T, A + "/maxLength")]),
    ("maxLength loosened", prop({"maxLength": 100}), prop({"maxLength": 200}),
     [(COMPATIBLE, T, A + "/maxLength")]),
    ("minItems tightened", prop({"minItems": 0}), prop({"minItems": 1}),
     [(BREAKING, T, A + "/minItems")]),
    ("maxItems loosened", prop({"maxItems": 5}), prop({}), [(COMPATIBLE, T, A + "/maxItems")]),
    ("multipleOf tightened", prop({"multipleOf": 2}), prop({"multipleOf": 4}),
     [(BREAKING, T, A + "/multipleOf")]),
    ("multipleOf loosened", prop({"multipleOf": 0.5}), prop({"multipleOf": 0.25}),
     [(COMPATIBLE, T, A + "/multipleOf")]),
    ("multipleOf changed sideways", prop({"multipleOf": 2}), prop({"multipleOf": 3}),
     [(BREAKING, T, A + "/multipleOf")]),
    ("pattern added", prop({"type": "string"}), prop({"type": "string", "pattern": "^a"}),
     [(BREAKING, T, A + "/pattern")]),
    ("pattern changed", prop({"pattern": "^a"}), prop({"pattern": "^b"}),
     [(BREAKING, T, A + "/pattern")]),
    ("pattern removed", prop({"pattern": "^a"}), prop({}), [(COMPATIBLE, T, A + "/pattern")]),
    ("format added", prop({"type": "string"}), prop({"type": "string", "format": "email"}),
     [(BREAKING, T, A + "/format")]),
    ("format int32 widened to int64", prop({"format": "int32"}), prop({"format": "int64"}),
     [(COMPATIBLE, T, A + "/format")]),
    ("uniqueItems required", prop({"type": "array"}), prop({"type": "array", "uniqueItems": True}),
     [(BREAKING, T, A + "/uniqueItems")]),
    ("additionalProperties closed", lock(tool()), lock(tool(additionalProperties=False)),
     [(BREAKING, T, "/inputSchema/additionalProperties")]),
    ("additionalProperties opened", lock(tool(additionalProperties=False)), lock(tool()),
     [(COMPATIBLE, T, "/inputSchema/additionalProperties")]),
    ("additionalProperties schema narrowed",
     prop({"type": "object", "additionalProperties": {"type": ["string", "integer"]}}),
     prop({"type": "object", "additionalProperties": {"type": "string"}}),
     [(BREAKING, T, A + "/additionalProperties/type")]),
    ("new required property", prop({"type": "string"}),
     lock(tool(properties={"a": {"type": "string"}, "b": {}}, required=["b"])),
     [(BREAKING, T, "/inputSchema/properties/b")]),
    ("new optional property", prop({"type": "string"}),
     lock(tool(properties={"a": {"type": "string"}, "b": {}})),
     [(COMPATIBLE, T, "/inputSchema/properties/b")]),
    ("property became required", prop({}), prop({}, required=["a"]), [(BREAKING, T, A)]),
    ("property no longer required", prop({}, required=["a"]), prop({}), [(COMPATIBLE, T, A)]),
    ("input property removed, extras refused",
     prop({"type": "string"}, additionalProperties=False),
     lock(tool(additionalProperties=False)), [(BREAKING, T, A)]),
    ("input property removed, extras allowed", prop({"type": "string"}), lock(tool()),
     [(COMPATIBLE, T, A)]),
    ("input property removed, extras must match a narrower schema",
     prop({"type": ["string", "integer"]}),
     lock(tool(additionalProperties={"type": "string"})),
     [(BREAKING, T, A + "/type"), (BREAKING, T, "/inputSchema/additionalProperties"),
      (COMPATIBLE, T, A)]),
    ("items narrowed", prop({"type": "array", "items": {"type": ["string", "integer"]}}),
     prop({"type": "array", "items": {"type": "string"}}), [(BREAKING, T, A + "/items/type")]),
    ("prefixItems element narrowed", prop({"prefixItems": [{"type": "string"}, {}]}),
     prop({"prefixItems": [{"type": "string"}, {"enum": [1]}]}),
     [(BREAKING, T, A + "/prefixItems/1/enum")]),
    ("draft-7 tuple items against prefixItems, the same", prop({"items": [{"type": "string"}]}),
     prop({"prefixItems": [{"type": "string"}]}), []),
    ("nested property narrowed",
     prop({"type": "object", "properties": {"b": {"type": "object", "properties": {
         "c": {"enum": [1, 2]}}}}}),
     prop({"type": "object", "properties": {"b": {"type": "object", "properties": {
         "c": {"enum": [1]}}}}}),
     [(BREAKING, T, A + "/properties/b/properties/c/enum")]),
    # ---- $ref and $defs
    ("shared definition narrowed: reported once where it is defined",
     lock(tool(properties={"a": {"$ref": "#/$defs/Id"}, "b": {"$ref": "#/$defs/Id"}},
               **{"$defs": {"Id": {"type": "string"}}})),
     lock(tool(properties={"a": {"$ref": "#/$defs/Id"}, "b": {"$ref": "#/$defs/Id"}},
               **{"$defs": {"Id": {"type": "string", "pattern": "^n"}}})),
     [(BREAKING, T, "/inputSchema/$defs/Id/pattern")]),
    ("inline schema moved into $defs: the same",
     prop({"type": "string", "maxLength": 3}),
     lock(tool(properties={"a": {"$ref": "#/$defs/Code"}},
               **{"$defs": {"Code": {"type": "string", "maxLength": 3}}})), []),
    ("$ref to another definition that is narrower",
     lock(tool(properties={"a": {"$ref": "#/$defs/A"}},
               **{"$defs": {"A": {"enum": [1, 2]}, "B": {"enum": [1]}}})),
     lock(tool(properties={"a": {"$ref": "#/$defs/B"}},
               **{"$defs": {"A": {"enum": [1, 2]}, "B": {"enum": [1]}}})),
     [(BREAKING, T, A + "/enum")]),
    ("recursive definition changed deep inside",
     lock(tool(properties={"a": {"$ref": "#/$defs/Node"}}, **{"$defs": {"Node": {
         "type": "object", "properties": {"kids": {"type": "array", "items": {
             "$ref": "#/$defs/Node"}}, "v": {"type": "integer"}}}}})),
     lock(tool(properties={"a": {"$ref": "#/$defs/Node"}}, **{"$defs": {"Node": {
         "type": "object", "properties": {"kids": {"type": "array", "items": {
             "$ref": "#/$defs/Node"}}, "v": {"type": "integer", "maximum": 5}}}}})),
     [(BREAKING, T, "/inputSchema/$defs/Node/properties/v/maximum")]),
    ("definition changed through the definition it refers to",
     lock(tool(properties={"a": {"$ref": "#/$defs/A"}},
               **{"$defs": {"A": {"type": "array", "items": {"$ref": "#/$defs/B"}},
                            "B": {"type": "string"}}})),
     lock(tool(properties={"a": {"$ref": "#/$defs/A"}},
               **{"$defs": {"A": {"type": "array", "items": {"$ref": "#/$defs/B"}},
                            "B": {"type": "string", "format": "uuid"}}})),
     [(BREAKING, T, "/inputSchema/$defs/B/format")]),
    ("required name without a property schema", lock(tool()), lock(tool(required=["x"])),
     [(BREAKING, T, "/inputSchema/properties/x")]),
    ("definition changed under an unchanged anyOf",
     lock(tool(properties={"a": {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]}},
               **{"$defs": {"A": {"enum": [1, 2]}}})),
     lock(tool(properties={"a": {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]}},
               **{"$defs": {"A": {"enum": [1]}}})),
     [(BREAKING, T, "/inputSchema/$defs/A/enum")]),
    ("remote $ref changed", prop({"$ref": "https://example.com/a.json"}),
     prop({"$ref": "https://example.com/b.json"}), [(BREAKING, T, A + "/$ref")]),
    # ---- anyOf / oneOf / allOf
    ("anyOf alternative added",
     prop({"anyOf": [{"type": "string"}, {"type": "integer"}]}),
     prop({"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "boolean"}]}),
     [(COMPATIBLE, T, A + "/anyOf")]),
    ("anyOf alternative removed",
     prop({"anyOf": [{"type": "string"}, {"type": "integer"}]}),
     prop({"anyOf": [{"type": "string"}]}), [(BREAKING, T, A + "/anyOf")]),
    ("oneOf alternative of another type added", prop({"oneOf": [{"type": "string"}]}),
     prop({"oneOf": [{"type": "string"}, {"type": "boolean"}]}), [(COMPATIBLE, T, A + "/oneOf")]),
    ("oneOf alternative that may overlap added: {a, b} matches both and is refused",
     prop({"oneOf": [{"type": "object", "required": ["a"]}, {"type": "string"}]}),
     prop({"oneOf": [{"type": "object", "required": ["a"]}, {"type": "string"},
                     {"type": "object", "required": ["b"]}]}),
     [(BREAKING, T, A + "/oneOf")]),
    ("oneOf: number added beside integer", prop({"oneOf": [{"type": "integer"}]}),
     prop({"oneOf": [{"type": "integer"}, {"type": "number"}]}), [(BREAKING, T, A + "/oneOf")]),
    ("oneOf alternative added to an output: widened", out({"oneOf": [{"type": "string"}]}),
     out({"oneOf": [{"type": "string"}, {"type": "boolean"}]}),
     [(BREAKING, T, "/outputSchema/oneOf")]),
    ("oneOf alternative of another type removed from an output: narrowed",
     out({"oneOf": [{"type": "string"}, {"type": "boolean"}]}), out({"oneOf": [{"type": "string"}]}),
     [(COMPATIBLE, T, "/outputSchema/oneOf")]),
    ("oneOf alternative that may overlap removed from an output: {a, b} matched two, valid now",
     out({"oneOf": [{"type": "object", "required": ["a"]}, {"type": "string"},
                    {"type": "object", "required": ["b"]}]}),
     out({"oneOf": [{"type": "object", "required": ["a"]}, {"type": "string"}]}),
     [(BREAKING, T, "/outputSchema/oneOf")]),
    ("oneOf $ref alternative of another type removed from an output: narrowed",
     out({"oneOf": [{"$ref": "#/$defs/S"}, {"$ref": "#/$defs/B"}],
          "$defs": {"S": {"type": "string"}, "B": {"type": "boolean"}}}),
     out({"oneOf": [{"$ref": "#/$defs/S"}],
          "$defs": {"S": {"type": "string"}, "B": {"type": "boolean"}}}),
     [(COMPATIBLE, T, "/outputSchema/oneOf")]),
    ("oneOf $ref alternative that may overlap added to an input",
     prop({"oneOf": [{"$ref": "#/$defs/A"}]}, **{"$defs": {"A": {"type": "object"},
                                                          "B": {"type": "object"}}}),
     prop({"oneOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}]},
          **{"$defs": {"A": {"type": "object"}, "B": {"type": "object"}}}),
     [(BREAKING, T, A + "/oneOf")]),
    ("anyOf alternative removed from an output: narrowed, overlap or not",
     out({"anyOf": [{"type": "object", "required": ["a"]}, {"type": "object", "required": ["b"]}]}),
     out({"anyOf": [{"type": "object", "required": ["a"]}]}),
     [(COMPATIBLE, T, "/outputSchema/anyOf")]),
    ("oneOf alternative removed from an input", prop({"oneOf": [{"type": "string"}, {"type": "boolean"}]}),
     prop({"oneOf": [{"type": "string"}]}), [(BREAKING, T, A + "/oneOf")]),
    ("enum value removed from an output: narrowed", out({"enum": ["a", "b"]}), out({"enum": ["a"]}),
     [(COMPATIBLE, T, "/outputSchema/enum")]),
    ("oneOf alternative changed inside",
     prop({"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}),
     prop({"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "integer"}}]}),
     [(BREAKING, T, A + "/oneOf/1/items/type")]),
    ("oneOf alternatives replaced: cannot tell",
     prop({"oneOf": [{"type": "object", "properties": {"x": {}}},
                     {"type": "object", "properties": {"y": {}}}]}),
     prop({"oneOf": [{"type": "object", "properties": {"z": {}}},
                     {"type": "object", "properties": {"w": {}}}]}),
     [(BREAKING, T, A + "/oneOf")]),
    ("made nullable through anyOf", prop({"type": "string", "description": "A"}),
     prop({"anyOf": [{"type": "string"}, {"type": "null"}], "description": "A"}),
     [(COMPATIBLE, T, A + "/anyOf")]),
    ("oneOf of constants against enum: one value added",
     prop({"type": "string", "enum": ["a", "b"]}),
     prop({"oneOf": [{"type": "string", "const": "a"}, {"type": "string", "const": "b"},
                     {"type": "string", "const": "c"}]}),
     [(COMPATIBLE, T, A + "/enum")]),
    ("allOf part added narrows", prop({"allOf": [{"type": "string"}]}),
     prop({"allOf": [{"type": "string"}, {"minLength": 2}]}),
     [(BREAKING, T, A + "/minLength")]),
    ("output composed with allOf: a new property only",
     lock(tool(outputSchema={"type": "object", "properties": {"r": {"$ref": "#/$defs/R"}},
                             "$defs": {"R": OBJ_X}})),
     lock(tool(outputSchema={"type": "object", "properties": {"r": {"allOf": [
         {"$ref": "#/$defs/R"}, {"type": "object", "properties": {"y": {"type": "integer"}}}]}},
         "$defs": {"R": OBJ_X}})),
     [(COMPATIBLE, T, "/outputSchema/properties/r/properties/y")]),
    # ---- output
    ("output property removed", out(OBJ_X),
     out({"type": "object", "properties": {}, "required": []}),
     [(BREAKING, T, "/outputSchema/properties/x")]),
    ("output property retyped", out(OBJ_X),
     out({**OBJ_X, "properties": {"x": {"type": "integer"}}}),
     [(BREAKING, T, "/outputSchema/properties/x/type")]),
    ("output property no longer required", out(OBJ_X), out({**OBJ_X, "required": []}),
     [(BREAKING, T, "/outputSchema/properties/x")]),
    ("output property made nullable", out(OBJ_X),
     out({**OBJ_X, "properties": {"x": {"type": ["string", "null"]}}}),
     [(BREAKING, T, "/outputSchema/properties/x/type")]),
    ("new output property", out(OBJ_X),
     out({**OBJ_X, "properties": {"x": {"type": "string"}, "y": {}}}),
     [(COMPATIBLE, T, "/outputSchema/properties/y")]),
    ("output enum value added", out({"type": "object", "properties": {"s": {"enum": ["a"]}}}),
     out({"type": "object", "properties": {"s": {"enum": ["a", "b"]}}}),
     [(BREAKING, T, "/outputSchema/properties/s/enum")]),
    ("output narrowed", out({"type": "object", "properties": {"n": {"type": "number"}}}),
     out({"type": "object", "properties": {"n": {"type": "integer"}}}),
     [(COMPATIBLE, T, "/outputSchema/properties/n/type")]),
    ("output extra properties refused", out(OBJ_X), out({**OBJ_X, "additionalProperties": False}),
     [(COMPATIBLE, T, "/outputSchema/additionalProperties")]),
    ("output schema removed", out(OBJ_X), lock(tool()), [(BREAKING, T, "/outputSchema")]),
    ("output schema added", lock(tool()), out(OBJ_X), [(COMPATIBLE, T, "/outputSchema")]),
    # ---- execution.taskSupport (manifest ``task:``)
    ("task support required", lock(tool()), lock(tool(execution={"taskSupport": "required"})),
     [(BREAKING, T, "/execution/taskSupport")]),
    ("optional -> required", lock(tool(execution={"taskSupport": "optional"})),
     lock(tool(execution={"taskSupport": "required"})), [(BREAKING, T, "/execution/taskSupport")]),
    ("task support dropped", lock(tool(execution={"taskSupport": "optional"})), lock(tool()),
     [(BREAKING, T, "/execution/taskSupport")]),
    ("task support optional", lock(tool()), lock(tool(execution={"taskSupport": "optional"})),
     [(COMPATIBLE, T, "/execution/taskSupport")]),
    ("required -> optional", lock(tool(execution={"taskSupport": "required"})),
     lock(tool(execution={"taskSupport": "optional"})), [(COMPATIBLE, T, "/execution/taskSupport")]),
    ("forbidden spelled out", lock(tool()), lock(tool(execution={"taskSupport": "forbidden"})),
     [(COMPATIBLE, T, "/execution")]),
    # ---- annotations
    ("readOnlyHint true -> false", lock(tool(annotations={"readOnlyHint": True})),
     lock(tool(annotations={"readOnlyHint": False})),
     [(BREAKING, T, "/annotations/readOnlyHint")]),
    ("destructiveHint false -> true", lock(tool(annotations={"destructiveHint": False})),
     lock(tool(annotations={"destructiveHint": True})),
     [(BREAKING, T, "/annotations/destructiveHint")]),
    ("destructiveHint made the default (true)", lock(tool(annotations={"destructiveHint": False})),
     lock(tool()), [(BREAKING, T, "/annotations/destructiveHint")]),
    ("idempotentHint true -> false", lock(tool(annotations={"idempotentHint": True})),
     lock(tool(annotations={"idempotentHint": False})),
     [(BREAKING, T, "/annotations/idempotentHint")]),
    ("openWorldHint false -> true", lock(tool(annotations={"openWorldHint": False})),
     lock(tool(annotations={"openWorldHint": True})),
     [(BREAKING, T, "/annotations/openWorldHint")]),
    ("readOnlyHint false -> true", lock(tool(annotations={"readOnlyHint": False})),
     lock(tool(annotations={"readOnlyHint": True})),
     [(COMPATIBLE, T, "/annotations/readOnlyHint")]),
    ("hints written out at their defaults: the same", lock(tool()),
     lock(tool(annotations={"readOnlyHint": False, "destructiveHint": True,
                            "idempotentHint": False, "openWorldHint": True})), []),
    ("annotation title", lock(tool(annotations={"title": "A"})),
     lock(tool(annotations={"title": "B"})), [(DOCS, T, "/annotations/title")]),
    # ---- scopes, visibility, _meta
    ("scope added", lock(tool(scopes=["read"])), lock(tool(scopes=["read", "write"])),
     [(BREAKING, T, "/scopes")]),
    ("scope removed", lock(tool(scopes=["read"])), lock(tool()), [(COMPATIBLE, T, "/scopes")]),
    ("tool hidden", lock(tool()), lock(tool(enabled=False)), [(BREAKING, T, "/enabled")]),
    ("_meta changed", lock(tool(_meta={"a": 1})), lock(tool(_meta={"a": 2})),
     [(COMPATIBLE, T, "/_meta")]),
    # ---- docs
    ("title", lock(tool(title="A")), lock(tool(title="B")), [(DOCS, T, "/title")]),
    ("description", lock(tool(description="Does a.")), lock(tool(description="Does b.")),
     [(DOCS, T, "/description")]),
    ("property description", prop({"description": "x"}), prop({"description": "y"}),
     [(DOCS, T, A + "/description")]),
    ("examples", prop({"examples": [1]}), prop({"examples": [2]}), [(DOCS, T, A + "/examples")]),
    ("icons", lock(tool(icons=[{"src": "a.png"}])), lock(tool(icons=[{"src": "b.png"}])),
     [(DOCS, T, "/icons")]),
    ("vendor extension", prop({"x-internal": 1}), prop({"x-internal": 2}),
     [(DOCS, T, A + "/x-internal")]),
    ("default changed", prop({"default": 1}), prop({"default": 2}),
     [(COMPATIBLE, T, A + "/default")]),
    # ---- must not be reported
    ("description re-wrapped", lock(tool(description="Does\n  a thing.")),
     lock(tool(description="Does a   thing.")), []),
    ("type list of one", prop({"type": ["string"]}), prop({"type": "string"}), []),
    ("enum reordered", prop({"enum": ["a", "b"]}), prop({"enum": ["b", "a"]}), []),
    ("required reordered", lock(tool(properties={"a": {}, "b": {}}, required=["a", "b"])),
     lock(tool(properties={"a": {}, "b": {}}, required=["b", "a"])), []),
    ("const against one-value enum", prop({"const": "x"}), prop({"enum": ["x"]}), []),
    ("minLength 0 against none", prop({"minLength": 0}), prop({}), []),
    ("additionalProperties true against none", lock(tool(additionalProperties=True)),
     lock(tool()), []),
    ("draft-4 exclusiveMinimum against 2020-12", prop({"minimum": 0, "exclusiveMinimum": True}),
     prop({"exclusiveMinimum": 0}), []),
    ("a $ref against allOf of that $ref alone",
     lock(tool(properties={"a": {"$ref": "#/$defs/R"}}, **{"$defs": {"R": OBJ_X}})),
     lock(tool(properties={"a": {"allOf": [{"$ref": "#/$defs/R"}]}}, **{"$defs": {"R": OBJ_X}})),
     []),
    ("a schema against anyOf of that schema alone", prop({"type": "string", "maxLength": 2}),
     prop({"anyOf": [{"type": "string", "maxLength": 2}]}), []),
    ("a type list against anyOf of one alternative per type (each with its own keywords)",
     prop({"type": ["string", "integer"], "maxLength": 3}),
     prop({"anyOf": [{"type": "string", "maxLength": 3}, {"type": "integer"}]}), []),
    ("a type list split into alternatives, one of them narrowed",
     prop({"type": ["string", "integer"], "maxLength": 3}),
     prop({"anyOf": [{"type": "string", "maxLength": 2}, {"type": "integer"}]}),
     [(BREAKING, T, A + "/anyOf/0/maxLength")]),
    ("size changed alone", lock(tool(size={"bytes": 1, "tokens": 1})),
     lock(tool(size={"bytes": 2, "tokens": 1})), []),
    # ---- items added, removed, renamed
    ("tool removed", lock(tool("a"), tool("b")), lock(tool("a")), [(BREAKING, "tool:b", "")]),
    ("tool added", lock(tool("a")), lock(tool("a"), tool("b")), [(COMPATIBLE, "tool:b", "")]),
    ("tool renamed: same schemas", lock(tool("old", {"q": {"type": "string"}})),
     lock(tool("new", {"q": {"type": "string"}})), [(BREAKING, "tool:old", "")]),
    ("renamed and its description changed", lock(tool("old", {"q": {}}, description="x")),
     lock(tool("new", {"q": {}}, description="y")),
     [(BREAKING, "tool:old", ""), (DOCS, "tool:new", "/description")]),
    ("not a rename: the schemas differ", lock(tool("old", {"q": {}})),
     lock(tool("new", {"r": {}})), [(BREAKING, "tool:old", ""), (COMPATIBLE, "tool:new", "")]),
    ("not a rename: two removed tools have the same schemas",
     lock(tool("a"), tool("b")), lock(tool("c")),
     [(BREAKING, "tool:a", ""), (BREAKING, "tool:b", ""), (COMPATIBLE, "tool:c", "")]),
    ("tool moved behind meta tools",
     lock(tool("get_pet")),
     lock(tool("call_operation"), operations=[tool("get_pet")]),
     [(BREAKING, "tool:get_pet", ""), (COMPATIBLE, "tool:call_operation", "")]),
    ("tool moved behind meta tools, its description changed on the way",
     lock(tool("get_pet", description="x")),
     lock(tool("call_operation"), operations=[tool("get_pet", description="y")]),
     [(BREAKING, "tool:get_pet", ""), (COMPATIBLE, "tool:call_operation", ""),
      (DOCS, "operation:get_pet", "/description")]),
    ("operation declared as a tool of the same name: one item, not removed and added",
     lock(tool("call_operation"), operations=[tool("get_pet", {"id": {}}, description="x")]),
     lock(tool("call_operation"), tool("get_pet", {"id": {}, "q": {}}, description="y")),
     [(BREAKING, "operation:get_pet", ""), (COMPATIBLE, "tool:get_pet", A[:-2] + "/q"),
      (DOCS, "tool:get_pet", "/description")]),
    ("meta tools switched off: every operation a listed tool",
     lock(tool("call_operation"), operations=[tool("get_pet", {"id": {}})]),
     lock(tool("get_pet", {"id": {}})),
     [(BREAKING, "operation:get_pet", ""), (BREAKING, "tool:call_operation", "")]),
    ("operation narrowed", lock(operations=[tool("op", {"a": {}})]),
     lock(operations=[tool("op", {"a": {}}, required=["a"])]),
     [(BREAKING, "operation:op", A)]),
    # ---- prompts
    ("prompt argument made required",
     lock(prompts=[{"name": "p", "arguments": [{"name": "a", "required": False}]}]),
     lock(prompts=[{"name": "p", "arguments": [{"name": "a", "required": True}]}]),
     [(BREAKING, "prompt:p", "/arguments/a/required")]),
    ("prompt argument added as required", lock(prompts=[{"name": "p", "arguments": []}]),
     lock(prompts=[{"name": "p", "arguments": [{"name": "b", "required": True}]}]),
     [(BREAKING, "prompt:p", "/arguments/b")]),
    ("prompt argument added as optional", lock(prompts=[{"name": "p", "arguments": []}]),
     lock(prompts=[{"name": "p", "arguments": [{"name": "b", "required": False}]}]),
     [(COMPATIBLE, "prompt:p", "/arguments/b")]),
    ("prompt argument removed",
     lock(prompts=[{"name": "p", "arguments": [{"name": "a", "required": False}]}]),
     lock(prompts=[{"name": "p", "arguments": []}]), [(BREAKING, "prompt:p", "/arguments/a")]),
    ("prompt argument description",
     lock(prompts=[{"name": "p", "arguments": [{"name": "a", "description": "x"}]}]),
     lock(prompts=[{"name": "p", "arguments": [{"name": "a", "description": "y"}]}]),
     [(DOCS, "prompt:p", "/arguments/a/description")]),
    ("prompt removed", lock(prompts=[{"name": "p", "arguments": []}]), lock(prompts=[]),
     [(BREAKING, "prompt:p", "")]),
    ("prompt scope added", lock(prompts=[{"name": "p", "scopes": []}]),
     lock(prompts=[{"name": "p", "scopes": ["x"]}]), [(BREAKING, "prompt:p", "/scopes")]),
    # ---- resources and templates
    ("resource removed", lock(resources=[{"uri": "a://x", "name": "x"}]), lock(resources=[]),
     [(BREAKING, "resource:a://x", "")]),
    ("resource moved to another URI: a rename",
     lock(resources=[{"uri": "a://x", "name": "x", "mimeType": "text/plain"}]),
     lock(resources=[{"uri": "a://y", "name": "x", "mimeType": "text/plain"}]),
     [(BREAKING, "resource:a://x", "")]),
    ("template mimeType changed",
     lock(resourceTemplates=[{"uriTemplate": "a://{id}", "name": "n", "mimeType": "text/plain"}]),
     lock(resourceTemplates=[{"uriTemplate": "a://{id}", "name": "n", "mimeType": "text/html"}]),
     [(BREAKING, "template:a://{id}", "/mimeType")]),
    ("template added", lock(resourceTemplates=[]),
     lock(resourceTemplates=[{"uriTemplate": "a://{id}", "name": "n"}]),
     [(COMPATIBLE, "template:a://{id}", "")]),
    ("resource scope added", lock(resources=[{"uri": "a://x", "name": "x", "scopes": []}]),
     lock(resources=[{"uri": "a://x", "name": "x", "scopes": ["r"]}]),
     [(BREAKING, "resource:a://x", "/scopes")]),
    # ---- server and capabilities
    ("server version", lock(), {**lock(), "server": {"name": "s", "version": "2"}},
     [(DOCS, "server", "/version")]),
    ("server instructions re-worded", {**lock(), "server": {"name": "s", "instructions": "a"}},
     {**lock(), "server": {"name": "s", "instructions": "b"}}, [(DOCS, "server", "/instructions")]),
    ("listChanged dropped", lock(), {**lock(), "capabilities": {"tools": {"listChanged": False}}},
     []),
    ("tools listChanged no longer sent",
     {**lock(), "capabilities": {"tools": {"listChanged": True}}}, lock(),
     [(BREAKING, "capability:tools", "/listChanged")]),
    ("capability added", lock(), {**lock(), "capabilities": {"tools": {}, "logging": {}}},
     [(COMPATIBLE, "capability:logging", "")]),
    ("capability removed", {**lock(), "capabilities": {"tools": {}, "completions": {}}},
     {**lock(), "capabilities": {"tools": {}}}, [(BREAKING, "capability:completions", "")]),
    ("tasks/list no longer offered (a nested capability object)",
     {**lock(), "capabilities": {"tasks": {"cancel": {}, "list": {}}}},
     {**lock(), "capabilities": {"tasks": {"cancel": {}}}}, [(BREAKING, "capability:tasks", "/list")]),
    ("tasks/cancel offered",
     {**lock(), "capabilities": {"tasks": {"requests": {"tools": {"call": {}}}}}},
     {**lock(), "capabilities": {"tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}}}},
     [(COMPATIBLE, "capability:tasks", "/cancel")]),
    ("maxLength 5 -> 4.0 (an integer written as a float)", prop({"type": "string", "maxLength": 5}),
     prop({"type": "string", "maxLength": 4.0}), [(BREAKING, T, A + "/maxLength")]),
    # ---- JSON values that Python's == confuses: true is not 1, false is not 0
    ("enum 1 -> true", prop({"enum": [0, 1]}), prop({"enum": [False, True]}),
     [(BREAKING, T, A + "/enum"), (COMPATIBLE, T, A + "/enum")]),
    ("const false -> 0 inside anyOf", prop({"anyOf": [{"const": False}, {"type": "string"}]}),
     prop({"anyOf": [{"const": 0}, {"type": "string"}]}),
     [(BREAKING, T, A + "/anyOf/0/const"), (COMPATIBLE, T, A + "/anyOf/0/const")]),
    # ---- schema false: no value at all
    ("input property -> false", prop({"type": "string"}), prop(False), [(BREAKING, T, A)]),
    ("input property false -> a type", prop(False), prop({"type": "string"}),
     [(COMPATIBLE, T, A)]),
    ("input property {not: {}} -> true", prop({"not": {}}), prop(True), [(COMPATIBLE, T, A)]),
    ("output property -> false", out({"type": "object", "properties": {"x": {}}}),
     out({"type": "object", "properties": {"x": False}}),
     [(COMPATIBLE, T, "/outputSchema/properties/x")]),
    ("output property false -> a type", out({"type": "object", "properties": {"x": False}}),
     out({"type": "object", "properties": {"x": {"type": "string"}}}),
     [(BREAKING, T, "/outputSchema/properties/x")]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("old", "new", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_change_pair(old: Json, new: Json, expected: list[tuple[str, str, str]]) -> None:
    old_copy, new_copy = copy.deepcopy(old), copy.deepcopy(new)
    assert found(old, new) == sorted(
        expected, key=lambda c: ({BREAKING: 0, COMPATIBLE: 1, DOCS: 2}[c[0]], c[1], c[2])
    )
    assert (old, new) == (old_copy, new_copy), "diff changed its input"


def test_enough_pairs() -> None:
    assert len(CASES) >= 30
    assert sum(1 for c in CASES if not c[3]) >= 5  # must-not-report cases


def test_no_change_against_itself() -> None:
    for _, old, new, _ in CASES:
        assert diff(old, copy.deepcopy(old)) == []
        assert diff(new, copy.deepcopy(new)) == []


def test_key_order_is_not_a_change() -> None:
    old = prop({"type": "string", "maxLength": 3, "description": "d"}, required=["a"])
    shuffled = json.loads(json.dumps(old), object_pairs_hook=lambda pairs: dict(reversed(pairs)))
    assert list(shuffled["tools"][0]) != list(old["tools"][0])
    assert diff(old, shuffled) == []


def test_rename_reports_one_change_not_two() -> None:
    changes = diff(lock(tool("old", {"q": {}})), lock(tool("new", {"q": {}})))
    assert [(c.item, c.change) for c in changes] == [("tool:old", "renamed to new")]
    assert "new" in changes[0].why and changes[0].level == BREAKING


def test_changes_are_sorted_and_have_reasons() -> None:
    old = lock(tool("a", description="x"), tool("b", {"p": {"enum": [1, 2]}}), tool("c"))
    new = lock(tool("a", description="y"), tool("b", {"p": {"enum": [1, 3]}}), tool("d", {"z": {}}))
    changes = diff(old, new)
    assert [c.level for c in changes] == sorted(
        (c.level for c in changes), key=[BREAKING, COMPATIBLE, DOCS].index
    )
    assert all(c.why and c.change for c in changes)
    assert ("compatible", "tool:b", "/inputSchema/properties/p/enum") in found(old, new)
    assert ("breaking", "tool:b", "/inputSchema/properties/p/enum") in found(old, new)


def test_json_pointer_escapes_names() -> None:
    old = lock(tool(properties={"a/b~c": {"type": "string"}}))
    new = lock(tool(properties={"a/b~c": {"type": "integer"}}))
    assert found(old, new) == [(BREAKING, T, "/inputSchema/properties/a~1b~0c/type")]


def test_summary_counts_and_token_delta() -> None:
    old = lock(tool("a"), totals={"toolsListBytes": 400, "toolsListTokens": 100})
    new = lock(
        tool("a", description="x"),
        tool("b"),
        totals={"toolsListBytes": 480, "toolsListTokens": 120},
    )
    result = summary(diff(old, new), old, new)
    assert result == {
        "breaking": 0, "compatible": 1, "docs": 1,
        "tokensBefore": 100, "tokensAfter": 120, "bytesBefore": 400, "bytesAfter": 480,
    }  # fmt: skip


def test_summary_measures_locks_without_totals() -> None:
    one = lock(tool("a"))
    two = lock(tool("a"), tool("bb", enabled=False))
    listed = '{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{}}}]}'
    result = summary([], one, two)
    assert result["bytesBefore"] == result["bytesAfter"] == len(listed)
    assert result["tokensBefore"] == -(-len(listed) // 4)


def _mutations(value: Json, rng: Any) -> Json:
    """``value`` with a few members replaced by values of the wrong kind."""
    odd = [None, 0, -1.5, True, "x", [], {}, [1, "a"], {"$ref": "#/nowhere"}, {"type": 7}]
    if isinstance(value, dict):
        result = {}
        for key, member in value.items():
            if key in ("name", "uri", "uriTemplate") or rng.random() > 0.15:
                result[key] = _mutations(member, rng)
            else:
                result[key] = rng.choice(odd)
        return result
    if isinstance(value, list):
        return [_mutations(v, rng) if rng.random() > 0.15 else rng.choice(odd) for v in value]
    return value


def test_odd_values_never_crash_the_diff() -> None:
    import random

    rng = random.Random(18)
    for _ in range(3):
        for _, old, new, _ in CASES:
            a, b = _mutations(old, rng), _mutations(new, rng)
            for x, y in ((a, b), (b, a), (old, a), (b, new)):
                for change in diff(x, y):
                    assert change.level in (BREAKING, COMPATIBLE, DOCS)
                    assert change.path == "" or change.path.startswith("/")


def test_all_of_parts_with_properties_of_two_shapes_are_compared_not_merged() -> None:
    """One part's ``properties`` a list, another's an object: not one schema (this crashed)."""
    new = lock(tool(inputSchema={"allOf": [{"properties": []}, {"properties": {"a": {}}}]}))
    assert found(lock(tool()), new) == [
        (BREAKING, T, "/inputSchema/allOf"),
        (COMPATIBLE, T, "/inputSchema/type"),
    ]
