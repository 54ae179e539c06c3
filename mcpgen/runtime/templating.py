"""The Jinja sandbox a prompt's messages render in, and validation parses them with (one
environment: what one accepts, the other renders). Bounded against a caller's arguments:

- time: a render runs on the server's event loop, so it may take ``MAX_SECONDS`` at most.
  The compiled code checks the clock at the start of every block (each pass of a loop, each
  call of a macro, each branch taken); between two checks runs one step, which the sizes
  below bound (the sandbox's ``range`` makes at most 100,000 numbers). A thread cannot be
  stopped, so the check is in the template's own code.
- size: no value a template makes holds more than ``MAX_TEXT`` characters (or items): ``*``
  and ``**`` may not make more, nor ``+`` and ``~`` join more, nor a filter or a method
  return (or a method grow a list, dict or set to) more, nor a filter, a method or ``%``
  take a number over it (a width; a size to format is refused too), nor a template render
  more, nor ``replace``, ``join``, ``indent``, ``wordwrap`` or ``expandtabs`` put a text in
  so many times as to make more (checked before the text is made: ``inserts``); no
  ``lipsum`` (``n`` of a million took a minute).

A bound reached raises ``OverLimit``, whose message the caller may read."""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Sized
from contextvars import ContextVar
from typing import Any

from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError
from jinja2.sandbox import SandboxedEnvironment

MAX_TEXT = 1024 * 1024  # characters (or bytes of a number) one template may make
MAX_SECONDS = 1.0  # one render's time (the event loop waits for it)
_deadline: ContextVar[float] = ContextVar("deadline", default=math.inf)


class OverLimit(SecurityError):
    """A bound of the sandbox, reached by a render: the caller may be told which."""


class Steps(CodeGenerator):
    """Jinja's code, plus a check of the clock at the start of every block and of the size
    of every ``~``."""

    def blockvisit(self, nodes: Any, frame: Frame) -> None:
        self.writeline("environment.step()")
        super().blockvisit(nodes, frame)

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.sized(")
        super().visit_Concat(node, frame)
        self.write(")")


class Sandbox(SandboxedEnvironment):
    intercepted_binops = frozenset(("*", "**", "%", "+"))
    code_generator_class = Steps

    def step(self) -> None:
        if time.monotonic() > _deadline.get():
            raise OverLimit(f"the template ran for more than {MAX_SECONDS} s")

    def sized(self, value: Any) -> Any:
        if isinstance(value, Sized) and len(value) > MAX_TEXT:
            raise OverLimit(f"a value would hold more than {MAX_TEXT} characters or items")
        return value

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        size = 0  # what the result would hold
        if operator == "**" and isinstance(left, int) and isinstance(right, int):
            size = abs(left).bit_length() * right // 8
        elif operator == "*" and isinstance(right, int) and isinstance(left, Sized):
            size = len(left) * right
        elif operator == "*" and isinstance(left, int) and isinstance(right, Sized):
            size = left * len(right)
        elif operator == "+" and isinstance(left, Sized) and isinstance(right, Sized):
            size = len(left) + len(right)
        elif operator == "%":  # '%*d' % (width, 1)
            bounded(*(right if isinstance(right, tuple) else (right,)))
        if size > MAX_TEXT:
            raise OverLimit(f"{operator} would make more than {MAX_TEXT} characters or items")
        return super().call_binop(context, operator, left, right)

    def call(self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        receiver = getattr(__obj, "__self__", None)
        if isinstance(receiver, str):  # who.replace('', who), who.join(...)
            args = inserts(getattr(__obj, "__name__", ""), receiver, args, kwargs, method=True)
        result = super().call(__context, __obj, *bounded(*args, **kwargs), **kwargs)
        if isinstance(receiver, (list, dict, set)):  # ns.items.extend(ns.items)
            self.sized(receiver)
        return self.sized(result)


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
    if name == "join" and method:  # the items are counted: an iterator becomes a list
        args = (list(args[0]), *args[1:]) if args else args
        times, text = len(args[0]) if args else 0, subject
    elif name == "join":
        times, text = len(subject), given(0, "d", "")
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
    if times * size > MAX_TEXT:
        raise OverLimit(f"{name} would make more than {MAX_TEXT} characters")
    return args


def _bounded_filter(name: str, function: Any) -> Any:
    context = int(hasattr(function, "jinja_pass_arg"))  # its first argument, if passed

    @functools.wraps(function)  # (keeps the marks that pass it the context or environment)
    def filter_(*args: Any, **kwargs: Any) -> Any:
        bounded(*args, **kwargs)
        if name in ("replace", "join", "indent", "wordwrap") and len(args) > context:
            subject = args[context]
            if name == "join" and not isinstance(subject, Sized):
                subject = list(subject)
            rest = inserts(name, subject, args[context + 1 :], kwargs)
            args = (*args[:context], subject, *rest)
        return sandbox().sized(function(*args, **kwargs))

    return filter_


@functools.cache
def sandbox() -> Sandbox:
    environment = Sandbox(autoescape=False, keep_trailing_newline=True)
    del environment.globals["lipsum"]
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
