"""The first half of :class:`.schema_diff.SchemaDiff`: state, ``$ref``, single keywords."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Any

from mcpgen.check.schemas import ref_strings, resolve_pointer

from .changes import BREAKING, COMPATIBLE, DOCS, Add, Json, _show, _values
from .schema_rules import _enum, _schema, _types, _without

# why a change is classified as it is
WHY_INPUT_NARROWED = "the input now accepts less: calls that were valid may be refused"
WHY_INPUT_WIDENED = "the input now accepts more: every call that was valid still is"
WHY_OUTPUT_NARROWED = "the output now allows less: every result still matches what clients expected"
WHY_OUTPUT_WIDENED = "the output now allows more: clients may get results the old schema ruled out"
WHY_TYPE_CHANGED = "values of the old type are refused (input) or no longer produced (output)"
WHY_UNKNOWN = "mcpgen cannot tell whether this accepts more or less, so it assumes the worst"

LOWER_COUNTS = ("minLength", "minItems", "minProperties")
COUNTS = (*LOWER_COUNTS, "maxLength", "maxItems", "maxProperties", "multipleOf")
# format pairs where the second accepts everything the first does
WIDER_FORMATS = frozenset({("int32", "int64"), ("float", "double")})


def _covers(types: frozenset[str], t: str) -> bool:
    return t in types or (t == "integer" and "number" in types)


def _within(a: frozenset[str], b: frozenset[str]) -> bool:
    """Every value of a type in ``a`` has a type in ``b``."""
    return all(_covers(b, t) for t in a)


def _number(value: Json) -> Fraction | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:  # a float as written: 0.1 is 1/10
        return Fraction(repr(value)) if isinstance(value, float) else Fraction(value)
    except ValueError:  # inf, nan
        return None


def _bound(node: Mapping[str, Json], lower: bool) -> tuple[Fraction, bool, str] | None:
    """(value, exclusive, keyword) of the tightest lower (or upper) bound."""
    plain, exclusive = ("minimum", "exclusiveMinimum") if lower else ("maximum", "exclusiveMaximum")
    value, flag = _number(node.get(plain)), node.get(exclusive)
    found = [] if value is None else [(value, flag is True, plain)]  # draft 4: a boolean flag
    if (other := _number(flag)) is not None:
        found.append((other, True, exclusive))
    return max(found, key=lambda b: _tightness(b, lower), default=None)


def _tightness(bound: tuple[Fraction, bool, str], lower: bool) -> tuple[Fraction, bool]:
    """Greater for a bound that accepts less."""
    return (bound[0] if lower else -bound[0], bound[1])


def _count(node: Mapping[str, Json], key: str) -> Fraction | None:
    value = _number(node.get(key))  # 4.0 is an integer in JSON Schema
    if key != "multipleOf" and value is not None and value.denominator != 1:
        return None
    if key.startswith("min") and value == 0:
        return None  # minLength: 0 says nothing
    return value


def _num(value: Fraction | None) -> str:
    if value is None:
        return "?"
    return str(value.numerator if value.denominator == 1 else float(value))


def _bound_text(bound: tuple[Fraction, bool, str]) -> str:
    return ("exclusive " if bound[1] else "") + _num(bound[0])


@dataclass(eq=False)
class SchemaBase:
    """Compares two schemas of one item (both roots for local ``$ref``)."""

    add: Add
    item: str
    root_path: str
    old_root: Json
    new_root: Json
    output: bool
    seen: set[tuple[Any, Any]] = field(default_factory=set)  # definitions compared (reported once)
    active: set[tuple[Any, Any]] = field(default_factory=set)  # pairs being compared (recursion)
    alive: list[Any] = field(default_factory=list)  # made-up nodes whose ids are in those keys

    def _stale(self, node: Json) -> bool:
        """``node`` is the same text on both sides but refers to a definition that is not."""
        return bool(self._changed_refs) and not self._changed_refs.isdisjoint(ref_strings(node))

    @cached_property
    def _changed_refs(self) -> set[str]:
        """Every local reference whose target differs, directly or through its own references."""
        targets: dict[str, tuple[Json, Json]] = {}
        uses: dict[str, set[str]] = {}  # the references in each target, on either side
        todo = ref_strings(self.old_root) | ref_strings(self.new_root)
        while todo:
            ref = todo.pop()
            pair = targets[ref] = (self._resolve(ref, True), self._resolve(ref, False))
            uses[ref] = ref_strings(pair[0]) | ref_strings(pair[1])
            todo |= uses[ref] - targets.keys()
        dirty = {r for r, (a, b) in targets.items() if a != b}
        # a definition that refers to a changed one has changed too
        while more := {r for r in targets.keys() - dirty if uses[r] & dirty}:
            dirty |= more
        return dirty

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
        self.add(level, self.item, path, change, why)

    def docs(self, path: str, change: str) -> None:
        self.say(DOCS, path, change, "documentation only: validation is unchanged")

    def _resolve(self, ref: Json, old: bool) -> Json | None:
        if not isinstance(ref, str):
            return None
        return resolve_pointer(self.old_root if old else self.new_root, ref)[1]

    def _deref(self, node: dict[str, Json], old: bool) -> Json:
        """``node`` with its local ``$ref`` replaced by the target (sibling keywords kept)."""
        target = _schema(self._resolve(node["$ref"], old))
        return {**target, **_without(node, "$ref")} if isinstance(target, dict) else node

    def _type(self, old: dict[str, Json], new: dict[str, Json], path: str) -> None:
        a, b, where = _types(old), _types(new), f"{path}/type"
        if a == b:
            return
        was, now = _values(a or ()), _values(b or ())
        if a is None:
            self.narrowed(where, f"type restricted to {now}")
        elif b is None:
            self.widened(where, f"type no longer restricted (was {was})")
        elif _within(b, a) and not _within(a, b):
            gone = _values({t for t in a if not _covers(b, t)})
            self.narrowed(where, f"type narrowed from {was} to {now} ({gone} removed)")
        elif _within(a, b) and not _within(b, a):
            self.widened(where, f"type widened from {was} to {now}")
        elif not _within(a, b):
            self.say(BREAKING, where, f"type changed from {was} to {now}", WHY_TYPE_CHANGED)
        # else each accepts what the other does: [integer, number] vs number

    def _enum(self, old: dict[str, Json], new: dict[str, Json], path: str) -> None:
        a, b = _enum(old), _enum(new)
        if a is None:
            if b is not None:
                self.narrowed(f"{path}/{b[0]}", f"{b[0]} added: only {_values(b[1])}")
        elif b is None:
            self.widened(f"{path}/{a[0]}", f"{a[0]} removed (was {_values(a[1])})")
        else:
            if a[1] - b[1]:
                self.narrowed(f"{path}/{b[0]}", f"enum value(s) removed: {_values(a[1] - b[1])}")
            if b[1] - a[1]:
                self.widened(f"{path}/{b[0]}", f"enum value(s) added: {_values(b[1] - a[1])}")

    def _bounds(self, old: dict[str, Json], new: dict[str, Json], path: str) -> None:
        for lower in (True, False):
            a, b = _bound(old, lower), _bound(new, lower)
            if a is None and b is not None:
                self.narrowed(f"{path}/{b[2]}", f"{b[2]} {_num(b[0])} added")
            elif b is None and a is not None:
                self.widened(f"{path}/{a[2]}", f"{a[2]} {_num(a[0])} removed")
            elif a is not None and b is not None and a[:2] != b[:2]:
                text = f"{'minimum' if lower else 'maximum'} {_bound_text(a)} -> {_bound_text(b)}"
                self.moved(f"{path}/{b[2]}", text, _tightness(b, lower) > _tightness(a, lower))
        for key in COUNTS:
            a_n, b_n = _count(old, key), _count(new, key)
            if a_n == b_n:
                continue
            where, text = f"{path}/{key}", f"{key} {_num(a_n)} -> {_num(b_n)}"
            if a_n is None:
                self.narrowed(where, f"{key} {_num(b_n)} added")
            elif b_n is None:
                self.widened(where, f"{key} {_num(a_n)} removed")
            elif key != "multipleOf":
                self.moved(where, text, (b_n > a_n) == (key in LOWER_COUNTS))
            elif a_n and b_n and Fraction(b_n, a_n).denominator == 1:
                self.moved(where, text, True)
            elif a_n and b_n and Fraction(a_n, b_n).denominator == 1:
                self.moved(where, text, False)
            else:
                self.unknown(where, text)

    def moved(self, where: str, text: str, tighter: bool) -> None:
        """A bound, count or multiple changed value: what is accepted narrowed or widened."""
        if tighter:
            self.narrowed(where, f"{text} (tightened)")
        else:
            self.widened(where, f"{text} (loosened)")

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
            elif key == "format" and (str(a), str(b)) in WIDER_FORMATS:
                self.widened(where, f"format {a} -> {b}")
            elif key == "format" and (str(b), str(a)) in WIDER_FORMATS:
                self.narrowed(where, f"format {a} -> {b}")
            else:
                why = "values that matched the old one may not match the new one"
                why += "" if self.output else ": calls may be refused"
                self.say(BREAKING, where, f"{key} changed from {_show(a)} to {_show(b)}", why)
        if (old.get("uniqueItems") is True) != (unique := new.get("uniqueItems") is True):
            text = "items must now be unique" if unique else "items no longer need to be unique"
            (self.narrowed if unique else self.widened)(f"{path}/uniqueItems", text)
