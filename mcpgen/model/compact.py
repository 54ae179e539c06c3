"""Tool definitions that cost less context, while validation keeps the full schemas.

What tools/list advertises for an imported operation is made here from the full, bundled
schemas the model holds (``Tool.input_schema``/``output_schema``); the server still
validates arguments and results against the full ones (``_spec.json`` keeps both).

* Input schemas stay **equivalent** (they accept exactly the same arguments): annotations
  that no validator reads are left out (``title``, ``examples``, ``x-`` keys, ...), long
  descriptions are cut at a word boundary and lose their Markdown link targets, and a
  definition of ``$defs`` is inlined where it is used once (or where inlining is smaller),
  kept and referenced where it is shared (:func:`share`).
* Output schemas become a **relaxation** within a per-tool byte budget: every result the
  full schema accepts, the advertised one accepts too (so a client that validates against
  it never rejects a valid result). When the equivalent form is over the budget, nesting
  deeper than a few levels becomes the bare type of the value (``{"type": "object"}``),
  descriptions go, and at worst only the top-level fields' types stay (:func:`relax`).
* Annotations equal to MCP's defaults are left out (``openWorldHint: true``, ...).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from mcpgen.check.schemas import DEFS_PREFIX

Json = Any

DESCRIPTION_CHARS = 160  # a tool's description longer than this is cut
PROPERTY_DESCRIPTION_CHARS = 60  # the same for a parameter's
NESTED_DESCRIPTION_CHARS = 0  # ... and for a field of a parameter (0: left out)
OUTPUT_BUDGET = 100  # bytes of an advertised output schema
OUTPUT_DESCRIPTION_CHARS = 60

# Keywords no validator reads that a model does not need either.
DROPPED = frozenset(
    {
        "title",
        "examples",
        "example",
        "$comment",
        "readOnly",
        "writeOnly",
        "deprecated",
        "externalDocs",
        "xml",
        "discriminator",
        "$schema",
    }
)
ANNOTATIONS = frozenset({"description", "title", "default", "examples", "deprecated"})
SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
SCHEMA_VALUES = (
    "not",
    "if",
    "then",
    "else",
    "items",
    "additionalItems",
    "contains",
    "additionalProperties",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
)
# MCP's defaults for tool annotations: a hint equal to its default says nothing.
HINT_DEFAULTS = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}

_LINK = re.compile(r"\[([^\]]*)\]\([^)\s]*\)")
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>]*)?/?>")  # HTML in API descriptions
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
FILLER = frozenset(
    ["a", "an", "the", "of", "for", "to", "this", "that", "is", "it", "its", "in", "on", "by", "be"]
)
# OpenAPI's numeric formats: the type says as much, and no validator reads them.
NUMERIC_FORMATS = frozenset({"int32", "int64", "float", "double"})


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)} - FILLER


def restates(text: str, name: str) -> bool:
    """The description only says the name again ("User Name" for ``UserName``)."""
    said = _words(text)
    return bool(said) and said <= _words(name)


def size(value: Json) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


# -- text --------------------------------------------------------------------------------


def shorten(text: str, limit: int) -> str:
    """``text`` with Markdown links reduced to their words, cut at a word boundary."""
    if limit <= 0:
        return ""
    text = " ".join(_TAG.sub(" ", _LINK.sub(r"\1", text)).split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    at = cut.rfind(" ")
    if at > limit // 2:
        cut = cut[:at]
    return cut.rstrip(" ,;:.") + "…"


def description(text: str | None, limit: int = DESCRIPTION_CHARS) -> str | None:
    """A tool's description: whole when short, else its first paragraphs within ``limit``."""
    if text is None:
        return None
    text = _TAG.sub("", _LINK.sub(r"\1", text)).strip()
    if len(text) <= limit:
        return text
    kept = ""
    for paragraph in text.split("\n\n"):
        joined = f"{kept}\n\n{paragraph}" if kept else paragraph
        if len(joined) > limit:
            break
        kept = joined
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


# -- walking schemas ---------------------------------------------------------------------


DEEPER = frozenset(("properties", "patternProperties", "additionalProperties", "$defs"))


def _children(node: dict[str, Json], fn: Any) -> dict[str, Json]:
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


def strip(
    schema: Json,
    chars: int = PROPERTY_DESCRIPTION_CHARS,
    deep_chars: int = NESTED_DESCRIPTION_CHARS,
) -> Json:
    """``schema`` without keywords no validator reads, descriptions shortened: to ``chars``
    for the schema and its properties, to ``deep_chars`` deeper (0: left out); equivalent."""

    def visit(node: Json, level: int) -> Json:
        if not isinstance(node, dict):
            return node
        kept = {k: v for k, v in node.items() if k not in DROPPED and not str(k).startswith("x-")}
        if isinstance(kept.get("description"), str):
            text = shorten(kept["description"], chars if level <= 1 else deep_chars)
            if text:
                kept["description"] = text
            else:
                del kept["description"]
        if kept.get("format") in NUMERIC_FORMATS:
            del kept["format"]
        out = _children(kept, lambda sub, key: visit(sub, level + (key in DEEPER)))
        out = _flatten(out)
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


# Keywords whose meaning depends on others beside them: never merged across schemas.
INTERACTING = frozenset(
    {
        "properties",
        "patternProperties",
        "additionalProperties",
        "unevaluatedProperties",
        "unevaluatedItems",
        "items",
        "prefixItems",
        "contains",
        "minContains",
        "maxContains",
        "if",
        "then",
        "else",
        "$ref",
        "$dynamicRef",
        "$defs",
        "$id",
        "$anchor",
        "$dynamicAnchor",
    }
)


def _flatten(node: dict[str, Json]) -> dict[str, Json]:
    """``allOf`` members merged into ``node`` where that is equivalent: a member that shares
    no keyword with it and neither holds a keyword that reads its neighbours
    (``{"allOf": [{"type": "string"}, {"description": "..."}]}`` is one schema)."""
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


def _def_name(ref: Json) -> str | None:
    if isinstance(ref, str) and ref.startswith(DEFS_PREFIX):
        name = ref[len(DEFS_PREFIX) :]
        if "/" not in name:
            return name.replace("~1", "/").replace("~0", "~")
    return None


def _refs(node: Json) -> Counter[str]:
    """The ``#/$defs/Name`` references in ``node`` (not inside a nested ``$defs``)."""
    found: Counter[str] = Counter()
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            name = _def_name(current.get("$ref"))
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


def _recursive(defs: dict[str, Json], uses: dict[str, Counter[str]]) -> set[str]:
    """The definitions that reach themselves through references."""
    found = set()
    for start in defs:
        stack, seen = list(uses[start]), set()
        while stack:
            name = stack.pop()
            if name == start:
                found.add(start)
                break
            if name in seen or name not in uses:
                continue
            seen.add(name)
            stack.extend(uses[name])
    return found


def _merge(body: Json, siblings: dict[str, Json]) -> Json:
    """A reference's target in its place (``{"$ref": ..., **siblings}``), equivalently."""
    if not siblings:
        return body
    if (
        isinstance(body, dict)
        and set(siblings) <= ANNOTATIONS
        and not set(siblings) & (set(body) - ANNOTATIONS)
    ):
        return {**body, **siblings}
    return {"allOf": [body], **siblings}


def share(schema: Json) -> Json:
    """``schema`` with each ``$defs`` entry inlined where that is smaller (used once, or
    small), kept and referenced where it is shared or recursive; unused ones left out."""
    if not isinstance(schema, dict) or not isinstance(schema.get("$defs"), dict):
        return schema
    defs: dict[str, Json] = schema["$defs"]
    root = {k: v for k, v in schema.items() if k != "$defs"}
    uses = {name: _refs(body) for name, body in defs.items()}
    kept = _recursive(defs, uses)
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

    def visit(node: Json) -> Json:
        if isinstance(node, list):
            return [visit(item) for item in node]
        if not isinstance(node, dict):
            return node
        name = _def_name(node.get("$ref"))
        if name is not None and name in defs and name not in kept:
            if name not in memo:
                memo[name] = visit(defs[name])
            siblings = {k: visit_child(k, v) for k, v in node.items() if k != "$ref"}
            return _merge(memo[name], siblings)
        return {k: visit_child(k, v) for k, v in node.items()}

    def visit_child(key: str, value: Json) -> Json:
        if key in ("const", "enum", "default", "examples"):
            return value
        return visit(value)

    out = visit(root)
    reached = _effective(root, defs, uses, kept)
    shared = {name: visit(defs[name]) for name in defs if name in kept and reached[name] > 0}
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
    counts: Counter[str] = Counter()
    memo: dict[str, Counter[str]] = {}

    def expanded(name: str, stack: tuple[str, ...]) -> Counter[str]:
        """The kept references an inlined copy of ``name`` contributes (itself not counted)."""
        if name in memo:
            return memo[name]
        found: Counter[str] = Counter()
        for other, times in uses.get(name, Counter()).items():
            found[other] += times
            if other in defs and other not in kept and other not in stack:
                for deeper, more in expanded(other, (*stack, other)).items():
                    found[deeper] += times * more
        memo[name] = found
        return found

    for name, times in _refs(root).items():
        counts[name] += times
        if name in defs and name not in kept:
            for deeper, more in expanded(name, (name,)).items():
                counts[deeper] += times * more
    pending = [n for n in counts if n in kept]
    done: set[str] = set()
    while pending:  # a kept definition's body appears once, wherever it is used from
        name = pending.pop()
        if name in done:
            continue
        done.add(name)
        inner = Counter(uses[name])
        for other, times in uses[name].items():
            if other in defs and other not in kept:
                for deeper, more in expanded(other, (other,)).items():
                    inner[deeper] += times * more
        for other, times in inner.items():
            counts[other] += times
            if other in kept and other not in done:
                pending.append(other)
    return counts


def tidy(schema: Json) -> Json:
    """``schema`` with the ``allOf`` members that inlining left merged (:func:`_flatten`)."""

    def visit(node: Json, key: str = "") -> Json:
        if not isinstance(node, dict):
            return node
        return _flatten(_children(node, visit))

    return visit(schema)


def compact_input(schema: Json, chars: int = PROPERTY_DESCRIPTION_CHARS) -> Json:
    """The advertised input schema: accepts exactly what ``schema`` accepts."""
    return tidy(share(strip(schema, chars)))


# -- output schemas ----------------------------------------------------------------------

KEPT_KEYWORDS = ("type", "const", "format")  # copied from a node the relaxation keeps
ENUM_BYTES = 120  # an enum (a constraint) kept when it is this small, else left out


def relax(
    schema: Json,
    depth: int,
    *,
    wrapped: bool = False,
    chars: int = 0,
    required_only: bool = False,
) -> Json:
    """A schema that accepts everything ``schema`` accepts: objects nested deeper than
    ``depth`` levels become their bare type, constraints beyond types, enums, ``required``
    and the properties' names are left out, ``oneOf`` becomes ``anyOf``; descriptions of the
    top two levels are kept within ``chars`` (0: none). ``wrapped``: the root is
    ``{"result": value}`` around a value that is not an object, and levels count from it."""
    defs = schema.get("$defs", {}) if isinstance(schema, dict) else {}
    if not isinstance(defs, dict):
        defs = {}

    def resolve(node: Json, seen: tuple[str, ...]) -> tuple[Json, tuple[str, ...]]:
        while isinstance(node, dict) and "$ref" in node:
            name = _def_name(node["$ref"])
            if name is None or name not in defs or name in seen:
                return True, seen  # unresolvable or a cycle: anything
            seen = (*seen, name)
            note = node.get("description")
            node = defs[name]
            if note is not None and isinstance(node, dict) and "description" not in node:
                node = {**node, "description": note}
        return node, seen

    def bare(node: Json, seen: tuple[str, ...]) -> Json:
        node, seen = resolve(node, seen)
        if not isinstance(node, dict):
            return {}
        if "type" in node:
            return {"type": node["type"]}
        for key in ("anyOf", "oneOf"):
            members = node.get(key)
            if isinstance(members, list) and members:
                kinds: list[str] = []
                for member in members:
                    kind = bare(member, seen).get("type")
                    if kind is None:
                        return {}
                    for k in kind if isinstance(kind, list) else [kind]:
                        if k not in kinds:
                            kinds.append(k)
                return {"type": kinds[0] if len(kinds) == 1 else kinds}
        for member in node.get("allOf") or ():
            found = bare(member, seen)
            if found:
                return found
        return {}

    def visit(node: Json, level: int, seen: tuple[str, ...]) -> Json:
        if level > depth:
            return bare(node, seen)
        node, seen = resolve(node, seen)
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
        if isinstance(properties, dict) and properties:
            only = required_only and level >= 0  # the wrapper's "result" stays
            names = [n for n in properties if not only or n in required]
            if level + 1 > depth:
                # the last level shown: only the properties' types
                out["properties"] = {n: bare(properties[n], ()) for n in names}
            else:
                out["properties"] = {n: visit(properties[n], level + 1, ()) for n in names}
            if not out["properties"]:
                del out["properties"]
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
            relaxed_members: list[Json] = []
            for member in members:
                relaxed = visit(member, level, seen)
                if relaxed not in relaxed_members:
                    relaxed_members.append(relaxed)
            if key == "allOf":
                relaxed_members = [m for m in relaxed_members if m not in ({}, True)]
                if relaxed_members:
                    out["allOf"] = relaxed_members
            elif all(m not in ({}, True) for m in relaxed_members):
                target = "anyOf" if "anyOf" not in out else "allOf"
                if target == "allOf":
                    out.setdefault("allOf", []).append({"anyOf": relaxed_members})
                else:
                    out["anyOf"] = relaxed_members
        return out

    return visit(schema, -1 if wrapped else 0, ())


def compact_output(schema: Json, budget: int = OUTPUT_BUDGET, wrapped: bool = False) -> Json:
    """The advertised output schema: the full one made equivalent-but-smaller when that fits
    ``budget`` bytes, else the first relaxation that fits (fewer levels, no descriptions; at
    depth 0 the types of the top-level fields, then only of the required ones); at worst the
    bare type of the value."""
    if not isinstance(schema, dict):
        return schema
    stripped = strip(schema, OUTPUT_DESCRIPTION_CHARS)
    if size(stripped) <= 8 * budget:  # else sharing cannot bring it under the budget
        equivalent = share(stripped)
        if size(equivalent) <= budget:
            return equivalent
    chars = OUTPUT_DESCRIPTION_CHARS
    for depth, shown, required_only in (
        (2, chars, False),
        (2, 0, False),
        (1, chars, False),
        (1, 0, False),
        (0, chars, False),
        (0, 0, False),
        (0, 0, True),
    ):
        relaxed = relax(stripped, depth, wrapped=wrapped, chars=shown, required_only=required_only)
        if size(relaxed) <= budget:
            return relaxed
    return relax(stripped, -1, wrapped=wrapped)


# -- a tool's advertised definition ------------------------------------------------------


@dataclass(frozen=True)
class CompactOptions:
    """``openapi.compact`` of the manifest: ``false`` advertises the full schemas."""

    enabled: bool = True
    description: int = DESCRIPTION_CHARS
    parameter_description: int = PROPERTY_DESCRIPTION_CHARS
    output_schema: int = OUTPUT_BUDGET  # bytes; 0: no output schema advertised

    @classmethod
    def from_manifest(cls, raw: Json) -> CompactOptions:
        if raw is False:
            return cls(enabled=False)
        if not isinstance(raw, dict):
            return cls()
        return cls(
            description=int(raw.get("description", DESCRIPTION_CHARS)),
            parameter_description=int(raw.get("parameterDescription", PROPERTY_DESCRIPTION_CHARS)),
            output_schema=int(raw.get("outputSchema", OUTPUT_BUDGET)),
        )


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
    """The parts of an imported tool's definition that tools/list shows instead of the full
    ones (a key whose value is None is left out of the definition)."""
    options = options or CompactOptions()
    given = (text or "").strip()
    if title and not given.startswith(title.rstrip(".")):
        given = f"{title.rstrip('.')}. {given}" if given else title  # one text says both
    shown = description(given, options.description) if given else None
    out: dict[str, Json] = {
        "title": None,
        "description": shown or None,
        "inputSchema": compact_input(input_schema, options.parameter_description),
        "annotations": tool_annotations(annotations),
    }
    if output_schema is not None:
        relaxed = (
            compact_output(output_schema, options.output_schema, wrapped)
            if options.output_schema > 0
            else None
        )
        out["outputSchema"] = None if relaxed in (None, {}, {"type": "object"}) else relaxed
    return out
