"""JSON input: duplicate keys, huge numbers, non-finite values and lone surrogates refused,
located."""

from __future__ import annotations

import math
import re
from typing import Any

from mcpgen.load.document import JsonPath, dotted
from mcpgen.load.json_locator import JsonLocator
from mcpgen.load.json_scan import _json_positions
from mcpgen.load.limits import MAX_DEPTH, MAX_INT_DIGITS
from mcpgen.problems import cut, fail


class _DuplicateKey(Exception):
    pass


class _HugeInt(str):
    """A number too big (too many digits, or beyond a float), kept as text until it is
    reported with its place."""


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


def _lone_surrogates(text: str) -> bool:
    """Whether a string parsed from the JSON ``text`` holds a lone surrogate: the escape of
    one that is not a high surrogate followed at once by a low one (the parser joins those
    pairs), or a surrogate already in the text (which UTF-8 cannot encode)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return any(m[1] for m in _ESCAPE.finditer(text))


class _NumberWatch:
    """Parse hooks that note NaN, Infinity and numbers too big (the C parser calls them for
    numbers only, so the data need not be walked for them afterwards)."""

    def __init__(self) -> None:
        self.suspicious = False

    def integer(self, text: str) -> int | _HugeInt:
        if len(text) > MAX_INT_DIGITS:
            self.suspicious = True
            return _HugeInt(text)
        return int(text)

    def real(self, text: str) -> float | _HugeInt:
        value = float(text)
        if not math.isfinite(value):
            self.suspicious = True
            return _HugeInt(text)
        return value

    def constant(self, text: str) -> float:
        self.suspicious = True
        return float(text)


def too_deep(data: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether the containers of ``data`` (one itself) nest deeper than ``limit`` levels (a
    walk level by level, no paths kept)."""
    level, depth = [data], 0
    while level:
        depth += 1
        if depth > limit:
            return True
        deeper: list[Any] = []
        for container in level:
            values = container.values() if type(container) is dict else container
            deeper.extend([v for v in values if type(v) is dict or type(v) is list])
        level = deeper
    return False


_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_MESSAGE = "string holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is not text"


def _check_json_values(data: Any, file: str, text: str, watch: _NumberWatch) -> None:
    """Reject NaN, Infinity and numbers too big for a float, lone surrogates, and too deep
    nesting. Cheap checks first (the parse hooks, the text, a walk of the containers); the
    located report comes from a slower pass that tracks paths."""
    deep = isinstance(data, dict | list) and too_deep(data)
    if not (watch.suspicious or deep or _lone_surrogates(text)):
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
