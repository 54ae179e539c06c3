"""The Jinja sandbox a prompt's messages render in, and validation parses them with (one
environment: what one accepts, the other renders). Bounded against a caller's numbers:
``*`` and ``**`` may not make more than ``MAX_TEXT``, nor a filter, a method or ``%`` take a
number over it (a width; a size to format is refused too), nor a template render more; no
``lipsum`` (``n`` of a million took a minute). Not bounded: CPU of loops that print nothing."""

from __future__ import annotations

import functools
from typing import Any

from jinja2.exceptions import SecurityError
from jinja2.sandbox import SandboxedEnvironment

MAX_TEXT = 1024 * 1024  # characters (or bytes of a number) one template may make


class Sandbox(SandboxedEnvironment):
    intercepted_binops = frozenset(("*", "**", "%"))

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        size = 0  # what the result would hold
        if operator == "**" and isinstance(left, int) and isinstance(right, int):
            size = abs(left).bit_length() * right // 8
        elif operator == "*" and isinstance(right, int) and hasattr(left, "__len__"):
            size = len(left) * right
        elif operator == "*" and isinstance(left, int) and hasattr(right, "__len__"):
            size = left * len(right)
        elif operator == "%":  # '%*d' % (width, 1)
            bounded(*(right if isinstance(right, tuple) else (right,)))
        if size > MAX_TEXT:
            raise SecurityError(f"{operator} would make more than {MAX_TEXT} characters")
        return super().call_binop(context, operator, left, right)

    def call(self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        return super().call(__context, __obj, *bounded(*args, **kwargs), **kwargs)


def bounded(*args: Any, **kwargs: Any) -> tuple[Any, ...]:
    """``args``, unless a number among them (or ``kwargs``) is over MAX_TEXT: a width or a
    count (``center``, ``indent``, ``batch``, ``ljust``, ``'%*d'|format``) that large makes
    a huge text."""
    for value in (*args, *kwargs.values()):
        if isinstance(value, int) and abs(value) > MAX_TEXT:
            raise SecurityError(f"{value} is over {MAX_TEXT}, the most a template may use")
    return args


def _bounded_filter(function: Any) -> Any:
    @functools.wraps(function)  # (keeps the marks that pass it the context or environment)
    def filter_(*args: Any, **kwargs: Any) -> Any:
        return function(*bounded(*args, **kwargs), **kwargs)

    return filter_


@functools.cache
def sandbox() -> Sandbox:
    environment = Sandbox(autoescape=False, keep_trailing_newline=True)
    del environment.globals["lipsum"]
    environment.filters = {k: _bounded_filter(f) for k, f in environment.filters.items()}
    return environment


def render(template: Any, arguments: dict[str, str]) -> str:
    """``template`` filled with ``arguments``, refused once it makes more than MAX_TEXT."""
    chunks, size = [], 0
    for chunk in template.generate(arguments):  # a dict: an argument may be named "self"
        size += len(chunk)
        if size > MAX_TEXT:
            raise SecurityError(f"the template made more than {MAX_TEXT} characters")
        chunks.append(chunk)
    return "".join(chunks)
