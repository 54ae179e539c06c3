"""JSON input: duplicate keys, huge numbers, non-finite values, lone surrogates and deep
nesting refused, located; positions scanned once, or found on demand in a big text."""

from __future__ import annotations

import bisect
import functools
import gc
import itertools
import json
import math
import re
from collections.abc import Sequence
from typing import Any

from mcpgen.load.limits import MAX_DEPTH, MAX_INT_DIGITS
from mcpgen.load.positions import JsonPath, PathPart, Positions, dotted, short_field
from mcpgen.problems import Location, cut, fail

_JSON_WS = re.compile(r"[ \t\n\r]*")
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_JSON_ATOM = re.compile(r"[^\s,:\[\]{}\"]+")
_INDENT = re.compile(r"[ \t]*")


class _ScanError(Exception):
    """The text is not the JSON the scanner expected (or ends early: an IndexError)."""


def _key(quoted: str) -> str:
    """The text of a quoted key (most keys have no escapes: no JSON parse)."""
    return quoted[1:-1] if "\\" not in quoted else str(json.loads(quoted))


def _line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in re.finditer("\n", text)]


def _line_column(line_starts: list[int], offset: int) -> tuple[int, int]:
    line = bisect.bisect_right(line_starts, offset)
    return line, offset - line_starts[line - 1] + 1


def _json_positions(text: str, file: str) -> Positions:
    """Positions of every value and key (no recursion); duplicates and depth refused, located."""
    positions = Positions(file)
    where = functools.partial(_line_column, _line_starts(text))

    def skip(offset: int) -> int:
        return _JSON_WS.match(text, offset).end()  # type: ignore[union-attr]

    stack: list[tuple[JsonPath, str]] = []  # the open containers: path, closing bracket

    def read_key(offset: int, parent: JsonPath) -> tuple[int, JsonPath]:
        match = _JSON_STRING.match(text, offset)
        if not match:
            raise _ScanError("expected a key")
        child = (*parent, _key(match.group()))
        positions.add_key(child, *where(offset))  # a path is one object's: a second is refused
        offset = skip(match.end())
        if text[offset] != ":":
            raise _ScanError("expected ':'")
        return skip(offset + 1), child

    path: JsonPath = ()
    offset = skip(0)
    while True:
        positions.values.setdefault(path, where(offset))
        if len(path) > MAX_DEPTH:
            message = f"nesting deeper than {MAX_DEPTH} levels"
            raise fail(file, message, *where(offset), short_field(path))
        ch = text[offset]  # (an IndexError at the end of the text)
        if ch in "{[":
            offset = skip(offset + 1)
            close = "}" if ch == "{" else "]"
            if text[offset] != close:
                stack.append((path, close))
                offset, path = read_key(offset, path) if ch == "{" else (offset, (*path, 0))
                continue
            offset = skip(offset + 1)
        else:
            match = (_JSON_STRING if ch == '"' else _JSON_ATOM).match(text, offset)
            if not match:
                raise _ScanError("expected a value")
            offset = skip(match.end())
        # a value ended: move on to the next one, closing containers on the way
        while stack:
            parent, close = stack[-1]
            ch = text[offset]
            if ch == ",":
                offset = skip(offset + 1)
                if close == "]":  # ``path``: the item that ended
                    path = (*parent, int(path[-1]) + 1)
                else:
                    offset, path = read_key(offset, parent)
                break
            if ch != close:
                raise _ScanError("expected ',' or a closing bracket")
            offset = skip(offset + 1)
            path = stack.pop()[0]  # the container that ended is the value that ended
        else:
            return positions


class JsonLocator:
    """Positions in a JSON text found on demand: the members of a container are indexed when
    a path first goes through it, and the values a path does not enter are skipped by the C
    scanner. Locating a few warnings in a 13 MB spec costs a fraction of indexing it all.
    Same answers as ``Positions.locate`` (the fuzz tests compare them)."""

    # skips values (their end is all it is asked for): no number or object is made of them
    _decoder = json.JSONDecoder(
        parse_int=str, parse_float=str, parse_constant=str, object_pairs_hook=lambda _: None
    )

    def __init__(self, text: str, file: str) -> None:
        self.text = text
        self.file = file
        # container path -> member -> (key offset or -1, value offset)
        self.members: dict[JsonPath, dict[PathPart, tuple[int, int]]] = {}
        self.line_starts: list[int] | None = None
        # offsets already located and their lines (sorted): lines are counted from the
        # nearest one before, until that has counted more than the text twice
        self.marks, self.lines, self.budget = [0], [1], 2 * len(text)
        self.spans: dict[JsonPath, tuple[int, str, str] | None] = {}
        # object -> its member keys (quoted, as written) seen so far -> key offset, and
        # the offset its lines are read up to (each line of an object is searched once)
        self.keys: dict[JsonPath, tuple[dict[str, int], int]] = {}

    def _skip(self, offset: int) -> int:
        return _JSON_WS.match(self.text, offset).end()  # type: ignore[union-attr]

    def _value_offset(self, path: JsonPath) -> int | None:
        found = self._member(path[:-1], path[-1]) if path else (-1, self._skip(0))
        return found[1] if found else None

    def _member(self, path: JsonPath, part: PathPart) -> tuple[int, int] | None:
        """(key offset or -1, value offset) of member ``part`` of the container at ``path``."""
        if path not in self.members and isinstance(part, str):
            found = self._indented_member(path, part)
            if found is not None:
                return found
        return (self._members(path) or {}).get(part)

    def _indented_member(self, path: JsonPath, key: str) -> tuple[int, int] | None:
        """The member found by its line, without reading the container, when the JSON is
        indented (specs usually are): a member key starts a line indented one step more than
        the container's line, before the line that closes it. None: look the slow way."""
        if (span := self._indented_span(path)) is None:
            return None
        start, outer, inner = span
        text, quoted = self.text, json.dumps(key, ensure_ascii=False)
        keys, read = self.keys.setdefault(path, ({}, start))
        line = "\n" + inner + '"'
        # (searched by ``re``: ``str.find`` is 4 to 10 times as slow on these needles, whose
        # first characters start most lines of a 13 MB spec)
        member, closing = (re.compile(re.escape(n)).search for n in (line, f"\n{outer}}}"))
        while quoted not in keys and read < len(text):
            found = member(text, read)
            # The line that closes the object must not come first. (Nothing but white
            # space follows the root object, which closes 13 MB on in a spec: no check.)
            if found is None or (path and closing(text, read, found.start())):
                read = len(text)
                break
            match = _JSON_STRING.match(text, found.end() - 1)
            read = match.end() if match else found.end()
            if match:
                keys.setdefault(match.group(), match.start())
        self.keys[path] = keys, read
        if quoted not in keys:
            return None
        colon = self._skip(keys[quoted] + len(quoted))
        return (keys[quoted], self._skip(colon + 1)) if text[colon] == ":" else None

    def _indented_span(self, path: JsonPath) -> tuple[int, str, str] | None:
        """(start, its indentation, its members' indentation) of the object at ``path``."""
        if path not in self.spans:
            self.spans[path] = None
            start = self._value_offset(path)
            text = self.text
            if start is None or text[start] != "{":
                return None
            line = text.rfind("\n", 0, start) + 1
            outer = text[line : _INDENT.match(text, line).end()]  # type: ignore[union-attr]
            first = self._skip(start + 1)  # the first member's line starts with its indentation
            inner = text[text.rfind("\n", 0, first) + 1 : first]
            if inner.strip(" \t") or len(inner) <= len(outer) or not inner.startswith(outer):
                return None  # on one line, or not indented step by step
            self.spans[path] = start, outer, inner
        return self.spans[path]

    def _members(self, path: JsonPath) -> dict[PathPart, tuple[int, int]] | None:
        if path in self.members:
            return self.members[path]
        start = self._value_offset(path)
        if start is None or self.text[start] not in "{[":
            return None
        text, members = self.text, {}
        is_object = text[start] == "{"
        offset, index = self._skip(start + 1), 0
        while text[offset] not in "}]":
            key_offset = -1
            part: PathPart = index
            if is_object:
                match = _JSON_STRING.match(text, offset)
                assert match is not None
                part = _key(match.group())
                key_offset = offset
                offset = self._skip(self._skip(match.end()) + 1)  # past the ':'
            members[part] = (key_offset, offset)
            _, end = self._decoder.raw_decode(text, offset)
            offset = self._skip(end)
            if text[offset] == ",":
                offset = self._skip(offset + 1)
            index += 1
        self.members[path] = members
        return members

    def _where(self, offset: int) -> tuple[int, int]:
        if self.line_starts is None:
            at = bisect.bisect_right(self.marks, offset)
            self.budget -= offset - self.marks[at - 1]
            if self.budget >= 0:
                line = self.lines[at - 1] + self.text.count("\n", self.marks[at - 1], offset)
                self.marks.insert(at, offset)
                self.lines.insert(at, line)
                return line, offset - self.text.rfind("\n", 0, offset)
            self.line_starts = _line_starts(self.text)
        return _line_column(self.line_starts, offset)

    def locate(self, path: Sequence[PathPart], key: bool = False) -> Location:
        """The location of ``path``, or of its nearest ancestor that has one."""
        current = tuple(path)
        try:
            while current:
                found = self._member(current[:-1], current[-1])
                if found is not None:
                    offset = found[0] if key and found[0] >= 0 else found[1]
                    return Location(self.file, *self._where(offset))
                current = current[:-1]
            return Location(self.file, *self._where(self._skip(0)))
        except (AssertionError, IndexError, ValueError):  # pragma: no cover - parsed before
            return Location(self.file, 1, 1)


class _DuplicateKey(Exception):
    pass


class _HugeInt(str):
    """A number too big (too many digits, or beyond a float), kept as text to be reported."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise _DuplicateKey  # located by the scanner (``_json_positions``)
    return result


# A backslash escape, consumed left to right: an escaped backslash (so the parity of a run
# of backslashes is right), a high and low surrogate's escapes at once (the parser joins
# those pairs), or the escape of a lone UTF-16 surrogate (group 1).
_ESCAPE = re.compile(
    r"\\(?:\\|u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
    r"|(u[dD][89a-fA-F][0-9a-fA-F]{2}))"
)


def _lone_surrogates(text: str, decoded: bool = False) -> bool:
    """Whether a string parsed from ``text`` holds a lone surrogate: one's escape (see
    ``_ESCAPE``), or one in the text (not ``decoded`` from UTF-8, which has none)."""
    try:
        if not decoded:  # (GitHub's 13 MB: 10 ms)
            text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return any(m[1] for m in _ESCAPE.finditer(text))


class _NumberWatch:
    """Parse hooks that note NaN, Infinity and numbers too big (the C parser calls them for
    numbers only, so the data need not be walked for them afterwards)."""

    suspicious = False

    def integer(self, text: str) -> int | _HugeInt:
        return self.huge(text) if len(text) > MAX_INT_DIGITS else int(text)

    def real(self, text: str) -> float | _HugeInt:
        value = float(text)
        return value if math.isfinite(value) else self.huge(text)

    def constant(self, text: str) -> float:
        self.suspicious = True
        return float(text)

    def huge(self, text: str) -> _HugeInt:
        self.suspicious = True
        return _HugeInt(text)


def too_deep(data: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether the containers of ``data`` (one itself) nest deeper than ``limit`` levels (a
    walk level by level, no paths kept). Each level's values are gathered and filtered in C:
    a dict or list is tracked by the collector, and a dict that holds no container is not
    (``gc.is_tracked``), so a value found untracked ends its branch, and only the last level
    is looked at for such dicts (GitHub's 13 MB: 45 ms -> 12)."""
    level, depth = [data], 1
    while depth <= limit:
        below = gc.get_referents(*level)
        tracked = itertools.compress(below, map(gc.is_tracked, below))
        level = [v for v in tracked if type(v) is dict or type(v) is list]  # (not a _HugeInt)
        if not level:  # only dicts of scalars (untracked) can be one level further down
            return depth == limit and any(type(v) is dict for v in below)
        depth += 1
    return True


_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_MESSAGE = "string holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is not text"


def _check_json_values(
    data: Any, file: str, text: str, watch: _NumberWatch, decoded: bool = False
) -> None:
    """Reject NaN, Infinity, numbers too big, lone surrogates and too deep nesting: cheap
    checks first, then a slower pass that tracks paths locates the problem."""
    deep = isinstance(data, dict | list) and too_deep(data)
    if not (watch.suspicious or deep or _lone_surrogates(text, decoded)):
        return
    stack: list[tuple[Any, JsonPath]] = [(data, ())]
    while stack:
        value, path = stack.pop()
        if len(path) > MAX_DEPTH:
            _json_positions(text, file)  # raises the located error
            raise fail(file, f"nesting deeper than {MAX_DEPTH} levels", 1, 1)  # pragma: no cover
        message = ""
        if isinstance(value, dict):
            if any(_SURROGATE.search(key) for key in value):  # located at the object
                message = _SURROGATE_MESSAGE
            stack.extend((v, (*path, k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, (*path, i)) for i, v in enumerate(value))
        elif isinstance(value, _HugeInt):
            message = f"number {cut(value, 20)} is too large"
        elif isinstance(value, float) and not math.isfinite(value):
            message = "NaN and Infinity are not JSON values"
        elif isinstance(value, str) and _SURROGATE.search(value):
            message = _SURROGATE_MESSAGE
        if message:
            where = JsonLocator(text, file).locate(path)
            raise fail(file, message, where.line, where.column, dotted(path))
