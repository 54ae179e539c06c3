"""Draft 2020-12's validator, which those of ``schemas.py``, ``bounded.py`` and
``patterns.py`` extend: a false ``additionalProperties`` names a few of the keys it refuses
and how many more (``listed``, which the others' messages use too), where jsonschema's
named every one.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator, _keywords, validators
from jsonschema.exceptions import ValidationError

from .errors import echoed

Json = Any
NAMES = 20  # unexpected keys (items) an error names, then how many more


@lru_cache(maxsize=1)
def draft_class() -> Any:
    """Draft 2020-12's validator with ``additional_properties`` (``bounded`` extends this
    one, and ``patterns`` that; ``schemas.validator`` uses it for other schemas)."""
    extend: Any = validators.extend  # untyped
    return extend(Draft202012Validator, {"additionalProperties": additional_properties})


def additional_properties(
    validator: Any, additional: Json, instance: Json, schema: Json
) -> Iterator[Any]:
    """jsonschema's, but a false one names the first ``NAMES`` keys it refuses (sorted, as
    jsonschema's) and how many more, and keeps no list of them: jsonschema's named every
    one (400,000 keys: a 4 MB message, then cut to ``tools.PROBLEM_CHARS``; 50 MB). With
    ``patternProperties``, ``patterns`` has its own."""
    jsonschemas: Any = _keywords.additionalProperties  # typed as returning None
    patterns = "patternProperties" in schema
    if additional is not False or patterns or not validator.is_type(instance, "object"):
        yield from jsonschemas(validator, additional, instance, schema)
        return
    known = schema.get("properties", {})
    count = sum(key not in known for key in instance)
    if count:
        first = heapq.nsmallest(NAMES, (key for key in instance if key not in known), key=str)
        message = "Additional properties are not allowed (%s %s unexpected)"
        yield ValidationError(message % listed(first, count))


def listed(extras: Sequence[Any], count: int | None) -> tuple[str, str]:
    """jsonschema's ``extras_msg`` (the extras, the verb) naming the first ``NAMES`` extras
    then how many more (``count`` in all; None: only that there are more, past ``NAMES``),
    each by at most ``errors.ECHOED`` characters of its ``repr`` then its length
    (jsonschema's named all, whole)."""
    shown = [echoed(repr(e), len(e) if isinstance(e, str) else None) for e in extras[:NAMES]]
    total = len(extras) if count is None else count
    more = total - NAMES
    tail = "" if more <= 0 else " and more" if count is None else f" and {more} more"
    return ", ".join(shown) + tail, "was" if total == 1 else "were"
