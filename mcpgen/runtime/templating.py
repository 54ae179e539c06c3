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
  more; no ``lipsum`` (``n`` of a million took a minute).

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
        result = super().call(__context, __obj, *bounded(*args, **kwargs), **kwargs)
        receiver = getattr(__obj, "__self__", None)  # ns.items.extend(ns.items)
        if isinstance(receiver, (list, dict, set)):
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


def _bounded_filter(function: Any) -> Any:
    @functools.wraps(function)  # (keeps the marks that pass it the context or environment)
    def filter_(*args: Any, **kwargs: Any) -> Any:
        return sandbox().sized(function(*bounded(*args, **kwargs), **kwargs))

    return filter_


@functools.cache
def sandbox() -> Sandbox:
    environment = Sandbox(autoescape=False, keep_trailing_newline=True)
    del environment.globals["lipsum"]
    environment.filters = {k: _bounded_filter(f) for k, f in environment.filters.items()}
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
