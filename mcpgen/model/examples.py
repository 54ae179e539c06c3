"""Example arguments for generated tests, one valid and one invalid, both checked with
jsonschema at build time (None: none found, and the test is skipped). A ``pattern`` gets
the plainest text each piece of the pattern (parsed by Python's own parser) matches."""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from importlib import metadata
from pathlib import Path
from re import _compiler, _parser  # type: ignore[attr-defined]  # the stdlib's regex engine
from typing import Any

from jsonschema import Draft202012Validator

from mcpgen import cache
from mcpgen.check.schemas import resolve_pointer
from mcpgen.literals import compact_json

Json = Any
Node = Any
_MISSING = object()
FORMATS = {
    "date": "2024-01-01",
    "date-time": "2024-01-01T00:00:00Z",
    "email": "user@example.com",
    "uri": "https://example.com",
    "uuid": "00000000-0000-0000-0000-000000000000",
}
MOST = 10_000  # characters of JSON an example may take: a schema asking for more gets none


def _valid(schema: Json, root: Json, depth: int) -> Json:
    if depth > 12 or schema is True or schema == {}:
        return "example" if depth else {}
    if not isinstance(schema, dict):
        return _MISSING
    if "$ref" in schema and isinstance(schema["$ref"], str):
        found, target = resolve_pointer(root, schema["$ref"])
        return _valid(target, root, depth + 1) if found else _MISSING
    for key in ("const", "default"):
        if key in schema:
            return schema[key]
    for key in ("examples", "enum"):
        if isinstance(schema.get(key), list) and schema[key]:
            return schema[key][0]
    for key in ("oneOf", "anyOf"):
        if isinstance(schema.get(key), list):
            for option in schema[key]:
                value = _valid(option, root, depth + 1)
                if value is not _MISSING:
                    return value
    if isinstance(schema.get("allOf"), list):
        merged: dict[str, Json] = {}
        for part in schema["allOf"]:
            value = _valid(part, root, depth + 1)
            if isinstance(value, dict):
                merged.update(value)
        return merged
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in schema):
        result: dict[str, Json] = {}
        properties = schema.get("properties", {})
        for name in schema.get("required", []):
            value = _valid(properties.get(name, {}), root, depth + 1)
            if value is _MISSING:
                return _MISSING
            result[name] = value
        return result if len(json.dumps(result, default=str)) <= MOST else _MISSING
    if kind == "array":
        count = int(schema.get("minItems", 0))
        item = _valid(schema.get("items", {}), root, depth + 1) if count else None
        if item is _MISSING or count * len(json.dumps(item, default=str)) > MOST:
            return _MISSING
        return [item] * count
    if kind == "string":
        low, high = schema.get("minLength", 0), schema.get("maxLength")
        if not isinstance(low, int) or not isinstance(high, int | None):
            return _MISSING
        known = FORMATS.get(schema.get("format", ""))
        if isinstance(schema.get("pattern"), str):
            text = pattern_example(schema["pattern"], low, high, known)
            return _MISSING if text is None else text
        if known is not None:
            return known
        return "x" * max(low, min(7, 64 if high is None else high)) if low <= MOST else _MISSING
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        if not isinstance(low, int | float):
            return _MISSING
        value = low + 1 if "exclusiveMinimum" in schema else low
        return int(value) if kind == "integer" else float(value)
    if kind in ("boolean", "null"):
        return False if kind == "boolean" else None
    return _MISSING


_MEMO: dict[int, tuple[Json, Json | None]] = {}  # id(schema) -> (schema, example)


def valid_example(schema: Json) -> Json | None:
    """Arguments ``schema`` accepts, or None when none is easy to find (remembered)."""
    memo = _MEMO.get(id(schema))
    if memo is not None and memo[0] is schema:
        return memo[1]
    if len(_MEMO) > 20_000:
        _MEMO.clear()
    example = _valid(schema, schema, 0)
    try:
        if example is _MISSING or not Draft202012Validator(schema).is_valid(example):
            example = None
    except Exception:
        example = None
    _MEMO[id(schema)] = (schema, example)
    return example


@contextlib.contextmanager
def kept(keyed: Iterable[tuple[str, Json]]) -> Iterator[None]:
    """``valid_example`` of the schemas ``keyed`` (pairs of a key, ``Tool.schema_keys``, and
    the schema) read from the build cache, and kept after: checking an example with jsonschema
    is most of its cost (GitHub, 1,186 schemas: ~30 ms)."""
    store = cache.cache_dir()
    salt = Path(__file__).read_bytes() + metadata.version("jsonschema").encode()
    path = store / f"examples-{hashlib.sha256(salt).hexdigest()}.json" if store else None
    pack = cache.read_pack(path)
    digests = [
        (hashlib.sha256(k.encode("utf-8", "surrogatepass")).hexdigest(), s) for k, s in keyed
    ]
    for digest, schema in digests:
        if isinstance(pack.get(digest), list) and len(pack[digest]) == 1:
            _MEMO[id(schema)] = (schema, pack[digest][0])
    yield
    found = {d: [m[1]] for d, s in digests if (m := _MEMO.get(id(s))) and m[0] is s}
    if found != pack:
        cache.write(path, compact_json(found))


def invalid_example(schema: Json) -> Json | None:
    """Arguments (an object) that ``schema`` rejects, or None when none is easy to find."""
    if not isinstance(schema, dict):
        return None
    base = valid_example(schema)
    candidates: list[Json] = []
    if isinstance(base, dict):
        for name in schema.get("required") or []:
            candidates.append({k: v for k, v in base.items() if k != name})
        for name, prop in (schema.get("properties") or {}).items():
            kind = prop.get("type") if isinstance(prop, dict) else None
            if kind in ("string", "array", "object", "boolean"):
                candidates.append({**base, name: 12345})
            elif kind in ("integer", "number"):
                candidates.append({**base, name: "not a number"})
        candidates.append({**base, "__unexpected__": 1})
    validator = Draft202012Validator(schema)
    for candidate in candidates:
        with contextlib.suppress(Exception):
            if not validator.is_valid(candidate):
                return candidate
    return None


# characters tried, in order, for a class or "anything but" (printable, unremarkable)
CANDIDATES = "a0A_ -.x1bZ9:/@,"
GROWTH = (0, 1, 2, 3, 5, 8, 16, 32, 64)
LONGEST = 256  # no longer candidate: ``(a+)+`` could backtrack for ages on one


class _Unsupported(Exception):
    pass


def _class_char(items: list[tuple[Node, Node]]) -> str:
    if items and str(items[0][0]) != "NEGATE":  # a positive class: its first member
        op, arg = items[0]
        if str(op) == "LITERAL":
            return chr(arg)
        if str(op) == "RANGE":  # "a" rather than "!" for [!-~]
            return next((c for c in CANDIDATES if arg[0] <= ord(c) <= arg[1]), chr(arg[0]))
    # the stdlib's regex compiler decides membership (categories, negation, ranges)
    member = _compiler.compile(_parser.SubPattern(_parser.State(), [(_parser.IN, items)]))
    for char in CANDIDATES + "".join(map(chr, range(33, 127))):
        if member.fullmatch(char):
            return char
    raise _Unsupported("an empty class")


class _Writer:
    def __init__(self, grow: int) -> None:
        self.grow = grow
        self.groups: dict[int, str] = {}

    def sequence(self, nodes: Node) -> str:
        return "".join(self.node(op, arg) for op, arg in nodes)

    def node(self, op: Node, arg: Node) -> str:
        name = str(op)
        if name == "LITERAL":
            return chr(arg)
        if name == "NOT_LITERAL":
            return next(c for c in CANDIDATES if c != chr(arg))
        if name == "ANY":
            return "a"
        if name == "IN":
            return _class_char(arg)
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, body = arg
            count = low + self.grow if high == _parser.MAXREPEAT else min(high, low + self.grow)
            text = self.sequence(body) * count if count else ""
            if len(text) > LONGEST:
                raise _Unsupported("too long")
            return text
        if name == "SUBPATTERN":
            group, _, _, body = arg
            text = self.sequence(body)
            if group is not None:
                self.groups[group] = text
            return text
        if name == "ATOMIC_GROUP":
            return self.sequence(arg)
        if name == "BRANCH":
            return self.sequence(arg[1][0])  # the first alternative
        if name == "GROUPREF":
            return self.groups.get(arg, "")
        if name in ("AT", "ASSERT", "ASSERT_NOT"):
            return ""  # anchors match the plain text; look-arounds are checked at the end
        raise _Unsupported(name)


def pattern_example(
    pattern: str, min_length: int = 0, max_length: int | None = None, first: str | None = None
) -> str | None:
    """A string ``pattern`` matches (``re.search``) within the length bounds, or None.
    ``first``: a value to prefer when it already fits (an example for the ``format``)."""
    high = float("inf") if max_length is None else max_length
    try:
        compiled = re.compile(pattern)
        parsed = _parser.parse(pattern)
    except (re.error, RecursionError, OverflowError):
        return None

    def fits(text: str) -> bool:
        return min_length <= len(text) <= high and compiled.search(text) is not None

    if first is not None and fits(first):
        return first
    for grow in GROWTH:
        try:
            text = _Writer(grow).sequence(parsed)
        except (_Unsupported, StopIteration, RecursionError):
            return None
        if fits(text):
            return text
        if len(text) <= 16 and min_length <= LONGEST:  # an unanchored end takes padding
            padded = text + "x" * (min_length - len(text))
            if fits(padded):
                return padded
        if len(text) > high:
            break
    return None
