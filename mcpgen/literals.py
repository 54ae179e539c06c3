"""Literals for JSON-like values: Python ones, and compact JSON."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


def py(value: Any) -> str:
    """A Python literal for a JSON-like value: the only way user text enters Python code."""
    if value is None or isinstance(value, str | bool | int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(py(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{py(k)}: {py(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no Python literal for {type(value).__name__}")


def encoder(**options: Any) -> Callable[[Any], str]:
    """``json.dumps`` with these options, made once, without the search for circular
    references (the data are trees made from JSON): ~20% faster on a big API's schemas."""
    return json.JSONEncoder(check_circular=False, **options).encode


# JSON as sent on the wire: compact separators, non-ASCII kept, key order kept
compact_json = encoder(ensure_ascii=False, separators=(",", ":"))


READABLE_ITEMS = 200  # above this many, a generated JSON file lists its items one per line


def one_per_line(data: dict[str, Any], sort_keys: bool = False) -> str:
    """A big JSON object written fast (Python's C encoder does not indent): one line per
    member, and a list's items one per line, so that a change to one item is one line."""
    dumps, entries = encoder(ensure_ascii=False, sort_keys=sort_keys), []
    for key in sorted(data) if sort_keys else data:
        value = data[key]
        listed = isinstance(value, list) and value
        text = "[\n" + ",\n".join(map(dumps, value)) + "\n]" if listed else dumps(value)
        entries.append(f"{json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(entries) + "\n}\n"
