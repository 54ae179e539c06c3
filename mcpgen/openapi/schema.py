"""OpenAPI Schema Objects (Swagger 2.0, OpenAPI 3.0, 3.1) as JSON Schema 2020-12.

Every ``$ref`` to a schema becomes ``#/$defs/<Name>``; the referenced schema is converted
once, stored under that name, and bundled into each tool that uses it (transitively), so a
recursive schema stays a reference cycle and is never expanded.

Conversions: ``nullable: true`` (and ``x-nullable``) -> a type array (``["string", "null"]``),
or ``anyOf [..., {type: null}]`` when the schema has no plain type; boolean
``exclusiveMinimum``/``exclusiveMaximum`` -> numbers; ``example`` -> ``examples``; Swagger
``type: file`` and ``format: binary`` -> base64 strings (``contentEncoding``); Swagger's
string ``discriminator`` -> ``{propertyName}``. A discriminator is kept as an annotation,
its ``mapping`` rewritten to ``#/$defs`` references (the implicit mapping of
``oneOf``/``anyOf`` references is made explicit). Properties marked ``readOnly`` or
``writeOnly`` are not ``required`` (OpenAPI requires them in one direction only).
Keywords next to a ``$ref`` are kept (2020-12 applies them alongside; OpenAPI 3.0 would
ignore them, but ``nullable`` or ``description`` there is what authors mean). A schema's
own ``$defs``/``definitions`` are left out: what refers into them is resolved by pointer.
``x-`` extensions, ``xml`` and ``externalDocs`` are documentation and left out; any other
keyword that 2020-12 does not know, or a keyword whose value is malformed, is left out
with a located warning.

Definition names: a component schema (``#/components/schemas/X``, Swagger
``#/definitions/X``, or ``X`` at the top of another file) keeps its name when it is a
PascalCase class name, else it is made one (``simple-user`` -> ``SimpleUser``). When that
name is taken -- by a name the generated models import (``Field``, ``Any``...), or by
another schema: the main document's components come first (names that needed no change
before others), then other files' schemas sorted by file and pointer -- 6 hex digits of a
hash of the file and pointer are appended (``Error69c158``). A schema referenced somewhere
else (``#/components/schemas/Pet/properties/owner``) is named after its path plus such a
hash (``PetPropertiesOwner3be1a2``). Names never depend on the order of the document.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable
from typing import Any

from mcpgen import identifiers as names
from mcpgen.load import JsonPath
from mcpgen.openapi.sources import Key, Sources

Json = Any
DEFS = "#/$defs/"
_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
_SUBSCHEMA = frozenset(
    {
        "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
        "unevaluatedItems", "unevaluatedProperties", "contentSchema",
    }
)  # fmt: skip
_SUBSCHEMA_MAPS = frozenset({"properties", "patternProperties", "dependentSchemas"})
_SUBSCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_NUMBERS = frozenset({"maximum", "minimum"})
_COUNTS = frozenset(
    {
        "maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties",
        "maxContains", "minContains",
    }
)  # fmt: skip
_BOOLEANS = frozenset({"uniqueItems", "readOnly", "writeOnly", "deprecated"})
_STRINGS = frozenset(
    {"title", "description", "format", "pattern", "contentEncoding", "contentMediaType", "$comment"}
)
_ANY = frozenset({"default", "const"})
_IGNORED = frozenset({"xml", "externalDocs", "$defs", "definitions"})
_UNSUPPORTED = frozenset(
    {"$id", "$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor",
     "$vocabulary"}
)  # fmt: skip
# annotations that stay outside when a nullable schema is wrapped in anyOf
_OUTER = ("title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly")
_COMPOSED = ("allOf", "anyOf", "oneOf", "not", "if", "$ref", "const")
_NON_SCHEMA_COMPONENTS = frozenset(
    {"parameters", "responses", "requestBodies", "headers", "examples", "links", "callbacks",
     "securitySchemes", "pathItems"}
)  # fmt: skip
_STD_2020_12 = "https://json-schema.org/draft/2020-12/schema"


def short_hash(text: str, length: int = 6) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:length]


def safe_name(raw: str) -> str:
    """A ``$defs`` name that is also a class name the model generator keeps as it is.

    ``Pet`` stays; ``simple-user`` -> ``SimpleUser``, ``v1.User`` -> ``V1User``, ``2fa`` ->
    ``N2fa``. So the definitions can be hoisted into a manifest's shared ``$defs``.
    """
    if names.CLASS_NAME.match(raw):
        return raw
    return names.pascal(raw)


class SchemaConverter:
    """Converts schemas, naming and caching each referenced definition once."""

    def __init__(self, sources: Sources, version: str) -> None:
        self.sources = sources
        self.version = version
        self.components: tuple[str, ...] = (
            ("definitions",)
            if version == "2.0"
            else (
                "components",
                "schemas",
            )
        )
        self.names: dict[Key, str] = {}
        self.taken: set[str] = set(names.RESERVED_CLASS_NAMES)  # would shadow the models' imports
        self.defs: dict[str, Json] = {}
        self.deps: dict[str, frozenset[str]] = {}
        self.origin: dict[str, Key] = {}
        self._pending: list[tuple[str, Key]] = []
        self._closures: dict[str, frozenset[str]] = {}
        self._bundles: dict[frozenset[str], dict[str, Json]] = {}
        self._name_components()

    # -- names ---------------------------------------------------------------------------
    def _name_components(self) -> None:
        """Name the main document's components first: they keep their names when they can."""
        node: Any = self.sources.items[0].doc.data
        for part in self.components:
            node = node.get(part) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            return
        raws = sorted(node, key=lambda raw: (safe_name(raw) != raw, raw))
        for raw in raws:
            self._assign((0, (*self.components, raw)), safe_name(raw))

    def name_external(self, keys: Iterable[Key]) -> None:
        """Name schemas in referenced files, in a fixed order, before any is converted."""
        wanted = {
            key
            for key in keys
            if key[0] != 0 and key not in self.names and self._looks_like_schema(key[1])
        }
        order = sorted(wanted, key=lambda k: (self.sources.items[k[0]].relative, _path_key(k[1])))
        for key in order:
            self._assign(key, self._candidate(key))

    def _looks_like_schema(self, path: JsonPath) -> bool:
        if path[:1] == ("paths",) or path[:1] == ("webhooks",):
            return False
        if len(path) == 3 and path[0] == "components" and path[1] in _NON_SCHEMA_COMPONENTS:
            return False
        return not (len(path) == 2 and path[0] in ("parameters", "responses"))

    def _candidate(self, key: Key) -> str:
        src, path = key
        if len(path) == 3 and path[:2] == ("components", "schemas"):
            return safe_name(str(path[2]))
        if len(path) == 2 and path[0] == "definitions":
            return safe_name(str(path[1]))
        if len(path) == 1:
            return safe_name(str(path[0]))
        if not path:
            stem = self.sources.items[src].path.name.split(".")[0]
            return safe_name(stem)
        return safe_name("_".join(str(p) for p in path if p not in ("components", "schemas")))

    def _assign(self, key: Key, candidate: str) -> str:
        name = candidate
        if name in self.taken:
            identity = f"{self.sources.items[key[0]].relative}#{_path_key(key[1])}"
            length = 6
            name = f"{candidate}{short_hash(identity, length)}"
            while name in self.taken:  # pragma: no cover - a hash collision
                length += 2
                name = f"{candidate}{short_hash(identity, length)}"
        self.taken.add(name)
        self.names[key] = name
        return name

    def def_name(self, key: Key) -> str:
        """The ``$defs`` name of the schema at ``key``; converted later if it is new."""
        name = self.names.get(key)
        if name is None:
            # not named up front: a hash of where it is keeps the name order-independent
            candidate = self._candidate(key)
            identity = f"{self.sources.items[key[0]].relative}#{_path_key(key[1])}"
            name = self._assign(key, f"{candidate}{short_hash(identity)}")
        if name not in self.defs and name not in self.origin:
            self.origin[name] = key
            self._pending.append((name, key))
        return name

    # -- conversion ----------------------------------------------------------------------
    def convert(self, src: int, path: JsonPath, node: Json) -> tuple[Json, set[str]]:
        """A schema found inline at ``path``, and the definitions it refers to directly."""
        deps: set[str] = set()
        result = self._schema(src, path, node, deps)
        self.drain()
        return result, deps

    def drain(self) -> None:
        while self._pending:
            name, key = self._pending.pop()
            deps: set[str] = set()
            self.defs[name] = self._schema(key[0], key[1], self.sources.value(key), deps)
            self.deps[name] = frozenset(deps)

    def closure(self, roots: Iterable[str]) -> dict[str, Json]:
        """The definitions ``roots`` need, transitively, by name (sorted).

        The same set of definitions gives the same (shared, read-only) mapping.
        """
        needed: frozenset[str] = frozenset()
        for root in roots:
            needed = needed | self._closure_of(root)
        bundle = self._bundles.get(needed)
        if bundle is None:
            bundle = {name: self.defs[name] for name in sorted(needed)}
            self._bundles[needed] = bundle
        return bundle

    def _closure_of(self, name: str) -> frozenset[str]:
        cached = self._closures.get(name)
        if cached is not None:
            return cached
        seen: set[str] = set()
        stack = [name]
        while stack:
            current = stack.pop()
            if current in seen or current not in self.defs:
                continue
            known = self._closures.get(current)
            if known is not None:  # complete already: no need to walk it again
                seen |= known
                continue
            seen.add(current)
            stack.extend(self.deps.get(current, ()))
        result = frozenset(seen)
        self._closures[name] = result
        return result

    def resolve(self, schema: Json) -> tuple[Json, str | None]:
        """Follow a schema that is only a reference; (target, its definition name)."""
        name = None
        seen: set[str] = set()
        while isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
            if set(schema) - {"$ref", "description", "title"}:
                break
            ref = schema["$ref"]
            if not ref.startswith(DEFS) or ref[len(DEFS) :] not in self.defs:
                break
            name = ref[len(DEFS) :]
            if name in seen:
                key = self.origin.get(name)
                if key is not None:
                    self.sources.error(key[0], key[1], "schema reference cycle: refers to itself")
                return {}, None
            seen.add(name)
            schema = self.defs[name]
        return schema, name

    def is_object(self, schema: Json, depth: int = 0) -> bool:
        """Whether every instance ``schema`` accepts is an object (so it can be an output)."""
        schema, _ = self.resolve(schema)
        if not isinstance(schema, dict) or depth > 16:
            return False
        kind = schema.get("type")
        if kind is not None:
            return bool(kind == "object" or kind == ["object"])
        if any(self.is_object(s, depth + 1) for s in schema.get("allOf", [])):
            return True
        for key in ("oneOf", "anyOf"):
            branches = schema.get(key)
            if isinstance(branches, list) and branches:
                return all(self.is_object(s, depth + 1) for s in branches)
        return "properties" in schema or "additionalProperties" in schema

    # -- the keywords --------------------------------------------------------------------
    def _schema(self, src: int, path: JsonPath, node: Json, deps: set[str]) -> Json:
        if isinstance(node, bool):
            return node
        if not isinstance(node, dict):
            self.sources.warn(src, path, "a schema must be an object; treated as any value")
            return {}
        out: dict[str, Json] = {}
        if "$ref" in node:
            key = self.sources.parse_ref(src, (*path, "$ref"), node["$ref"])
            if key is not None:
                name = self.def_name(key)
                deps.add(name)
                out["$ref"] = DEFS + name
        nullable = False
        for keyword, value in node.items():
            where = (*path, keyword)
            if keyword == "$ref":
                continue
            if not isinstance(keyword, str) or keyword.startswith("x-"):
                if keyword == "x-nullable" and value is True:
                    nullable = True
                continue
            if keyword in _SUBSCHEMA:
                if keyword == "additionalProperties" and isinstance(value, bool):
                    out[keyword] = value
                else:
                    out[keyword] = self._schema(src, where, value, deps)
            elif keyword == "items":
                if isinstance(value, list):  # the draft-4 tuple form
                    out["prefixItems"] = [
                        self._schema(src, (*where, i), v, deps) for i, v in enumerate(value)
                    ]
                else:
                    out["items"] = self._schema(src, where, value, deps)
            elif keyword == "additionalItems":
                if isinstance(node.get("items"), list):
                    out["items"] = self._schema(src, where, value, deps)
            elif keyword in _SUBSCHEMA_MAPS:
                if isinstance(value, dict):
                    out[keyword] = {
                        k: self._schema(src, (*where, k), v, deps) for k, v in value.items()
                    }
                else:
                    self._drop(src, where, "must be a mapping of schemas")
            elif keyword in _SUBSCHEMA_LISTS:
                if isinstance(value, list) and (value or keyword == "prefixItems"):
                    out[keyword] = [
                        self._schema(src, (*where, i), v, deps) for i, v in enumerate(value)
                    ]
                else:
                    self._drop(src, where, "must be a non-empty list of schemas")
            elif keyword == "type":
                self._type(src, where, value, out)
            elif keyword == "nullable":
                if value is True:
                    nullable = True
                elif value is not False:
                    self._drop(src, where, "must be true or false")
            elif keyword in ("exclusiveMinimum", "exclusiveMaximum"):
                self._exclusive(src, where, node, keyword, value, out)
            elif keyword in _NUMBERS:
                if not _is_number(value):
                    self._drop(src, where, "must be a number")
                elif node.get(f"exclusive{keyword.title()}") is not True:  # else moved there
                    out[keyword] = value
            elif keyword == "multipleOf":
                if _is_number(value) and value > 0:
                    out[keyword] = value
                else:
                    self._drop(src, where, "must be a number greater than 0")
            elif keyword in _COUNTS:
                if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                    out[keyword] = value
                else:
                    self._drop(src, where, "must be a non-negative integer")
            elif keyword in _BOOLEANS:
                if isinstance(value, bool):
                    out[keyword] = value
                else:
                    self._drop(src, where, "must be true or false")
            elif keyword in _STRINGS:
                if not isinstance(value, str):
                    self._drop(src, where, "must be a string")
                elif keyword == "pattern" and not _python_regex(value):
                    # Java or .NET syntax (\p{...}, \A, \z): the server could not check it
                    self._drop(src, where, "is not a regular expression Python can use")
                else:
                    out[keyword] = value
            elif keyword in _ANY:
                out[keyword] = value
            elif keyword == "enum":
                if isinstance(value, list):
                    out[keyword] = list(value)
                else:
                    self._drop(src, where, "must be a list")
            elif keyword == "example":
                out.setdefault("examples", [])
                out["examples"] = [*out["examples"], value]
            elif keyword == "examples":
                given = value if isinstance(value, list) else [value]
                out["examples"] = [*given, *out.get("examples", [])]
            elif keyword == "required":
                if isinstance(value, list) and all(isinstance(v, str) for v in value):
                    out[keyword] = list(dict.fromkeys(value))
                else:
                    self._drop(src, where, "must be a list of property names")
            elif keyword == "dependentRequired":
                if isinstance(value, dict) and all(
                    isinstance(v, list) and all(isinstance(s, str) for s in v)
                    for v in value.values()
                ):
                    out[keyword] = value
                else:
                    self._drop(src, where, "must map names to lists of names")
            elif keyword == "dependencies":
                self._dependencies(src, where, value, out, deps)
            elif keyword == "discriminator":
                self._discriminator(src, where, node, value, out, deps)
            elif keyword == "$schema":
                if value != _STD_2020_12:
                    self._drop(src, where, "only JSON Schema 2020-12 is supported")
            elif keyword in _IGNORED:
                continue
            elif keyword in _UNSUPPORTED:
                self._drop(src, where, "is not supported (references are resolved by mcpgen)")
            else:
                self._drop(src, where, "is not a JSON Schema 2020-12 keyword")
        if "format" in out and out["format"] == "binary":
            del out["format"]
            out.setdefault("contentEncoding", "base64")
        required = out.get("required")
        properties = out.get("properties")
        if required and isinstance(properties, dict):
            one_way = {
                k
                for k, v in properties.items()
                if isinstance(v, dict) and (v.get("readOnly") is True or v.get("writeOnly") is True)
            }
            if one_way:
                out["required"] = [r for r in required if r not in one_way]
        if "required" in out and not out["required"]:
            del out["required"]
        result = _nullable(out) if nullable else out
        if "default" in result and not _default_fits(result):
            del result["default"]  # the model would not type-check (list[int] = ["x"])
            self._drop(src, (*path, "default"), "does not match its schema")
        return result

    def _drop(self, src: int, where: JsonPath, why: str) -> None:
        self.sources.warn(src, where, f"schema keyword {where[-1]!r} {why}; left out")

    def _type(self, src: int, where: JsonPath, value: Json, out: dict[str, Json]) -> None:
        if value == "file":  # Swagger 2.0 uploads
            out["type"] = "string"
            out["contentEncoding"] = "base64"
        elif isinstance(value, str) and value in _TYPES:
            out["type"] = value
        elif (
            isinstance(value, list)
            and value
            and all(isinstance(v, str) and v in _TYPES for v in value)
            and len(set(value)) == len(value)
        ):
            out["type"] = list(value)
        else:
            self._drop(src, where, f"has an unknown type {value!r}")

    def _exclusive(
        self,
        src: int,
        where: JsonPath,
        node: dict[str, Json],
        keyword: str,
        value: Json,
        out: dict[str, Json],
    ) -> None:
        bound = "minimum" if keyword == "exclusiveMinimum" else "maximum"
        if value is True:
            if _is_number(node.get(bound)):
                out[keyword] = node[bound]
            else:
                self._drop(src, where, f"is true without a numeric {bound!r}")
        elif value is False:
            return
        elif _is_number(value):
            out[keyword] = value
        else:
            self._drop(src, where, "must be a number (or, before 3.1, a boolean)")

    def _dependencies(
        self, src: int, where: JsonPath, value: Json, out: dict[str, Json], deps: set[str]
    ) -> None:
        if not isinstance(value, dict):
            self._drop(src, where, "must be a mapping")
            return
        for name, item in value.items():
            if isinstance(item, list) and all(isinstance(v, str) for v in item):
                out.setdefault("dependentRequired", {})[name] = item
            else:
                schema = self._schema(src, (*where, name), item, deps)
                out.setdefault("dependentSchemas", {})[name] = schema

    def _discriminator(
        self,
        src: int,
        where: JsonPath,
        node: dict[str, Json],
        value: Json,
        out: dict[str, Json],
        deps: set[str],
    ) -> None:
        if isinstance(value, str):  # Swagger 2.0: the property name
            value = {"propertyName": value}
        if not isinstance(value, dict) or not isinstance(value.get("propertyName"), str):
            self._drop(src, where, "needs a string 'propertyName'")
            return
        result: dict[str, Json] = {"propertyName": value["propertyName"]}
        mapping: dict[str, str] = {}
        given = value.get("mapping", {})
        if not isinstance(given, dict):
            self.sources.warn(src, (*where, "mapping"), "discriminator mapping must be a mapping")
            given = {}
        for tag, target in given.items():
            at = (*where, "mapping", tag)
            if not isinstance(target, str):
                self.sources.warn(src, at, "discriminator mapping values must be strings")
                continue
            if "#" in target or "/" in target or target.endswith((".json", ".yaml", ".yml")):
                key = self.sources.parse_ref(src, at, target)
            else:  # a bare schema name
                key = (src, (*self.components, target))
                try:
                    self.sources.value(key)
                except (KeyError, TypeError, IndexError):
                    self.sources.error(src, at, f"no schema named {target!r}")
                    key = None
            if key is not None:
                name = self.def_name(key)
                deps.add(name)
                mapping[tag] = DEFS + name
        mapped = set(mapping.values())
        for keyword in ("oneOf", "anyOf"):
            branches = node.get(keyword)
            if not isinstance(branches, list):
                continue
            for index, branch in enumerate(branches):
                if not (isinstance(branch, dict) and isinstance(branch.get("$ref"), str)):
                    continue
                key = self.sources.parse_ref(src, (*path_of(where), keyword, index), branch["$ref"])
                if key is None or not key[1]:
                    continue
                name = self.def_name(key)
                if DEFS + name not in mapped:
                    mapping.setdefault(str(key[1][-1]), DEFS + name)
        if mapping:
            result["mapping"] = mapping
        out["discriminator"] = result


def _python_regex(pattern: str) -> bool:
    """Whether the JSON Schema validators of a generated server (Python ``re``) can use it."""
    import re

    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    return True


def path_of(where: JsonPath) -> JsonPath:
    """The schema's own path, from the path of one of its keywords."""
    return where[:-1]


def _nullable(out: dict[str, Json]) -> dict[str, Json]:
    if any(k in out for k in _COMPOSED):
        outer = {k: out.pop(k) for k in _OUTER if k in out}
        return {**outer, "anyOf": [out, {"type": "null"}]}
    kind = out.get("type")
    if kind is not None:
        kinds = [kind] if isinstance(kind, str) else list(kind)
        out["type"] = kinds if "null" in kinds else [*kinds, "null"]
    if "enum" in out and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    return out


def _default_fits(schema: dict[str, Json]) -> bool:
    """Whether ``default`` is valid under the rest of ``schema`` (True when that depends on
    a reference: those are resolved later)."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    rest = {k: v for k, v in schema.items() if k != "default"}
    if '"$ref"' in json.dumps(rest):
        return True
    try:
        return bool(Draft202012Validator(rest).is_valid(schema["default"]))
    except (SchemaError, RecursionError, ValueError):
        return True


def _is_number(value: Json) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, int)


def _path_key(path: JsonPath) -> str:
    return "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in path)
