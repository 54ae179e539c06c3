"""Positions in a big JSON text found on demand (locating a few problems in a 13 MB spec)."""

from __future__ import annotations

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
        self.located = 0
        self.found: dict[tuple[JsonPath, str], tuple[int, int] | None] = {}
        self.spans: dict[JsonPath, tuple[int, str, str] | None] = {}
        self.clean: dict[JsonPath, int] = {}  # object -> offset its closing line is after
        self.counted = (0, 1)  # (offset, its line): lines are counted on from the last one

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
        if (path, key) in self.found:
            return self.found[path, key]
        span = self._indented_span(path)
        self.found[path, key] = None
        if span is None:
            return None
        start, outer, inner = span
        text = self.text
        quoted = json.dumps(key, ensure_ascii=False)
        at = text.find("\n" + inner + quoted, start)
        if at < 0:
            return None
        # The line that closes the object must not come first. The stretch known to hold
        # no such line grows with the keys looked up: each part of the text is searched
        # once, and never beyond the last key (a spec's root object closes 13 MB on).
        # (Nothing but white space follows the root object: no check for it.)
        clean = self.clean.get(path, start) if path else len(text)
        if at > clean:
            if text.find("\n" + outer + "}", clean, at) >= 0:
                return None  # after the line that closes the object
            self.clean[path] = at
        key_offset = at + 1 + len(inner)
        colon = self._skip(key_offset + len(quoted))
        if text[colon] != ":":
            return None
        self.found[path, key] = key_offset, self._skip(colon + 1)
        return self.found[path, key]

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
        self.located += 1
        if self.line_starts is None and self.located <= 32:  # a few: count, do not index
            since, line = self.counted
            if offset < since:
                since, line = 0, 1
            line += self.text.count("\n", since, offset)
            self.counted = offset, line
            return line, offset - self.text.rfind("\n", 0, offset)
        if self.line_starts is None:
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
