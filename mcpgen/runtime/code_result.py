"""Code mode's result, sized in the sandbox before it leaves it.

The value of a run's last expression crosses to the host whole (``MontyComplete.output``
converts all of it), so a result of tens of megabytes was copied into the server before
``plain_value`` found it over the output limit. When the host's Python reads the code and
it ends in an expression, that expression is assigned (``_ = (...)``, on its own line
numbers) and a function defined after the code, in the same feed, measures it in the
sandbox from below, as ``plain_value`` would (a string's characters and quotes, an item's
separators...): the value crosses only when that measure is within the limit, and
``plain_value`` then checks it exactly.

Not measured there (it crosses as before, within the sandbox's memory limit, and is
measured on the host): an instance of a class the code defines (Monty lists no attributes
in the sandbox), the value of code that rebinds a builtin the function uses (``len``), and
code the host's Python cannot parse (Monty may read newer syntax).
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pydantic_monty

RESULT = "_"
TOO_BIG = object()  # what ``last_value`` answers for a value it left in the sandbox

# A lower bound of the bytes of the value's JSON as ``code_values.plain_value`` writes it
# (each branch takes at most what it takes there), False as soon as it passes ``left``.
# Iterative: a value nested deeper than the sandbox's recursion limit is measured too.
FITS = """

def _fits(value, left, big=10**4300):
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        kind = type(item)
        if depth > 64:
            left -= 5
        elif item is None or kind is bool:
            left -= 4
        elif kind is int:
            left -= 4301 if item >= big or item <= -big else len(str(item))
        elif kind is float:
            left -= 3
        elif kind is str:
            left -= len(item) + 2
        elif kind is bytes:
            left -= len(item) * 4 // 3 + 2
        elif kind is list or kind is tuple or kind is set or kind is frozenset:
            left -= 2 * max(len(item), 1)
            for each in item:
                stack.append((each, depth + 1))
        elif kind is dict:
            left -= 2 * max(len(item), 1)
            for key, each in item.items():
                left -= len(key) + 4 if type(key) is str else 4
                stack.append((each, depth + 1))
        else:
            left -= 2
        if left < 0:
            return False
    return True
"""


def captured(code: str) -> str | None:
    """``code`` with its last expression assigned to ``RESULT`` and then ``FITS`` defined;
    None when the host's Python cannot parse the code or it does not end in an expression."""
    try:
        with warnings.catch_warnings():  # invalid escapes: the code's business
            warnings.simplefilter("ignore")
            tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    last = tree.body[-1] if tree.body else None
    if not isinstance(last, ast.Expr) or last.end_lineno is None:
        return None
    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", code)]  # as ``ast`` counts
    start = _at(code, starts, last.lineno, last.col_offset)
    end = _at(code, starts, last.end_lineno, last.end_col_offset)
    return f"{code[:start]}{RESULT} = ({code[start:end]}){code[end:]}\n{FITS}"


def _at(code: str, starts: list[int], line: int, column: int | None) -> int:
    """The index in ``code`` of a line and column as ``ast`` gives them (UTF-8 bytes)."""
    head = code[starts[line - 1] :].encode("utf-8", "surrogatepass")[: column or 0]
    return starts[line - 1] + len(head.decode("utf-8", "surrogatepass"))


FETCH = f"[{RESULT}] if _fits({RESULT}, {{left}}) else None"  # [value], or None: too big


async def last_value(
    drive: Callable[..., Awaitable[Any]],
    session: pydantic_monty.AsyncMontySession,
    code: str,
    printed: pydantic_monty.CollectString,
    limit: int,
) -> Any:
    """The value of ``code``'s last expression (``drive(session, code, printed)`` runs a
    snippet and answers its value), or ``TOO_BIG`` when the sandbox measured it, with what
    was printed, over ``limit`` bytes (it never left the sandbox)."""
    source = captured(code)
    if source is None:
        return await drive(session, code, printed)
    await drive(session, source, printed)
    left = max(0, limit - len(printed.output.encode()))
    held = await session.feed_run(FETCH.format(left=left), print_callback=printed)
    return TOO_BIG if held is None else held[0]
