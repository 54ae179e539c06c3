"""JSON Schema validation whose ``pattern`` cannot stall the server: what
``schemas.validator`` uses for a schema with a pattern (carried by a package with one).

jsonschema matches ``pattern``, ``patternProperties`` (and the properties
``additionalProperties`` leaves to them) with Python's backtracking ``re``: a spec pattern
such as ``^([a-z]+)+$`` and an argument of 30 letters and a ``!`` hold the event loop, and
every other caller, for minutes (and so does ``unevaluatedProperties``, to tell which keys
``patternProperties`` evaluated). Here those keywords match with the Rust ``regex`` crate
that pydantic-core ships (the engine pydantic's own ``pattern`` uses, so the fast path and
this one agree): its time is linear in the input. A pattern Rust cannot compile (look-around,
back-references, ``\\Z``) is matched with ``re`` as before (a known gap, in
``docs/security.md``). Every other keyword is jsonschema's own (or the linear one of
``bounded.KEYWORDS``).

One difference from ``re`` is ECMA-262's: ``$`` matches at the very end only, not before a
final newline.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Iterator
from functools import lru_cache, partial
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
    from jsonschema.exceptions import ValidationError

    from .draft import NAMES, additional_properties, listed

    patterns = schema.get("patternProperties") or {}
    if not patterns or not validator.is_type(instance, "object"):
        yield from additional_properties(validator, additional, instance, schema)
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
    elif not additional and extras:  # (the first ``NAMES`` named, as ``draft``'s own)
        verb = "does" if len(extras) == 1 else "do"
        joined, _ = listed(heapq.nsmallest(NAMES, extras), len(extras))
        regexes = ", ".join(repr(each) for each in sorted(patterns))
        yield ValidationError(f"{joined} {verb} not match any of the regexes: {regexes}")


def _evaluated_keys(validator: Any, instance: Json, schema: Json) -> set[str]:
    """jsonschema's ``_utils.find_evaluated_property_keys_by_schema`` (the keys of
    ``instance`` that ``schema`` evaluates, for ``unevaluatedProperties``) in a set, with
    ``patternProperties`` matched by ``matcher`` (jsonschema's: Python's ``re``)."""
    from jsonschema._utils import is_valid

    if validator.is_type(schema, "boolean"):
        return set()
    keys: set[str] = set()
    for ref in (schema.get("$ref"), schema.get("$dynamicRef")):
        if ref is not None:
            found = validator._resolver.lookup(ref)
            evolved = validator.evolve(schema=found.contents, _resolver=found.resolver)
            keys |= _evaluated_keys(evolved, instance, found.contents)
    if validator.is_type(properties := schema.get("properties"), "object"):
        keys |= properties.keys() & instance.keys()
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        if (subschema := schema.get(keyword)) is not None:
            keys.update(k for k, v in instance.items() if is_valid(validator.descend(v, subschema)))
    matchers = [matcher(pattern) for pattern in schema.get("patternProperties", ())]
    keys.update(key for key in instance if any(found(key) for found in matchers))
    applied = [s for k, s in schema.get("dependentSchemas", {}).items() if k in instance]
    for keyword in ("allOf", "oneOf", "anyOf"):
        applied += [s for s in schema.get(keyword, ()) if is_valid(validator.descend(instance, s))]
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            applied += [schema["if"], *([schema["then"]] if "then" in schema else [])]
        elif "else" in schema:
            applied.append(schema["else"])
    for subschema in applied:
        keys |= _evaluated_keys(validator, instance, subschema)
    return keys


@lru_cache(maxsize=1)
def _validator_class() -> Any:
    from jsonschema import validators

    from .bounded import _unevaluated_properties, validator_class

    extend: Any = validators.extend  # untyped
    return extend(
        validator_class(),  # (with the linear uniqueItems, anyOf, oneOf... of ``bounded``)
        {
            "pattern": _pattern,
            "patternProperties": _pattern_properties,
            "additionalProperties": _additional_properties,
            "unevaluatedProperties": partial(_unevaluated_properties, find=_evaluated_keys),
        },
    )


def validator(schema: Json, format_checker: Any = None) -> Any:
    """A JSON Schema 2020-12 validator of ``schema`` with linear-time patterns
    (``schemas.validator`` hands it the schema with its ``$defs`` inlined)."""
    return _validator_class()(schema, format_checker=format_checker)
