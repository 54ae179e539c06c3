"""The ``format`` values a generated model parses into another type than ``str`` (``date``,
``uuid``, ``uri``...): a default must be one of them, as the model validates its defaults
(a default ``yesterday`` for a date would fail every call that leaves it out)."""

from __future__ import annotations

import functools
import importlib
from typing import Any

from jsonschema import FormatChecker


@functools.cache
def model_formats() -> FormatChecker:
    """A checker of each such format, by the pydantic type the model generator gives it
    (made on the first value it checks: most documents need one or none of them)."""
    checker = FormatChecker(formats=())
    for name in TYPES:  # pydantic's ValidationError is a ValueError
        checker.checks(name, raises=ValueError)(functools.partial(_parses, name))
    return checker


def _parses(name: str, value: object) -> bool:
    if isinstance(value, str):
        _adapter(name).validate_python(value)
    return True


# each format's type: (module, name)
TYPES = {
    "date": ("datetime", "date"),
    "time": ("datetime", "time"),
    "date-time": ("pydantic", "AwareDatetime"),
    "date-time-local": ("pydantic", "NaiveDatetime"),
    "duration": ("datetime", "timedelta"),
    "uuid": ("uuid", "UUID"),
    "uri": ("pydantic", "AnyUrl"),
    "ipv4": ("ipaddress", "IPv4Address"),
    "ipv6": ("ipaddress", "IPv6Address"),
    "ipv4-network": ("ipaddress", "IPv4Network"),
    "ipv6-network": ("ipaddress", "IPv6Network"),
    "decimal": ("decimal", "Decimal"),
    "byte": ("pydantic", "Base64Str"),
}


@functools.cache
def _adapter(name: str) -> Any:
    import pydantic

    module, attribute = TYPES[name]
    return pydantic.TypeAdapter(getattr(importlib.import_module(module), attribute))
