"""Tool names for operations, and input argument names that do not clash.

Tool names
    From ``operationId`` in snake case (``listPets`` -> ``list_pets``,
    ``repos/get-content`` -> ``repos_get_content``); without one (or when it has no letters
    or digits) from the method and the path, a parameter segment becoming ``by_<name>``
    (``GET /pets/{petId}`` -> ``get_pets_by_pet_id``). A name longer than 64 characters is
    cut to 55 and ends with ``_`` and 8 hex digits of a hash of the full name. Names that
    are the same (also: the same once made a Python identifier or class name) are told
    apart by sorting the operations that want the name on (method, path): the first keeps
    it, the next get ``_2``, ``_3``... (skipping names another operation wants). The result
    depends only on the set of operations, never on their order in the document.

Argument names
    Path, query, header and cookie parameters and the body's properties (or the single
    ``body`` argument) share one flat input object. A parameter keeps its wire name as its
    argument name unless another input has the same name (compared as Python identifiers,
    so ``petId`` and ``pet_id`` clash): then every one of the clashing inputs is prefixed
    with its location -- ``path_id``, ``query_id``, ``header_id``, ``cookie_id``,
    ``body_id``. If a prefixed name is still taken, ``_2``, ``_3``... is appended, in the
    order path, query, header, cookie, body.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Sequence

from mcpgen import identifiers as names

MAX_TOOL_NAME = 64
_PARAM_SEGMENT = re.compile(r"\{([^{}]*)\}")


def base_name(method: str, path: str, operation_id: str | None) -> str:
    """The name an operation wants, before clashes are resolved (at most 64 characters)."""
    if operation_id:
        words = names.words(operation_id)
        if words:
            return fit("_".join(words))
    words = [method.lower()]
    for segment in path.split("/"):
        spaced = _PARAM_SEGMENT.sub(lambda m: f" by {m.group(1)} ", segment)
        parts = re.split(r"\s+", spaced)
        for part in parts:
            if part == "by":
                words.append("by")
            else:
                words.extend(names.words(part))
    return fit("_".join(words))


def fit(name: str, suffix: str = "") -> str:
    """``name + suffix`` in at most 64 characters: too long, it ends in a hash of itself."""
    if len(name) + len(suffix) <= MAX_TOOL_NAME:
        return name + suffix
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    keep = MAX_TOOL_NAME - len(suffix) - 9
    return f"{name[:keep].rstrip('_-')}_{digest}{suffix}"


@functools.lru_cache(maxsize=65536)
def _idents(name: str) -> tuple[str, str]:
    """The Python identifier and class name a tool name becomes: both must be unique."""
    return names.snake(name), names.pascal(name)


def unique_names(wanted: Sequence[tuple[str, str, str]]) -> list[str]:
    """Unique names for operations given as (base name, method, path), in the same order."""
    order = sorted(range(len(wanted)), key=lambda i: (wanted[i][0], wanted[i][1], wanted[i][2]))
    reserved = {ident for base, _, _ in wanted for ident in _idents(base)}
    taken: set[str] = set()
    last: dict[str, int] = {}  # the suffix number a base name got last (no quadratic search)
    result = [""] * len(wanted)
    for index in order:
        base = wanted[index][0]
        name = base
        number = last.get(base, 1)
        while any(ident in taken for ident in _idents(name)) or (
            name != base and any(ident in reserved for ident in _idents(name))
        ):
            number += 1
            name = fit(base, f"_{number}")
        last[base] = number
        taken.update(_idents(name))
        result[index] = name
    return result


def argument_names(inputs: Sequence[tuple[str, str]]) -> list[str]:
    """Argument names for inputs given as (location, wire name), in the same order."""
    counts: dict[str, int] = {}
    for _, wire in inputs:
        key = names.snake(wire)
        counts[key] = counts.get(key, 0) + 1
    wanted = [
        f"{location}_{wire}" if counts[names.snake(wire)] > 1 else wire for location, wire in inputs
    ]
    taken: set[str] = set()
    result: list[str] = []
    for name in wanted:
        final = name
        number = 1
        while names.snake(final) in taken:
            number += 1
            final = f"{name}_{number}"
        taken.add(names.snake(final))
        result.append(final)
    return result
