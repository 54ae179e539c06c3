"""Equivalent rewrites of a JSON Schema's ``$defs``: a definition inlined where that is
smaller (used once, or small), kept and referenced where it is shared or recursive; and
``allOf`` members merged into their schema where nothing can tell the difference."""

from __future__ import annotations

from collections import Counter
from typing import Any

from mcpgen.check.schemas import (
    DATA_KEYWORDS,
    DEFS_PREFIX,
    SCHEMA_MAPS,
    children,
    closure,
    def_name,
    def_refs,
)
from mcpgen.model.relax import ANNOTATIONS, size

Json = Any

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
    ref = len(DEFS_PREFIX) + len(name) + 12  # {"$ref":"#/$defs/Name"}
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
