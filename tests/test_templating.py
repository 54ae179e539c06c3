"""Template helpers: literals (the formatter gives them black's quotes) and docstrings."""

from __future__ import annotations

import ast

from hypothesis import given, settings
from hypothesis import strategies as st

from mcpgen.format import format_files
from mcpgen.literals import py
from mcpgen.render.templates import docstring, keywords


@given(st.text())
@settings(max_examples=300, deadline=None)
def test_a_string_literal_reads_back_and_formats_to_black_quotes(text: str) -> None:
    literal = py(text)
    assert ast.literal_eval(literal) == text
    black = format_files({"x.py": f"x = {literal}\n"}, "black")["x.py"]
    assert format_files({"x.py": f"x = {literal}\n"})["x.py"] == black  # the same from ruff


def test_keywords_keep_parameter_order_and_skip_missing() -> None:
    class P:
        def __init__(self, name: str, key: str) -> None:
            self.name, self.key = name, key

    params = [P("from_", "from"), P("to", "to"), P("limit", "limit")]
    assert keywords(params, {"to": "b", "from": 'a"'}) == ["from_='a\"'", "to='b'"]
    assert py(["x", 1, None]) == "['x', 1, None]"


def escaped_char_by_char(text: str) -> str:
    """``docstring`` without its fast path: every character looked at."""
    out = []
    for ch in text:
        if ch in '\\"':
            out.append("\\" + ch)
        elif ch in "\n\t" or ch.isprintable():
            out.append(ch)
        else:
            out.append(ch.encode("unicode_escape").decode("ascii"))
    return "".join(out).strip()


@settings(max_examples=300)
@given(st.text())
def test_docstring_text_is_escaped_like_char_by_char(text: str) -> None:
    """The fast path (nothing to escape) gives what the character loop gives, and the
    result is a docstring Python reads back."""
    assert docstring(text) == escaped_char_by_char(text)
    ast.parse(f'def f():\n    """{docstring(text)} """\n')
