"""JSON Schema helpers: walking schemas, checking them, making tool schemas self-contained."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import unquote

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from jsonschema_specifications import REGISTRY  # type: ignore[import-untyped]
from referencing.exceptions import Unresolvable

from mcpgen.check import formats
from mcpgen.check.structure import did_you_mean, short
from mcpgen.load import JsonPath

Json = Any
DEFS_PREFIX = "#/$defs/"


def refs(schema: Json) -> Iterator[tuple[JsonPath, str]]:
    """Every ``$ref`` string in a schema, with its path relative to the schema."""
    for node, trail in schema_nodes(schema, everything=True):
        if isinstance(node.get("$ref"), str):
            yield (*located(trail), "$ref"), node["$ref"]


def escape(token: str | int) -> str:
    """One JSON pointer token (RFC 6901): ``~`` as ``~0``, ``/`` as ``~1``."""
    return str(token).replace("~", "~0").replace("/", "~1")


def unescape(token: str) -> str:
    """One token of a JSON pointer in a URI fragment: percent-decoded, ``~1``, ``~0`` undone."""
    return unquote(token).replace("~1", "/").replace("~0", "~")


def pointer(path: Iterable[str | int]) -> str:
    """``#/paths/~1pets/get``: a path as a JSON pointer in a URI fragment."""
    return "#" + "".join("/" + escape(part) for part in path)


def pointer_target(document: Json, pointer: str) -> tuple[JsonPath, Json] | None:
    """(path, value) of what a local pointer like ``#/$defs/Name`` names, or None."""
    if pointer == "#":
        return (), document
    if not pointer.startswith("#/"):
        return None
    node = document
    path: list[str | int] = []
    for part in map(unescape, pointer[2:].split("/")):
        if isinstance(node, dict) and part in node:
            node = node[part]
            path.append(part)
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
            path.append(int(part))
        else:
            return None
    return tuple(path), node


def resolve_pointer(document: Json, pointer: str) -> tuple[bool, Json]:
    """Resolve a local JSON pointer like ``#/$defs/Name``; (found, value)."""
    target = pointer_target(document, pointer)
    return (False, None) if target is None else (True, target[1])


def metaschema_errors(schema: Json) -> Iterator[tuple[JsonPath, str]]:
    """Violations of the 2020-12 metaschema, as (path inside the schema, message)."""
    validator = Draft202012Validator(Draft202012Validator.META_SCHEMA)
    for error in sorted(validator.iter_errors(schema), key=lambda e: list(map(str, e.path))):
        path, kind = tuple(error.absolute_path), error.instance
        kinds = kind if isinstance(kind, list) else [kind]
        if path and path[-1] == "type" and not all(k in TYPES for k in kinds):
            shown = json.dumps(kind, ensure_ascii=False)
            yield path, f"{shown} is not a JSON Schema type (use one of: {', '.join(TYPES)})"
        else:
            yield path, error.message


TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")


class RefIndex(dict[str, set[str]]):
    """The shared definitions and, by name, the references of each (walked once)."""

    def __init__(self, shared: dict[str, Json]) -> None:
        super().__init__()
        self.shared = shared

    def __missing__(self, name: str) -> set[str]:
        found = self[name] = ref_strings(self.shared[name])
        return found

    def bundle(self, schema: Json) -> Json:
        """``schema`` with the shared definitions it uses (transitively) added to ``$defs``."""
        if not isinstance(schema, dict):
            return schema
        own = schema.get("$defs", {}) if isinstance(schema.get("$defs"), dict) else {}
        needed: dict[str, Json] = {}
        pending = list(ref_strings(schema))
        while pending:
            target = def_target(pending.pop())
            name = target[0] if target else None
            if name is None or name in own or name in needed or name not in self.shared:
                continue
            needed[name] = self.shared[name]
            pending.extend(self[name])
        if not needed:
            return schema
        return {**schema, "$defs": {**{k: needed[k] for k in sorted(needed)}, **own}}


# every keyword of JSON Schema 2020-12, and two of earlier drafts its metaschema describes
KEYWORDS = frozenset(
    {
        keyword
        for uri, resource in REGISTRY.items()
        if uri.startswith("https://json-schema.org/draft/2020-12/meta/")
        for keyword in resource.contents["properties"]
    }
    | {"definitions", "dependencies"}
)
SCHEMA_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
SCHEMA_VALUES = frozenset(
    {
        "not", "if", "then", "else", "items", "contains", "additionalProperties",
        "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema",
    }
)  # fmt: skip


Trail = Any  # a node's place: (its parent's trail, *keys); (None,) at the root


def schema_nodes(schema: Json, everything: bool = False) -> Iterator[tuple[dict[str, Json], Trail]]:
    """Each subschema in ``schema`` and its trail (``everything``: each object outside data)."""
    stack: list[tuple[Json, Trail]] = [(schema, (None,))]
    while stack:
        node, trail = stack.pop()
        if everything and isinstance(node, list):
            stack.extend((v, (trail, i)) for i, v in enumerate(node))
        if not isinstance(node, dict):
            continue
        yield node, trail
        for key, value in node.items():
            if key in SCHEMA_MAPS and isinstance(value, dict):
                stack.extend((v, (trail, key, k)) for k, v in value.items())
            elif key in SCHEMA_LISTS and isinstance(value, list):
                stack.extend((v, (trail, key, i)) for i, v in enumerate(value))
            elif key in SCHEMA_VALUES or (everything and key not in DATA_KEYWORDS):
                stack.append((value, (trail, key)))


def located(trail: Trail) -> JsonPath:
    """The path of the node ``schema_nodes`` gave ``trail``."""
    parts: list[str | int] = []
    while trail is not None:
        parts[:0] = trail[1:]
        trail = trail[0]
    return tuple(parts)


# OpenAPI's own schema words: ignored by JSON Schema 2020-12, but no typo of its keywords
OPENAPI_WORDS = frozenset({"example", "nullable", "discriminator", "xml", "externalDocs"})


Nodes = list[tuple[dict[str, Json], Trail]]  # ``schema_nodes``, walked once for several checks


def keyword_problems(nodes: Nodes, lenient: bool) -> Iterator[tuple[JsonPath, str, bool]]:
    """(path, message, is an error) for keys that are no keyword and ``required`` names no
    property declares; ``lenient`` (imported schemas): warnings about keys only."""
    for node, trail in nodes:
        closed = node.get("additionalProperties") is False
        for key in node:
            if key in KEYWORDS or key.startswith("x-"):
                continue
            where = (*located(trail), key)
            hint = "" if key in OPENAPI_WORDS else did_you_mean(key, KEYWORDS)
            message = f"{key!r} is not a JSON Schema keyword"
            if hint and not lenient:
                yield where, message + hint, True
            elif closed and not {"properties", "patternProperties"} & set(node) and not lenient:
                yield where, (
                    f"{message}: with additionalProperties false and no properties, "
                    "only an empty object is valid"
                ), True  # fmt: skip
            else:
                yield where, f"{message}{hint}; it is ignored", False
        for index, name in [] if lenient else _undeclared(node):
            message = f"required property {name!r} is not declared in properties"
            if closed:
                message += " and additionalProperties is false: no value can be valid"
            message += did_you_mean(name, node.get("properties") or {})
            yield (*located(trail), "required", index), message, closed


def _undeclared(node: dict[str, Json]) -> list[tuple[int, str]]:
    """``required`` names no property nor ``patternProperties`` of a declaring schema matches."""
    required, properties = node.get("required"), node.get("properties") or {}
    closed = node.get("additionalProperties") is False
    if not isinstance(required, list) or not isinstance(properties, dict):
        return []
    if not properties and not closed:
        return []
    patterns = node.get("patternProperties")
    patterns = [p for p in patterns if python_regex(p)] if isinstance(patterns, dict) else []
    return [
        (index, name)
        for index, name in enumerate(required)
        if isinstance(name, str)
        and name not in properties
        and not any(re.search(p, name) for p in patterns)
    ]


def python_regex(pattern: str) -> bool:
    return _regex_error(pattern) is None


def _regex_error(pattern: str) -> Exception | None:
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as exc:
        return exc
    return None


def ref_strings(schema: Json) -> set[str]:
    """The ``$ref`` strings ``refs`` yields, without their paths."""
    return set(_ref_values(schema))


def _ref_values(schema: Json) -> Iterator[str]:
    """Each ``$ref`` string ``refs`` yields, in no order: its walk without trails (faster)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        if not isinstance(node, dict):
            continue
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield ref
        for key, value in node.items():
            if key in SCHEMA_MAPS and isinstance(value, dict):
                stack.extend(value.values())
            elif key not in DATA_KEYWORDS:  # SCHEMA_LISTS and SCHEMA_VALUES included
                stack.append(value)


COUNTS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties")
MOST_COUNT = 2**63 - 1  # pydantic's validators hold a length or count in a machine word
_LIMITED = frozenset((*COUNTS, "enum", "const", "pattern", "patternProperties"))


def bad_patterns(nodes: Nodes) -> Iterator[tuple[JsonPath, str]]:
    """Patterns ``re`` cannot compile, counts and integers too large for the validators."""
    for node, trail in nodes:
        if node.keys().isdisjoint(_LIMITED):  # most nodes (GitHub: 18 ms -> 4)
            continue
        for key in COUNTS:
            if isinstance(node.get(key), int) and node[key] > MOST_COUNT:
                message = f"{key} {node[key]} is larger than a validator can hold ({MOST_COUNT})"
                yield (*located(trail), key), message
        members = node["enum"] if isinstance(node.get("enum"), list) else []
        values = [(("enum", i), v) for i, v in enumerate(members)]
        for suffix, value in [(("const",), node.get("const")), *values]:
            if isinstance(value, int) and abs(value) > MOST_COUNT:
                message = f"{short(value)} is beyond what a typed Literal can hold (±{MOST_COUNT})"
                yield (*located(trail), *suffix), message
        props = node.get("patternProperties")
        keys = props if isinstance(props, dict) else ()
        candidates: list[tuple[JsonPath, Json]] = [(("pattern",), node.get("pattern"))]
        candidates += [(("patternProperties", k), k) for k in keys]
        for suffix, pattern in candidates:
            exc = _regex_error(pattern) if isinstance(pattern, str) else None
            if exc is not None:
                message = f"{pattern!r} is not a regular expression Python can use ({exc})"
                yield (*located(trail), *suffix), message


def bad_defaults(schema: Json, root: Json) -> Iterator[tuple[JsonPath, str]]:
    """``default`` values that their own schema rejects (references resolve in ``root``)."""
    checker = formats.model_formats()
    validator = Draft202012Validator(root if isinstance(root, dict) else {}, format_checker=checker)
    for node, trail in schema_nodes(schema):
        if "default" not in node:
            continue
        rest = {k: v for k, v in node.items() if k != "default"}
        try:
            error = next(validator.evolve(schema=rest).iter_errors(node["default"]), None)
        except (Unresolvable, SchemaError, RecursionError, re.error):
            continue  # a reference or pattern the other checks report, or nothing to say
        if error is not None:
            why = error.message  # it quotes the whole value: a long one is not repeated
            why = why if len(why) < 200 else f"{error.validator} {short(error.validator_value)}"
            message = f"default {short(node['default'])} does not match its schema: {why}"
            yield (*located(trail), "default"), message


def children(node: dict[str, Json], fn: Callable[[Json, str], Json]) -> dict[str, Json]:
    """``node`` with ``fn(subschema, keyword)`` applied to each of its subschemas."""
    out: dict[str, Json] = {}
    for key, value in node.items():
        if key in SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: fn(sub, key) for name, sub in value.items()}
        elif key in (*SCHEMA_LISTS, "items") and isinstance(value, list):  # items: draft 4-7
            out[key] = [fn(sub, key) for sub in value]
        elif key in (*SCHEMA_VALUES, "additionalItems") and isinstance(value, dict | bool):
            out[key] = fn(value, key)
        else:
            out[key] = value
    return out


def def_target(ref: Json) -> tuple[str, bool] | None:
    """(definition name, whether it points inside it) for ``#/$defs/...``, else None."""
    if not isinstance(ref, str) or not ref.startswith(DEFS_PREFIX):
        return None
    name, inside, _ = ref[len(DEFS_PREFIX) :].partition("/")
    return unescape(name), bool(inside)


def closure(roots: Iterable[str], deps: Mapping[str, Iterable[str]]) -> set[str]:
    """The names of ``deps`` that ``roots`` reach (themselves included), following ``deps``."""
    seen: set[str] = set()
    stack = list(roots)
    while stack:
        name = stack.pop()
        if name in deps and name not in seen:
            seen.add(name)
            stack.extend(deps[name])
    return seen


def def_ref(name: str) -> str:
    """``#/$defs/Name``: the reference to a definition."""
    return DEFS_PREFIX + escape(name)


def def_name(ref: Json) -> str | None:
    """The definition a ``#/$defs/Name`` reference names (None if it points inside one)."""
    target = def_target(ref)
    return target[0] if target is not None and not target[1] else None


def def_refs(node: Json) -> Counter[str]:
    """The ``#/$defs/Name`` references in ``node`` (every one :func:`refs` finds)."""
    return Counter(name for name in map(def_name, _ref_values(node)) if name is not None)
