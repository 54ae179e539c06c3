"""Turning user-chosen names into Python names, in exactly one place."""

from __future__ import annotations

import builtins
import keyword
import re

_WORD_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NON_WORD = re.compile(r"[^A-Za-z0-9]+")
RESERVED = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins))


def words(name: str) -> list[str]:
    """Split a name on separators and case changes: 'getHTTPResponse-v2' -> get, http, response, v2."""
    spaced = _WORD_BOUNDARY.sub(" ", name)
    return [w.lower() for w in _NON_WORD.split(spaced) if w]


def snake(name: str) -> str:
    """A valid, non-reserved Python identifier in snake case (never empty)."""
    result = "_".join(words(name)) or "x"
    if result[0].isdigit():
        result = "n" + result
    if result in RESERVED:
        result += "_"
    return result


def pascal(name: str) -> str:
    """A valid class name in PascalCase (never empty, never starting with a digit)."""
    result = "".join(w[:1].upper() + w[1:] for w in words(name)) or "X"
    if result[0].isdigit():
        result = "N" + result
    return result


def kebab(name: str) -> str:
    return "-".join(words(name)) or "x"
