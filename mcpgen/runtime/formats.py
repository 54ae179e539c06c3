"""The format checks of tool arguments (``checker_of(schemas.CHECKED_FORMATS)``): jsonschema's
own checkers for JSON Schema 2020-12, which use the standard library for ``date``, ``email`` and
``idn-email`` (an ``@``), ``ipv4``, ``ipv6`` and ``uuid``, and rfc3339-validator (what
jsonschema registers ``date-time`` and ``time`` with, hence imported here: a package that
carries this module depends on it) for ``date-time`` and ``time``. jsonschema's checkers of
``uri``, ``hostname`` and ``duration`` need other packages; these are mcpgen's: ``uri`` is
what the model's ``AnyUrl`` parses (a handler's model takes exactly those), ``hostname`` RFC
1123 labels (a final dot allowed), ``duration`` ISO 8601's (``P1Y2M``, ``PT1H30M``, ``PT1.5S``).
"""

from __future__ import annotations

import functools
import re
from typing import Any

import rfc3339_validator  # type: ignore[import-untyped]  # noqa: F401  (jsonschema needs it)
from jsonschema import Draft202012Validator, FormatChecker

_LABEL = r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)"
_HOSTNAME = re.compile(rf"(?=.{{1,253}}\.?\Z){_LABEL}(?:\.{_LABEL})*\.?\Z", re.ASCII)
# ISO 8601's (RFC 3339 Appendix A, in any combination; a fraction of a second)
_DURATION = re.compile(
    r"P(?!\Z)(?:\d+Y)?(?:\d+M)?(?:\d+W)?(?:\d+D)?"
    r"(?:T(?=\d)(?:\d+H)?(?:\d+M)?(?:\d+(?:[.,]\d+)?S)?)?\Z",
    re.ASCII,
)


def _hostname(value: object) -> bool:
    return not isinstance(value, str) or _HOSTNAME.match(value) is not None


def _duration(value: object) -> bool:
    return not isinstance(value, str) or _DURATION.match(value) is not None


def _uri(value: object) -> bool:
    if isinstance(value, str):
        _urls().validate_python(value)  # a ValueError when it is no URL
    return True


@functools.cache
def _urls() -> Any:
    from pydantic import AnyUrl, TypeAdapter

    return TypeAdapter(AnyUrl)


@functools.cache
def checker_of(names: frozenset[str]) -> FormatChecker:
    """The checker of the formats ``names`` (``schemas.CHECKED_FORMATS``): jsonschema's own
    checkers, and mcpgen's of ``hostname``, ``duration`` and ``uri``."""
    known = Draft202012Validator.FORMAT_CHECKER.checkers
    checker = FormatChecker(formats=())
    checker.checkers = {name: known[name] for name in sorted(names) if name in known}
    checker.checks("hostname")(_hostname)
    checker.checks("duration")(_duration)
    checker.checks("uri", raises=ValueError)(_uri)
    return checker
