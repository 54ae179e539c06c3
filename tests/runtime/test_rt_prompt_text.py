"""A declared prompt's text is a sandboxed Jinja template filled with the caller's
arguments, whatever they are named."""

from __future__ import annotations

import re
import time
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


@pytest.mark.parametrize(
    "source",
    [
        "{% for a in range(10000) %}{% for b in range(10000) %}{% endfor %}{% endfor %}",
        "{% for c in who %}{% for d in who %}{% for e in who %}{% endfor %}{% endfor %}{% endfor %}",
        "{% for a in range(99999) %}{% for b in range(99999) %}{{ loop.cycle('', '') }}"
        "{% endfor %}{% endfor %}",
        "{% macro m(n) %}{% if n %}{{ m(n - 1) }}{{ m(n - 1) }}{% endif %}{% endmacro %}{{ m(60) }}",
        "{% for a in range(99999) %}{% set s = range(99999)|join %}{% endfor %}",
        "{% for a in range(99999) %}{% set s = range(99999)|batch(3)|list %}{% endfor %}",
        "{% for a in range(99999) %}{% set s = range(99999)|slice(3)|list %}{% endfor %}",
        "{% for a in range(99999) %}{% set s = who|sort %}{% endfor %}",
        "{% set d = dict.fromkeys(range(99999)) %}"
        "{% for a in range(99999) %}{% set s = d|dictsort %}{% endfor %}",
    ],
)
def test_a_template_stops_after_its_time(source: str) -> None:
    """Loops that print nothing, and a macro calling itself twice, ran for minutes (hours
    with a caller's long text): the render stops after MAX_SECONDS, naming the limit."""
    started = time.monotonic()
    with pytest.raises(MCPError) as error:
        render_text(source, {"who": "x" * 2000})
    assert time.monotonic() - started < 5
    assert error.value.error.code == -32603
    assert "ran for more than 1.0 s" in error.value.error.message


@pytest.mark.parametrize(
    "source",
    [
        "{% set ns = namespace(s=who) %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}"
        "{% endfor %}",
        "{% set ns = namespace(s=who) %}{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}"
        "{% endfor %}",
        "{% set ns = namespace(s=[who]) %}{% for i in range(40) %}{% set _ = ns.s.extend(ns.s) %}"
        "{% endfor %}",
        "{% set ns = namespace(s=who) %}{% for i in range(40) %}"
        "{% set ns.s = ns.s.join([ns.s, ns.s]) %}"
        "{% endfor %}",
        "{% set a = who ~ who ~ who ~ who %}{% set b = a ~ a %}{% set c = b ~ b %}{% set d = c ~ c %}"
        "{% set e = d ~ d %}{% set f = e ~ e %}{% set g = f ~ f %}{% set h = g ~ g %}{% set i = h ~ h %}",
        "{{ who|replace('', who)|replace('', who)|length }}",
        "{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}",
    ],
)
def test_a_template_cannot_build_a_huge_value(source: str) -> None:
    """``{% set %}`` doubling a text (or list) 40 times wanted terabytes; nothing printed,
    so the output cap never saw it. A value over MAX_TEXT is refused when made (and calls
    nested too deeply are named too)."""
    started = time.monotonic()
    with pytest.raises(MCPError) as error:
        render_text(source, {"who": "x" * 2000})
    assert time.monotonic() - started < 5
    assert error.value.error.code == -32603
    assert "went over a limit" in error.value.error.message


def test_loops_macros_and_joins_of_a_normal_size_render() -> None:
    source = (
        "{% macro twice(s) %}{{ s ~ s }}{% endmacro %}{% set ns = namespace(n=[]) %}"
        "{% for c in who %}{{ loop.index }}{{ twice(c) }}{% endfor %}"
        "{{ range(5)|join(',') + '!' }}{{ (who|list + [1])|length }}{{ who|sort|join }}"
        "{% for row in range(6)|batch(4) %}{{ row|sum }};{% endfor %}{{ ns.n.append(1) }}"
    )
    assert render_text(source, {"who": "ba"}) == "1bb2aa0,1,2,3,4!3ab6;9;None"


@pytest.mark.parametrize(
    "source",
    [
        "{{ who|replace('', who)|length }}",
        "{{ who.replace('\n', who)|length }}",
        "{{ range(99999)|join(who)|length }}",
        "{{ who|list|join(who)|length }}",
        "{{ who.join(range(9999)|map('string'))|length }}",  # (a clock read each item)
        "{{ who|indent(100000)|length }}",
        "{{ who.expandtabs(100000)|length }}",
        "{{ who|wordwrap(1, wrapstring=who)|length }}",
    ],
)
def test_one_call_cannot_make_a_huge_text(source: str) -> None:
    """A text put in once a match, an item, a line or a tab: one call of ``replace``,
    ``join``, ``indent``, ``expandtabs`` or ``wordwrap`` made 400 MB from 20 kB (gigabytes
    from a longer argument). Refused before the text is made."""
    tracemalloc.start()
    try:
        with pytest.raises(MCPError) as error:
            render_text(source, {"who": "ab\n\t" * 5000})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10_000_000, peak
    assert "would make more than" in error.value.error.message


@pytest.mark.parametrize(
    "source",
    [
        "{% set known = b.split() %}{% for w in a.split() if w in known %}{{ w }}{% endfor %}",
        "{{ a.split()|select('in', b.split())|join }}",
        "{{ a.split()|reject('in', b.split())|list|length }}",
        "{{ a.split()|map('replace', 'x', 'y')|select('in', b.split())|first }}",
    ],
)
def test_a_loops_if_and_an_iterating_filter_read_the_clock_each_item(source: str) -> None:
    """A loop's ``if`` that skips every item runs no block, and ``select`` iterates inside
    one step: 100,000 words tested against 100,000 ran 14 to 33 s. The clock is read at
    each item."""
    words = {"a": " ".join(f"a{n}" for n in range(100_000))}
    words["b"] = " ".join(f"b{n}" for n in range(100_000))
    started = time.monotonic()
    with pytest.raises(MCPError) as error:
        render_text(source, words)
    assert time.monotonic() - started < 5
    assert "ran for more than 1.0 s" in error.value.error.message


def test_a_sort_is_refused_past_its_items() -> None:
    """``text|sort`` orders in Python's own loop, which the clock cannot stop (4 s for 1 MB)."""
    started = time.monotonic()
    with pytest.raises(MCPError) as error:
        render_text("{{ text|sort|join }}", {"text": "ba" * 500_000})
    assert time.monotonic() - started < 5
    assert "sort would order more than 100000 items" in error.value.error.message
    assert render_text("{{ text|sort|join }}", {"text": "cab"}) == "abc"


@pytest.mark.parametrize(
    "source",
    [
        "{{ '{:>{}}'.format(who, n) }}",  # a caller's width: a gigabyte
        "{{ '{x:>{n}}'.format_map({'x': who, 'n': n}) }}",
        "{{ '%99999999d' % 1 }}",  # a template's own: 100 MB
        "{{ '%(w)99999999s' % {'w': who} }}",
        "{{ '%.99999999f'|format(1) }}",
        "{{ '%99999999s'|format(1) }}",
    ],
)
def test_a_formats_width_is_refused_before_the_text_is_made(source: str) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(MCPError) as error:
            render_text(source, {"who": "me", "n": "999999999"})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10_000_000, peak
    assert "is over 1048576" in error.value.error.message
    fits = "{{ '{:>{}}'.format(who, n) }}|{{ '%-4s|%5.1f' % (who, 2.25) }}|{{ '%3d'|format(7) }}"
    assert render_text(fits, {"who": "me", "n": "3"}) == " me|me  |  2.2|  7"


@pytest.mark.parametrize(
    "source",
    [
        "{{ ([who] * 1000)|join }}",  # a list of texts repeated: items x their size
        "{{ ''.join([who] * 100000) }}",
        "{{ [who, who, who]|join }}",  # the items joined are counted before
        "{{ ''.join([who, who, who]) }}",
        "{{ (range(1000)|list)|tojson(indent=100000) }}",
        "{{ who.translate({120: who}) }}",
        "{% set ns = namespace(s=who) %}{% for i in range(28) %}"
        "{% set ns.s %}{{ ns.s }}{{ ns.s }}{% endset %}{% endfor %}",  # a captured block
        "{% for i in range(3) %}{% filter upper %}{{ who }}{{ who }}{{ who }}{% endfilter %}"
        "{% endfor %}",
        "{% macro m() %}{{ caller() }}{{ caller() }}{{ caller() }}{% endmacro %}"
        "{% call m() %}{{ who }}{% endcall %}",
    ],
)
def test_a_value_is_refused_before_it_is_made(source: str) -> None:
    """These made their value (a gigabyte for ``[a]*1000|join``, 10 GB for ``translate``)
    before its size was checked, or never checked it (``{% set %}...{% endset %}``, which
    answered 268435456 characters as a success)."""
    tracemalloc.start()
    try:
        with pytest.raises(MCPError) as error:
            render_text(source, {"who": "x" * 400_000})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10_000_000, peak
    assert re.search("would (make|capture) more than", error.value.error.message)


_DOUBLED = "{% set l1 = [who, who] %}" + "".join(
    f"{{% set l{i + 1} = [l{i}, l{i}] %}}" for i in range(1, 30)
)  # a list literal holding the one before twice: 2**30 texts to print, 30 small lists


@pytest.mark.parametrize(
    "source",
    [
        "{{ [[who] * 1000] * 1000 }}",  # a list holding one list a thousand times
        _DOUBLED + "{{ l30 }}",
        _DOUBLED + "{{ 'x' ~ l30 }}",
        _DOUBLED + "{{ l30|string|length }}",
        "{% set l = [] %}{% for i in range(2000) %}{% set _ = l.append(who) %}{% endfor %}"
        "{{ l }}",  # 2,000 short items, each the whole argument
        _DOUBLED + "{{ '%s' % l30 }}",  # the ways that print a value whole
        _DOUBLED + "{{ l30|e }}",
        _DOUBLED + "{{ '{}'.format(l30) }}",
        _DOUBLED + "{{ dict(k=l30).items() }}",
        "{% set n0 = namespace(a=who) %}"
        + "".join(f"{{% set n{i + 1} = namespace(a=n{i}, b=n{i}) %}}" for i in range(30))
        + "{{ n30 }}",
    ],
)
def test_a_nested_value_is_refused_before_it_is_printed(source: str) -> None:
    """Printing (``{{ }}``, ``~``, ``string``) a list that holds another many times made
    each copy: ``[[who] * 1000] * 1000`` took a gigabyte before the output's size was
    checked, and thirty literal lists asked for terabytes in one ``str``."""
    tracemalloc.start()
    try:
        with pytest.raises(MCPError) as error:
            render_text(source, {"who": "x" * 1000})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10_000_000, peak
    assert re.search("would make more than", error.value.error.message)
    fits = "{% set l = [who, [who]] %}{{ l }} {{ {'k': l} }} {{ 'n' ~ l|length }}"
    assert render_text(fits, {"who": "a"}) == "['a', ['a']] {'k': ['a', ['a']]} n2"


def test_a_big_number_is_no_width() -> None:
    """Any integer over 1 MiB was refused as if it were a width: ``'%d users' % n``,
    ``'{:,}'.format(n)``, ``n|filesizeformat`` failed for five million; ``%%`` was read as a
    format."""
    fits = (
        "{{ '%d users, %d%%' % (n|int, 5) }} {{ '{:,}'.format(n|int) }} "
        "{{ (n|int)|filesizeformat }} {{ n|int|round|int }} {{ '%d%% 20000000' % 5 }}"
    )
    assert render_text(fits, {"n": "5000000"}) == (
        "5000000 users, 5% 5,000,000 5.0 MB 5000000 5% 20000000"
    )
    for width in (
        "{{ '%*d' % (n|int, 1) }}",
        "{{ 'a'|center(n|int) }}",
        "{{ '{:>{}}'.format('a', n|int) }}",
    ):
        with pytest.raises(MCPError):
            render_text(width, {"n": "5000000"})


def test_a_template_error_of_any_kind_has_a_standard_code() -> None:
    """``'{1}'.format(a)`` raised IndexError, which no clause caught: JSON-RPC code 0."""
    with pytest.raises(MCPError) as error:
        render_text("{{ '{1}'.format(a) }}", {"a": "x"})
    assert error.value.error.code == -32603
    assert error.value.error.message == "The prompt's template failed (see the server log)"
