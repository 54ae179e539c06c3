"""What a prompt's template may make (``templating.py``: the sandbox that uses these): its
sizes, each weighed before the value exists, and the clock, read by the sandbox's steps and
by the Python loops of ``wordwrap`` and ``pprint`` (replaced here, so they read it too)."""

from __future__ import annotations

import itertools
import json
import math
import pprint
import re
import textwrap
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sized
from contextvars import ContextVar
from itertools import compress
from typing import Any

from jinja2.exceptions import SecurityError
from jinja2.utils import Namespace, pass_environment

MAX_TEXT = 1024 * 1024  # characters (or bytes of a number) one template may make
MAX_SECONDS = 1.0  # one render's time (the event loop waits for it)
MAX_SORTED = 100_000  # items one sort may order (Python's sort cannot be stopped)
SLOW = {"title": 1 << 18, "striptags": 1 << 18, "urlencode": 1 << 18, "urlize": 1 << 16}
MAX_NUMBER = 8192  # bytes of a number ``*`` or ``**`` make (2**65536: 19,729 digits)
_PERCENT = re.compile(r"%%|%(?:\([^)]*\))?[-#0 +]*(\d*)(?:\.(\d*))?")  # '%-8.3f' % x
ITEMS: type = type({}.items())  # dict.items(): pairs
CONTAINERS: tuple[type, ...] = (list, tuple, dict, set, frozenset, ITEMS, Namespace)
CONTAINERS += (type({}.keys()), type({}.values()))
SCALARS = {str, int, float, bool, type(None)}  # what a flat list weighed in C may hold


DEADLINE: ContextVar[float] = ContextVar("deadline", default=math.inf)
GROWN: ContextVar[list[float] | None] = ContextVar("room", default=None)  # what lists may grow


class OverLimit(SecurityError):
    """A bound of the sandbox, reached by a render: the caller may be told which."""


def step() -> None:
    if time.monotonic() > DEADLINE.get():
        raise OverLimit(f"the template ran for more than {MAX_SECONDS} s")


class _Chunks(list[str]):
    """``wordwrap``'s words, the clock read at each taken or cut: Python's own loop (a word of
    a megabyte cut a letter a line, each time copying what was left: hours)."""

    def pop(self, *args: Any) -> str:
        step()
        return super().pop(*args)

    def __setitem__(self, *args: Any) -> None:
        step()
        super().__setitem__(*args)


class _Wrapper(textwrap.TextWrapper):
    def _split_chunks(self, text: str) -> list[str]:
        return _Chunks(super()._split_chunks(text))


@pass_environment
def wordwrap(
    environment: Any,
    s: str,
    width: int = 79,
    break_long_words: bool = True,
    wrapstring: str | None = None,
    break_on_hyphens: bool = True,
) -> str:
    """Jinja's ``wordwrap``, the clock read at each word (``_Chunks``)."""
    wrap = _Wrapper(width, expand_tabs=False, replace_whitespace=False)
    wrap.break_long_words, wrap.break_on_hyphens = break_long_words, break_on_hyphens
    wrapstring = environment.newline_sequence if wrapstring is None else wrapstring
    return wrapstring.join(wrapstring.join(wrap.wrap(line)) for line in s.splitlines())


class Printer(pprint.PrettyPrinter):
    """``pprint``'s text, the clock read at each value (a list of 500,000: 4 s)."""

    def format(self, *args: Any) -> Any:
        step()
        return super().format(*args)


def weight(value: Any, seen: dict[int, int] | None = None) -> int:
    """About what printing ``value`` makes: a text's characters, a container's items and
    what they hold (a container held many times counts each time: ``[[a] * 1000] * 1000``
    prints a thousand times what its inner list does; each is weighed once)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, int):  # int('f' * 10**6, 16): a division of two such took minutes
        if value.bit_length() > 8 * MAX_NUMBER:
            raise OverLimit(f"a number would be over {MAX_NUMBER} bytes")
        return 1
    if isinstance(value, Namespace):  # namespace(a=x, b=x) prints both
        value = object.__getattribute__(value, "_Namespace__attrs")
    if not isinstance(value, CONTAINERS):
        return len(value) if isinstance(value, Sized) else 1
    seen = {} if seen is None else seen
    if id(value) not in seen:
        seen[id(value)] = 0  # a list holding itself prints as [...]
        pairs = type(value) is ITEMS
        held: Any = value  # (a container: CONTAINERS)
        items: Iterable[Any] = held
        if isinstance(held, dict):
            items = (*held.keys(), *held.values())
        elif pairs:
            items = itertools.chain.from_iterable(held)  # (key, value) pairs
        if not isinstance(held, dict) and not pairs and set(map(type, held)) <= SCALARS:
            texts = list(compress(held, map(str.__instancecheck__, held)))  # counted in C, 40
            ints = compress(held, map(int.__instancecheck__, held))  # times faster (split)
            items = (max(ints, key=abs, default=0),)  # (the largest number: weighed below)
            seen[id(value)] = sum(map(len, texts)) + len(held) - len(texts) - 1
        seen[id(value)] += len(held) + sum(weight(item, seen) for item in items)
    return seen[id(value)]


def grow(room: list[float], size: int) -> None:
    room[0] -= size
    if room[0] < 0:
        raise OverLimit(f"a value would make more than {MAX_TEXT} characters or items")


def numbers(*digits: str) -> None:
    """Refuse a width or precision (digits of a format) over MAX_TEXT."""
    for number in digits:
        if len(number) > 7 or (number and int(number) > MAX_TEXT):
            raise OverLimit(f"a format's width {number[:20]} is over {MAX_TEXT}")


def percent(text: str, values: Any) -> int:
    """What ``text % values`` makes, about: refused if a width or precision is over MAX_TEXT
    (``'%*d'``: the numbers given count), each conversion may print a mapping whole."""
    size, count = len(text), 0
    for match in _PERCENT.finditer(text):
        numbers(*(n for n in match.groups() if n))
        size += sum(int(n) for n in match.groups() if n)
        count += match.group() != "%%"
    if "*" in text and isinstance(values, tuple):  # '%*d' % (width, 1)
        size += sum(abs(v) for v in values if isinstance(v, int))
    return size + weight(values) * (count if isinstance(values, Mapping) else 1)


def dumps(value: Any, **kwargs: Any) -> str:
    """``tojson``'s JSON, refused once it would hold more than MAX_TEXT (before it is made
    whole: ``indent=100000`` asked for hundreds of megabytes)."""
    chunks, size = [], 0
    for chunk in json.JSONEncoder(**kwargs).iterencode(value):
        size += len(chunk)
        if size > MAX_TEXT:
            raise OverLimit(f"tojson would make more than {MAX_TEXT} characters")
        chunks.append(chunk)
    return "".join(chunks)


def bounded(*args: Any, **kwargs: Any) -> tuple[Any, ...]:
    """``args``, unless a number among them (or ``kwargs``) is over MAX_TEXT: a width or a
    count (``center``, ``indent``, ``batch``, ``ljust``, ``'%*d'|format``) that large makes
    a huge text."""
    for value in (*args, *kwargs.values()):
        if isinstance(value, int) and abs(value) > MAX_TEXT:
            raise OverLimit(f"{value} is over {MAX_TEXT}, the most a template may use")
    return args


def inserts(
    name: str, subject: Any, args: tuple[Any, ...], kwargs: dict[str, Any], method: bool = False
) -> tuple[Any, ...]:
    """``args``, unless ``replace``, ``join``, ``indent``, ``wordwrap`` or ``expandtabs`` (a
    filter given ``subject``, or a method of the text ``subject``) would put a text in so
    many times (once a match, an item, a line or a tab) as to make more than MAX_TEXT: one
    call, no loop, made gigabytes (``who|replace('', who)``, ``range(99999)|join(who)``)."""

    def given(index: int, key: str, default: Any) -> Any:
        return kwargs.get(key, args[index] if len(args) > index else default)

    times, text = 0, ""  # text: what goes in each time (or a width, in spaces)
    extra = 0  # what goes in besides: the items joined, the texts translated
    if name == "join":  # the items, a separator between two (counted: a stream is listed)
        args = (list(args[0]), *args[1:]) if method else args
        items, text = (args[0], subject) if method else (subject, given(0, "d", ""))
        times, extra = len(items) - 1, weight(items) - len(items)
    elif isinstance(subject, str) and name == "translate" and args:
        table = args[0]
        if isinstance(table, dict):  # a character may become a text: a.translate({120: b})
            for char, count in Counter(subject).items():
                new = table.get(ord(char), char)
                extra += count * (len(new) if isinstance(new, str) else 1)
    elif isinstance(subject, str) and name == "replace":
        old = str(given(0, "old", ""))
        times, text = subject.count(old) if old else len(subject) + 1, given(1, "new", "")
    elif isinstance(subject, str) and name == "indent":
        times, text = subject.count("\n") + 1, given(0, "width", 4)
    elif isinstance(subject, str) and name == "expandtabs":
        times, text = subject.count("\t"), given(0, "tabsize", 8)
    elif isinstance(subject, str) and name == "wordwrap":  # two lines hold over a width
        width = max(int(given(0, "width", 79)), 1)
        times = len(subject.splitlines()) + 2 * len(subject) // (width + 1)
        times, text = min(times, len(subject)), given(2, "wrapstring", "")
    size = text if isinstance(text, int) else len(str(text or ""))
    if times * size + extra > MAX_TEXT:
        raise OverLimit(f"{name} would make more than {MAX_TEXT} characters")
    return args
