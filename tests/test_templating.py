"""Template helpers that lay code out as black does (so black has less to redo)."""

from __future__ import annotations

import ast
from pathlib import Path

import black
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpgen.format import mode
from mcpgen.literals import py, string_literal
from mcpgen.render.templates import assign_call, call, dict_arg, docstring, keywords


@given(st.text())
@settings(max_examples=300, deadline=None)
def test_string_literal_round_trips_with_black_quotes(text: str) -> None:
    literal = string_literal(text)
    assert ast.literal_eval(literal) == text
    if '"' not in text:
        assert literal.startswith('"')
    line = f"x = {literal}\n"
    if "\\" not in literal:  # black leaves escapes alone but may pick other quotes around them
        assert black.format_str(line, mode=mode()) == line


CALLS = [
    (8, "result = await self._call(", ['"short"', "arguments", "progress"]),
    (
        8,
        "result = await self._call(",
        ['"a_rather_long_tool_name_' + "x" * 40 + '"', "arguments", "progress"],
    ),
    (8, "parsed = _parse(", ["models." + "Y" * 80, "result.structured_content"]),
    (4, "name = _blocking(", ["SomeClient." + "z" * 100]),
    (4, "return await typed.tool(", [f"argument_{i}={i}" for i in range(30)]),
    (12, "client.tool(", []),
    (8, "arguments = _arguments(", [dict_arg(['"a": a']), dict_arg(['"b": b'])]),
    (
        8,
        "arguments = _arguments(",
        [dict_arg(['"org": org']), dict_arg([f'"k{i}": k_{i}' for i in range(8)])],
    ),
    (
        8,
        "arguments = _arguments(",
        [dict_arg([]), dict_arg([f'"key_{i}": value_{i}' for i in range(12)])],
    ),
    (
        8,
        "arguments = _arguments(",
        [dict_arg([f'"key_{i}": value_{i}' for i in range(9)]), dict_arg([])],
    ),
]


@pytest.mark.parametrize(("indent", "head", "args"), CALLS)
def test_call_is_laid_out_as_black_does(indent: int, head: str, args: list[str]) -> None:
    levels = indent // 4
    heads = [
        "    " * level + ("def f():" if level == levels - 1 else "class C:")
        for level in range(levels)
    ]
    source = "\n".join(heads) + "\n" + " " * indent + call(indent, head, args) + "\n"
    assert black.format_str(source, mode=mode()) == source


def test_keywords_keep_parameter_order_and_skip_missing() -> None:
    class P:
        def __init__(self, name: str, key: str) -> None:
            self.name, self.key = name, key

    params = [P("from_", "from"), P("to", "to"), P("limit", "limit")]
    assert keywords(params, {"to": "b", "from": 'a"'}) == ["from_='a\"'", 'to="b"']
    assert py(["x", 1, None]) == '["x", 1, None]'


ASSIGNMENTS = [
    ('R["short"]', "lambda t: t.short(", ["a=1"]),
    (
        'R["a_name_that_is_long_enough"]',
        "lambda typed: typed.a_name_that_is_long_enough(",
        ['x="y"'],
    ),
    ('R["' + "n" * 40 + '"]', "lambda typed: typed." + "n" * 40 + "(", ['x="y"']),
    ('R["' + "n" * 40 + '"]', "lambda typed: typed." + "n" * 40 + "(", []),
    (
        'R["' + "n" * 30 + '"]',
        "lambda typed: typed." + "n" * 30 + "(",
        [f"a{i}={i}" for i in range(12)],
    ),
]


@pytest.mark.parametrize(("target", "head", "args"), ASSIGNMENTS)
def test_assign_call_is_laid_out_as_black_does(target: str, head: str, args: list[str]) -> None:
    source = assign_call(target, head, args) + "\n"
    assert black.format_str(source, mode=mode()) == source


def test_a_template_cache_that_cannot_be_written_only_costs_time(tmp_path: Path) -> None:
    import jinja2

    from mcpgen.render.templates import _QuietBytecodeCache

    cache = _QuietBytecodeCache(str(tmp_path / "missing" / "folder"))
    env = jinja2.Environment(loader=jinja2.DictLoader({"t": "hi {{ x }}"}), bytecode_cache=cache)
    assert env.get_template("t").render(x=1) == "hi 1"


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
