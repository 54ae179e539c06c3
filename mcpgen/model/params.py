"""Python type annotations for JSON Schema properties (used for the client's keyword arguments)."""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcpgen import identifiers as names
from mcpgen.check.schemas import def_ref
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


def _union(options: list[Json], depth: int, classes: Mapping[str, str]) -> str:
    """``A | B``, with every literal option merged into one ``Literal[...]`` (ruff PYI030)
    and ``None`` last (ruff RUF036), also when an option is a union itself."""
    parts: list[str] = []
    values: list[Json] = []
    for option in options:
        literal = _literal_values(option)
        if literal is None:
            parts.append(annotation(option, depth + 1, classes))
            continue
        if not values:
            parts.append("")  # where the merged Literal goes
        values.extend(v for v in literal if not any(v == w and type(v) is type(w) for w in values))
    if values:
        parts[parts.index("")] = f"Literal[{', '.join(py(v) for v in values)}]"
    members = [
        str(ast.get_source_segment(part, member))
        for part in parts
        for member in _top_level_union(part)
    ]
    unique = sorted(dict.fromkeys(members), key=lambda member: member == "None")
    return "Any" if "Any" in unique else " | ".join(unique)


def annotation(schema: Json, depth: int = 0, classes: Mapping[str, str] | None = None) -> str:
    """A Python annotation for values valid under ``schema`` (``Any`` when unsure).
    ``classes``: the model class of each ``#/$defs/`` reference (``models.Name``)."""
    classes = classes or {}
    if not isinstance(schema, dict) or depth > 4:
        return "Any"
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return classes.get(ref, "Any")
    literal = _literal_values(schema)
    if literal is not None:
        return f"Literal[{', '.join(py(v) for v in literal)}]"
    kind = schema.get("type")
    if isinstance(kind, list):
        return _union([{**schema, "type": k} for k in kind], depth, classes)
    if kind in _SIMPLE:
        return _SIMPLE[kind]
    if kind == "array":
        return f"list[{annotation(schema.get('items', {}), depth + 1, classes)}]"
    if kind == "object":
        return "dict[str, Any]"
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return _union(options, depth, classes)
    return "Any"


@dataclass(frozen=True)
class Param:
    name: str  # the Python keyword argument
    key: str  # the JSON property name
    annotation: str
    required: bool
    description: str | None
    default: str | None = None  # the schema's default as a Python literal, when it fits

    @property
    def optional_annotation(self) -> str:
        """The annotation of an optional keyword argument (``None`` when left out)."""
        members = _top_level_union(self.annotation)
        if self.annotation == "Any" or any(ast.unparse(m) == "None" for m in members):
            return self.annotation
        return f"{self.annotation} | None"

    @property
    def declaration(self) -> str:
        """``name: annotation = default`` as the client's signature lists it (a too-long
        union in parentheses, as black writes it)."""
        if self.required:
            hint, tail = self.annotation, ""
        elif self.default is not None:
            hint, tail = self.annotation, f" = {self.default}"
        else:
            hint, tail = self.optional_annotation, " = None"
        too_long = SIGNATURE_INDENT + len(f"{self.name}: {hint}{tail},") > LINE_LENGTH
        if too_long and len(_top_level_union(hint)) > 1:
            hint = f"({hint})"
        return f"{self.name}: {hint}{tail}"


# Where the client's keyword arguments sit: 8 spaces deep, lines of at most 100 characters.
SIGNATURE_INDENT = 8
LINE_LENGTH = 100


def _top_level_union(annotation: str) -> list[ast.expr]:
    """The members of a union annotation (``list[int | None]`` is one)."""
    node, members = ast.parse(annotation, mode="eval").body, list[ast.expr]()
    while isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        members.insert(0, node.right)
        node = node.left
    return [node, *members]


# The schema types whose annotation takes a default of each Python type (bool before int).
_DEFAULT_TYPES = {bool: {"boolean"}, int: {"integer", "number"}, float: {"number"}, str: {"string"}}


def _default(schema: Json) -> str | None:
    """A property's scalar ``default`` as a Python literal, if its annotation takes it."""
    if not isinstance(schema, dict) or "default" not in schema or "$ref" in schema:
        return None
    value = schema["default"]
    types = next((t for cls, t in _DEFAULT_TYPES.items() if isinstance(value, cls)), None)
    if types is None or (isinstance(value, float) and not math.isfinite(value)):
        return None  # None, and mutable values, stay defaults of the server alone
    literal = _literal_values(schema)
    if literal is not None:
        fits = any(value == v and type(value) is type(v) for v in literal)
    else:  # a string with a format (a date) is not its text
        kind = schema.get("type")
        fits = bool(types & set(kind if isinstance(kind, list) else [kind]))
        fits = fits and not (isinstance(value, str) and "format" in schema)
    return py(value) if fits else None


def classes(schema: Json, owner: str, shared: frozenset[str]) -> dict[str, str]:
    """``#/$defs/Name`` -> the annotation of the model generated for it (named as
    ``render.models`` names it); a model class also takes the plain dict it stands for."""
    defs = schema.get("$defs") if isinstance(schema, dict) else None
    found: dict[str, str] = {}
    for name, body in defs.items() if isinstance(defs, dict) else ():
        cls = name if name in shared else names.own_def_class(owner, name)
        if not names.kept_class_name(cls) or not isinstance(body, dict):
            continue
        if {"$ref", "allOf", "anyOf", "oneOf"} & body.keys():
            continue  # a union or an alias of an alias: left as Any
        kind = body.get("type")
        if kind == "object" or "properties" in body:
            found[def_ref(name)] = f"models.{cls} | dict[str, Any]"
        elif _literal_values(body) is not None or (isinstance(kind, str) and kind in _SIMPLE):
            found[def_ref(name)] = f"models.{cls}"  # an alias of a constrained scalar or a Literal
    return found


def params(schema: Json, owner: str = "", shared: frozenset[str] = frozenset()) -> list[Param]:
    """Keyword parameters for a tool's input schema: required first, in schema order.
    ``owner``: the input model's class; ``shared``: the manifest's shared definitions."""
    if not isinstance(schema, dict):
        return []
    refs = classes(schema, owner, shared) if owner else {}
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
        kind = annotation(prop, classes=refs)
        required_ = key in required
        default = None if required_ else _default(prop)
        result.append(Param(name, key, kind, required_, description, default))
    return sorted(result, key=lambda p: not p.required)
