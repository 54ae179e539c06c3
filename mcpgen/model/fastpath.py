"""Which tool inputs may skip jsonschema: for the schemas accepted here (a small whitelist,
``_Checker``), the generated model's *strict* pydantic validation accepting the arguments
implies the JSON Schema does, so the server tries it first and falls back to jsonschema.
Only arguments with no ``null``, NaN or infinity take it (``runtime.tools._strictly``)."""

from __future__ import annotations

import keyword
import re
from typing import Any

from mcpgen.check.schemas import def_name
from mcpgen.model import relax

Json = Any
ANNOTATIONS = relax.ANNOTATIONS | {"$comment", "readOnly", "writeOnly"}
OBJECT_KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties"})
STRING_KEYWORDS = frozenset({"type", "minLength", "maxLength", "enum", "format"})
INTEGER_KEYWORDS = frozenset({"type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
ARRAY_KEYWORDS = frozenset({"type", "items", "minItems", "maxItems"})
# formats whose strict field type accepts only strings the format allows
STRING_FORMATS = frozenset(
    {"uri-reference", "iri", "date-time", "date", "time", "uuid", "ipv4", "ipv6"}
)
_IDENTIFIER = re.compile(r"[a-z][A-Za-z0-9_]*\Z")
# Fixed lists (not the running Python's or pydantic's) so a build is the same everywhere.
_RESERVED_NAMES = frozenset(
    {
        # soft keywords
        "match", "case", "type",
        # what BaseModel defines outside ``model_*`` (datamodel-code-generator's own list)
        "construct", "copy", "dict", "fields", "from_orm", "json", "mro", "parse_file",
        "parse_obj", "parse_raw", "register", "schema", "schema_json", "update_forward_refs",
        "validate",
        # builtin types a field annotation may use, which a field name would shadow
        "bool", "bytes", "bytearray", "complex", "float", "frozenset", "int", "list",
        "memoryview", "object", "set", "str", "tuple",
        # modules and names the generated module imports in lower case
        "date", "datetime", "time", "timedelta", "field", "annotations", "typing",
        "typing_extensions", "pydantic", "decimal", "uuid", "enum", "ipaddress", "self", "cls",
    }
)  # fmt: skip


def plain_field_name(name: str) -> bool:
    """True when the generated model keeps ``name`` as the field name, with no alias (an
    alias plus ``validate_by_name`` would accept a key the schema does not know)."""
    return (
        bool(_IDENTIFIER.match(name))
        and not keyword.iskeyword(name)
        and not name.startswith("model_")
        and name not in _RESERVED_NAMES
    )


class _Checker:
    def __init__(self, defs: dict[str, Json]) -> None:
        self.defs = defs
        self.done: dict[str, bool] = {}

    def ref(self, ref: Json) -> bool:
        name = def_name(ref)  # None for any other reference, or a nested one
        if name is None or "~" in ref or "%" in name or name not in self.defs:
            return False
        if name not in self.done:
            self.done[name] = False  # meanwhile: recursive models are not on the fast path
            self.done[name] = self.schema(self.defs[name])
        return self.done[name]

    def schema(self, node: Json) -> bool:
        if not isinstance(node, dict):
            return False
        keys = set(node) - ANNOTATIONS
        if "$ref" in node:
            return keys == {"$ref"} and self.ref(node["$ref"])
        if not keys:
            return True  # {} accepts anything, and so does the model's Any
        kind = node.get("type")
        if isinstance(kind, list):
            if len(kind) != 2 or "null" not in kind or kind[0] == kind[1]:
                return False
            kind = kind[0] if kind[1] == "null" else kind[1]
        if kind == "object":
            return keys <= OBJECT_KEYWORDS and self.object(node)
        if kind == "string":
            return keys <= STRING_KEYWORDS and _string(node)
        if kind == "integer":
            return keys <= INTEGER_KEYWORDS and all(type(node[k]) is int for k in keys - {"type"})
        if kind in ("number", "boolean"):
            return keys == {"type"}
        if kind == "array":
            return (
                keys <= ARRAY_KEYWORDS
                and _counts(node, "minItems", "maxItems")
                and ("items" not in node or self.schema(node["items"]))
            )
        return False

    def object(self, node: dict[str, Json]) -> bool:
        properties = node.get("properties", {})
        required = node.get("required", [])
        return (
            isinstance(properties, dict)
            and isinstance(required, list)
            and isinstance(node.get("additionalProperties", True), bool)
            and all(isinstance(r, str) and r in properties for r in required)
            and all(plain_field_name(n) and self.schema(v) for n, v in properties.items())
        )


def _counts(node: dict[str, Json], *keys: str) -> bool:
    return all(type(node[k]) is int and node[k] >= 0 for k in keys if k in node)


def _string(node: dict[str, Json]) -> bool:
    if not _counts(node, "minLength", "maxLength"):
        return False
    lengths = "minLength" in node or "maxLength" in node
    if "enum" in node:  # a Literal: length or format next to it would be dropped
        values = node["enum"]
        if not isinstance(values, list) or not values or lengths or "format" in node:
            return False
        return all(isinstance(v, str) for v in values)
    if "format" in node:  # the field is not a plain str: constraints may not carry over
        return not lengths and node["format"] in STRING_FORMATS
    return True


def strict_model_exact(schema: Json, shared: dict[str, Json] | None = None) -> bool:
    """True when strict validation of ``schema``'s generated model implies ``schema``;
    ``shared``: the manifest's ``$defs`` (used instead of a same-named local one)."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return False
    defs = schema.get("$defs", {})
    if not isinstance(defs, dict):
        return False
    if shared and any(name in shared and shared[name] != value for name, value in defs.items()):
        return False  # the model would be built from the other one
    root = {k: v for k, v in schema.items() if k != "$defs"}
    return _Checker(defs).schema(root)
