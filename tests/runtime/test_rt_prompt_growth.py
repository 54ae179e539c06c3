"""A prompt's template, bounded as its values grow (a list item by item, a stream listed in
one C call, a number multiplied), and not refused when what it makes fits."""

from __future__ import annotations

import pprint
import re
import time
import tracemalloc

import jinja2
import pytest
from mcp.shared.exceptions import MCPError

from mcpgen.runtime.prompts import render_text


def refused(
    source: str, arguments: dict[str, str], megabytes: int = 10, expected: str = "went over a limit"
) -> str:
    """The limit ``source`` reached, checked to have cost under 2.5 s and 10 MB."""
    tracemalloc.start()
    started = time.monotonic()
    try:
        with pytest.raises(MCPError) as error:
            render_text(source, arguments)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.monotonic() - started < 2.5
    assert peak < megabytes * 1_000_000, peak
    assert expected in error.value.error.message, error.value.error.message
    return error.value.error.message


def test_a_value_over_the_limit_has_one_message() -> None:
    """A text too long and a list too heavy were two checks with two messages ("would hold
    more than", "printing a value would make more than"): one check now, one message."""
    who = {"who": "x" * 600_000}
    long, heavy = refused("{{ (who ~ who)|length }}", who), refused("{{ [who, who] }}", who)
    assert long == heavy
    assert long.endswith("a value would make more than 1048576 characters or items")


def test_a_join_and_a_wordwrap_that_fit_render() -> None:
    """``join`` counted each item once more, and a separator more than it puts in; ``wordwrap``
    counted a wrapstring for each character: texts under 1 MiB were refused."""
    text = "abcdefghi " * 100_000  # 100,000 words: 999,999 characters joined
    assert render_text("{{ text.split()|join(' ') }}", {"text": text}) == text[:-1]
    assert render_text("{{ ' '.join(text.split()) }}", {"text": text}) == text[:-1]
    assert render_text("{{ text|join }}", {"text": text[:550_000]}) == text[:550_000]
    source = "{{ text|wordwrap(80, wrapstring='<br>') }}"
    plain = jinja2.Environment().from_string(source).render(text=text[:300_000])
    assert render_text(source, {"text": text[:300_000]}) == plain


GROWN = [
    "{% set l = [] %}{% for i in range(1000) %}{% set _ = l.append(who ~ i) %}{% endfor %}"
    "{{ l|length }}",  # 100 MB kept, printed as 4 characters
    "{% set l = [] %}{% for i in range(1000) %}{% set _ = l.insert(0, who ~ i) %}{% endfor %}",
    "{% set d = {} %}{% for i in range(1000) %}{% set _ = d.update({i: who ~ i}) %}{% endfor %}",
    "{% set s = [] %}{% set _ = s.extend(range(1000)|map('center', 100000)) %}",
    "{% set s = {0: 0}.keys() - [] %}{% for i in range(1000) %}"  # a set
    "{% set _ = s.symmetric_difference_update([who ~ i]) %}{% endfor %}",
    "{% set ns = namespace(l=[]) %}{% for i in range(1000) %}{% set ns.l = ns.l + [who ~ i] %}"
    "{% endfor %}",
    # a stream listed in one C call: each item weighed as it comes
    "{{ range(1000)|map('center', 100000)|list|length }}",
    "{{ ''.join(range(1000)|map('center', 100000))|length }}",
    "{{ dict.fromkeys(range(1000)|map('center', 100000))|length }}",
    "{{ cycler(*(range(1000)|map('center', 100000))).current|length }}",
    "{% for x in range(1000)|map('center', 100000) %}{{ loop.length if loop.first }}{% endfor %}",
    "{{ range(1000)|map('center', 100000)|reverse|first|length }}",
    "{{ range(1000)|map('center', 100000)|batch(1000)|first|length }}",
    "{% for x in range(1000)|map('center', 100000)|unique %}{% endfor %}",
]


@pytest.mark.parametrize("source", GROWN)
def test_a_value_is_weighed_as_it_grows(source: str) -> None:
    """A list grown item by item (``append``, ``insert``, ``update``, ``extend``) was weighed
    only when printed, and a stream (``map``) listed by ``list``, ``join``, ``fromkeys``,
    ``*args``, ``loop.length``, ``reverse``, ``batch`` or ``unique`` only once whole: a
    gigabyte within the second (100 MB here) before any check."""
    message = refused(source, {"who": "x" * 100_000})
    assert "would make more than 1048576" in message


def test_a_list_grown_item_by_item_renders_and_in_linear_time() -> None:
    source = (
        "{% set l = [] %}{% set d = {} %}{% for i in range(5000) %}{% set _ = l.append(i) %}"
        "{% set _ = d.update({i: who}) %}{% endfor %}{{ l|length }} {{ d|length }} "
        "{{ range(3)|map('string')|reverse|join }}{{ 'ab'|reverse }}{{ [1, 2]|reverse|list }}"
    )
    started = time.monotonic()
    assert render_text(source, {"who": "ab"}) == "5000 5000 210ba[2, 1]"
    assert time.monotonic() - started < 1.0  # (weighing the whole list each time: 5 s)


@pytest.mark.parametrize(
    "source",
    [
        "{% set a = 3 ** 2000000 %}{% set b = a * a %}{% set c = b * b %}{{ c % 7 }}",
        "{% set a = 7 ** 2700000 %}{% set b = 3 ** 1300000 %}{{ (a // b) % 7 }}",
        "{{ (7 ** 2700000) % 7 }}",  # 1 MiB of number: 1.7 s for one **
        "{% set a = ('f' * 400000)|int(base=16) %}{% set b = ('f' * 200000)|int(base=16) %}"
        "{{ (a // b) % 7 }}",  # a caller's hexadecimal: 2.5 s (15 s for 1 MB)
        "{% set a = (0).from_bytes([255] * 100000, 'big') %}{{ (a // (a // 3 + 1)) % 7 }}",
    ],
)
def test_a_number_is_bounded_as_it_is_made(source: str) -> None:
    """``**`` could make a number of 1 MiB (1.7 s), ``*`` of two numbers was unbounded (each
    product doubled it), and so were ``int`` (base 16) and ``from_bytes``: a division of two
    such numbers ran for minutes."""
    assert re.search("number (would be )?over 8192 bytes", refused(source, {}))


def test_a_template_makes_no_bytes() -> None:
    """``encode`` made bytes, whose ``replace`` (``join``, ``expandtabs``...) no bound
    checked: 25 MB from 5 kB here, a terabyte from a megabyte; ``encode('punycode')`` is a
    Python loop, quadratic."""
    source = "{{ who.encode().replace(''.encode(), who.encode())|length }}"
    assert "template failed" in refused(source, {"who": "x" * 5000}, expected="failed")
    assert "template failed" in refused("{{ (0).to_bytes(9, 'big') }}", {}, expected="failed")


def test_numbers_of_a_normal_size_compute() -> None:
    source = "{{ 2 ** 10 }} {{ (2 ** 30000 * 3 ** 20000) % 1000 }} {{ [1, 2.5]|sum }}"
    assert render_text(source + " {{ [1, 2]|sum(start=10) }}", {}) == "1024 376 3.5 13"


@pytest.mark.parametrize(
    "source",
    [
        "{% set l = [[1] * 500] * 1000 %}{{ l|sum(start=[])|length }}",  # quadratic copies
        "{{ (('%(a)s' * 1000) % {'a': who})|length }}",  # one value printed 1,000 times
        "{{ (('%100000s' * 1000) % ((1,) * 1000))|length }}",  # widths, each under 1 MiB
        "{{ ('%(a)s' * 1000)|format(a=who)|length }}",
        "{{ ('{0}' * 1000).format(who)|length }}",
    ],
)
def test_one_c_call_is_bounded(source: str) -> None:
    """``sum`` with a list start copied the list at each item (1 s, in one step), and a
    format printed a value (or a width) once per field: 100 MB from 100 kB, in C."""
    message = refused(source, {"who": "x" * 100_000})
    assert "would make more than" in message or "sum adds numbers only" in message


@pytest.mark.parametrize(
    "source",
    [
        "{{ who|wordwrap(1)|length }}",  # each line copied what was left of the word: hours
        "{{ who|wordwrap(2)|length }}",
        "{{ ('a ' * 500000)|wordwrap(1)|length }}",
        "{{ who[:500000]|list|pprint|length }}",  # 4.6 s
    ],
)
def test_wordwrap_and_pprint_read_the_clock(source: str) -> None:
    """Python's own loops, inside one step: ``wordwrap`` of a 1 MB word ran for hours."""
    message = refused(source, {"who": "x" * 1_000_000}, megabytes=40)  # (textwrap's words)
    assert "ran for more than 1.0 s" in message


@pytest.mark.parametrize(
    "source",
    [
        "{{ ('a-' * 500000)|title|length }}",  # 1.9 s, 70 MB
        "{{ ('a' ~ '(' * 100000 ~ ')' * 100000)|urlize|length }}",  # quadratic: 30 s at 1 MB
        "{{ ('<a>' * 300000)|striptags|length }}",  # 2.9 s
        "{{ ('\U0001f600' * 1000000)|urlencode|length }}",  # 57 MB
    ],
)
def test_a_slow_text_filter_is_given_a_bounded_text(source: str) -> None:
    assert "reads at most" in refused(source, {})


def test_text_filters_of_a_normal_size_render() -> None:
    source = "{{ t|wordwrap(2, wrapstring='|') }} {{ t|title }} {{ t|urlize }} {{ l|pprint }}"
    plain = jinja2.Environment().from_string(source)
    arguments = {"t": "ab cd-ef www.example.com <b>", "l": ["x" * 30] * 4}
    assert render_text(source, arguments) == plain.render(arguments)
    assert pprint.pformat(arguments["l"]) in render_text(source, arguments)
