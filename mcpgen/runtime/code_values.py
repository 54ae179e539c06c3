"""Between the sandbox and the dispatch point: the keyword arguments a sandboxed call
passes, what an operation's result becomes inside the sandbox, and what the sandbox's value
becomes as JSON."""

from __future__ import annotations

import ast
import base64
import json
import math
import re
import sys
import time
import warnings
from collections.abc import Mapping
from typing import Any

import mcp_types as types

from .code_docs import text
from .jsonrpc import LONE_SURROGATE
from .search import OperationDoc
from .shapes import Shapes

Json = Any


def argument_problem(doc: OperationDoc, kwargs: Mapping[str, Any]) -> str | None:
    schema = doc.input_schema or {}
    properties = schema.get("properties") or {}
    if properties:
        unknown = [k for k in kwargs if k not in properties]
        if unknown:
            known = ", ".join(properties) or "nothing"
            return f"got an unexpected keyword argument {unknown[0]!r} (it takes: {known})"
    missing = [n for n in schema.get("required") or () if n not in kwargs or kwargs[n] is None]
    if missing:
        return f"missing required keyword argument {missing[0]!r}"
    return None


def without_absent(doc: OperationDoc, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments to send: ``None`` means left out unless the parameter accepts null."""
    schema = doc.input_schema or {}
    properties = schema.get("properties") or {}
    shapes = Shapes(schema)
    return {
        k: v
        for k, v in kwargs.items()
        if v is not None or (k in properties and shapes.nullable(properties[k]))
    }


def result_value(doc: OperationDoc, result: types.CallToolResult) -> Json:
    """What the code gets back from an operation: its structured result, else its content."""
    data = result.structured_content
    if data is not None:
        if doc.wrapped and isinstance(data, dict) and set(data) == {"result"}:
            return data["result"]
        return data
    values: list[Json] = []
    for item in result.content:
        if isinstance(item, types.TextContent):
            try:
                values.append(json.loads(item.text))
            except ValueError:
                values.append(item.text)
        elif isinstance(item, types.ImageContent | types.AudioContent):
            values.append({"type": item.type, "mimeType": item.mime_type, "data": item.data})
        else:
            values.append(item.model_dump(mode="json", by_alias=True, exclude_none=True))
    if not values:
        return None
    return values[0] if len(values) == 1 else values


DIGITS = "an integer has more than {} digits, the most Python writes as a number: send it as text in hex, hex(n)"


DEPTH = 64  # levels of nesting of a value converted (Monty hands over fewer than 200)


class TooBig(ValueError):
    """A value whose JSON passes a byte limit, found while it was being converted (so an
    aliased value, ``[a] * 1000`` with ``a`` large, is never copied out in full)."""


class _Meter:
    """Bytes of JSON (``ensure_ascii=False``, default separators) spent so far."""

    def __init__(self, limit: float, cut: bool = True) -> None:
        self.left = limit
        self.cut = cut  # deeper than DEPTH: "..." (a result), else RecursionError (arguments)

    def take(self, size: float) -> None:
        self.left -= size
        if self.left < 0:
            raise TooBig


def plain_value(value: Any, limit: float = math.inf) -> Json:
    """The sandbox's value as JSON data (tuples and sets as lists, bytes as base64, an
    instance of a sandbox class as its attributes); raises :class:`TooBig` as soon as its
    JSON would take more than ``limit`` bytes."""
    return _plain(value, _Meter(limit), 0)


def _plain(value: Any, meter: _Meter, depth: int) -> Json:
    if depth > DEPTH:
        if not meter.cut:
            raise RecursionError
        meter.take(5)
        return "..."
    if value is None or isinstance(value, bool):
        meter.take(5 if value is False else 4)
        return value
    if isinstance(value, int):
        meter.take(value.bit_length() // 4)  # a lower bound of its digits, before str()
        try:
            meter.take(len(str(value)) - value.bit_length() // 4)
        except ValueError:  # more digits than Python converts (4,300): not a size problem
            raise TooBig(DIGITS.format(sys.get_int_max_str_digits())) from None
        return value
    if isinstance(value, str):
        meter.take(len(value) + 2)  # a lower bound, before encoding
        meter.take(len(json.dumps(value, ensure_ascii=False).encode()) - len(value) - 2)
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            meter.take(len(repr(value)))
            return value
        meter.take(len(repr(value)) + 2)
        return repr(value)
    attributes: Any = getattr(value, "attributes", None)  # a dataclass or class made in there
    if isinstance(value, Mapping) or isinstance(attributes, Mapping):
        fields: Mapping[Any, Any] = value if isinstance(value, Mapping) else attributes
        meter.take(2 * max(len(fields), 1))  # braces and separators
        out = {}
        for k, v in fields.items():
            key = str(k)
            meter.take(len(key) + 4)  # a lower bound, before encoding (as for a string)
            meter.take(len(json.dumps(key, ensure_ascii=False).encode()) - len(key) - 2)
            out[key] = _plain(v, meter, depth + 1)
        return out
    if isinstance(value, list | tuple | set | frozenset):
        meter.take(2 * max(len(value), 1))
        items = [_plain(v, meter, depth + 1) for v in value]
        if isinstance(value, set | frozenset):
            try:
                return sorted(items)
            except TypeError:
                pass
        return items
    if isinstance(value, bytes | bytearray):
        meter.take(len(value) * 4 // 3 + 2)
        return base64.b64encode(bytes(value)).decode("ascii")
    shown = repr(value)
    meter.take(len(shown) + 2)
    return shown


def arguments_problem(kwargs: Mapping[str, Any], limit: int) -> str | None:
    """Why a sandboxed call's arguments cannot be sent: over ``limit`` bytes as JSON
    (measured while converted: an aliased argument is never copied out in full), nested
    deeper than ``DEPTH``, or an argument that is not text (a lone UTF-16 surrogate, which UTF-8 cannot encode; Monty
    1.4 makes none, reading ``"\\ud800"`` as U+FFFD, but the host does not rely on that)."""
    meter = _Meter(limit, cut=False)
    for key, value in kwargs.items():
        try:
            _plain({key: value}, meter, 0)
        except UnicodeEncodeError:
            return f"argument {key!r} is not text: it {LONE_SURROGATE}"
        except RecursionError:  # Monty hands deeper values over cut ('<deeply nested>')
            return f"argument {key!r} is nested more than {DEPTH} levels deep"
        except TooBig as exc:
            return str(exc) or f"the arguments are over {limit} bytes"
    return None


# the escape of a lone surrogate after an even number of backslashes (text, not Python)
SURROGATE_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\(?:u|U0000)[dD][89a-fA-F][0-9a-fA-F]{2}")


def surrogate_problem(code: str) -> str | None:
    """A string literal of ``code`` holding a lone UTF-16 surrogate, as Python reads it
    (``"\\ud800"``; JavaScript's pair ``"\\ud83d\\ude00"`` is two): Monty reads each as
    U+FFFD, so the code would send other text than it says. None when there is none. Code
    this Python cannot parse (Monty may: 3.12's f-strings on 3.11) is searched as text for
    SURROGATE_ESCAPE (a raw or bytes literal too); if it is wrong, Monty says why (a
    surrogate itself in the code is its SyntaxError)."""
    if "\\u" not in code and "\\U" not in code:
        return None
    try:
        with warnings.catch_warnings():  # invalid escapes: the code's business
            warnings.simplefilter("ignore")
            tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        found = SURROGATE_ESCAPE.search(code)
        return _lone(code.count("\n", 0, found.start()) + 1) if found else None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
            continue
        if any("\ud800" <= c <= "\udfff" for c in node.value):
            return _lone(node.lineno)
    return None


def _lone(line: int) -> str:
    return (
        f"SyntaxError: line {line}: a string {LONE_SURROGATE}: write the character itself "
        "or its \\U0001f600-style escape"
    )


def error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[text(message)], is_error=True)


def with_output(stdout: str, message: str) -> str:
    if not stdout:
        return message
    return f"{stdout.rstrip()}\n\n{message}"


def result_text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def bounded(message: str, limit: int) -> str:
    """``message`` cut to ``limit`` bytes of UTF-8: its start and its end (where the
    exception's last line is), with a note of what was left out between them."""
    data = message.encode()
    if len(data) <= limit:
        return message
    note = f"\n... ({len(data)} bytes in all, the middle left out) ...\n".encode()
    room = max(0, limit - len(note))
    head, tail = data[: room // 2], data[len(data) - (room - room // 2) :] if room else b""
    return (head + note + tail).decode("utf-8", "ignore")


def expired(ctx: Any) -> bool:
    """Whether the caller's token expired since the request came in (runs outlive it)."""
    identity = getattr(ctx, "identity", None)
    expires_at = getattr(identity, "expires_at", None)
    return isinstance(expires_at, int | float) and time.time() >= expires_at
