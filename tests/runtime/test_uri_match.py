"""Matching a caller's URI against the server's resource templates (``runtime/uri.py``):
in time linear in the URI, however the template puts variables side by side, with the
split a greedy match made."""

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
