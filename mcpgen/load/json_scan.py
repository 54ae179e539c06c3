"""Every position of a JSON text (what YAML's composer gives for free), scanned once."""

from __future__ import annotations

import bisect
import functools
import json
import re

from mcpgen.load.document import JsonPath, Positions, _short_field
from mcpgen.load.limits import MAX_DEPTH
from mcpgen.problems import fail

_JSON_WS = re.compile(r"[ \t\n\r]*")
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_JSON_ATOM = re.compile(r"[^\s,:\[\]{}\"]+")


class _ScanError(Exception):
    """The text is not the JSON the scanner expected."""


def _key(quoted: str) -> str:
    """The text of a quoted key (most keys have no escapes: no JSON parse)."""
    return quoted[1:-1] if "\\" not in quoted else str(json.loads(quoted))


def _line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in re.finditer("\n", text)]


def _line_column(line_starts: list[int], offset: int) -> tuple[int, int]:
    line = bisect.bisect_right(line_starts, offset)
    return line, offset - line_starts[line - 1] + 1


def _json_positions(text: str, file: str) -> Positions:
    """Positions of every value and key of a JSON text (without recursion); duplicate keys
    and nesting deeper than MAX_DEPTH are refused, located."""
    positions = Positions(file)
    where = functools.partial(_line_column, _line_starts(text))

    def skip(offset: int) -> int:
        return _JSON_WS.match(text, offset).end()  # type: ignore[union-attr]

    def char(offset: int) -> str:
        if offset >= len(text):
            raise _ScanError("unexpected end")
        return text[offset]

    stack: list[tuple[JsonPath, str]] = []  # the open containers: path, closing bracket

    def read_key(offset: int, parent: JsonPath) -> tuple[int, JsonPath]:
        match = _JSON_STRING.match(text, offset)
        if not match:
            raise _ScanError("expected a key")
        child = (*parent, _key(match.group()))
        positions.add_key(child, *where(offset))  # a path is one object's: a second is refused
        offset = skip(match.end())
        if char(offset) != ":":
            raise _ScanError("expected ':'")
        return skip(offset + 1), child

    path: JsonPath = ()
    offset = skip(0)
    while True:
        positions.values.setdefault(path, where(offset))
        if len(path) > MAX_DEPTH:
            message = f"nesting deeper than {MAX_DEPTH} levels"
            raise fail(file, message, *where(offset), _short_field(path))
        ch = char(offset)
        if ch in "{[":
            offset = skip(offset + 1)
            close = "}" if ch == "{" else "]"
            if char(offset) == close:
                offset = skip(offset + 1)
            else:
                stack.append((path, close))
                offset, path = read_key(offset, path) if ch == "{" else (offset, (*path, 0))
                continue
        else:
            match = (_JSON_STRING if ch == '"' else _JSON_ATOM).match(text, offset)
            if not match:
                raise _ScanError("expected a value")
            offset = skip(match.end())
        # a value ended: move on to the next one, closing containers on the way
        while stack:
            parent, close = stack[-1]
            ch = char(offset)
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
