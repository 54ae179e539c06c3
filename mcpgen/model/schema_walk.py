"""Walking JSON Schemas for the compact definitions (``model.compact``): which keywords
hold subschemas, local ``$defs`` references, sizes."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from mcpgen.check import schemas
from mcpgen.check.schemas import DEFS_PREFIX, SCHEMA_LISTS, SCHEMA_MAPS

Json = Any

ANNOTATIONS = frozenset({"description", "title", "default", "examples", "deprecated"})
SCHEMA_VALUES = (*schemas.SCHEMA_VALUES, "additionalItems")


def size(value: Json) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


DEEPER = frozenset(("properties", "patternProperties", "additionalProperties", "$defs"))


def children(node: dict[str, Json], fn: Any) -> dict[str, Json]:
    """``node`` with ``fn(subschema, keyword)`` applied to each of its subschemas (data
    keywords kept as they are)."""
    out: dict[str, Json] = {}
    for key, value in node.items():
        if key in SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: fn(sub, key) for name, sub in value.items()}
        elif key in SCHEMA_LISTS and isinstance(value, list):
            out[key] = [fn(sub, key) for sub in value]
        elif key in SCHEMA_VALUES and isinstance(value, dict | bool):
            out[key] = fn(value, key)
        elif key == "items" and isinstance(value, list):
            out[key] = [fn(sub, key) for sub in value]
        else:
            out[key] = value
    return out


def def_name(ref: Json) -> str | None:
    if isinstance(ref, str) and ref.startswith(DEFS_PREFIX):
        name = ref[len(DEFS_PREFIX) :]
        if "/" not in name:
            return name.replace("~1", "/").replace("~0", "~")
    return None


def refs(node: Json) -> Counter[str]:
    """The ``#/$defs/Name`` references in ``node`` (not inside a nested ``$defs``)."""
    found: Counter[str] = Counter()
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            name = def_name(current.get("$ref"))
            if name is not None:
                found[name] += 1
            for key, value in current.items():
                if key in ("const", "enum", "default", "examples", "$defs"):
                    continue
                if isinstance(value, dict | list):
                    stack.append(value)
        elif isinstance(current, list):
            stack.extend(current)
    return found


LINK = re.compile(r"\[([^\]]*)\]\([^)\s]*\)")
TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>]*)?/?>")  # HTML in API descriptions


def shorten(text: str, limit: int) -> str:
    """``text`` with Markdown links reduced to their words, cut at a word boundary."""
    if limit <= 0:
        return ""
    text = " ".join(TAG.sub(" ", LINK.sub(r"\1", text)).split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    at = cut.rfind(" ")
    if at > limit // 2:
        cut = cut[:at]
    return cut.rstrip(" ,;:.") + "…"
