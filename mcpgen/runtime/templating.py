"""The Jinja sandbox a prompt's messages render in, and validation parses them with (one
environment: what one accepts, the other renders). Bounded against a caller's arguments
(the bounds and the sizes: ``template_limits.py``):

- time: a render runs on the server's event loop, so it may take ``MAX_SECONDS`` at most.
  The compiled code checks the clock at the start of every block (each pass of a loop, each
  call of a macro, each branch taken), at each item a loop's ``if`` tests, an iterating
  filter (``STEPPED``) reads, or a call lists, and in ``wordwrap``'s and ``pprint``'s own
  loops; between two checks runs one step, which the sizes below bound (``range`` makes at
  most 100,000 numbers, a sort orders at most ``MAX_SORTED`` items, ``title``, ``urlize``,
  ``striptags`` and ``urlencode`` read at most ``SLOW`` characters, ``sum`` adds numbers
  only: Python's own loops cannot be stopped). A thread cannot be stopped, so the check is
  in the template's own code.
- size: no value a template makes holds, or would print, more than ``MAX_TEXT`` characters
  or items (``weigh``: a text's length, a container's items and what they hold, nested
  ones each time they are held), weighed before it is made where it can be: ``*``, ``+``,
  ``~``, ``%`` and formats (widths, and a value printed by each field), a literal list,
  tuple or dict, a call's and a filter's result and arguments, whatever ``{{ }}`` prints,
  a text ``replace``, ``join``, ``indent``, ``wordwrap``, ``expandtabs`` or ``translate``
  puts in many times (``inserts``), ``tojson``, a captured block (``Captured``), each item
  of a stream as a call or a filter lists it (``KEPT``, ``*args``, ``loop.length``), and
  what methods add to lists, dicts and sets (``GROWS``: all of a render's together, however
  much it later removes); a number holds at most ``MAX_NUMBER`` bytes (a division of two
  larger ones takes minutes), checked before ``*`` or ``**`` makes it and in any result; no
  bytes (``encode``, ``to_bytes``), no ``lipsum``.

A bound reached raises ``OverLimit``, whose message the caller may read."""

from __future__ import annotations

import functools
import math
import re
import time
from collections.abc import Iterable, Iterator, Mapping, Sized
from itertools import islice, repeat
from types import MappingProxyType
from typing import Any

from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.runtime import LoopContext
from jinja2.sandbox import SandboxedEnvironment, SandboxedEscapeFormatter, SandboxedFormatter

from .template_limits import (
    DEADLINE,
    GROWN,
    MAX_NUMBER,
    MAX_SECONDS,
    MAX_SORTED,
    MAX_TEXT,
    SLOW,
    OverLimit,
    Printer,
    bounded,
    dumps,
    grow,
    inserts,
    numbers,
    percent,
    step,
    weight,
    wordwrap,
)

STEPPED = {"select", "reject", "selectattr", "rejectattr", "map", "unique", "sum", "min", "max"}
KEPT = {"list", "join", "batch", "slice", "sort", "groupby", "unique", "reverse"}  # collect
STEPPED |= KEPT  # filters that iterate (``reverse`` only a stream: it collects one)
GROWS = {"append", "extend", "insert", "update", "add", "setdefault"}  # list, dict, set methods
GROWS.add("symmetric_difference_update")
__all__ = ["MAX_SECONDS", "MAX_TEXT", "OverLimit", "render", "sandbox"]


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
        self.wrapped = {**self.wrapped, **{id(n): "environment.weigh({})" for n in node.nodes}}
        self.write("environment.weigh(")
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
        self.write("environment.weigh(")
        visit(node, frame)
        self.write(")")

    def signature(self, node: Any, frame: Frame, extra_kwargs: Any = None) -> None:
        if node.dyn_args is not None:  # f(*items): the tuple made of a stream is weighed
            self.wrapped = {**self.wrapped, id(node.dyn_args): "environment.kept({})"}
        super().signature(node, frame, extra_kwargs)

    def write(self, x: str) -> None:  # loop.length lists a stream: weighed (Loop)
        super().write(x.replace("LoopContext(", "environment.Loop(") if "LoopC" in x else x)

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


class Loop(LoopContext):
    """A loop, whose ``loop.length`` (or ``revindex``) lists what is left of a stream: each
    item weighed as it is kept (``range(9)|map('center', 10**6)``: a gigabyte)."""

    @property
    def length(self) -> int:
        if self._length is None and not isinstance(self._iterable, Sized):
            self._iterator = sandbox().kept(self._iterator)
        return super().length


class _Widths:
    made = 0  # characters this format's fields made: ('{0}' * 1000).format(a_text)

    def vformat(self, *args: Any) -> Any:
        self.made = 0
        return super().vformat(*args)  # type: ignore[misc]

    def format_field(self, value: Any, format_spec: str) -> Any:
        numbers(*re.findall(r"\d+", format_spec))  # '{:>{}}'.format(x, width)
        sandbox().weigh(value)  # '{}'.format(a_list) prints it
        text = super().format_field(value, format_spec)  # type: ignore[misc]
        self.made += len(text)
        if self.made > MAX_TEXT:
            raise OverLimit(f"format would make more than {MAX_TEXT} characters")
        return text


class _Formatter(_Widths, SandboxedFormatter):
    pass


class _EscapeFormatter(_Widths, SandboxedEscapeFormatter):
    pass


class Sandbox(SandboxedEnvironment):
    intercepted_binops = frozenset(("*", "**", "%", "+"))
    code_generator_class = Steps
    captured = Captured
    Loop = Loop

    step = staticmethod(step)

    def stepping(
        self, items: Iterable[Any], room: list[float] | None = None, each: int = 0
    ) -> Iterator[Any]:
        """``items``, the clock read at each; when they are kept (``room``: what they may yet
        weigh), each weighed as it comes (with ``each``: a separator joining them), before a
        C loop lists them all."""
        for item in items:
            self.step()
            if room is not None:
                grow(room, max(weight(item), 1) + each)
            yield item

    def kept(self, items: Iterable[Any]) -> Iterator[Any]:
        return self.stepping(items, [MAX_TEXT])

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        """No bytes (``encode``, ``to_bytes``): their methods (``replace``, ``join``...) would
        want a text's bounds again, and ``encode('punycode')`` is a Python loop."""
        return attr not in ("encode", "to_bytes") and super().is_safe_attribute(obj, attr, value)

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

    def weigh(self, value: Any) -> Any:
        """``value``, unless it holds, or printing it (``{{ }}``, ``~``, ``string``) would
        make, more than MAX_TEXT: a list holding one list many times prints each time."""
        if (len(value) if type(value) is str else weight(value)) > MAX_TEXT:
            raise OverLimit(f"a value would make more than {MAX_TEXT} characters or items")
        return value

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        size = 0  # what the result would hold
        if operator in ("*", "**") and isinstance(left, int) and isinstance(right, int):
            bits: float = left.bit_length() + right.bit_length()  # a product of numbers: bits
            if operator == "**":
                bits = right * math.log2(abs(left)) if abs(left) > 1 else 0
            if bits // 8 > MAX_NUMBER:  # (a division of two such numbers: seconds)
                raise OverLimit(f"{operator} would make a number over {MAX_NUMBER} bytes")
        elif operator == "*" and isinstance(right, int) and isinstance(left, Sized):
            size = weight(left) * right
        elif operator == "*" and isinstance(left, int) and isinstance(right, Sized):
            size = left * weight(right)
        elif operator == "+" and isinstance(left, Sized) and isinstance(right, Sized):
            size = weight(left) + weight(right)
        elif operator == "%" and isinstance(left, str):  # '%99999999d' % 1
            size = percent(left, right)
        if size > MAX_TEXT:
            raise OverLimit(f"{operator} would make more than {MAX_TEXT} characters or items")
        return super().call_binop(context, operator, left, right)

    def call(self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        receiver = getattr(__obj, "__self__", None)
        room: list[float] = [MAX_TEXT]  # what a stream it lists may weigh
        if isinstance(receiver, (list, dict, set)) and __obj.__name__ in GROWS:
            room = GROWN.get() or [math.inf]  # l.append(big) in a loop: weighed as it grows
            grow(room, weight(args) + weight(kwargs))
        if any(map(hasattr, args, repeat("__next__"))):  # a stream: listed in C, maybe
            each = len(receiver) if isinstance(receiver, str) and __obj.__name__ == "join" else 0
            args = tuple(
                self.stepping(a, room, each) if hasattr(a, "__next__") else a for a in args
            )
        if isinstance(receiver, str):  # who.replace('', who), who.join(...)
            for value in (*args, *kwargs.values()):  # '{}'.format(a_list) prints it
                self.weigh(value)
            args = inserts(getattr(__obj, "__name__", ""), receiver, args, kwargs, method=True)
        if not getattr(__obj, "__qualname__", "").startswith("Sandbox.wrap_str_format"):
            bounded(*args, **kwargs)  # (str.format checks its widths: _Widths)
        result = super().call(__context, __obj, *args, **kwargs)
        return self.weigh(result)


def _bounded_filter(name: str, function: Any) -> Any:
    context = int(hasattr(function, "jinja_pass_arg"))  # its first argument, if passed

    @functools.wraps(function)  # (keeps the marks that pass it the context or environment)
    def filter_(*args: Any, **kwargs: Any) -> Any:
        bounded(*args[context + 1 :], **kwargs)  # a width or a count (not the subject)
        if name in STEPPED and len(args) > context:  # each item read checks the clock
            if name == "reverse" and not isinstance(args[context], Iterator):
                return sandbox().weigh(function(*args, **kwargs))  # (a text, a list: as is)
            kept: list[float] = [MAX_TEXT]  # what it lists (and puts between: join)
            sep = kwargs.get("d", args[context + 1] if len(args) > context + 1 else "")
            each = len(str(sep)) if name == "join" else 0
            subject: Any = sandbox().stepping(args[context], kept if name in KEPT else None, each)
            if name in ("join", "sort", "groupby"):  # counted, or sorted: Python's loop
                subject = list(subject if name == "join" else islice(subject, MAX_SORTED + 1))
                if len(subject) > MAX_SORTED and name != "join":
                    raise OverLimit(f"{name} would order more than {MAX_SORTED} items")
            args = (*args[:context], subject, *args[context + 1 :])
        if name in SLOW and len(args) > context and len(str(args[context])) > SLOW[name]:
            raise OverLimit(f"{name} reads at most {SLOW[name]} characters (Python's loop)")
        if name == "dictsort" and len(args) > context and len(args[context]) > MAX_SORTED:
            raise OverLimit(f"dictsort would order more than {MAX_SORTED} items")
        format_ = name == "format" and len(args) > context and isinstance(args[context], str)
        if format_ and percent(args[context], kwargs or args[context + 1 :]) > MAX_TEXT:
            raise OverLimit(f"format would make more than {MAX_TEXT} characters")
        if name == "sum" and not isinstance(
            kwargs.get("start", args[context + 2] if len(args) > context + 2 else 0), (int, float)
        ):  # start=[] copies the list so far at each item
            raise OverLimit("sum adds numbers only (it would copy a list at each item)")
        for value in (*args[context + (name == "join") :], *kwargs.values()):  # |e prints
            sandbox().weigh(value)
        if name in ("replace", "join", "indent", "wordwrap") and len(args) > context:
            subject = args[context]
            rest = inserts(name, subject, args[context + 1 :], kwargs)
            args = (*args[:context], subject, *rest)
        return sandbox().weigh(function(*args, **kwargs))

    return filter_


@functools.cache
def sandbox() -> Sandbox:
    environment = Sandbox(autoescape=False, keep_trailing_newline=True)
    environment.finalize = environment.weigh  # what {{ }} prints
    del environment.globals["lipsum"]
    environment.policies["json.dumps_function"] = dumps
    own = {"wordwrap": wordwrap, "pprint": lambda value: Printer().pformat(value)}
    filters = {**environment.filters, **own}
    environment.filters = {k: _bounded_filter(k, f) for k, f in filters.items()}
    return environment


def render(template: Any, arguments: dict[str, str]) -> str:
    """``template`` filled with ``arguments``, refused once it makes more than MAX_TEXT or
    runs for more than MAX_SECONDS."""
    chunks, size = [], 0
    token, room = DEADLINE.set(time.monotonic() + MAX_SECONDS), GROWN.set([MAX_TEXT])
    try:
        for chunk in template.generate(arguments):  # a dict: an argument may be named "self"
            size += len(chunk)
            if size > MAX_TEXT:
                raise OverLimit(f"the template made more than {MAX_TEXT} characters")
            chunks.append(chunk)
    except RecursionError:  # {% macro m() %}{{ m() }}{% endmacro %}
        raise OverLimit("the template nested its calls too deeply") from None
    finally:
        DEADLINE.reset(token)
        GROWN.reset(room)
    return "".join(chunks)
