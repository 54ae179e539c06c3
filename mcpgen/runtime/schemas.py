"""The JSON Schema 2020-12 validators of tool arguments and results, the schema's ``$defs``
inlined once (``inline_refs``): ``patterns.py``'s linear-time matching for a ``pattern``,
``formats.py``'s checks of ``CHECKED_FORMATS``, ``bounded.py``'s linear work for ``BOUNDED``
(a package carries each module only then); else ``draft.py``'s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Json = Any
PATTERN_KEYWORDS = frozenset(("pattern", "patternProperties"))
# The keywords ``bounded.py`` does in linear work (jsonschema's: quadratic, or every problem)
BOUNDED = frozenset(("uniqueItems", "anyOf", "oneOf", "unevaluatedItems", "unevaluatedProperties"))
# The ``format`` values arguments are checked against (``formats.py``; the others stay
# annotations): decided when the validator is built, so other schemas pay nothing.
CHECKED_FORMATS = frozenset(
    (
        "date",
        "date-time",
        "time",
        "duration",
        "email",
        "idn-email",
        "hostname",
        "ipv4",
        "ipv6",
        "uri",
        "uuid",
    )
)


def validator(schema: Json, formats: bool = False) -> Any:
    """A JSON Schema 2020-12 validator of ``schema`` whose patterns run in linear time; with
    ``formats`` (a tool's arguments), one that asserts the ``CHECKED_FORMATS`` it names."""
    checker: Any = None
    if formats and uses_formats(schema):
        from .formats import checker_of

        checker = checker_of(CHECKED_FORMATS)
    if uses_patterns(schema):
        from .patterns import validator as linear

        return linear(inline_refs(schema), checker)
    if uses_bounded(schema):
        from .bounded import validator_class

        return validator_class()(inline_refs(schema), format_checker=checker)
    from .draft import draft_class

    return draft_class()(inline_refs(schema), format_checker=checker)


def uses_formats(node: Json) -> bool:
    """A ``format`` of ``CHECKED_FORMATS`` is somewhere in ``node`` (in a ``const`` too)."""
    return _anywhere(node, lambda d: isinstance(f := d.get("format"), str) and f in CHECKED_FORMATS)


def uses_patterns(node: Json) -> bool:
    """``pattern`` or ``patternProperties`` is a key somewhere in ``node`` (a property so
    named too: it only costs the matcher of ``patterns.py``)."""
    return _anywhere(node, lambda d: not PATTERN_KEYWORDS.isdisjoint(d))


def uses_bounded(node: Json) -> bool:
    """One of ``BOUNDED`` is a key somewhere in ``node`` (a property so named too)."""
    return _anywhere(node, lambda d: not BOUNDED.isdisjoint(d))


def _anywhere(node: Json, found: Callable[[dict[str, Json]], bool]) -> bool:
    """``found`` holds for some object somewhere in ``node``."""
    if isinstance(node, dict):
        return found(node) or any(_anywhere(v, found) for v in node.values())
    return isinstance(node, list) and any(_anywhere(v, found) for v in node)


# Keywords whose value is a schema, a list of schemas or a map of names to schemas: the
# only places ``inline_refs`` looks (never ``const``, ``enum``, ``default``: data).
ONE_SCHEMA = frozenset(
    (
        "additionalProperties", "additionalItems", "contains", "contentSchema", "else", "if",
        "items", "not", "propertyNames", "then", "unevaluatedItems", "unevaluatedProperties",
    )
)  # fmt: skip
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
    if (
        not isinstance(defs, dict)
        or not defs
        or _anywhere(schema, lambda d: not BASE_CHANGERS.isdisjoint(d))
    ):
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
