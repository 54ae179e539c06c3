"""The semantic diff of two surface locks: every change, and whether it breaks clients.

``diff(old, new)`` compares two locks (see :mod:`.lock`) and returns :class:`Change` items
sorted by level, item and path. The rules are listed with examples in ``docs/surface.md``.

Schemas are compared by what they accept. For an *input* schema the server validates
calls: anything that makes it accept less (narrowing) breaks callers, anything that makes
it accept more (widening) does not. For an *output* schema clients rely on what results
look like, so the direction flips, with two exceptions MCP clients live by: a new output
property and extra properties are compatible (clients ignore fields they do not know).
Where the direction cannot be told cheaply the change is reported as breaking ("assumed").
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

from .lock import compact, estimate_tokens, tools_list_size, wire

Json = Any

BREAKING, COMPATIBLE, DOCS = "breaking", "compatible", "docs"
LEVELS = (BREAKING, COMPATIBLE, DOCS)
RANK = {level: rank for rank, level in enumerate(LEVELS)}


@dataclass(frozen=True)
class Change:
    level: str  # breaking | compatible | docs
    item: str  # tool:create_note, resource:<uri>, server, capability:tools, ...
    path: str  # JSON pointer inside the item ("" for the item itself)
    change: str  # short text
    why: str

    def to_data(self) -> dict[str, str]:
        return {
            "level": self.level,
            "item": self.item,
            "path": self.path,
            "change": self.change,
            "why": self.why,
        }

    def sort_key(self) -> tuple[int, str, str, str]:
        return (RANK[self.level], self.item, self.path, self.change)


def escape(token: str) -> str:
    """One JSON pointer token."""
    return token.replace("~", "~0").replace("/", "~1")


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _canon(value: Json) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _show(value: Json, limit: int = 60) -> str:
    text = value if isinstance(value, str) else _canon(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _values(values: Iterable[str], limit: int = 5) -> str:
    items = sorted(values)
    shown = ", ".join(items[:limit])
    return shown + (f" (+{len(items) - limit} more)" if len(items) > limit else "")


def _same_text(a: Json, b: Json) -> bool:
    """Equal, or equal strings up to whitespace (re-wrapped prose is not a change)."""
    if isinstance(a, str) and isinstance(b, str):
        return a.split() == b.split()
    return bool(a == b) and type(a) is type(b)


class _Out:
    def __init__(self) -> None:
        self.changes: dict[tuple[str, str, str, str], Change] = {}

    def add(self, level: str, item: str, path: str, change: str, why: str) -> None:
        key = (level, item, path, change)
        if key not in self.changes:
            self.changes[key] = Change(level, item, path, change, why)

    def sorted(self) -> list[Change]:
        return sorted(self.changes.values(), key=Change.sort_key)


# Why a change is classified as it is: the reasons the rules give
WHY_ADDITION = "an addition: nothing clients use is gone"
WHY_ARGUMENT_GONE = "prompts/get refuses arguments the prompt does not declare"
WHY_CAPABILITY_FLAG = "clients that rely on it (notifications, subscriptions) stop hearing changes"
WHY_CLOSED_REMOVED = "extra properties are refused, so calls that send it fail"
WHY_CONTENT_HINT = "a hint about the content"
WHY_DEFAULT = "calls that leave this value out now get a different default"
WHY_DESTRUCTIVE = "clients that allowed it as non-destructive may now lose data unasked"
WHY_DOCS = "shown to people and models; no call changes"
WHY_HIDDEN = "clients no longer see it in the list"
WHY_HINT = "a hint, not a contract"
WHY_INPUT_NARROWED = "the input now accepts less: calls that were valid may be refused"
WHY_INPUT_WIDENED = "the input now accepts more: every call that was valid still is"
WHY_MAYBE_ABSENT = "results may leave it out: clients that read it may break"
WHY_META = "_meta is read only by clients that know its keys; check those that do"
WHY_MIME_TYPE = "clients that parse the content by its type may fail"
WHY_NEW_ITEM = "a new item: nothing clients use is gone"
WHY_NOT_IDEMPOTENT = "clients that retry it after a failure may now repeat its effect"
WHY_NOT_READ_ONLY = "clients that run read-only tools without asking may now change data unasked"
WHY_NOT_REQUIRED = "calls that send it still work"
WHY_NOT_VALIDATION = "not a JSON Schema validation keyword: validation is unchanged"
WHY_NOW_EXTRA = "calls that send it are checked against additionalProperties"
WHY_NOW_OPERATION = "tools/list does not show it; it is reachable only through the meta tools"
WHY_NOW_PRESENT = "results still have everything clients read"
WHY_NO_RULE = "a field mcpgen has no rule for; review it"
WHY_OPEN_WORLD = (
    "the tool now reaches outside systems; clients that allowed it as closed may not want that"
)
WHY_OPTIONAL = "calls that leave it out still work"
WHY_OUTPUT_GONE = "clients that read it no longer get it"
WHY_OUTPUT_NARROWED = "the output now allows less: every result still matches what clients expected"
WHY_OUTPUT_SCHEMA_ADDED = "results now also carry described structured content"
WHY_OUTPUT_SCHEMA_GONE = "results no longer promise structured content that clients may read"
WHY_OUTPUT_WIDENED = "the output now allows more: clients may get results the old schema ruled out"
WHY_READ_ONLY = "the tool now promises to change nothing"
WHY_REQUIRED = "calls that leave it out are refused"
WHY_RESOURCE_NAME = "resources are read by URI; the name only labels it"
WHY_SAFER = "a safer promise"
WHY_SCOPE_ADDED = "callers whose tokens lack the new scope are refused"
WHY_SCOPE_REMOVED = "every caller allowed before still is"
WHY_SERVER_NAME = "clients address a server by their own configuration, not by serverInfo.name"
WHY_TYPE_CHANGED = "values of the old type are refused (input) or no longer produced (output)"
WHY_UNKNOWN = "mcpgen cannot tell whether this accepts more or less, so it assumes the worst"
WHY_UNKNOWN_FIELDS = "clients ignore output properties they do not know"

# ---------------------------------------------------------------------------- schemas


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


DOC_KEYWORDS = _words(
    "title description examples example $comment deprecated readOnly writeOnly "
    "externalDocs xml discriminator $id $schema $anchor"
)
DEFINITIONS = frozenset({"$defs", "definitions"})  # reached through $ref only
# keywords compared by a rule below
HANDLED = _words(
    "type nullable enum const minimum maximum exclusiveMinimum exclusiveMaximum minLength "
    "maxLength minItems maxItems minProperties maxProperties multipleOf pattern format "
    "uniqueItems properties required additionalProperties items prefixItems "
    "additionalItems $ref allOf anyOf oneOf default"
)
# validation keywords whose change is not analysed: reported as "changed, assumed breaking"
OPAQUE = _words(
    "not if then else dependentRequired dependentSchemas dependencies patternProperties "
    "propertyNames contains minContains maxContains unevaluatedProperties "
    "unevaluatedItems $dynamicRef $recursiveRef contentMediaType contentEncoding "
    "contentSchema"
)
LOWER_COUNTS = ("minLength", "minItems", "minProperties")
UPPER_COUNTS = ("maxLength", "maxItems", "maxProperties")
# format pairs where the second accepts everything the first does
WIDER_FORMATS = frozenset({("int32", "int64"), ("float", "double")})
# keywords that only constrain values of one JSON type (for splitting `type: [a, b]`)
TYPE_KEYWORDS = {
    "string": frozenset({"minLength", "maxLength", "pattern", "format"}),
    "number": frozenset(
        {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "format"}
    ),
    "array": frozenset({"items", "prefixItems", "minItems", "maxItems", "uniqueItems"}),
    "object": frozenset(
        {"properties", "required", "additionalProperties", "minProperties", "maxProperties"}
    ),
}
TYPE_KEYWORDS["integer"] = TYPE_KEYWORDS["number"]
ALL_TYPE_KEYWORDS = frozenset().union(*TYPE_KEYWORDS.values())
MAX_DEPTH = 200

FALSE_SCHEMA: dict[str, Json] = {"not": {}}


def _schema(value: Json) -> Json:
    """Boolean schemas as objects: ``true`` accepts anything, ``false`` nothing."""
    if value is True:
        return {}
    if value is False:
        return FALSE_SCHEMA
    return value


def _is_false(node: Json) -> bool:
    return isinstance(node, dict) and node.get("not") == {} and len(node) == 1


def _types(node: Mapping[str, Json]) -> frozenset[str] | None:
    raw = node.get("type")
    if raw is None:
        return None
    if isinstance(raw, str):
        types = frozenset([raw])
    elif isinstance(raw, list):
        types = frozenset(t for t in raw if isinstance(t, str))
    else:
        return frozenset(["?" + _canon(raw)])  # not a JSON Schema type: only equal to itself
    if node.get("nullable") is True:
        types |= {"null"}
    return types


def _covers(types: frozenset[str], t: str) -> bool:
    return t in types or (t == "integer" and "number" in types)


def _within(a: frozenset[str], b: frozenset[str]) -> bool:
    """Every value of a type in ``a`` has a type in ``b``."""
    return all(_covers(b, t) for t in a)


def _enum(node: Mapping[str, Json]) -> tuple[str, frozenset[str]] | None:
    if "const" in node:
        return "const", frozenset([_canon(node["const"])])
    if isinstance(node.get("enum"), list):
        return "enum", frozenset(_canon(v) for v in node["enum"])
    return None


def _number(value: Json) -> Fraction | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return Fraction(Decimal(repr(value))) if isinstance(value, float) else Fraction(value)
    except (InvalidOperation, ValueError, OverflowError):
        return None


def _bound(node: Mapping[str, Json], lower: bool) -> tuple[Fraction, bool, str] | None:
    """(value, exclusive, keyword) of the tightest lower (or upper) bound."""
    plain, exclusive = ("minimum", "exclusiveMinimum") if lower else ("maximum", "exclusiveMaximum")
    found: list[tuple[Fraction, bool, str]] = []
    value = _number(node.get(plain))
    flag = node.get(exclusive)
    if value is not None:
        found.append((value, flag is True, plain))  # draft 4: a boolean beside the bound
    other = _number(flag)
    if other is not None:
        found.append((other, True, exclusive))
    if not found:
        return None
    if lower:
        return max(found, key=lambda b: (b[0], b[1]))
    return min(found, key=lambda b: (b[0], not b[1]))


def _tighter(a: tuple[Fraction, bool, str], b: tuple[Fraction, bool, str], lower: bool) -> bool:
    """``a`` accepts strictly less than ``b``."""
    if a[0] != b[0]:
        return a[0] > b[0] if lower else a[0] < b[0]
    return a[1] and not b[1]


def _count(node: Mapping[str, Json], key: str) -> int | None:
    value = node.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    if key.startswith("min") and value == 0:
        return None  # minLength: 0 says nothing
    return value


def _validation_part(node: Mapping[str, Json]) -> dict[str, Json]:
    return {k: v for k, v in node.items() if k not in DOC_KEYWORDS and k != "default"}


def _alternatives(rest: dict[str, Json]) -> list[Json]:
    """A schema without anyOf/oneOf as a list of alternatives: itself, or one per type of a
    ``type`` list (with the keywords that apply to that type)."""
    types = rest.get("type")
    if isinstance(types, list) and len(types) > 1 and "nullable" not in rest:
        return [
            {
                **{
                    k: v
                    for k, v in rest.items()
                    if k != "type"
                    and (k not in ALL_TYPE_KEYWORDS or k in TYPE_KEYWORDS.get(t, frozenset()))
                },
                "type": t,
            }
            for t in types
        ]
    return [rest]


class SchemaDiff:
    """Compares two schemas of one item (both roots for local ``$ref``)."""

    def __init__(
        self, out: _Out, item: str, root_path: str, old: Json, new: Json, output: bool
    ) -> None:
        self.out = out
        self.item = item
        self.root_path = root_path
        self.old_root = old
        self.new_root = new
        self.output = output
        self.seen: set[tuple[Any, Any]] = set()  # definitions compared (reported once)
        self.active: set[tuple[Any, Any]] = set()  # pairs being compared, for recursion
        self.alive: list[Any] = []  # made-up nodes whose ids are in those keys
        self._refs: dict[int, frozenset[str]] = {}
        self._dirty: set[str] | None = None

    # -- equal text, different meaning: a local $ref whose target changed
    def _refs_in(self, node: Json) -> frozenset[str]:
        """The local references in ``node`` (cached by identity: nodes of the two roots)."""
        if not isinstance(node, dict | list):
            return frozenset()
        key = id(node)
        found = self._refs.get(key)
        if found is None:
            values = node.values() if isinstance(node, dict) else node
            found = frozenset().union(*(self._refs_in(v) for v in values))
            if isinstance(node, dict):
                ref = node.get("$ref")
                if isinstance(ref, str) and ref.startswith("#"):
                    found |= {ref}
            self._refs[key] = found
            self.alive.append(node)
        return found

    def _stale(self, node: Json) -> bool:
        """``node`` is the same text on both sides but refers to a definition that is not."""
        return any(self._changed(ref) for ref in self._refs_in(node))

    def _changed(self, ref: str) -> bool:
        if self._dirty is None:
            self._dirty = self._changed_refs()
        return ref in self._dirty

    def _changed_refs(self) -> set[str]:
        """Every local reference whose target differs, directly or through its own references."""
        targets: dict[str, tuple[Json, Json]] = {}
        todo = list(self._refs_in(self.old_root) | self._refs_in(self.new_root))
        while todo:
            ref = todo.pop()
            if ref in targets:
                continue
            pair = targets[ref] = (self._resolve(ref, True), self._resolve(ref, False))
            todo += [r for side in pair for r in self._refs_in(side) if r not in targets]
        dirty = {r for r, (a, b) in targets.items() if a != b}
        grew = True
        while grew:  # a definition that refers to a changed one has changed too
            grew = False
            for ref, (a, b) in targets.items():
                if ref not in dirty and (self._refs_in(a) | self._refs_in(b)) & dirty:
                    dirty.add(ref)
                    grew = True
        return dirty

    # -- emitting
    def narrowed(self, path: str, change: str) -> None:
        if self.output:
            self.say(COMPATIBLE, path, change, WHY_OUTPUT_NARROWED)
        else:
            self.say(BREAKING, path, change, WHY_INPUT_NARROWED)

    def widened(self, path: str, change: str) -> None:
        if self.output:
            self.say(BREAKING, path, change, WHY_OUTPUT_WIDENED)
        else:
            self.say(COMPATIBLE, path, change, WHY_INPUT_WIDENED)

    def unknown(self, path: str, change: str) -> None:
        self.say(BREAKING, path, change + " (changed, assumed breaking)", WHY_UNKNOWN)

    def say(self, level: str, path: str, change: str, why: str) -> None:
        self.out.add(level, self.item, path, change, why)

    def docs(self, path: str, change: str) -> None:
        self.out.add(DOCS, self.item, path, change, "documentation only: validation is unchanged")

    # -- $ref
    def _resolve(self, ref: Json, old: bool) -> Json | None:
        if not isinstance(ref, str) or not ref.startswith("#"):
            return None
        node: Json = self.old_root if old else self.new_root
        fragment = ref[1:]
        if not fragment:
            return node
        if not fragment.startswith("/"):
            return None
        from urllib.parse import unquote

        for token in fragment[1:].split("/"):
            token = _unescape(unquote(token))
            if isinstance(node, dict) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                return None
        return node

    def _deref(self, node: dict[str, Json], old: bool) -> Json:
        """``node`` with its local ``$ref`` replaced by the target (sibling keywords kept)."""
        target = self._resolve(node["$ref"], old)
        if target is None:
            return node
        target = _schema(target)
        if not isinstance(target, dict):
            return node
        merged = dict(target)
        merged.update({k: v for k, v in node.items() if k != "$ref"})
        return merged

    # -- the walk
    def compare(self, old: Json, new: Json, path: str, depth: int = 0) -> None:
        if old == new and type(old) is type(new) and not self._stale(old):
            return
        if depth > MAX_DEPTH:
            self.unknown(path, "schema nested too deeply to compare")
            return
        old, new = _schema(old), _schema(new)
        if not isinstance(old, dict) or not isinstance(new, dict):
            if old != new:
                self.unknown(path, "schema changed")
            return
        if _is_false(new) and not _is_false(old):
            self.narrowed(path, "no value is accepted any more (schema false)")
            return
        if _is_false(old) and not _is_false(new):
            self.widened(path, "values are accepted now (was schema false)")
            return
        old_ref, new_ref = _ref(old), _ref(new)
        if old_ref is not None or new_ref is not None:
            key = (
                old_ref if old_ref is not None else id(old),
                new_ref if new_ref is not None else id(new),
            )
            if old_ref == new_ref and isinstance(old_ref, str) and old_ref.startswith("#"):
                # the same definition: compare it once, where it is written
                if key not in self.seen:
                    self.seen.add(key)
                    target = self.root_path + old_ref[1:]
                    a, b = self._resolve(old_ref, True), self._resolve(new_ref, False)
                    if a is None or b is None:
                        if (a is None) != (b is None):
                            self.unknown(
                                path + "/$ref",
                                f"$ref {_show(old_ref)} no longer resolves the same way",
                            )
                    else:
                        self.compare(a, b, target, depth + 1)
                rest_old = {k: v for k, v in old.items() if k != "$ref"}
                rest_new = {k: v for k, v in new.items() if k != "$ref"}
                self._keywords(rest_old, rest_new, path, depth)
                return
            if key in self.active:  # a recursive schema met again inside itself
                return
            self.active.add(key)
            try:
                a = self._deref(old, True) if old_ref is not None else old
                b = self._deref(new, False) if new_ref is not None else new
                if (a is old and old_ref is not None) or (b is new and new_ref is not None):
                    # a reference that does not resolve here (remote, or broken)
                    if old_ref != new_ref:
                        self.unknown(
                            path + "/$ref",
                            f"$ref changed from {_show(old_ref)} to {_show(new_ref)}",
                        )
                    a = {k: v for k, v in a.items() if k != "$ref"}
                    b = {k: v for k, v in b.items() if k != "$ref"}
                self.alive += [a, b]
                self.compare(a, b, path, depth + 1)
            finally:
                self.active.discard(key)
            return
        old_all, new_all = old.get("allOf"), new.get("allOf")
        if (old_all is None) != (new_all is None) or (
            isinstance(old_all, list) and isinstance(new_all, list) and len(old_all) != len(new_all)
        ):  # composed on one side only: compare what the parts add up to
            old, new = self._flatten(old, True, depth), self._flatten(new, False, depth)
            self.alive += [old, new]
        self._keywords(old, new, path, depth)

    def _flatten(self, node: dict[str, Json], old: bool, depth: int) -> dict[str, Json]:
        """``{allOf: [A, B]}`` as one schema with the keywords of A and B, when that is the
        same thing (no keyword in two parts with different values, no additionalProperties
        that would see other parts' properties); else ``node`` itself."""
        parts = node.get("allOf")
        if not isinstance(parts, list) or depth > MAX_DEPTH:
            return node
        merged: dict[str, Json] = {}
        objects = 0
        pieces: list[dict[str, Json]] = [{k: v for k, v in node.items() if k != "allOf"}]
        for part in parts:
            part = _schema(part)
            for _ in range(16):  # follow a chain of references
                if not isinstance(part, dict) or "$ref" not in part:
                    break
                target = self._deref(part, old)
                if target is part:
                    return node
                part = target
            if not isinstance(part, dict) or "$ref" in part:
                return node
            pieces.append(self._flatten(part, old, depth + 1))
        for piece in pieces:
            if {"unevaluatedProperties", "unevaluatedItems"} & set(piece):
                return node
            if {"properties", "patternProperties", "additionalProperties"} & set(piece):
                objects += 1
        closed = any(_extra(p.get("additionalProperties")) != {} for p in pieces)
        if closed and objects > 1:
            return node
        for piece in pieces:
            if not _merge_into(merged, piece):
                return node
        return merged

    def _keywords(self, old: dict[str, Json], new: dict[str, Json], path: str, depth: int) -> None:
        old, new = _collapse_enums(old), _collapse_enums(new)
        old, new = self._lift_alternatives(old, new)
        self._type(old, new, path)
        self._enum(old, new, path)
        self._bounds(old, new, path)
        self._strings(old, new, path)
        self._object(old, new, path, depth)
        self._array(old, new, path, depth)
        for keyword in ("allOf", "anyOf", "oneOf"):
            self._applicator(keyword, old, new, path, depth)
        for key in sorted(set(old) | set(new)):
            if key in HANDLED or key in DEFINITIONS:
                continue
            a, b = old.get(key), new.get(key)
            if _same_text(a, b):
                continue
            where = f"{path}/{escape(key)}"
            if key in DOC_KEYWORDS or key.startswith("x-"):
                self.docs(where, _presence(key, a, b))
            elif key in OPAQUE:
                self.unknown(where, _presence(key, a, b))
            else:
                self.say(COMPATIBLE, where, _presence(key, a, b), WHY_NOT_VALIDATION)
        if "default" in old or "default" in new:
            a, b = old.get("default"), new.get("default")
            if not (a == b and type(a) is type(b)):
                where = f"{path}/default"
                if self.output:
                    self.docs(where, _presence("default", a, b))
                else:
                    self.say(COMPATIBLE, where, _presence("default", a, b), WHY_DEFAULT)

    def _lift_alternatives(
        self, old: dict[str, Json], new: dict[str, Json]
    ) -> tuple[dict[str, Json], dict[str, Json]]:
        """``X`` against ``{anyOf: [X, Y]}``: compare X as the one alternative it is."""
        for keyword in ("anyOf", "oneOf"):
            for a, b, flip in ((old, new, False), (new, old, True)):
                if keyword in b and not {"anyOf", "oneOf", "allOf", "$ref"} & set(a):
                    rest_b = _validation_part(b)
                    rest_a = _validation_part(a)
                    if set(rest_b) == {keyword} and rest_a:
                        lifted = {k: v for k, v in a.items() if k not in rest_a}
                        lifted[keyword] = _alternatives(rest_a)
                        return (b, lifted) if flip else (lifted, b)
        return old, new

    def _type(self, old: dict[str, Json], new: dict[str, Json], path: str) -> None:
        a, b = _types(old), _types(new)
        if a == b:
            return
        where = f"{path}/type"
        if a is None and b is not None:
            self.narrowed(where, f"type restricted to {_values(b)}")
        elif b is None and a is not None:
            self.widened(where, f"type no longer restricted (was {_values(a)})")
        elif a is not None and b is not None:
            if _within(a, b) and _within(b, a):
                return  # e.g. [integer, number] vs number
            if _within(b, a):
                gone = {t for t in a if not _covers(b, t)} or a - b
                self.narrowed(
                    where,
                    f"type narrowed from {_values(a)} to {_values(b)} ({_values(gone)} removed)",
                )
            elif _within(a, b):
                self.widened(where, f"type widened from {_values(a)} to {_values(b)}")
            else:
                self.say(
                    BREAKING,
                    where,
                    f"type changed from {_values(a)} to {_values(b)}",
                    WHY_TYPE_CHANGED,
                )

    def _enum(self, old: dict[str, Json], new: dict[str, Json], path: str) -> None:
        a, b = _enum(old), _enum(new)
        if a is None and b is None:
            return
        if a is not None and b is not None and a[1] == b[1]:
            return
        if b is not None and a is None:
            self.narrowed(f"{path}/{b[0]}", f"{b[0]} added: only {_values(b[1])}")
        elif a is not None and b is None:
            self.widened(f"{path}/{a[0]}", f"{a[0]} removed (was {_values(a[1])})")
        elif a is not None and b is not None:
            removed, added = a[1] - b[1], b[1] - a[1]
            where = f"{path}/{b[0]}"
            if removed:
                self.narrowed(where, f"enum value(s) removed: {_values(removed)}")
            if added:
                self.widened(where, f"enum value(s) added: {_values(added)}")

    def _bounds(self, old: dict[str, Json], new: dict[str, Json], path: str) -> None:
        for lower in (True, False):
            a, b = _bound(old, lower), _bound(new, lower)
            if a is None and b is None:
                continue
            if a is not None and b is not None and a[:2] == b[:2]:
                continue
            name = "minimum" if lower else "maximum"
            if a is None and b is not None:
                self.narrowed(f"{path}/{b[2]}", f"{b[2]} {_num(b[0])} added")
            elif b is None and a is not None:
                self.widened(f"{path}/{a[2]}", f"{a[2]} {_num(a[0])} removed")
            elif a is not None and b is not None:
                text = f"{name} {_bound_text(a)} -> {_bound_text(b)}"
                if _tighter(b, a, lower):
                    self.narrowed(f"{path}/{b[2]}", f"{text} (tightened)")
                else:
                    self.widened(f"{path}/{b[2]}", f"{text} (loosened)")
        for key in LOWER_COUNTS + UPPER_COUNTS:
            a_n, b_n = _count(old, key), _count(new, key)
            if a_n == b_n:
                continue
            where = f"{path}/{key}"
            lower = key in LOWER_COUNTS
            if a_n is None:
                self.narrowed(where, f"{key} {b_n} added")
            elif b_n is None:
                self.widened(where, f"{key} {a_n} removed")
            elif (b_n > a_n) == lower:
                self.narrowed(where, f"{key} {a_n} -> {b_n} (tightened)")
            else:
                self.widened(where, f"{key} {a_n} -> {b_n} (loosened)")
        a_m, b_m = _number(old.get("multipleOf")), _number(new.get("multipleOf"))
        if a_m != b_m:
            where = f"{path}/multipleOf"
            if a_m is None:
                self.narrowed(where, f"multipleOf {_num(b_m)} added")
            elif b_m is None:
                self.widened(where, f"multipleOf {_num(a_m)} removed")
            elif b_m != 0 and a_m != 0 and (b_m / a_m).denominator == 1:
                self.narrowed(where, f"multipleOf {_num(a_m)} -> {_num(b_m)} (tightened)")
            elif b_m != 0 and a_m != 0 and (a_m / b_m).denominator == 1:
                self.widened(where, f"multipleOf {_num(a_m)} -> {_num(b_m)} (loosened)")
            else:
                self.unknown(where, f"multipleOf {_num(a_m)} -> {_num(b_m)}")

    def _strings(self, old: dict[str, Json], new: dict[str, Json], path: str) -> None:
        for key in ("pattern", "format"):
            a, b = old.get(key), new.get(key)
            if a == b:
                continue
            where = f"{path}/{key}"
            if a is None:
                self.narrowed(where, f"{key} {_show(b)} added")
            elif b is None:
                self.widened(where, f"{key} {_show(a)} removed")
            elif key == "format" and _text_pair(a, b) in WIDER_FORMATS:
                self.widened(where, f"format {a} -> {b}")
            elif key == "format" and _text_pair(b, a) in WIDER_FORMATS:
                self.narrowed(where, f"format {a} -> {b}")
            else:
                self.out.add(
                    BREAKING,
                    self.item,
                    where,
                    f"{key} changed from {_show(a)} to {_show(b)}",
                    "values that matched the old one may not match the new one"
                    + ("" if self.output else ": calls may be refused"),
                )
        a_u, b_u = old.get("uniqueItems") is True, new.get("uniqueItems") is True
        if a_u != b_u:
            where = f"{path}/uniqueItems"
            if b_u:
                self.narrowed(where, "items must now be unique")
            else:
                self.widened(where, "items no longer need to be unique")

    def _object(self, old: dict[str, Json], new: dict[str, Json], path: str, depth: int) -> None:
        keys = ("properties", "required", "additionalProperties")
        if not any(k in old or k in new for k in keys):
            return
        old_props: dict[str, Json] = _dict(old, "properties")
        new_props: dict[str, Json] = _dict(new, "properties")
        old_req, new_req = _string_set(old.get("required")), _string_set(new.get("required"))
        old_extra = _extra(old.get("additionalProperties"))
        new_extra = _extra(new.get("additionalProperties"))
        for name in sorted(set(old_props) | set(new_props) | old_req | new_req):
            where = f"{path}/properties/{escape(name)}"
            in_old, in_new = name in old_props, name in new_props
            if in_old and in_new:
                self.compare(old_props[name], new_props[name], where, depth + 1)
                self._required(name, name in old_req, name in new_req, where)
            elif in_old:
                self._property_removed(name, old_props[name], new_extra, where, depth)
            elif not in_new:  # required without a schema of its own
                self._required(name, name in old_req, name in new_req, where)
            elif self.output:
                self.say(COMPATIBLE, where, f"new property {name}", WHY_UNKNOWN_FIELDS)
            elif name in new_req:
                self.say(BREAKING, where, f"new required property {name}", WHY_REQUIRED)
            else:
                self.say(COMPATIBLE, where, f"new optional property {name}", WHY_OPTIONAL)
        self._additional(old_extra, new_extra, f"{path}/additionalProperties", depth)

    def _required(self, name: str, was: bool, now: bool, where: str) -> None:
        if was == now:
            return
        if now and not self.output:
            self.say(BREAKING, where, f"{name} became required", WHY_REQUIRED)
        elif now:
            self.say(COMPATIBLE, where, f"{name} is now always present", WHY_NOW_PRESENT)
        elif self.output:
            self.say(BREAKING, where, f"{name} no longer required", WHY_MAYBE_ABSENT)
        else:
            self.say(COMPATIBLE, where, f"{name} no longer required", WHY_NOT_REQUIRED)

    def _property_removed(
        self, name: str, schema: Json, extra: Json, where: str, depth: int
    ) -> None:
        if self.output:
            self.say(BREAKING, where, f"property {name} removed", WHY_OUTPUT_GONE)
        elif _is_false(extra):
            self.say(BREAKING, where, f"property {name} removed", WHY_CLOSED_REMOVED)
        elif extra == {}:
            self.out.add(
                COMPATIBLE,
                self.item,
                where,
                f"property {name} removed",
                "extra properties are allowed, so calls that send it are still accepted "
                "(the server no longer declares it)",
            )
        else:  # its values now have to match additionalProperties
            self.compare(schema, extra, where, depth + 1)
            self.say(
                COMPATIBLE,
                where,
                f"property {name} removed (now an extra property)",
                WHY_NOW_EXTRA,
            )

    def _additional(self, old: Json, new: Json, where: str, depth: int) -> None:
        if old == new:
            self.compare(old, new, where, depth + 1)
            return
        closed_old, closed_new = _is_false(old), _is_false(new)
        if self.output and (old == {} or new == {} or closed_old or closed_new):
            text = "extra properties " + (
                "allowed" if new == {} else "refused" if closed_new else "constrained"
            )
            self.say(COMPATIBLE, where, text, WHY_UNKNOWN_FIELDS)
        elif closed_new:
            self.narrowed(where, "additionalProperties closed (extra properties refused)")
        elif closed_old:
            self.widened(where, "additionalProperties opened (extra properties allowed)")
        elif old == {}:
            self.narrowed(where, "extra properties must now match a schema")
        elif new == {}:
            self.widened(where, "extra properties no longer need to match a schema")
        else:
            self.compare(old, new, where, depth + 1)

    def _array(self, old: dict[str, Json], new: dict[str, Json], path: str, depth: int) -> None:
        keys = ("items", "prefixItems", "additionalItems")
        if not any(k in old or k in new for k in keys):
            return
        old_prefix, old_rest = _tuple(old)
        new_prefix, new_rest = _tuple(new)
        for index in range(max(len(old_prefix), len(new_prefix))):
            where = f"{path}/prefixItems/{index}"
            if index < len(old_prefix) and index < len(new_prefix):
                self.compare(old_prefix[index], new_prefix[index], where, depth + 1)
            elif index < len(new_prefix):
                self.compare(old_rest, new_prefix[index], where, depth + 1)
            else:
                self.compare(old_prefix[index], new_rest, where, depth + 1)
        self.compare(old_rest, new_rest, f"{path}/items", depth + 1)

    def _applicator(
        self, keyword: str, old: dict[str, Json], new: dict[str, Json], path: str, depth: int
    ) -> None:
        a, b = old.get(keyword), new.get(keyword)
        if a == b and not self._stale(a):
            return
        where = f"{path}/{keyword}"
        if (a is not None and not isinstance(a, list)) or (
            b is not None and not isinstance(b, list)
        ):
            self.unknown(where, f"{keyword} changed")
            return
        old_list, new_list = list(a or []), list(b or [])
        unmatched_new = list(range(len(new_list)))
        unmatched_old: list[int] = []
        for i, alt in enumerate(old_list):
            for j in unmatched_new:
                if alt == new_list[j]:
                    unmatched_new.remove(j)
                    self.compare(alt, new_list[j], f"{where}/{j}", depth + 1)
                    break
            else:
                unmatched_old.append(i)
        # pair what is left: one each, or by the same type where that is unique
        pairs: list[tuple[int, int]] = []
        if len(unmatched_old) == 1 and len(unmatched_new) == 1:
            pairs = [(unmatched_old[0], unmatched_new[0])]
        else:
            by_type_old = _by_type(old_list, unmatched_old)
            by_type_new = _by_type(new_list, unmatched_new)
            for t, olds in by_type_old.items():
                news = by_type_new.get(t, [])
                if len(olds) == 1 and len(news) == 1:
                    pairs.append((olds[0], news[0]))
        for i, j in pairs:
            unmatched_old.remove(i)
            unmatched_new.remove(j)
            self.compare(old_list[i], new_list[j], f"{where}/{j}", depth + 1)
        if not unmatched_old and not unmatched_new:
            return
        # for allOf every element is one more constraint; for anyOf/oneOf one more choice
        more_choice = keyword != "allOf"
        if a is None or b is None:
            text = f"{keyword} {'added' if a is None else 'removed'}"
            (self.narrowed if a is None else self.widened)(where, text)
        elif unmatched_new and not unmatched_old:
            text = f"{keyword}: {len(unmatched_new)} alternative(s) added"
            (self.widened if more_choice else self.narrowed)(where, text)
        elif unmatched_old and not unmatched_new:
            text = f"{keyword}: {len(unmatched_old)} alternative(s) removed"
            (self.narrowed if more_choice else self.widened)(where, text)
        else:
            self.unknown(
                where,
                f"{keyword}: {len(unmatched_old)} alternative(s) replaced by {len(unmatched_new)}",
            )


def _by_type(alternatives: list[Json], indexes: list[int]) -> dict[str, list[int]]:
    result: dict[str, list[int]] = {}
    for i in indexes:
        alt = alternatives[i]
        types = _types(alt) if isinstance(alt, dict) else None
        key = (
            _canon(sorted(types))
            if types is not None
            else (f"$ref:{_ref(alt)}" if isinstance(alt, dict) and "$ref" in alt else "?")
        )
        result.setdefault(key, []).append(i)
    return result


def _merge_into(merged: dict[str, Json], piece: dict[str, Json]) -> bool:
    """Add the keywords of one allOf part; False when they clash with what is there."""
    for key, value in piece.items():
        if key not in merged:
            if key == "properties" and isinstance(value, dict):
                merged[key] = dict(value)  # never change the lock's own objects
            elif key == "required" and isinstance(value, list):
                merged[key] = list(value)
            else:
                merged[key] = value
        elif key in DOC_KEYWORDS or key.startswith("x-"):
            continue  # the first description wins
        elif key == "properties" and isinstance(value, dict):
            into = merged[key]
            for name, schema in value.items():
                if name in into and into[name] != schema:
                    into[name] = {"allOf": [into[name], schema]}
                else:
                    into[name] = schema
        elif key == "required" and isinstance(value, list):
            merged[key] += [r for r in value if r not in merged[key]]
        elif key == "type":
            if _types({"type": merged[key]}) != _types({"type": value}):
                return False
        elif merged[key] != value:
            return False
    return True


def _collapse_enums(node: dict[str, Json]) -> dict[str, Json]:
    """``oneOf: [{const: a}, {enum: [b]}]`` (alternatives that are only values of one type)
    as ``enum: [a, b]``."""
    for keyword in ("anyOf", "oneOf"):
        alternatives = node.get(keyword)
        if not isinstance(alternatives, list) or not alternatives:
            continue
        if "enum" in node or "const" in node:
            continue
        values: set[str] = set()
        count = 0
        types: set[str] = set()
        for alt in alternatives:
            if not isinstance(alt, dict) or set(alt) - _VALUE_ONLY:
                break
            found = _enum(alt)
            if found is None:
                break
            values |= found[1]
            count += len(found[1])
            types.add(_canon(sorted(_types(alt) or ())))
        else:
            if len(types) != 1 or (keyword == "oneOf" and count != len(values)):
                continue
            only = json.loads(types.pop())
            if "type" in node and _types(node) != frozenset(only):
                continue
            collapsed = {k: v for k, v in node.items() if k != keyword}
            if only:
                collapsed["type"] = only[0] if len(only) == 1 else only
            collapsed["enum"] = [json.loads(v) for v in sorted(values)]
            return collapsed
    return node


_VALUE_ONLY = frozenset({"type", "enum", "const", "title", "description"})


def _extra(value: Json) -> Json:
    if value is None or value is True:
        return {}
    return _schema(value)


def _tuple(node: Mapping[str, Json]) -> tuple[list[Json], Json]:
    """(prefix schemas, schema of the other items) of an array schema, in any draft."""
    items = node.get("items")
    if isinstance(items, list):  # draft 4-7 tuple form
        return items, _extra(node.get("additionalItems"))
    prefix = node.get("prefixItems")
    return (prefix if isinstance(prefix, list) else []), _extra(items)


def _num(value: Fraction | None) -> str:
    if value is None:
        return "?"
    if value.denominator == 1:
        return str(value.numerator)
    return str(float(value))


def _bound_text(bound: tuple[Fraction, bool, str]) -> str:
    return ("exclusive " if bound[1] else "") + _num(bound[0])


def _presence(key: str, a: Json, b: Json) -> str:
    if a is None:
        return f"{key} added"
    if b is None:
        return f"{key} removed"
    return f"{key} changed"


# ---------------------------------------------------------------------------- items

HINT_DEFAULTS = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}


def _hints(annotations: Json) -> dict[str, bool]:
    data = annotations if isinstance(annotations, dict) else {}
    hints = {k: bool(data.get(k, default)) for k, default in HINT_DEFAULTS.items()}
    if hints["readOnlyHint"]:  # the other two mean something only for tools that write
        hints["destructiveHint"], hints["idempotentHint"] = False, True
    return hints


class _Differ:
    def __init__(self, old: Mapping[str, Json], new: Mapping[str, Json]) -> None:
        self.old, self.new = old, new
        self.out = _Out()

    def add(self, level: str, item: str, path: str, change: str, why: str) -> None:
        self.out.add(level, item, path, change, why)

    def run(self) -> list[Change]:
        self.server()
        self.capabilities()
        new_ops = {str(e.get("name")) for e in _list(self.new, "operations")}
        self.collection("tools", "tool", "name", self.tool, also=new_ops)
        self.collection("operations", "operation", "name", self.tool)
        self.collection("resources", "resource", "uri", self.resource)
        self.collection("resourceTemplates", "template", "uriTemplate", self.resource)
        self.collection("prompts", "prompt", "name", self.prompt)
        return self.out.sorted()

    # -- server and capabilities
    def server(self) -> None:
        old, new = _dict(self.old, "server"), _dict(self.new, "server")
        for key in sorted(set(old) | set(new)):
            a, b = old.get(key), new.get(key)
            if _same_text(a, b):
                continue
            path = f"/{escape(key)}"
            text = (
                f"{key} {_show(a)} -> {_show(b)}"
                if key in ("name", "version")
                else _presence(key, a, b)
            )
            if key == "name":
                self.add(COMPATIBLE, "server", path, text, WHY_SERVER_NAME)
            else:
                self.add(DOCS, "server", path, text, "shown to people and models; no call changes")

    def capabilities(self) -> None:
        old, new = _dict(self.old, "capabilities"), _dict(self.new, "capabilities")
        for kind in sorted(set(old) | set(new)):
            item = f"capability:{kind}"
            if kind not in new:
                self.add(BREAKING, item, "", "capability removed", "clients that use it get errors")
                continue
            if kind not in old:
                self.add(COMPATIBLE, item, "", "capability added", "nothing clients use is gone")
                continue
            a = old[kind] if isinstance(old[kind], dict) else {}
            b = new[kind] if isinstance(new[kind], dict) else {}
            for flag in sorted(set(a) | set(b)):
                was, now = a.get(flag) is True, b.get(flag) is True
                if was == now:
                    continue
                if was:
                    self.add(
                        BREAKING,
                        item,
                        f"/{escape(flag)}",
                        f"{flag} no longer supported",
                        WHY_CAPABILITY_FLAG,
                    )
                else:
                    self.add(
                        COMPATIBLE,
                        item,
                        f"/{escape(flag)}",
                        f"{flag} now supported",
                        WHY_ADDITION,
                    )

    # -- collections
    def collection(
        self,
        key: str,
        kind: str,
        id_key: str,
        compare: Callable[[str, dict[str, Json], dict[str, Json]], None],
        also: set[str] | None = None,
    ) -> None:
        old = {str(e.get(id_key)): e for e in _list(self.old, key)}
        new = {str(e.get(id_key)): e for e in _list(self.new, key)}
        for name in sorted(old.keys() & new.keys()):
            if old[name] != new[name]:
                compare(f"{kind}:{name}", old[name], new[name])
        removed = sorted(old.keys() - new.keys())
        added = sorted(new.keys() - old.keys())
        moved = also or set()  # listed no more, but still an operation: not renamed
        renames = _renames(
            kind, {n: old[n] for n in removed if n not in moved}, {n: new[n] for n in added}
        )
        for before, after in renames:
            self.add(
                BREAKING,
                f"{kind}:{before}",
                "",
                f"renamed to {after}",
                f"no {_NOUN[kind]} is called {before} any more; {after} has the same "
                f"{_SAME[kind]}: clients that use {before} fail",
            )
            compare(f"{kind}:{after}", old[before], new[after])
        renamed_old = {b for b, _ in renames}
        renamed_new = {a for _, a in renames}
        for name in removed:
            if name in renamed_old:
                continue
            if also and name in also:
                self.add(
                    BREAKING,
                    f"{kind}:{name}",
                    "",
                    "no longer listed (now an operation)",
                    WHY_NOW_OPERATION,
                )
            else:
                self.add(
                    BREAKING,
                    f"{kind}:{name}",
                    "",
                    "removed",
                    f"clients that use this {_NOUN[kind]} get an error",
                )
        for name in added:
            if name in renamed_new:
                continue
            tokens = _tokens(new[name])
            extra = (
                f" (~{tokens} tokens, estimated)" if tokens is not None and kind == "tool" else ""
            )
            self.add(COMPATIBLE, f"{kind}:{name}", "", f"added{extra}", WHY_NEW_ITEM)

    def _common(self, item: str, old: dict[str, Json], new: dict[str, Json]) -> None:
        """title, description, icons, scopes, enabled, _meta: the same for every kind."""
        for key in ("title", "description", "icons"):
            a, b = old.get(key), new.get(key)
            if not _same_text(a, b):
                self.add(DOCS, item, f"/{key}", _presence(key, a, b), WHY_DOCS)
        a_s, b_s = _string_set(old.get("scopes")), _string_set(new.get("scopes"))
        if b_s - a_s:
            self.add(
                BREAKING,
                item,
                "/scopes",
                f"scope(s) added: {_values(b_s - a_s)}",
                WHY_SCOPE_ADDED,
            )
        if a_s - b_s:
            self.add(
                COMPATIBLE,
                item,
                "/scopes",
                f"scope(s) no longer needed: {_values(a_s - b_s)}",
                WHY_SCOPE_REMOVED,
            )
        was, now = old.get("enabled", True) is not False, new.get("enabled", True) is not False
        if was and not now:
            self.add(BREAKING, item, "/enabled", "hidden (enabled: false)", WHY_HIDDEN)
        elif now and not was:
            self.add(COMPATIBLE, item, "/enabled", "listed again (enabled: true)", "an addition")
        if old.get("_meta") != new.get("_meta"):
            self.add(
                COMPATIBLE,
                item,
                "/_meta",
                _presence("_meta", old.get("_meta"), new.get("_meta")),
                WHY_META,
            )

    def _rest(self, item: str, old: dict[str, Json], new: dict[str, Json], known: set[str]) -> None:
        for key in sorted((set(old) | set(new)) - known - _COMMON_KEYS):
            a, b = old.get(key), new.get(key)
            if a != b:
                self.add(COMPATIBLE, item, f"/{escape(key)}", _presence(key, a, b), WHY_NO_RULE)

    def tool(self, item: str, old: dict[str, Json], new: dict[str, Json]) -> None:
        self._common(item, old, new)
        SchemaDiff(
            self.out, item, "/inputSchema", old.get("inputSchema"), new.get("inputSchema"), False
        ).compare(old.get("inputSchema", {}), new.get("inputSchema", {}), "/inputSchema")
        a, b = old.get("outputSchema"), new.get("outputSchema")
        if a is not None and b is not None:
            SchemaDiff(self.out, item, "/outputSchema", a, b, True).compare(a, b, "/outputSchema")
        elif a is not None:
            self.add(
                BREAKING, item, "/outputSchema", "output schema removed", WHY_OUTPUT_SCHEMA_GONE
            )
        elif b is not None:
            self.add(
                COMPATIBLE, item, "/outputSchema", "output schema added", WHY_OUTPUT_SCHEMA_ADDED
            )
        self.annotations(item, old.get("annotations"), new.get("annotations"))
        self._rest(item, old, new, {"name", "inputSchema", "outputSchema", "annotations"})

    def annotations(self, item: str, old: Json, new: Json) -> None:
        if old == new:
            return
        a, b = _hints(old), _hints(new)
        if a["readOnlyHint"] and not b["readOnlyHint"]:
            effects = [
                text
                for text, on in (
                    ("destructive", b["destructiveHint"]),
                    ("not idempotent", not b["idempotentHint"]),
                )
                if on
            ]
            now = f" (now {' and '.join(effects)})" if effects else ""
            self.add(
                BREAKING,
                item,
                "/annotations/readOnlyHint",
                f"readOnlyHint true -> false{now}",
                WHY_NOT_READ_ONLY,
            )
        elif b["readOnlyHint"] and not a["readOnlyHint"]:
            self.add(
                COMPATIBLE,
                item,
                "/annotations/readOnlyHint",
                "readOnlyHint false -> true",
                WHY_READ_ONLY,
            )
        elif not b["readOnlyHint"]:
            if b["destructiveHint"] and not a["destructiveHint"]:
                self.add(
                    BREAKING,
                    item,
                    "/annotations/destructiveHint",
                    "destructiveHint false -> true",
                    WHY_DESTRUCTIVE,
                )
            elif a["destructiveHint"] and not b["destructiveHint"]:
                self.add(
                    COMPATIBLE,
                    item,
                    "/annotations/destructiveHint",
                    "destructiveHint true -> false",
                    WHY_SAFER,
                )
            if a["idempotentHint"] and not b["idempotentHint"]:
                self.add(
                    BREAKING,
                    item,
                    "/annotations/idempotentHint",
                    "idempotentHint true -> false",
                    WHY_NOT_IDEMPOTENT,
                )
            elif b["idempotentHint"] and not a["idempotentHint"]:
                self.add(
                    COMPATIBLE,
                    item,
                    "/annotations/idempotentHint",
                    "idempotentHint false -> true",
                    WHY_SAFER,
                )
        if b["openWorldHint"] and not a["openWorldHint"]:
            self.add(
                BREAKING,
                item,
                "/annotations/openWorldHint",
                "openWorldHint false -> true",
                WHY_OPEN_WORLD,
            )
        elif a["openWorldHint"] and not b["openWorldHint"]:
            self.add(
                COMPATIBLE,
                item,
                "/annotations/openWorldHint",
                "openWorldHint true -> false",
                WHY_SAFER,
            )
        old_d = old if isinstance(old, dict) else {}
        new_d = new if isinstance(new, dict) else {}
        for key in sorted((set(old_d) | set(new_d)) - set(HINT_DEFAULTS)):
            x, y = old_d.get(key), new_d.get(key)
            if _same_text(x, y):
                continue
            level = DOCS if key == "title" else COMPATIBLE
            self.add(level, item, f"/annotations/{escape(key)}", _presence(key, x, y), WHY_HINT)

    def resource(self, item: str, old: dict[str, Json], new: dict[str, Json]) -> None:
        self._common(item, old, new)
        if old.get("name") != new.get("name"):
            self.add(
                COMPATIBLE,
                item,
                "/name",
                f"name {_show(old.get('name'))} -> {_show(new.get('name'))}",
                WHY_RESOURCE_NAME,
            )
        if old.get("mimeType") != new.get("mimeType"):
            self.add(
                BREAKING,
                item,
                "/mimeType",
                f"mimeType {_show(old.get('mimeType'))} -> {_show(new.get('mimeType'))}",
                WHY_MIME_TYPE,
            )
        for key in ("contentSize", "annotations"):
            if old.get(key) != new.get(key):
                self.add(
                    DOCS,
                    item,
                    f"/{key}",
                    _presence(key, old.get(key), new.get(key)),
                    WHY_CONTENT_HINT,
                )
        self._rest(
            item, old, new, {"uri", "uriTemplate", "name", "mimeType", "contentSize", "annotations"}
        )

    def prompt(self, item: str, old: dict[str, Json], new: dict[str, Json]) -> None:
        self._common(item, old, new)
        a = {str(x.get("name")): x for x in _list(old, "arguments")}
        b = {str(x.get("name")): x for x in _list(new, "arguments")}
        for name in sorted(set(a) | set(b)):
            where = f"/arguments/{escape(name)}"
            if name not in b:
                self.add(BREAKING, item, where, f"argument {name} removed", WHY_ARGUMENT_GONE)
            elif name not in a:
                if b[name].get("required"):
                    self.add(BREAKING, item, where, f"new required argument {name}", WHY_REQUIRED)
                else:
                    self.add(COMPATIBLE, item, where, f"new optional argument {name}", WHY_OPTIONAL)
            else:
                was, now = bool(a[name].get("required")), bool(b[name].get("required"))
                if now and not was:
                    self.add(
                        BREAKING,
                        item,
                        f"{where}/required",
                        f"argument {name} became required",
                        WHY_REQUIRED,
                    )
                elif was and not now:
                    self.add(
                        COMPATIBLE,
                        item,
                        f"{where}/required",
                        f"argument {name} no longer required",
                        WHY_NOT_REQUIRED,
                    )
                for key in ("title", "description"):
                    x, y = a[name].get(key), b[name].get(key)
                    if not _same_text(x, y):
                        self.add(DOCS, item, f"{where}/{key}", _presence(key, x, y), WHY_DOCS)
        self._rest(item, old, new, {"name", "arguments"})


_COMMON_KEYS = frozenset({"title", "description", "icons", "scopes", "enabled", "_meta", "size"})
_NOUN = {
    "tool": "tool",
    "operation": "operation",
    "resource": "resource",
    "template": "resource template",
    "prompt": "prompt",
}
_SAME = {
    "tool": "input and output schemas",
    "operation": "input and output schemas",
    "resource": "name and mimeType",
    "template": "name and mimeType",
    "prompt": "arguments",
}


def _signature(kind: str, entry: dict[str, Json]) -> str:
    if kind in ("tool", "operation"):
        return _canon([entry.get("inputSchema"), entry.get("outputSchema")])
    if kind in ("resource", "template"):
        return _canon([entry.get("name"), entry.get("mimeType")])
    return _canon(
        sorted((str(a.get("name")), bool(a.get("required"))) for a in _list(entry, "arguments"))
    )


def _renames(
    kind: str, removed: dict[str, dict[str, Json]], added: dict[str, dict[str, Json]]
) -> list[tuple[str, str]]:
    """Pairs (old name, new name) whose signatures match one to one."""
    if not removed or not added:
        return []
    by_old: dict[str, list[str]] = {}
    by_new: dict[str, list[str]] = {}
    for name, entry in removed.items():
        by_old.setdefault(_signature(kind, entry), []).append(name)
    for name, entry in added.items():
        by_new.setdefault(_signature(kind, entry), []).append(name)
    return sorted(
        (olds[0], by_new[sig][0])
        for sig, olds in by_old.items()
        if len(olds) == 1 and len(by_new.get(sig, ())) == 1
    )


def _text_pair(a: Json, b: Json) -> tuple[str, str] | None:
    return (a, b) if isinstance(a, str) and isinstance(b, str) else None


def _ref(node: Mapping[str, Json]) -> str | None:
    """The ``$ref`` of a schema as a string (a malformed one never resolves)."""
    ref = node.get("$ref")
    return ref if ref is None or isinstance(ref, str) else "!" + _canon(ref)


def _string_set(value: Json) -> set[str]:
    return {v for v in value if isinstance(v, str)} if isinstance(value, list) else set()


def _list(data: Mapping[str, Json], key: str) -> list[dict[str, Json]]:
    value = data.get(key)
    return [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []


def _dict(data: Mapping[str, Json], key: str) -> dict[str, Json]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _tokens(entry: dict[str, Json]) -> int | None:
    size = entry.get("size")
    if isinstance(size, dict) and isinstance(size.get("tokens"), int):
        return int(size["tokens"])
    return None


def diff(old: Mapping[str, Json], new: Mapping[str, Json]) -> list[Change]:
    """Every change from lock ``old`` to lock ``new``, sorted by level, item, path."""
    return _Differ(old, new).run()


def tools_list_cost(lock: Mapping[str, Json]) -> tuple[int, int]:
    """(bytes, estimated tokens) of the lock's tools/list result."""
    totals = lock.get("totals")
    if isinstance(totals, dict) and isinstance(totals.get("toolsListBytes"), int):
        n = int(totals["toolsListBytes"])
        tokens = totals.get("toolsListTokens")
        return n, int(tokens) if isinstance(tokens, int) else estimate_tokens(n)
    listed = [compact(wire(e)) for e in _list(lock, "tools") if e.get("enabled", True) is not False]
    n = tools_list_size(listed)
    return n, estimate_tokens(n)


def summary(
    changes: Iterable[Change], old: Mapping[str, Json], new: Mapping[str, Json]
) -> dict[str, int]:
    counts = {level: 0 for level in LEVELS}
    for change in changes:
        counts[change.level] += 1
    before, after = tools_list_cost(old), tools_list_cost(new)
    return {
        **counts,
        "tokensBefore": before[1],
        "tokensAfter": after[1],
        "bytesBefore": before[0],
        "bytesAfter": after[0],
    }
