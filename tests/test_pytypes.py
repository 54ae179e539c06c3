"""Annotations of the typed client's keyword arguments (``mcpgen.pytypes``)."""

from __future__ import annotations

from typing import Any

import pytest

from mcpgen.model.params import Param, annotation


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "string"}, "str"),
        ({"type": ["string", "null"]}, "str | None"),
        ({"enum": ["x", "y"]}, "Literal['x', 'y']"),
        ({"const": 3}, "Literal[3]"),
        ({"type": "array", "items": {"type": "integer"}}, "list[int]"),
        ({"type": "object"}, "dict[str, Any]"),
        ({"anyOf": [{"type": "string"}, {"type": "string"}]}, "str"),
        ({"anyOf": [{"type": "string"}, {}]}, "Any"),
        # literal options merge into one Literal (ruff's PYI030 rejects Literal[a] | Literal[b])
        ({"anyOf": [{"const": "a"}, {"const": "b"}, {"type": "null"}]}, "Literal['a', 'b'] | None"),
        (
            {"oneOf": [{"type": "integer"}, {"enum": ["a", "b"]}, {"const": "b"}, {"const": 1}]},
            "int | Literal['a', 'b', 1]",
        ),
        ({"oneOf": [{"const": 1}, {"const": True}]}, "Literal[1, True]"),  # 1 == True, kept apart
        # None last (ruff's RUF036), also out of a union inside the union
        ({"type": ["null", "string"]}, "str | None"),
        ({"type": "array", "items": {"type": ["null", "integer"]}}, "list[int | None]"),
        ({"anyOf": [{"type": "null"}, {"enum": ["a"]}]}, "Literal['a'] | None"),
        (
            {"anyOf": [{"type": ["string", "null"]}, {"type": "integer"}, {"type": "string"}]},
            "str | int | None",
        ),
    ],
)
def test_annotation(schema: Any, expected: str) -> None:
    assert annotation(schema) == expected


@pytest.mark.parametrize(
    ("annotation", "optional"),
    [
        ("int", "int | None"),
        ("int | None", "int | None"),
        ("Any", "Any"),
        # found by the property test: a list of optional items is itself not optional
        ("list[int | None]", "list[int | None] | None"),
        ("dict[str, int | None] | str", "dict[str, int | None] | str | None"),
        ("list[int] | None", "list[int] | None"),
    ],
)
def test_optional_annotation_looks_only_at_the_top_level_union(
    annotation: str, optional: str
) -> None:
    param = Param("x", "x", annotation, required=False, description=None)
    assert param.optional_annotation == optional


def test_a_definition_with_a_list_of_types_is_no_scalar_alias() -> None:
    """``type: [string, "null"]`` (GitHub's nullable fields in OpenAPI 3.1) is not a named
    scalar alias of the client; it was a crash (an unhashable list looked up in a dict)."""
    from mcpgen.model.params import classes

    schema = {"$defs": {"Maybe": {"type": ["string", "null"]}, "Code": {"type": "string"}}}
    assert classes(schema, "TInput", frozenset()) == {"#/$defs/Code": "models.TInputCode"}
