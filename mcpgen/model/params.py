"""Python type annotations for JSON Schema properties (used for the client's keyword arguments)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcpgen import identifiers as names
from mcpgen.literals import py

Json = Any
_SIMPLE = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}


def _literal_values(schema: Json) -> list[Json] | None:
    """The values of a ``const`` or an ``enum`` of strings, integers and booleans."""
    if not isinstance(schema, dict):
        return None
    if "const" in schema and isinstance(schema["const"], str | int | bool):
        return [schema["const"]]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and all(isinstance(v, str | int | bool) for v in enum):
        return list(enum)
    return None


def _union(options: list[Json], depth: int) -> str:
    """``A | B``, with every literal option merged into one ``Literal[...]`` (ruff PYI030)."""
    parts: list[str] = []
    values: list[Json] = []
    for option in options:
        literal = _literal_values(option)
        if literal is None:
            parts.append(annotation(option, depth + 1))
            continue
        if not values:
            parts.append("")  # where the merged Literal goes
        values.extend(v for v in literal if not any(v == w and type(v) is type(w) for w in values))
    if values:
        parts[parts.index("")] = f"Literal[{', '.join(py(v) for v in values)}]"
    unique = list(dict.fromkeys(parts))
    return "Any" if "Any" in unique else " | ".join(unique)


def annotation(schema: Json, depth: int = 0) -> str:
    """A Python annotation for values valid under ``schema`` (``Any`` when unsure)."""
    if not isinstance(schema, dict) or depth > 4:
        return "Any"
    literal = _literal_values(schema)
    if literal is not None:
        return f"Literal[{', '.join(py(v) for v in literal)}]"
    kind = schema.get("type")
    if isinstance(kind, list):
        return _union([{**schema, "type": k} for k in kind], depth)
    if kind in _SIMPLE:
        return _SIMPLE[kind]
    if kind == "array":
        return f"list[{annotation(schema.get('items', {}), depth + 1)}]"
    if kind == "object":
        return "dict[str, Any]"
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return _union(options, depth)
    return "Any"


@dataclass(frozen=True)
class Param:
    name: str  # the Python keyword argument
    key: str  # the JSON property name
    annotation: str
    required: bool
    description: str | None

    @property
    def optional_annotation(self) -> str:
        """The annotation of an optional keyword argument (``None`` when left out)."""
        if self.annotation == "Any" or "None" in _top_level_union(self.annotation):
            return self.annotation
        return f"{self.annotation} | None"


def _top_level_union(annotation: str) -> list[str]:
    """The members of a union annotation, not those inside brackets: ``list[int | None]`` is
    one member (a list is not None)."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(annotation):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == "|" and depth == 0:
            parts.append(annotation[start:index].strip())
            start = index + 1
    parts.append(annotation[start:].strip())
    return parts


def params(schema: Json) -> list[Param]:
    """Keyword parameters for a tool's input schema: required first, in schema order."""
    if not isinstance(schema, dict):
        return []
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    used: set[str] = set()
    result = []
    for key, prop in properties.items():
        name = names.kwarg(key)
        while name in used:
            name += "_"
        used.add(name)
        description = prop.get("description") if isinstance(prop, dict) else None
        result.append(Param(name, key, annotation(prop), key in required, description))
    return sorted(result, key=lambda p: not p.required)
