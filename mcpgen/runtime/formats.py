"""The format checks of tool arguments (``schemas.CHECKED_FORMATS``): jsonschema's own
checkers for JSON Schema 2020-12, which use the standard library for ``date``, ``email`` and
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

from .schemas import CHECKED_FORMATS

CHECKER = FormatChecker(formats=())
CHECKER.checkers = {
    name: Draft202012Validator.FORMAT_CHECKER.checkers[name]
    for name in sorted(CHECKED_FORMATS)
    if name in Draft202012Validator.FORMAT_CHECKER.checkers
}
_LABEL = r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)"
_HOSTNAME = re.compile(rf"(?=.{{1,253}}\.?\Z){_LABEL}(?:\.{_LABEL})*\.?\Z", re.ASCII)
# ISO 8601's (RFC 3339 Appendix A, in any combination; a fraction of a second)
_DURATION = re.compile(
    r"P(?!\Z)(?:\d+Y)?(?:\d+M)?(?:\d+W)?(?:\d+D)?"
    r"(?:T(?=\d)(?:\d+H)?(?:\d+M)?(?:\d+(?:[.,]\d+)?S)?)?\Z",
    re.ASCII,
)


@CHECKER.checks("hostname")
def _hostname(value: object) -> bool:
    return not isinstance(value, str) or _HOSTNAME.match(value) is not None


@CHECKER.checks("duration")
def _duration(value: object) -> bool:
    return not isinstance(value, str) or _DURATION.match(value) is not None


@CHECKER.checks("uri", raises=ValueError)
def _uri(value: object) -> bool:
    if isinstance(value, str):
        _urls().validate_python(value)  # a ValueError when it is no URL
    return True


@functools.cache
def _urls() -> Any:
    from pydantic import AnyUrl, TypeAdapter

    return TypeAdapter(AnyUrl)
