"""Annotations of the typed client's keyword arguments (``mcpgen.pytypes``)."""

from __future__ import annotations

from typing import Any

import pytest

from mcpgen.model.params import annotation


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "string"}, "str"),
        ({"type": ["string", "null"]}, "str | None"),
        ({"enum": ["x", "y"]}, 'Literal["x", "y"]'),
        ({"const": 3}, "Literal[3]"),
        ({"type": "array", "items": {"type": "integer"}}, "list[int]"),
        ({"type": "object"}, "dict[str, Any]"),
        ({"anyOf": [{"type": "string"}, {"type": "string"}]}, "str"),
        ({"anyOf": [{"type": "string"}, {}]}, "Any"),
        # literal options merge into one Literal (ruff's PYI030 rejects Literal[a] | Literal[b])
        ({"anyOf": [{"const": "a"}, {"const": "b"}, {"type": "null"}]}, 'Literal["a", "b"] | None'),
        (
            {"oneOf": [{"type": "integer"}, {"enum": ["a", "b"]}, {"const": "b"}, {"const": 1}]},
            'int | Literal["a", "b", 1]',
        ),
        ({"oneOf": [{"const": 1}, {"const": True}]}, "Literal[1, True]"),  # 1 == True, kept apart
    ],
)
def test_annotation(schema: Any, expected: str) -> None:
    assert annotation(schema) == expected
