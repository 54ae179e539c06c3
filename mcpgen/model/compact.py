"""What tools/list advertises for an imported operation, made from the model's full
schemas (validation keeps those): equivalent input schemas (``share``), output schemas
relaxed within a byte budget (``relax``), annotations equal to MCP's defaults left out."""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import accumulate, takewhile
from typing import Any

from mcpgen.check.schemas import children
from mcpgen.model.relax import (
    DEEPER,
    LINK,
    OUTPUT_DESCRIPTION_CHARS,
    TAG,
    floor,
    relax,
    shorten,
    size,
)
from mcpgen.model.settings import read
from mcpgen.model.share import flatten, share, tidy

Json = Any

DESCRIPTION_CHARS = 160  # a tool's description longer than this is cut
PROPERTY_DESCRIPTION_CHARS = 60  # the same for a parameter's
NESTED_DESCRIPTION_CHARS = 60  # ... and for a field of a parameter (0: left out) ...
NESTED_DESCRIPTION_BUDGET = 600  # ... while they hold this many characters, shallowest first
OUTPUT_BUDGET = 400  # bytes of an advertised output schema

# Keywords no validator reads that a model does not need either.
DROPPED = frozenset(
    {
        "title", "examples", "example", "$comment", "readOnly", "writeOnly", "deprecated",
        "externalDocs", "xml", "discriminator", "$schema",
    }
)  # fmt: skip

# MCP's defaults for tool annotations: a hint equal to its default says nothing.
HINT_DEFAULTS = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}

_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
FILLER = frozenset(
    ["a", "an", "the", "of", "for", "to", "this", "that", "is", "it", "its", "in", "on", "by", "be"]
)
# OpenAPI's numeric formats: the type says as much, and no validator reads them.
NUMERIC_FORMATS = frozenset({"int32", "int64", "float", "double"})


def restates(text: str, name: str) -> bool:
    """The description only says the name again ("User Name" for ``UserName``)."""
    said, named = ({w.lower() for w in _WORD.findall(t)} - FILLER for t in (text, name))
    return bool(said) and said <= named


def description(text: str, limit: int = DESCRIPTION_CHARS) -> str:
    """A tool's description: whole when short, else its first paragraphs within ``limit``."""
    text = TAG.sub("", LINK.sub(r"\1", text)).strip()
    if len(text) <= limit:
        return text
    prefixes = accumulate(text.split("\n\n"), lambda kept, p: f"{kept}\n\n{p}")
    kept = max(takewhile(lambda joined: len(joined) <= limit, prefixes), key=len, default="")
    return kept if len(kept) >= limit // 2 else shorten(text, limit)


def tool_annotations(given: Json) -> Json:
    """Tool annotations without hints equal to MCP's defaults (a read-only tool's destructive
    and idempotent hints mean nothing either); None when nothing is left."""
    if not isinstance(given, dict):
        return given
    read_only = given.get("readOnlyHint") is True
    kept = {
        key: value
        for key, value in given.items()
        if not (key in HINT_DEFAULTS and value == HINT_DEFAULTS[key])
        and not (read_only and key in ("destructiveHint", "idempotentHint"))
    }
    return kept or None


def _nested_kept(schema: Json, chars: int, budget: int) -> set[int]:
    """The nodes below the properties (fields of a parameter, a definition's fields) whose
    descriptions, cut to ``chars``, fit ``budget`` characters in all, shallowest first."""
    if chars <= 0 or budget <= 0:
        return set()
    found: list[tuple[int, int, int, int]] = []  # level, order, node id, characters
    seen: set[int] = set()

    def walk(node: Json, level: int) -> None:
        if not isinstance(node, dict) or id(node) in seen:
            return
        seen.add(id(node))
        text = node.get("description")
        if level >= 2 and isinstance(text, str):
            found.append((level, len(found), id(node), len(shorten(text, chars))))
        children(node, lambda sub, key: walk(sub, level + (key in DEEPER)))

    walk(schema, 0)
    kept: set[int] = set()
    for _, _, node_id, cost in sorted(found):
        if cost <= budget:
            kept.add(node_id)
            budget -= cost
    return kept


def strip(
    schema: Json,
    chars: int = PROPERTY_DESCRIPTION_CHARS,
    deep_chars: int = NESTED_DESCRIPTION_CHARS,
    deep_budget: int = 0,
) -> Json:
    """``schema`` without keywords no validator reads, descriptions shortened: to ``chars``
    for the schema and its properties, to ``deep_chars`` deeper while they fit
    ``deep_budget`` characters in all (shallowest first; 0: left out); equivalent."""
    deep = _nested_kept(schema, deep_chars, deep_budget)

    def visit(node: Json, level: int) -> Json:
        if not isinstance(node, dict):
            return node
        kept = {k: v for k, v in node.items() if k not in DROPPED and not str(k).startswith("x-")}
        if isinstance(kept.get("description"), str):
            limit = chars if level <= 1 else deep_chars if id(node) in deep else 0
            kept["description"] = shorten(kept["description"], limit)
            if not kept["description"]:
                del kept["description"]
        if kept.get("format") in NUMERIC_FORMATS:
            del kept["format"]
        out = flatten(children(kept, lambda sub, key: visit(sub, level + (key in DEEPER))))
        properties = out.get("properties")
        if properties == {}:  # says nothing
            del out["properties"]
        elif isinstance(properties, dict):
            for name, sub in properties.items():
                note = sub.get("description") if isinstance(sub, dict) else None
                if isinstance(note, str) and restates(note, name):
                    properties[name] = {k: v for k, v in sub.items() if k != "description"}
        return out

    return visit(schema, 0)


def compact_output(schema: Json, budget: int = OUTPUT_BUDGET, wrapped: bool = False) -> Json:
    """The advertised output schema: the full one made smaller but equivalent when that fits
    ``budget`` bytes, else the first relaxation that fits; at worst the value's bare type."""
    if not isinstance(schema, dict):
        return schema
    stripped = strip(schema, OUTPUT_DESCRIPTION_CHARS)
    if size(stripped) <= 8 * budget:  # else sharing cannot bring it under the budget
        equivalent = share(stripped)
        if size(equivalent) <= budget:
            return equivalent
    # depths 2, 1, 0 (with descriptions, then without), then the required fields' types
    if floor(stripped, wrapped=wrapped) <= budget:
        for depth in (2, 1, 0):
            plain = relax(stripped, depth, wrapped=wrapped)
            if size(plain) <= budget:
                described = relax(stripped, depth, wrapped=wrapped, chars=OUTPUT_DESCRIPTION_CHARS)
                return described if size(described) <= budget else plain
    if floor(stripped, wrapped=wrapped, required_only=True) <= budget:
        required = relax(stripped, 0, wrapped=wrapped, required_only=True)
        if size(required) <= budget:
            return required
    return relax(stripped, -1, wrapped=wrapped)


@dataclass(frozen=True)
class CompactOptions:
    """``openapi.compact`` of the manifest: ``false`` advertises the full schemas."""

    enabled: bool = True
    description: int = DESCRIPTION_CHARS
    parameter_description: int = PROPERTY_DESCRIPTION_CHARS
    output_schema: int = OUTPUT_BUDGET  # bytes; 0: no output schema advertised

    @classmethod
    def from_manifest(cls, raw: Json) -> CompactOptions:
        return read(cls, raw) if isinstance(raw, dict) else cls(enabled=raw is not False)


def advertise(
    title: str | None,
    text: str | None,
    input_schema: Json,
    output_schema: Json | None,
    annotations: Json | None,
    *,
    wrapped: bool = False,
    options: CompactOptions | None = None,
) -> dict[str, Json]:
    """What tools/list shows of an imported tool instead of the full parts (None: left out)."""
    options = options or CompactOptions()
    given = (text or "").strip()
    if title and not given.startswith(title.rstrip(".")):
        given = f"{title.rstrip('.')}. {given}" if given else title  # one text says both
    chars = options.parameter_description  # nested fields: within NESTED_DESCRIPTION_BUDGET
    stripped = strip(
        input_schema, chars, min(chars, NESTED_DESCRIPTION_CHARS), NESTED_DESCRIPTION_BUDGET
    )
    out: dict[str, Json] = {
        "title": None,
        "description": description(given, options.description) or None,
        "inputSchema": tidy(share(stripped)),  # equivalent: accepts exactly the same arguments
        "annotations": tool_annotations(annotations),
    }
    if output_schema is not None:
        budget = options.output_schema
        relaxed = compact_output(output_schema, budget, wrapped) if budget > 0 else None
        out["outputSchema"] = None if relaxed in (None, {}, {"type": "object"}) else relaxed
    return out
