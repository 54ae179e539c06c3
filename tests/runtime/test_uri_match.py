"""Matching a caller's URI against the server's resource templates (``runtime/uri.py``):
in time linear in the URI (RE2), however the template puts variables side by side, with the
split a greedy backtracking match made."""

from __future__ import annotations

import time

import pytest

from mcpgen.runtime.uri import match, to_regex, variables

pytestmark = pytest.mark.timeout(60)


def variables_of(template: str, uri: str) -> dict[str, str] | None:
    return match(to_regex(template), variables(template), uri)


@pytest.mark.parametrize(
    ("template", "uri"),
    [
        ("x://r/{a}.{b}.{c}", "x://r/" + "." * 3000 + "/"),  # 18 s at 2,000 dots before
        ("x://r/{a}-{b}", "x://r/" + "-" * 100_000 + "/"),
        ("x://r/{a}.{b}-{c}", "x://r/a.b-" + ".c" * 100_000),
        ("x://{+a}/raw/{+b}/end", "x://" + "/raw/" * 100_000 + "\n"),
        # 4.7 s with Python's re (each of a's, c's and e's places tried): within the cap
        ("x://{+a}x{b}y{+c}z{d}w{+e}v", "x://" + "xayzaw" * 680),
        ("x://{+a}/{b}/{+c}x", "x://" + "a/" * 2000),
    ],
)
def test_a_uri_made_to_backtrack_is_answered_at_once(template: str, uri: str) -> None:
    started = time.monotonic()
    variables_of(template, uri)
    assert time.monotonic() - started < 0.5


def test_side_by_side_variables_split_as_before() -> None:
    assert variables_of("x://r/{name}.{ext}", "x://r/archive.tar.gz") == {
        "name": "archive.tar",
        "ext": "gz",
    }
    assert variables_of("x://r/{a}.{b}.{c}", "x://r/p.q.r.s") == {"a": "p.q", "b": "r", "c": "s"}
    assert variables_of("x://r/{y}-{m}.json", "x://r/2024-05.json") == {"y": "2024", "m": "05"}
    assert variables_of("x://r/{a}-{b}", "x://r/ab") is None


def fastest(template: str, uri: str) -> float:
    pattern, names = to_regex(template), variables(template)
    best = float("inf")
    for _ in range(7):
        started = time.perf_counter()
        match(pattern, names, uri)
        best = min(best, time.perf_counter() - started)
    return best


@pytest.mark.parametrize(
    ("template", "fill", "tail"),
    [
        ("x://{+a}/raw/{+b}/end", "/raw/", "/en"),
        ("x://{+a,b}/end", ",", "/en"),
        ("x://{+a}.{#b}.{+c}!", ".#", "."),
    ],
)
def test_reserved_variables_side_by_side_match_in_linear_time_within_the_cap(
    template: str, fill: str, tail: str
) -> None:
    """Within the 4,096 characters a URI is matched up to, ``{+a}/raw/{+b}/end`` took time
    quadratic in the URI (0.15 s for 4,000 characters that do not match): each place
    ``/raw/`` appears was tried, and the rest read to the end from there. Four times the
    URI now takes about four times as long (under 8 on a noisy machine; it was ~20-40)."""
    short = "x://" + fill * (1000 // len(fill)) + tail
    long = "x://" + fill * (4000 // len(fill)) + tail
    assert variables_of(template, long) is None
    ratio = fastest(template, long) / fastest(template, short)
    assert ratio < 8, ratio


@pytest.mark.parametrize(
    "template",
    [
        "x://{+a}/raw/{+b}/end",
        "x://{+a,b}",
        "x://{+a}.{#b}-{c}.{+d}{?q}",
        "x://{a}.{b}.{c}",
        "x://{+a}x{b}y{+c}z",
        "x://{a,b}/i{/c,d}{.e,f}{;g,h}{?i,j}{&k}",
    ],
)
def test_the_linear_engine_splits_a_uri_as_a_backtracking_one(template: str) -> None:
    """RE2 changes no match: against every URI over a small alphabet, the variables are
    those Python's backtracking ``re`` finds with the same pattern."""
    import itertools
    import re

    pattern = to_regex(template)
    plain = re.compile(pattern.pattern)
    alphabet = ["/raw/", ",", ".", "#", "-", "/end", "a", "?q=", "\n", "x", "y", ";g=", "&k="]
    for size in range(5):
        for parts in itertools.product(alphabet, repeat=size):
            uri = "x://" + "".join(parts)
            got, want = pattern.fullmatch(uri), plain.fullmatch(uri)
            assert (got and got.groupdict()) == (want and want.groupdict()), uri


@pytest.mark.parametrize(
    ("template", "head"),
    [
        ("api://items/{id}{?%s}", "api://items/7?"),
        ("api://items/{id}?x=1{&%s}", "api://items/7?x=1&"),
    ],
)
def test_query_variables_match_in_any_subset_and_order(template: str, head: str) -> None:
    """RFC 6570 leaves an undefined variable out of ``{?q,page}`` (the typed client's
    ``expand`` too): ``?page=2`` and ``?page=2&q=x`` were not found. Every subset of the
    variables, in every order (expanded by a template listing them so), gives them back."""
    import itertools

    from mcpgen.runtime.uri import expand

    names = ["q", "page", "a.b"]
    pattern = to_regex(template % ",".join(names))
    values = {"id": "7", "q": "x&y=z", "page": "", "a.b": "é?#/"}
    for size in range(len(names) + 1):
        for order in itertools.permutations(names, size):
            uri = expand(template % ",".join(order), {n: values[n] for n in ("id", *order)})
            assert match(pattern, ["id", *names], uri) == {"id": "7"} | {
                n: values[n] for n in order
            }, uri
    twice, unknown = head + "q=1&page=2&q=3", head + "q=1&other=2"
    assert match(pattern, ["id", *names], twice) is None
    assert match(pattern, ["id", *names], unknown) is None
