"""JSON Schema keywords whose work is linear in the instance, for a schema that has one of
``schemas.BOUNDED`` (a package carries this module only then, or with ``patterns.py``,
whose validator extends this one). jsonschema's own, on the event loop of the server:

- ``uniqueItems`` compares every pair of items it cannot sort (a string among 8,000 numbers:
  21 s of CPU; 10,000 objects: 94 s): here each item's canonical text goes in a set;
- ``anyOf`` and ``oneOf`` collect every problem of every branch (in the error's ``context``)
  before they say the instance matches none, whatever cap the caller puts on the problems
  it reads (400,000 items under a branch: 20 s, 580 MB): here a branch stops at its
  ``CONTEXT``-th problem;
- ``unevaluatedItems`` and ``unevaluatedProperties`` search a list of the evaluated items
  for each item: here a set; and their error names every unevaluated one, whole (4 MB of
  300,000 small keys, made of 300,000 problems, one a key): here the first
  ``draft.NAMES``, each by at most ``errors.ECHOED`` characters, then how many more.

The verdicts and the errors are jsonschema's (``tests/runtime/test_schema_work.py``), but
for the ``context`` of a union's error, which holds fewer problems, and the names of an
unevaluated keyword's (past ``draft.NAMES`` of them, or ``errors.ECHOED`` characters of
one).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import lru_cache
from itertools import islice
from typing import Any

from jsonschema import _utils, validators
from jsonschema.exceptions import ValidationError

from .draft import NAMES, draft_class, listed

Json = Any
CONTEXT = 3  # problems of each branch an ``anyOf`` or ``oneOf`` error keeps (its ``context``)


def _unique_items(validator: Any, unique: Json, instance: Json, schema: Json) -> Iterator[Any]:
    """jsonschema's ``uniqueItems`` in linear time: a set of each item's canonical text."""
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
    context: list[Any] = []
    if _branches(validator, any_of, instance, context) is None:
        message = f"{instance!r} is not valid under any of the given schemas"
        yield ValidationError(message, context=context)


def _one_of(validator: Any, one_of: Json, instance: Json, schema: Json) -> Iterator[Any]:
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
    if not validator.is_type(instance, "array"):
        return
    schema = _unless_false(schema, "unevaluatedItems")
    evaluated = set(_utils.find_evaluated_item_indexes_by_schema(validator, instance, schema))
    extras = [item for index, item in enumerate(instance) if index not in evaluated]
    if extras:
        message = "Unevaluated items are not allowed (%s %s unexpected)"
        yield ValidationError(message % listed(extras, len(extras)))


def _unevaluated_properties(
    validator: Any,
    unevaluated: Json,
    instance: Json,
    schema: Json,
    find: Callable[..., Any] | None = None,
) -> Iterator[Any]:
    """jsonschema's, with the evaluated keys in a set (it searched a list for each), the
    keys ``unevaluated`` is false for not checked one by one (each made a problem), and
    ``find`` for jsonschema's ``find_evaluated_property_keys_by_schema`` (``patterns``)."""
    if not validator.is_type(instance, "object"):
        return
    find = find or _utils.find_evaluated_property_keys_by_schema
    evaluated = set(find(validator, instance, _unless_false(schema, "unevaluatedProperties")))
    extras = [key for key in instance if key not in evaluated]
    if not extras:
        return
    if unevaluated is False:
        message = "Unevaluated properties are not allowed (%s %s unexpected)"
        yield ValidationError(message % listed(sorted(extras, key=str), len(extras)))
        return
    invalid = (  # each key once per problem, as jsonschema's: the first few only
        key
        for key in extras
        for _ in validator.descend(instance[key], unevaluated, path=key, schema_path=key)
    )
    found = list(islice(invalid, NAMES + 1))
    if found:
        message = (
            "Unevaluated properties are not valid under the given schema "
            "(%s %s unevaluated and invalid)"
        )
        yield ValidationError(message % listed(found, None))


def _unless_false(schema: Json, keyword: str) -> Json:
    """``schema`` without ``keyword`` if it is false, for jsonschema's finders of what is
    evaluated: they check each item (property) against it, making a problem for each, to
    find none."""
    return {k: v for k, v in schema.items() if k != keyword} if schema[keyword] is False else schema


KEYWORDS: dict[str, Callable[..., Iterator[Any]]] = {
    "uniqueItems": _unique_items,
    "anyOf": _any_of,
    "oneOf": _one_of,
    "unevaluatedItems": _unevaluated_items,
    "unevaluatedProperties": _unevaluated_properties,
}


@lru_cache(maxsize=1)
def validator_class() -> Any:
    """``draft.draft_class`` with ``KEYWORDS`` (``patterns`` extends this one, and
    ``schemas.validator`` uses it for a schema with one of ``schemas.BOUNDED``)."""
    extend: Any = validators.extend  # untyped
    return extend(draft_class(), KEYWORDS)
