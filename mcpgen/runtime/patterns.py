"""JSON Schema validation whose ``pattern`` cannot stall the server.

jsonschema matches ``pattern``, ``patternProperties`` (and the properties
``additionalProperties`` leaves to them) with Python's backtracking ``re``: a spec pattern
such as ``^([a-z]+)+$`` and an argument of 30 letters and a ``!`` hold the event loop, and
every other caller, for minutes. Here those keywords match with the Rust ``regex`` crate
that pydantic-core ships (the engine pydantic's own ``pattern`` uses, so the fast path and
this one agree): its time is linear in the input. A pattern Rust cannot compile (look-around,
back-references, ``\\Z``) is matched with ``re`` as before (a known gap, in
``docs/security.md``). Every other keyword is jsonschema's own.

One difference from ``re`` is ECMA-262's: ``$`` matches at the very end only, not before a
final newline.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Annotated, Any

Json = Any
Matcher = Callable[[str], bool]


@lru_cache(maxsize=1024)
def matcher(pattern: str) -> Matcher:
    """Whether a string contains a match of ``pattern`` (``re.search`` semantics); raises
    ``re.error`` for a pattern neither engine compiles."""
    from pydantic import ConfigDict, Field, TypeAdapter

    rust = ConfigDict(regex_engine="rust-regex")
    try:
        adapter = TypeAdapter(Annotated[str, Field(pattern=pattern)], config=rust)
    except Exception:  # pydantic-core's SchemaError: a feature Rust's engine lacks
        compiled = re.compile(pattern)  # Python's, as jsonschema does
        return lambda text: compiled.search(text) is not None
    found: Matcher = adapter.validator.isinstance_python
    return found


def _pattern(validator: Any, pattern: str, instance: Json, schema: Json) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not matcher(pattern)(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: dict[str, Json], instance: Json, schema: Json
) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        found = matcher(pattern)
        for key, value in instance.items():
            if found(key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Any, additional: Json, instance: Json, schema: Json
) -> Iterator[Any]:
    from jsonschema import _keywords
    from jsonschema.exceptions import ValidationError

    jsonschemas: Any = _keywords.additionalProperties  # typed as returning None

    patterns = schema.get("patternProperties") or {}
    if not patterns or not validator.is_type(instance, "object"):
        yield from jsonschemas(validator, additional, instance, schema)
        return
    # jsonschema's own matches the joined patterns with re: the same steps, our matcher
    properties = schema.get("properties") or {}
    matchers = [matcher(p) for p in patterns]
    extras = [
        k for k in instance if k not in properties and not any(found(k) for found in matchers)
    ]
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        verb = "does" if len(extras) == 1 else "do"
        joined = ", ".join(repr(each) for each in sorted(extras))
        listed = ", ".join(repr(each) for each in sorted(patterns))
        yield ValidationError(f"{joined} {verb} not match any of the regexes: {listed}")


@lru_cache(maxsize=1)
def _validator_class() -> Any:
    from jsonschema import Draft202012Validator, validators

    extend: Any = validators.extend  # untyped
    return extend(
        Draft202012Validator,
        {
            "pattern": _pattern,
            "patternProperties": _pattern_properties,
            "additionalProperties": _additional_properties,
        },
    )


def validator(schema: Json) -> Any:
    """A JSON Schema 2020-12 validator of ``schema`` with linear-time patterns."""
    return _validator_class()(inline_refs(schema))


# Keywords whose value is a schema, a list of schemas or a map of names to schemas: the
# only places ``inline_refs`` looks (never ``const``, ``enum``, ``default``: data).
ONE_SCHEMA = frozenset(
    (
        "additionalProperties",
        "additionalItems",
        "contains",
        "contentSchema",
        "else",
        "if",
        "items",
        "not",
        "propertyNames",
        "then",
        "unevaluatedItems",
        "unevaluatedProperties",
    )
)
SCHEMA_LISTS = frozenset(("allOf", "anyOf", "oneOf", "prefixItems", "items"))
SCHEMA_MAPS = frozenset(("properties", "patternProperties", "dependentSchemas"))
BASE_CHANGERS = frozenset(("$id", "$anchor", "$dynamicAnchor", "$dynamicRef", "$recursiveRef"))


def inline_refs(schema: Json) -> Json:
    """``schema`` with each ``$ref`` to one of its own ``$defs`` replaced by the definition
    (a ref beside other keywords becomes an ``allOf`` of it): the same verdicts and
    messages, without resolving a reference on every call (most of jsonschema's time on a
    small schema). A definition is inlined once and shared by all its uses; a recursive one
    stays a ``$ref``, and so does any ref of a schema that changes its base (``$id``)."""
    defs = schema.get("$defs") if isinstance(schema, dict) else None
    if not isinstance(defs, dict) or not defs or _changes_base(schema):
        return schema
    done: dict[str, Json] = {}
    active: set[str] = set()

    def target(node: dict[str, Json]) -> str | None:
        ref = node["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#/$defs/") or "allOf" in node:
            return None  # beside an allOf of its own: left as it is (the same error order)
        name = ref[len("#/$defs/") :]
        if set(name) & set("/~%"):  # a longer or escaped JSON pointer: jsonschema resolves it
            return None
        return name if name in defs and name not in active else None

    def walk(node: Json) -> Json:
        if not isinstance(node, dict):
            return node
        out: dict[str, Json] = {}
        for key, value in node.items():
            name = target(node) if key == "$ref" else None
            if name is not None:
                if name not in done:
                    active.add(name)
                    done[name] = walk(defs[name])
                    active.discard(name)
                if len(node) == 1:
                    return done[name]
                out["allOf"] = [done[name]]  # where the $ref was: errors in the same order
            elif key in SCHEMA_MAPS and isinstance(value, dict):
                out[key] = {k: walk(v) for k, v in value.items()}
            elif key in SCHEMA_LISTS and isinstance(value, list):
                out[key] = [walk(v) for v in value]
            elif key in ONE_SCHEMA:
                out[key] = walk(value)
            else:
                out[key] = value
        return out

    return walk(schema)


def _changes_base(node: Json) -> bool:
    if isinstance(node, dict):
        return any(k in BASE_CHANGERS or _changes_base(v) for k, v in node.items())
    if isinstance(node, list):
        return any(_changes_base(v) for v in node)
    return False
