"""What tools/list advertises for an imported operation, made from the model's full
schemas (validation keeps those): equivalent input schemas (``share``: each ``$defs`` entry
inlined where that is smaller, ``allOf`` members merged where nothing can tell), output
schemas relaxed within a byte budget (``relax``), annotations equal to MCP's defaults left out."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from itertools import accumulate, takewhile
from typing import Any

from mcpgen.check import schemas
from mcpgen.check.schemas import DATA_KEYWORDS, SCHEMA_MAPS, children, closure, def_name, def_refs
from mcpgen.model.relax import ANNOTATIONS, DEEPER, LINK, TAG, floor, relax, shorten, size
from mcpgen.model.settings import read

Json = Any

DESCRIPTION_CHARS = 160  # a tool's description longer than this is cut
PROPERTY_DESCRIPTION_CHARS = 60  # the same for a parameter's
NESTED_DESCRIPTION_CHARS = 60  # ... and for a field of a parameter (0: left out) ...
NESTED_DESCRIPTION_BUDGET = 600  # ... while they hold this many characters, shallowest first
OUTPUT_BUDGET = 400  # bytes of an advertised output schema
OUTPUT_DESCRIPTION_CHARS = 60  # an output schema's top two levels' descriptions

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


INTERACTING = frozenset(
    {
        "properties", "patternProperties", "additionalProperties", "unevaluatedProperties",
        "unevaluatedItems", "items", "prefixItems", "contains", "minContains", "maxContains",
        "if", "then", "else", "$ref", "$dynamicRef", "$defs", "$id", "$anchor", "$dynamicAnchor",
    }
)  # fmt: skip


def flatten(node: dict[str, Json]) -> dict[str, Json]:
    """``allOf`` members merged into ``node`` where that is equivalent: a member that shares
    no keyword with it and neither holds a keyword that reads its neighbours."""
    members = node.get("allOf")
    if not isinstance(members, list) or not members:
        return node
    out = {k: v for k, v in node.items() if k != "allOf"}
    left: list[Json] = []
    for member in members:
        if (
            isinstance(member, dict)
            and not set(member) & set(out)
            and not (set(member) | set(out)) & INTERACTING
        ):
            out.update(member)
        elif member is not True and member != {}:
            left.append(member)
    if left:
        out["allOf"] = left
    return out


def _merge(body: Json, siblings: dict[str, Json]) -> Json:
    """A reference's target in its place (``{"$ref": ..., **siblings}``), equivalently."""
    if not siblings:
        return body
    if isinstance(body, dict) and set(siblings) <= ANNOTATIONS:
        return {**body, **siblings}
    return {"allOf": [body], **siblings}


def share(schema: Json) -> Json:
    """``schema`` with each ``$defs`` entry inlined where that is smaller (used once, or
    small), kept and referenced where it is shared or recursive; unused ones left out."""
    if not isinstance(schema, dict) or not isinstance(schema.get("$defs"), dict):
        return schema
    defs: dict[str, Json] = schema["$defs"]
    root = {k: v for k, v in schema.items() if k != "$defs"}
    uses = {name: def_refs(body) for name, body in defs.items()}
    kept = {name for name in defs if name in closure(uses[name], uses)}  # recursive ones
    bodies = {name: size(body) for name, body in defs.items()}
    while True:
        counts = _effective(root, defs, uses, kept)
        more = {
            name
            for name, count in counts.items()
            if name not in kept and name in defs and count > 1 and _worth(name, count, bodies)
        }
        if not more:
            break
        kept |= more
    memo: dict[str, Json] = {}

    def visit(node: Json, names: bool = False) -> Json:
        """``names``: ``node`` maps names (of properties, definitions) to schemas."""
        if isinstance(node, list):
            return [visit(item) for item in node]
        if not isinstance(node, dict):
            return node
        if names:  # a property called "default" is a schema like any other
            return {k: visit(v) for k, v in node.items()}
        out = {k: v if k in DATA_KEYWORDS else visit(v, k in SCHEMA_MAPS) for k, v in node.items()}
        name = def_name(node.get("$ref"))
        if name is None or name not in defs or name in kept:
            return out
        if name not in memo:
            memo[name] = visit(defs[name])
        return _merge(memo[name], {k: v for k, v in out.items() if k != "$ref"})  # inlined

    out = visit(root)
    shared = {name: visit(defs[name]) for name in defs if name in kept and counts[name] > 0}
    if shared:
        out["$defs"] = shared
    return out


def _worth(name: str, count: int, bodies: dict[str, int]) -> bool:
    ref = len(schemas.DEFS_PREFIX) + len(name) + 12  # {"$ref":"#/$defs/Name"}
    return bodies[name] + len(name) + 3 + count * ref < count * bodies[name]


def _effective(
    root: Json, defs: dict[str, Json], uses: dict[str, Counter[str]], kept: set[str]
) -> Counter[str]:
    """How often each definition would appear with every definition not in ``kept`` inlined."""
    memo: dict[str, Counter[str]] = {}

    def inlined(direct: Counter[str], stack: tuple[str, ...] = ()) -> Counter[str]:
        """The references ``direct`` makes, with what the inlined copy of each definition
        not kept (nor on ``stack``) holds."""
        found = Counter(direct)
        for name, times in direct.items():
            if name in defs and name not in kept and name not in stack:
                if name not in memo:  # what an inlined copy of ``name`` holds
                    memo[name] = inlined(uses[name], (*stack, name))
                for deeper, more in memo[name].items():
                    found[deeper] += times * more
        return found

    counts = inlined(def_refs(root))
    pending = [n for n in counts if n in kept]
    done: set[str] = set()
    while pending:  # a kept definition's body appears once, wherever it is used from
        name = pending.pop()
        if name in done:
            continue
        done.add(name)
        for other, times in inlined(uses[name]).items():
            counts[other] += times
            if other in kept and other not in done:
                pending.append(other)
    return counts


def tidy(schema: Json) -> Json:
    """``schema`` with the ``allOf`` members that inlining left merged (:func:`flatten`)."""
    if not isinstance(schema, dict):
        return schema
    return flatten(children(schema, lambda sub, _: tidy(sub)))
