"""The ``format`` values a generated model parses into another type than ``str`` (``date``,
``uuid``, ``uri``...): a default must be one of them, as the model validates its defaults
(a default ``yesterday`` for a date would fail every call that leaves it out)."""

from __future__ import annotations

import functools
from typing import Any

from jsonschema import FormatChecker


@functools.cache
def model_formats() -> FormatChecker:
    """A checker of each such format, by the pydantic type the model generator gives it."""
    import datetime
    import decimal
    import ipaddress
    import uuid

    import pydantic

    types: dict[str, Any] = {
        "date": datetime.date,
        "time": datetime.time,
        "date-time": pydantic.AwareDatetime,
        "date-time-local": pydantic.NaiveDatetime,
        "duration": datetime.timedelta,
        "uuid": uuid.UUID,
        "uri": pydantic.AnyUrl,
        "ipv4": ipaddress.IPv4Address,
        "ipv6": ipaddress.IPv6Address,
        "ipv4-network": ipaddress.IPv4Network,
        "ipv6-network": ipaddress.IPv6Network,
        "decimal": decimal.Decimal,
        "byte": pydantic.Base64Str,
    }
    checker = FormatChecker(formats=())
    for name, kind in types.items():
        adapter = pydantic.TypeAdapter(kind)

        def parses(value: object, adapter: pydantic.TypeAdapter[Any] = adapter) -> bool:
            return not isinstance(value, str) or adapter.validate_python(value) is not None

        checker.checks(name, raises=pydantic.ValidationError)(parses)
    return checker
