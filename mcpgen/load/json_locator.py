"""Positions in a big JSON text found on demand (locating a few problems in a 13 MB spec)."""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Sequence

from mcpgen.load.document import JsonPath, PathPart
from mcpgen.load.json_scan import _JSON_STRING, _JSON_WS, _key, _line_column, _line_starts
from mcpgen.problems import Location

_INDENT = re.compile(r"[ \t]*")


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
        if not path:
            return self._skip(0)
        found = self._member(path[:-1], path[-1])
        return found[1] if found else None

    def _member(self, path: JsonPath, part: PathPart) -> tuple[int, int] | None:
        """(key offset or -1, value offset) of member ``part`` of the container at ``path``."""
        if path not in self.members and isinstance(part, str):
            found = self._indented_member(path, part)
            if found is not None:
                return found
        members = self._members(path)
        return members.get(part) if members is not None else None

    def _indented_member(self, path: JsonPath, key: str) -> tuple[int, int] | None:
        """The member found by its line, without reading the container, when the JSON is
        indented (specs usually are): a member key starts a line indented one step more than
        the container's line, before the line that closes it. None: look the slow way."""
        span = self._indented_span(path)
        if span is None:
            return None
        start, outer, inner = span
        text, quoted = self.text, json.dumps(key, ensure_ascii=False)
        keys, read = self.keys.setdefault(path, ({}, start))
        line = "\n" + inner + '"'
        while quoted not in keys and read < len(text):
            at = text.find(line, read)
            # The line that closes the object must not come first. (Nothing but white
            # space follows the root object, which closes 13 MB on in a spec: no check.)
            if at < 0 or (path and text.find("\n" + outer + "}", read, at) >= 0):
                read = len(text)
                break
            match = _JSON_STRING.match(text, at + len(line) - 1)
            read = match.end() if match else at + len(line)
            if match:
                keys.setdefault(match.group(), match.start())
        self.keys[path] = keys, read
        if quoted not in keys:
            return None
        colon = self._skip(keys[quoted] + len(quoted))
        if text[colon] != ":":
            return None
        return keys[quoted], self._skip(colon + 1)

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
