"""The ``format`` values a generated model parses into another type than ``str`` (``date``,
``uuid``...): a default must parse, as the model validates its defaults."""

from __future__ import annotations

import functools
import importlib
import json
import sys
from pathlib import Path
from typing import Any

from jsonschema import FormatChecker

from mcpgen import cache


@functools.cache
def model_formats() -> FormatChecker:
    """A checker of each such format, by the pydantic type the model generator gives it."""
    checker = FormatChecker(formats=())
    for name in TYPES:  # pydantic's ValidationError is a ValueError
        checker.checks(name, raises=ValueError)(functools.partial(_parses, name))
    return checker


def _parses(name: str, value: object) -> bool:
    if not isinstance(value, str):
        return True
    path, known = _verdicts(cache.cache_dir())
    key = " ".join((*TYPES[name], value))  # (the type, should a format get another)
    if not isinstance(known.get(key), bool):
        try:
            _adapter(name).validate_python(value)
            known[key] = True
        except ValueError:  # pydantic's ValidationError
            known[key] = False
        if path is not None:
            _added.setdefault(path, {})[key] = known[key]
    if not known[key]:
        raise ValueError(f"{value!r} is not a valid {name}")
    return True


MAX_VERDICTS = 10_000  # past this many, the kept verdicts start over
_added: dict[Path, dict[str, bool]] = {}  # the verdicts this process made, by file


def save() -> None:
    """Keep the verdicts the checks made (alone when past ``MAX_VERDICTS``)."""
    for path, added in _added.items():
        known = {**cache.read_pack(path), **added}
        cache.write(
            path, json.dumps(known if len(known) <= MAX_VERDICTS else added, sort_keys=True)
        )
    _added.clear()


@functools.cache
def _verdicts(store: Path | None) -> tuple[Path | None, dict[str, bool]]:
    """What pydantic said of the values earlier builds checked, from the build cache."""
    from importlib import metadata

    python = "py{}.{}".format(*sys.version_info[:2])
    try:
        name = f"formats-{python}-{metadata.version('pydantic')}.json"
        path = store / name if store else None
    except metadata.PackageNotFoundError:  # (a dependency of mcp: always there)
        path = None
    return path, cache.read_pack(path)


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
