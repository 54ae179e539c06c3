"""Pieces of template output that black would leave as they are, recognised without it.

The typed client of a big API is tens of thousands of lines (GitHub's: 33,000), and black
takes seconds to find that almost every piece of it is already formatted: the template
lays methods out the way black does, and only a piece with a long line needs it. A piece
(see ``chunking``) is taken as formatted when nothing black would change can be in it:

* every line is printable text (no tab, form feed or other control character) without
  trailing whitespace, no two blank lines follow each other, and none starts or ends it;
* code lines fit in the line length (counted in UTF-8 bytes, never fewer than black's
  columns) and hold no ``'`` and no backslash, so no string quotes or escapes to normalise
  and nothing to split;
* each docstring opens with text right after its quotes, has a body indented exactly like
  its opening line (black re-indents to that), no escape sequences black would rewrite,
  and closes with the quotes alone on the last line (black then keeps them there).

Anything else returns False and goes to black, so a wrong "no" only costs time; a wrong
"yes" would leave unformatted code, which ``tests/test_preformatted.py`` looks for in
every generated client, GitHub's included, and in random ones.
"""

from __future__ import annotations

import ast
import re

LINE_LENGTH = 100  # black's line length for generated code (formatting.BLACK_OPTIONS)
_QUOTES = '"""'
_ESCAPE = re.compile(r"\\[xuUN]")


def looks_formatted(text: str) -> bool:
    """True only when black would return ``text`` unchanged (see the module docstring)."""
    if not text.endswith("\n") or text.endswith("\n\n") or text.startswith("\n"):
        return False  # black drops blank lines at the start and the end
    if "\n\n\n" in text:
        return False
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return False
    lines = text.split("\n")[:-1]
    in_docstrings: set[int] = set()
    for start, end in _docstrings(tree):
        if not _plain_docstring(lines[start - 1 : end]):
            return False
        in_docstrings.update(range(start, end + 1))
    for number, line in enumerate(lines, 1):
        if line != line.rstrip() or not line.isprintable():
            return False
        if number in in_docstrings:
            continue
        if len(line.encode()) > LINE_LENGTH or "'" in line or "\\" in line:
            return False
    return True


def _docstrings(tree: ast.Module) -> list[tuple[int, int]]:
    """(first line, last line) of every docstring: the first statement of a module, class
    or function body when it is a string."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
                and first.end_lineno is not None
            ):
                found.append((first.lineno, first.end_lineno))
    return found


def _plain_docstring(lines: list[str]) -> bool:
    if len(lines) < 3:  # black joins a docstring of one line with its closing quotes
        return False
    opening, body, closing = lines[0], lines[1:-1], lines[-1]
    indent = len(opening) - len(opening.lstrip(" "))
    head = opening[indent:]
    if not head.startswith(_QUOTES) or head[3:4] in ("", " ", '"'):
        return False
    if closing != " " * indent + _QUOTES:
        return False
    if any(_ESCAPE.search(line) for line in lines) or any(_QUOTES in line for line in body):
        return False
    indents = [len(line) - len(line.lstrip(" ")) for line in body if line.strip()]
    return bool(indents) and min(indents) == indent
