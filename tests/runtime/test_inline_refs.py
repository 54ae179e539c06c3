"""``schemas.inline_refs``: a tool's schema with its local ``$ref``s resolved once, at
build time, so that checking a call does not resolve them again. The validator built from
the inlined schema must give the same errors, in the same order, as jsonschema on the
schema as written: a differential test over arbitrary JSON instances."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpgen.runtime import draft, schemas
from mcpgen.runtime.patterns import _validator_class, validator
from mcpgen.runtime.schemas import inline_refs

NUMBER = {"type": "number", "description": "A finite decimal number."}
SCHEMAS: dict[str, dict[str, Any]] = {
    "calculator add output": {
        "type": "object",
        "properties": {"sum": {"$ref": "#/$defs/Number"}},
        "required": ["sum"],
        "$defs": {"Number": NUMBER},
    },
    "array of refs, no extras": {
        "type": "object",
        "properties": {"numbers": {"type": "array", "items": {"$ref": "#/$defs/Number"}}},
        "required": ["numbers"],
        "additionalProperties": False,
        "$defs": {"Number": NUMBER},
    },
    "ref beside keywords, nested refs, unions": {
        "type": "object",
        "properties": {
            "low": {"$ref": "#/$defs/Small", "minimum": 0},
            "pick": {"anyOf": [{"$ref": "#/$defs/Small"}, {"$ref": "#/$defs/Name"}]},
            "pair": {"prefixItems": [{"$ref": "#/$defs/Name"}, {"$ref": "#/$defs/Small"}]},
            "named": {"additionalProperties": {"$ref": "#/$defs/Wrapped"}},
        },
        "$defs": {
            "Small": {"type": "integer", "maximum": 5},
            "Name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 3},
            "Wrapped": {"type": "object", "properties": {"v": {"$ref": "#/$defs/Small"}}},
        },
    },
    "recursive": {
        "$ref": "#/$defs/Tree",
        "$defs": {
            "Tree": {
                "type": "object",
                "properties": {
                    "value": {"type": "integer"},
                    "kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}},
                },
                "additionalProperties": False,
            }
        },
    },
    "data that looks like a ref, and a ref beside allOf": {
        "type": "object",
        "properties": {
            "c": {"const": {"$ref": "#/$defs/Small"}},
            "both": {"$ref": "#/$defs/Small", "allOf": [{"minimum": 2}]},
        },
        "$defs": {"Small": {"type": "integer", "maximum": 5}},
    },
}

KEYS = ["sum", "numbers", "low", "pick", "pair", "named", "value", "kids", "v", "c", "both", "x"]
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-10, 10)
    | st.floats(-10, 10, allow_nan=False)
    | st.sampled_from(["", "ab", "abcd", "A1", "$ref", "#/$defs/Small"]),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from([*KEYS, "$ref"]), inner, max_size=4)
    ),
    max_leaves=12,
)


def errors(check: Any, instance: Any) -> list[tuple[list[Any], str]]:
    return [(list(e.absolute_path), e.message) for e in check.iter_errors(instance)]


@pytest.mark.parametrize("name", list(SCHEMAS))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instance=JSON)
def test_inlined_validator_gives_the_same_errors(name: str, instance: Any) -> None:
    schema = SCHEMAS[name]
    as_written = _validator_class()(schema)
    assert errors(validator(schema), instance) == errors(as_written, instance)
    # what a tool gets: jsonschema's own matching when the schema has no pattern
    assert errors(schemas.validator(schema), instance) == errors(as_written, instance)


def test_the_linear_time_matcher_only_for_a_schema_with_a_pattern() -> None:
    """``schemas.validator`` imports ``patterns`` (which a package carries only when a
    schema of its tools names a pattern) for such a schema, and only then."""
    plain = {"type": "object", "properties": {"a": {"$ref": "#/$defs/N"}}, "$defs": {"N": {}}}
    assert not schemas.uses_patterns(plain)
    assert type(schemas.validator(plain)) is draft.draft_class()  # (not patterns')
    nested = {"$defs": {"S": {"type": "string", "pattern": "^a+$"}}, "$ref": "#/$defs/S"}
    assert schemas.uses_patterns(nested)
    assert type(schemas.validator(nested)) is _validator_class()
    keyed = {"type": "object", "patternProperties": {"^x": {}}, "additionalProperties": False}
    assert schemas.uses_patterns({"anyOf": [keyed]})
    assert list(schemas.validator(keyed).iter_errors({"xa": 1, "y": 2}))


def test_refs_to_own_definitions_are_resolved_once() -> None:
    inlined = inline_refs(SCHEMAS["calculator add output"])
    assert inlined["properties"] == {"sum": NUMBER}
    mixed = inline_refs(SCHEMAS["ref beside keywords, nested refs, unions"])["properties"]
    assert mixed["low"] == {"allOf": [{"type": "integer", "maximum": 5}], "minimum": 0}
    assert "$ref" not in str(mixed)


def test_what_cannot_be_inlined_stays_a_ref() -> None:
    tree = inline_refs(SCHEMAS["recursive"])
    assert tree["allOf"][0]["properties"]["kids"]["items"] == {"$ref": "#/$defs/Tree"}
    data = inline_refs(SCHEMAS["data that looks like a ref, and a ref beside allOf"])
    assert data["properties"]["c"] == {"const": {"$ref": "#/$defs/Small"}}
    assert data["properties"]["both"]["$ref"] == "#/$defs/Small"
    based = {"$id": "https://x.example/s", "$ref": "#/$defs/A", "$defs": {"A": {}}}
    assert inline_refs(based) is based
