"""The Jinja sandbox a prompt's messages render in, and validation parses them with (one
environment: what one accepts, the other renders). Bounded against a caller's arguments:

- time: a render runs on the server's event loop, so it may take ``MAX_SECONDS`` at most.
  The compiled code checks the clock at the start of every block (each pass of a loop, each
  call of a macro, each branch taken), at each item a loop's ``if`` tests, and at each item
  an iterating filter (``STEPPED``) reads; between two checks runs one step, which the sizes
  below bound (the sandbox's ``range`` makes at most 100,000 numbers; a sort orders at most
  ``MAX_SORTED`` items: Python's own loop cannot be stopped). A thread cannot be stopped,
  so the check is in the template's own code.
- size: no value a template makes holds more than ``MAX_TEXT`` characters (or items): ``*``
  and ``**`` may not make more, nor ``+`` and ``~`` join more, nor a filter or a method
  return (or a method grow a list, dict or set to) more, nor a filter, a method or ``%``
  take a number over it (a width; a size to format is refused too), nor a template render
  more, nor ``replace``, ``join``, ``indent``, ``wordwrap`` or ``expandtabs`` put a text in
  so many times as to make more (checked before the text is made: ``inserts``, which counts
  ``join``'s items and ``translate``'s replacements too), nor ``tojson`` (``dumps``) or a
  captured block (``Captured``: ``{% set %}``, ``{% filter %}``, a macro) grow past it, nor a
  format (``%``, ``format``, ``str.format``) hold a width or precision over it; ``*`` and
  ``+`` of a list count what it holds, nested containers too (``weight``), and so do a
  literal list, tuple or dict, a call's and a filter's result, and whatever is printed
  (``light``: ``{{ }}``, ``~``, ``%``, ``str.format``, a filter's arguments), before its
  text is made; a number is bounded only as a width or a count; no ``lipsum``.

A bound reached raises ``OverLimit``, whose message the caller may read."""

from __future__ import annotations

import functools
import itertools
import json
import math
import re
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sized
from contextvars import ContextVar
from types import MappingProxyType
from typing import Any

from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError
from jinja2.sandbox import SandboxedEnvironment, SandboxedEscapeFormatter, SandboxedFormatter
from jinja2.utils import Namespace

MAX_TEXT = 1024 * 1024  # characters (or bytes of a number) one template may make
MAX_SECONDS = 1.0  # one render's time (the event loop waits for it)
MAX_SORTED = 100_000  # items one sort may order (Python's sort cannot be stopped)
STEPPED = {"select", "reject", "selectattr", "rejectattr", "map", "unique", "sum", "min", "max"}
STEPPED |= {"list", "join", "batch", "slice", "sort", "groupby"}  # filters that iterate
_PERCENT = re.compile(r"%%|%(?:\([^)]*\))?[-#0 +]*(\d*)(?:\.(\d*))?")  # '%-8.3f' % x
ITEMS: type = type({}.items())  # dict.items(): pairs
CONTAINERS: tuple[type, ...] = (list, tuple, dict, set, frozenset, ITEMS, Namespace)
CONTAINERS += (type({}.keys()), type({}.values()))
_deadline: ContextVar[float] = ContextVar("deadline", default=math.inf)


class OverLimit(SecurityError):
    """A bound of the sandbox, reached by a render: the caller may be told which."""


class Steps(CodeGenerator):
    """Jinja's code, plus a check of the clock at the start of every block and at every
    ``if`` of a loop (an item it skips runs no block), of the size of every ``~`` and of
    every text a block captures."""

    wrapped: Mapping[int, str] = MappingProxyType({})  # node ids -> the code around them

    def blockvisit(self, nodes: Any, frame: Frame) -> None:
        self.writeline("environment.step()")
        super().blockvisit(nodes, frame)

    def visit_For(self, node: nodes.For, frame: Frame) -> None:
        if node.test is not None:
            self.wrapped = {**self.wrapped, id(node.test): "(environment.step() or {})"}
        super().visit_For(node, frame)

    def visit(self, node: nodes.Node, *args: Any, **kwargs: Any) -> Any:
        if id(node) not in self.wrapped:
            return super().visit(node, *args, **kwargs)
        before, after = self.wrapped[id(node)].split("{}")
        self.write(before)
        super().visit(node, *args, **kwargs)
        self.write(after)

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.wrapped = {**self.wrapped, **{id(n): "environment.light({})" for n in node.nodes}}
        self.write("environment.sized(")
        super().visit_Concat(node, frame)
        self.write(")")

    def visit_List(self, node: nodes.List, frame: Frame) -> None:
        self.weighed(super().visit_List, node, frame)

    def visit_Dict(self, node: nodes.Dict, frame: Frame) -> None:
        self.weighed(super().visit_Dict, node, frame)

    def visit_Tuple(self, node: nodes.Tuple, frame: Frame) -> None:
        if node.ctx != "load":  # {% for a, b in ... %}: names, not a value
            return super().visit_Tuple(node, frame)
        self.weighed(super().visit_Tuple, node, frame)

    def weighed(self, visit: Any, node: nodes.Node, frame: Frame) -> None:
        """A literal list, dict or tuple, refused once printing it would make too much."""
        self.write("environment.light(")
        visit(node, frame)
        self.write(")")

    def buffer(self, frame: Frame) -> None:  # {% set x %}, {% filter %}, a macro, caller()
        frame.buffer = self.temporary_identifier()
        self.writeline(f"{frame.buffer} = environment.captured()")


class Captured(list[str]):
    """A block's text as it is captured, refused once it holds more than MAX_TEXT."""

    size = 0

    def append(self, part: str) -> None:
        self.extend((part,))

    def extend(self, parts: Iterable[str]) -> None:
        parts = tuple(parts)
        self.size += sum(map(len, parts))
        if self.size > MAX_TEXT:
            raise OverLimit(f"a block would capture more than {MAX_TEXT} characters")
        super().extend(parts)


class _Widths:
    def format_field(self, value: Any, format_spec: str) -> Any:
        numbers(*re.findall(r"\d+", format_spec))  # '{:>{}}'.format(x, width)
        sandbox().light(value)  # '{}'.format(a_list) prints it
        return super().format_field(value, format_spec)  # type: ignore[misc]


class _Formatter(_Widths, SandboxedFormatter):
    pass


class _EscapeFormatter(_Widths, SandboxedEscapeFormatter):
    pass


class Sandbox(SandboxedEnvironment):
    intercepted_binops = frozenset(("*", "**", "%", "+"))
    code_generator_class = Steps
    captured = Captured

    def step(self) -> None:
        if time.monotonic() > _deadline.get():
            raise OverLimit(f"the template ran for more than {MAX_SECONDS} s")

    def stepping(self, items: Iterable[Any]) -> Iterator[Any]:
        for item in items:
            self.step()
            yield item

    def wrap_str_format(self, value: Any) -> Any:
        """``str.format`` and ``format_map``, refusing a width or precision over MAX_TEXT."""
        if super().wrap_str_format(value) is None:
            return None
        text = value.__self__
        escaping = hasattr(text, "__html__")  # a Markup text escapes what it is given
        fmt = _EscapeFormatter(self, escape=text.escape) if escaping else _Formatter(self)
        if value.__name__ == "format_map":
            return lambda mapping: type(text)(fmt.vformat(text, (), mapping))
        return lambda *args, **kwargs: type(text)(fmt.vformat(text, args, kwargs))

    def sized(self, value: Any) -> Any:
        if isinstance(value, Sized) and len(value) > MAX_TEXT:
            raise OverLimit(f"a value would hold more than {MAX_TEXT} characters or items")
        return value

    def light(self, value: Any) -> Any:
        """``value``, unless printing it (``{{ }}``, ``~``, ``string``) would make more than
        MAX_TEXT: a list holding one list many times prints each time."""
        if isinstance(value, CONTAINERS) and weight(value) > MAX_TEXT:
            raise OverLimit(f"printing a value would make more than {MAX_TEXT} characters")
        return value

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        size = 0  # what the result would hold
        if operator == "**" and isinstance(left, int) and isinstance(right, int):
            size = abs(left).bit_length() * right // 8
        elif operator == "*" and isinstance(right, int) and isinstance(left, Sized):
            size = weight(left) * right
        elif operator == "*" and isinstance(left, int) and isinstance(right, Sized):
            size = left * weight(right)
        elif operator == "+" and isinstance(left, Sized) and isinstance(right, Sized):
            size = weight(left) + weight(right)
        elif operator == "%":  # '%*d' % (width, 1), '%99999999d' % 1
            if isinstance(left, str) and "*" in left:  # '%*d' % (width, 1): a width given
                bounded(*(right if isinstance(right, tuple) else (right,)))
            percent(left)
            self.light(right)  # '%s' % a_list prints it
        if size > MAX_TEXT:
            raise OverLimit(f"{operator} would make more than {MAX_TEXT} characters or items")
        return super().call_binop(context, operator, left, right)

    def call(self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        receiver = getattr(__obj, "__self__", None)
        if isinstance(receiver, str):  # who.replace('', who), who.join(...)
            for value in (*args, *kwargs.values()):  # '{}'.format(a_list) prints it
                self.light(value)
            args = inserts(getattr(__obj, "__name__", ""), receiver, args, kwargs, method=True)
        if not getattr(__obj, "__qualname__", "").startswith("Sandbox.wrap_str_format"):
            bounded(*args, **kwargs)  # (str.format checks its widths: _Widths)
        result = super().call(__context, __obj, *args, **kwargs)
        if isinstance(receiver, (list, dict, set)):  # ns.items.extend(ns.items)
            self.sized(receiver)  # (weighed when printed: a list grown item by item)
        return self.light(self.sized(result))


def weight(value: Any, seen: dict[int, int] | None = None) -> int:
    """About what printing ``value`` makes: a text's characters, a container's items and
    what they hold (a container held many times counts each time: ``[[a] * 1000] * 1000``
    prints a thousand times what its inner list does; each is weighed once)."""
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
        seen[id(value)] = len(held) + sum(weight(item, seen) for item in items)
    return seen[id(value)]


def numbers(*digits: str) -> None:
    """Refuse a width or precision (digits of a format) over MAX_TEXT."""
    for number in digits:
        if len(number) > 7 or (number and int(number) > MAX_TEXT):
            raise OverLimit(f"a format's width {number[:20]} is over {MAX_TEXT}")


def percent(text: Any) -> None:
    if isinstance(text, str):
        for match in _PERCENT.finditer(text):
            numbers(*(n for n in match.groups() if n))


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
    if name == "join" and method:  # the items are counted: an iterator becomes a list
        args = (list(args[0]), *args[1:]) if args else args
        times, text = len(args[0]) if args else 0, subject
        extra = weight(args[0]) if args else 0
    elif name == "join":
        times, text, extra = len(subject), given(0, "d", ""), weight(subject)
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
    elif isinstance(subject, str) and name == "wordwrap":
        times, text = len(subject), given(2, "wrapstring", "")
    size = text if isinstance(text, int) else len(str(text or ""))
    if times * size + extra > MAX_TEXT:
        raise OverLimit(f"{name} would make more than {MAX_TEXT} characters")
    return args


def _bounded_filter(name: str, function: Any) -> Any:
    context = int(hasattr(function, "jinja_pass_arg"))  # its first argument, if passed

    @functools.wraps(function)  # (keeps the marks that pass it the context or environment)
    def filter_(*args: Any, **kwargs: Any) -> Any:
        bounded(*args[context + 1 :], **kwargs)  # a width or a count (not the subject)
        if name in STEPPED and len(args) > context:  # each item read checks the clock
            subject: Any = sandbox().stepping(args[context])
            if name in ("join", "sort", "groupby"):  # counted, or sorted: Python's loop
                subject = list(subject)
                if name != "join" and len(subject) > MAX_SORTED:
                    raise OverLimit(f"{name} would order more than {MAX_SORTED} items")
            args = (*args[:context], subject, *args[context + 1 :])
        if name == "dictsort" and len(args) > context and len(args[context]) > MAX_SORTED:
            raise OverLimit(f"dictsort would order more than {MAX_SORTED} items")
        if name == "format" and len(args) > context:
            percent(args[context])
        for value in (*args[context:], *kwargs.values()):  # |e, |upper... print a list
            sandbox().light(value)
        if name in ("replace", "join", "indent", "wordwrap") and len(args) > context:
            subject = args[context]
            rest = inserts(name, subject, args[context + 1 :], kwargs)
            args = (*args[:context], subject, *rest)
        return sandbox().light(sandbox().sized(function(*args, **kwargs)))

    return filter_


@functools.cache
def sandbox() -> Sandbox:
    environment = Sandbox(autoescape=False, keep_trailing_newline=True)
    environment.finalize = environment.light  # what {{ }} prints
    del environment.globals["lipsum"]
    environment.policies["json.dumps_function"] = dumps
    environment.filters = {k: _bounded_filter(k, f) for k, f in environment.filters.items()}
    return environment


def render(template: Any, arguments: dict[str, str]) -> str:
    """``template`` filled with ``arguments``, refused once it makes more than MAX_TEXT or
    runs for more than MAX_SECONDS."""
    chunks, size = [], 0
    token = _deadline.set(time.monotonic() + MAX_SECONDS)
    try:
        for chunk in template.generate(arguments):  # a dict: an argument may be named "self"
            size += len(chunk)
            if size > MAX_TEXT:
                raise OverLimit(f"the template made more than {MAX_TEXT} characters")
            chunks.append(chunk)
    except RecursionError:  # {% macro m() %}{{ m() }}{% endmacro %}
        raise OverLimit("the template nested its calls too deeply") from None
    finally:
        _deadline.reset(token)
    return "".join(chunks)
