"""The JSON Schema validators of tool arguments and results: 2020-12, with the schema's own
``$defs`` inlined once (``inline_refs``), the linear-time matching of ``patterns.py``
when the schema has a ``pattern``, and the format checks of ``formats.py`` for arguments
whose schema names one of ``CHECKED_FORMATS`` (a package carries each module only then).

A schema with one of ``BOUNDED`` gets this module's versions of those keywords, whose work
is linear in the instance (``KEYWORDS``): jsonschema's ``uniqueItems`` compares every pair
of items it cannot sort (8,000 numbers and a string: 21 s of CPU), its ``anyOf`` and
``oneOf`` collect every problem of every branch before they say the instance matches none
(400,000 items: 20 s and 580 MB, whatever cap the caller puts on the problems it reads),
its ``unevaluatedItems`` and ``unevaluatedProperties`` look each item up in a list.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import lru_cache
from itertools import islice
from typing import Any

Json = Any
PATTERN_KEYWORDS = frozenset(("pattern", "patternProperties"))
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
        return bounded_class()(inline_refs(schema), format_checker=checker)
    from jsonschema import Draft202012Validator

    return Draft202012Validator(inline_refs(schema), format_checker=checker)


def uses_formats(node: Json) -> bool:
    """A ``format`` of ``CHECKED_FORMATS`` is somewhere in ``node`` (a superset: in a
    ``const`` too). mcpgen carries ``formats.py`` when a tool's input schema has one."""
    return _anywhere(node, lambda d: isinstance(f := d.get("format"), str) and f in CHECKED_FORMATS)


def uses_patterns(node: Json) -> bool:
    """``pattern`` or ``patternProperties`` is a key somewhere in ``node`` (a property so
    named counts too: it only costs the matcher of ``patterns.py``). mcpgen carries that
    module when the text of a tool's schemas holds either word (``vendoring``)."""
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


BOUNDED = frozenset(("uniqueItems", "anyOf", "oneOf", "unevaluatedItems", "unevaluatedProperties"))
CONTEXT = 3  # problems of each branch an ``anyOf`` or ``oneOf`` error keeps (its ``context``)


def _unique_items(validator: Any, unique: Json, instance: Json, schema: Json) -> Iterator[Any]:
    """jsonschema's ``uniqueItems`` in linear time: a set of each item's canonical text."""
    from jsonschema import _utils
    from jsonschema.exceptions import ValidationError

    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[str] = set()
    try:
        for item in instance:
            text = canonical(item)
            if text in seen:
                break
            seen.add(text)
        else:
            return
    except TypeError:  # not JSON data (a handler's own type): jsonschema's pairwise check
        if _utils.uniq(instance):
            return
    yield ValidationError(f"{instance!r} has non-unique elements")


def canonical(value: Json) -> str:
    """A text two values share exactly when JSON Schema calls them equal: ``1`` and ``1.0``
    are, ``true`` and ``1`` are not, objects whatever the order of their keys, arrays item
    by item (jsonschema's ``_utils.equal``; raises TypeError for what is not JSON data).
    Its pieces are joined once (joining at each level copied a deep value's text as often
    as it is deep)."""
    pieces: list[str] = []
    _pieces(value, pieces.append)
    return "".join(pieces)


def _pieces(value: Json, out: Callable[[str], None]) -> None:
    if isinstance(value, str) or value is None or isinstance(value, bool):
        out(json.dumps(value))
    elif isinstance(value, int):
        out(str(value))
    elif isinstance(value, float):
        out(str(int(value)) if value.is_integer() else repr(value))
    elif isinstance(value, Mapping):
        out("{")
        for key, text in sorted((json.dumps(k), k) for k in value):
            out(key + ":")
            _pieces(value[text], out)
            out(",")
        out("}")
    elif isinstance(value, Sequence):
        out("[")
        for each in value:
            _pieces(each, out)
            out(",")
        out("]")
    else:
        raise TypeError(type(value).__name__)


def _branches(validator: Any, branches: Json, instance: Json, context: list[Any]) -> Any:
    """The first branch ``instance`` is valid under (its index, then an iterator of the
    others'), or None; ``context`` gets the first ``CONTEXT`` problems of each invalid one
    (jsonschema's keep all of them, and find all of them first)."""
    indexed = enumerate(branches)
    for index, branch in indexed:
        problems = validator.descend(instance, branch, schema_path=index)
        found = list(islice(problems, CONTEXT))
        if not found:
            return branch, indexed
        context.extend(found)
    return None


def _any_of(validator: Any, any_of: Json, instance: Json, schema: Json) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    context: list[Any] = []
    if _branches(validator, any_of, instance, context) is None:
        message = f"{instance!r} is not valid under any of the given schemas"
        yield ValidationError(message, context=context)


def _one_of(validator: Any, one_of: Json, instance: Json, schema: Json) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    context: list[Any] = []
    valid = _branches(validator, one_of, instance, context)
    if valid is None:
        message = f"{instance!r} is not valid under any of the given schemas"
        yield ValidationError(message, context=context)
        return
    first, others = valid
    more = [each for _, each in others if validator.evolve(schema=each).is_valid(instance)]
    if more:
        reprs = ", ".join(repr(each) for each in [*more, first])
        yield ValidationError(f"{instance!r} is valid under each of {reprs}")


def _unevaluated_items(validator: Any, unevaluated: Json, instance: Json, schema: Json) -> Any:
    """jsonschema's, with the evaluated indexes in a set (it searched a list for each)."""
    from jsonschema import _utils
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "array"):
        return
    evaluated = set(_utils.find_evaluated_item_indexes_by_schema(validator, instance, schema))
    extras = [item for index, item in enumerate(instance) if index not in evaluated]
    if extras:
        message = "Unevaluated items are not allowed (%s %s unexpected)"
        yield ValidationError(message % _utils.extras_msg(extras))


def _unevaluated_properties(
    validator: Any, unevaluated: Json, instance: Json, schema: Json
) -> Iterator[Any]:
    """jsonschema's, with the evaluated keys in a set (it searched a list for each)."""
    from jsonschema import _utils
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    evaluated = set(_utils.find_evaluated_property_keys_by_schema(validator, instance, schema))
    extras = []
    for key in instance:
        if key not in evaluated:
            problems = validator.descend(instance[key], unevaluated, path=key, schema_path=key)
            extras += [key for _ in problems]
    if not extras:
        return
    if unevaluated is False:
        message = "Unevaluated properties are not allowed (%s %s unexpected)"
        yield ValidationError(message % _utils.extras_msg(sorted(extras, key=str)))
    else:
        message = (
            "Unevaluated properties are not valid under the given schema "
            "(%s %s unevaluated and invalid)"
        )
        yield ValidationError(message % _utils.extras_msg(extras))


KEYWORDS: dict[str, Callable[..., Iterator[Any]]] = {
    "uniqueItems": _unique_items,
    "anyOf": _any_of,
    "oneOf": _one_of,
    "unevaluatedItems": _unevaluated_items,
    "unevaluatedProperties": _unevaluated_properties,
}


@lru_cache(maxsize=1)
def bounded_class() -> Any:
    """Draft 2020-12's validator with ``KEYWORDS`` (``patterns`` extends this one)."""
    from jsonschema import Draft202012Validator, validators

    extend: Any = validators.extend  # untyped
    return extend(Draft202012Validator, KEYWORDS)
