"""A string that a JSON Schema ``pattern`` accepts, for the generated tests' example
arguments: each piece of the pattern (parsed by Python's own parser) replaced by the
plainest text it matches (a literal, the first character of a class, the fewest
repetitions), then checked with ``re.search`` as the server's validator does. Deterministic;
``None`` when the pattern uses what this cannot satisfy by construction (look-arounds that
reject the plain text, conditionals) or no candidate meets ``minLength``/``maxLength``.
"""

from __future__ import annotations

import re
from re import _compiler, _parser  # type: ignore[attr-defined]  # the stdlib's regex engine
from typing import Any

Node = Any
# characters tried, in order, for a class or "anything but" (printable, unremarkable)
CANDIDATES = "a0A_ -.x1bZ9:/@,"
GROWTH = (0, 1, 2, 3, 5, 8, 16, 32, 64)
# no longer candidate: a pattern with nested repetition (``(a+)+``) could backtrack for
# ages on a long text it rejects, and the build would wait
LONGEST = 256


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
