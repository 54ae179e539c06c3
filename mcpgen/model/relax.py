"""Output schemas within a byte budget: relaxations that accept every result the full
schema accepts (the server still checks results against the full one). Also what the
compact definitions share: sizes, shortened descriptions, the annotation keywords."""

from __future__ import annotations

import re
from typing import Any

from mcpgen.check.schemas import def_name
from mcpgen.literals import compact_json

Json = Any

KEPT_KEYWORDS = ("type", "const", "format")  # copied from a node the relaxation keeps
ENUM_BYTES = 120  # an enum (a constraint) kept when it is this small, else left out
ANNOTATIONS = frozenset({"description", "title", "default", "examples", "deprecated"})
# keywords whose subschemas are a level deeper (a parameter's fields, a definition's)
DEEPER = frozenset(("properties", "patternProperties", "additionalProperties", "$defs"))
LINK = re.compile(r"\[([^\]]*)\]\([^)\s]*\)")
TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>]*)?/?>")  # HTML in API descriptions


def size(value: Json) -> int:
    """Bytes of ``value`` as compact JSON (what a client receives)."""
    return len(compact_json(value).encode())


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


def floor(schema: Json, *, wrapped: bool = False, required_only: bool = False) -> int:
    """Bytes that every relaxation of ``schema`` to a depth of 0 or more holds (its top-level
    ``required`` list and field names): over the budget, no such relaxation fits."""
    defs = _defs(schema)
    node = _follow(schema, defs, ())[0]
    if wrapped and isinstance(node, dict) and isinstance(node.get("properties"), dict):
        node = _follow(node["properties"].get("result"), defs, ())[0]
    if not isinstance(node, dict):
        return 0
    required = [r for r in node.get("required") or () if isinstance(r, str)]
    properties = node.get("properties")
    kept: dict[str, Json] = {"required": required} if required else {}
    if isinstance(properties, dict):
        names = [n for n in properties if not required_only or n in required]
        if names:
            kept["properties"] = {name: {} for name in names}
    return size(kept)


def _defs(schema: Json) -> dict[str, Json]:
    defs = schema.get("$defs", {}) if isinstance(schema, dict) else {}
    return defs if isinstance(defs, dict) else {}


def _follow(
    node: Json, defs: dict[str, Json], seen: tuple[str, ...]
) -> tuple[Json, tuple[str, ...]]:
    """``node`` with its ``$ref`` chain followed through ``defs`` (a reference's description
    kept), and the definitions passed; ``True`` for one that does not resolve or leads back."""
    while isinstance(node, dict) and "$ref" in node:
        name = def_name(node["$ref"])
        if name is None or name not in defs or name in seen:
            return True, seen
        seen = (*seen, name)
        note = node.get("description")
        node = defs[name]
        if note is not None and isinstance(node, dict) and "description" not in node:
            node = {**node, "description": note}
    return node, seen


def relax(
    schema: Json, depth: int, *, wrapped: bool = False, chars: int = 0, required_only: bool = False
) -> Json:
    """A schema that accepts everything ``schema`` accepts: objects deeper than ``depth``
    levels as their bare type, other constraints left out, ``oneOf`` as ``anyOf``; the top two
    levels' descriptions within ``chars``. ``wrapped``: levels count from ``result``."""
    defs = _defs(schema)

    def bare(node: Json, seen: tuple[str, ...]) -> Json:
        node, seen = _follow(node, defs, seen)
        if not isinstance(node, dict):
            return {}
        if "type" in node:
            return {"type": node["type"]}
        for key in ("anyOf", "oneOf"):
            members = node.get(key)
            if isinstance(members, list) and members:
                types = [bare(member, seen).get("type") for member in members]
                if None in types:
                    return {}
                flat = [k for t in types for k in (t if isinstance(t, list) else [t])]
                kinds = [k for i, k in enumerate(flat) if k not in flat[:i]]
                return {"type": kinds[0] if len(kinds) == 1 else kinds}
        return next((found for m in node.get("allOf") or () if (found := bare(m, seen))), {})

    def visit(node: Json, level: int, seen: tuple[str, ...]) -> Json:
        if level > depth:
            return bare(node, seen)
        node, seen = _follow(node, defs, seen)
        if not isinstance(node, dict):
            return {} if node is True or node is None else node
        out: dict[str, Json] = {k: node[k] for k in KEPT_KEYWORDS if k in node}
        if "enum" in node and size(node["enum"]) <= ENUM_BYTES:
            out["enum"] = node["enum"]
        if chars and level <= 1 and isinstance(node.get("description"), str):
            text = shorten(node["description"], chars)
            if text:
                out["description"] = text
        properties = node.get("properties")
        required = [r for r in node.get("required") or () if isinstance(r, str)]
        if isinstance(properties, dict):
            only = required_only and level >= 0  # the wrapper's "result" stays
            if names := [n for n in properties if not only or n in required]:  # deeper: bare
                out["properties"] = {n: visit(properties[n], level + 1, ()) for n in names}
        if required:
            out["required"] = required
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and extra:
            out["additionalProperties"] = visit(extra, level + 1, ())
        items = node.get("items")
        if isinstance(items, dict | bool):
            relaxed = visit(items, level, seen)
            if relaxed not in ({}, True):
                out["items"] = relaxed
        for key in ("allOf", "anyOf", "oneOf"):
            members = node.get(key)
            if not isinstance(members, list) or not members:
                continue
            every = [visit(member, level, seen) for member in members]
            unique = [m for i, m in enumerate(every) if m not in every[:i]]
            if key == "allOf":
                if kept := [m for m in unique if m not in ({}, True)]:
                    out["allOf"] = kept
            elif all(m not in ({}, True) for m in unique):
                if "anyOf" in out:  # a oneOf next to an anyOf: both hold
                    out.setdefault("allOf", []).append({"anyOf": unique})
                else:
                    out["anyOf"] = unique
        return out

    return visit(schema, -1 if wrapped else 0, ())
