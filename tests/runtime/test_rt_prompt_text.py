"""A declared prompt's text is a sandboxed Jinja template filled with the caller's
arguments, whatever they are named."""

from __future__ import annotations

import tracemalloc

import pytest
from mcp.shared.exceptions import MCPError

from mcpgen.runtime.prompts import PromptBinding, render_text


def test_an_argument_may_be_named_self() -> None:
    """``render(**arguments)`` took an argument named ``self`` for its own: every get of such
    a prompt failed as an internal error, though the manifest validated and built. (A
    template cannot print it: ``{{ self }}`` is Jinja's, and validation refuses it.)"""
    arguments = {"self": "me", "class": "first", "source": "s"}
    assert render_text("{{ class }} {{ source }}", arguments) == "first s"
    assert render_text("no arguments used", arguments) == "no arguments used"


def test_a_failing_template_is_the_servers_fault() -> None:
    with pytest.raises(MCPError) as error:
        render_text("{{ n + 1 }}", {"n": "x"})
    assert error.value.error.code == -32603


def test_unknown_arguments_error_lists_a_few_names() -> None:
    """200,000 unknown arguments made an error of about 1.5 MB naming each of them."""
    binding = PromptBinding({"name": "greet", "arguments": [{"name": "who"}]})
    with pytest.raises(MCPError) as error:
        binding.check_arguments({f"x{n:06d}": "" for n in range(200_000)} | {"who": "me"})
    message = error.value.error.message
    assert len(message) < 300 and message.endswith("x000009, ... 199990 more")
    assert error.value.error.data == {"unknown": [f"x{n:06d}" for n in range(10)]}


@pytest.mark.parametrize(
    "source",
    [
        "{{ who * (n|int) }}",  # a caller's count: 200 MB in one step
        "{{ 7 ** (n|int * 30) % 10 }}",  # 1 MB of number, seconds of CPU
        "{% for i in range(n|int) %}{{ who }}{% endfor %}",  # 200 MB a chunk at a time
        "{{ lipsum(n=n|int) }}",  # a million paragraphs: a minute of CPU
        "{{ who|center(n|int * 1000) }}",  # widths: 100 MB
        "{{ who.ljust(n|int * 1000) }}",
    ],
)
def test_a_callers_numbers_cannot_make_a_huge_text(source: str) -> None:
    with pytest.raises(MCPError) as error:
        render_text(source, {"who": "x" * 2000, "n": "100000"})
    assert error.value.error.code == -32603


def test_a_width_through_percent_is_refused_before_the_text_is_made() -> None:
    """``'%*d' % (n, 1)`` made its n characters (50 MB) before the output cap refused them."""
    tracemalloc.start()
    try:
        with pytest.raises(MCPError):
            render_text("{{ '%*d' % (n|int, 1) }}", {"n": "50000000"})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10_000_000, peak


def test_small_products_and_powers_render() -> None:
    source = "{{ who * 3 }} {{ 2 ** 10 }} {{ 3 * [1] }} {{ who|center(4) }}{{ who.ljust(3) }}."
    assert render_text(source, {"who": "ab"}) == "ababab 1024 [1, 1, 1]  ab ab ."
    assert render_text("{{ '%s-%3d' % (who, 7) }}", {"who": "ab"}) == "ab-  7"
