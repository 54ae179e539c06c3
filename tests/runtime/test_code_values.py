"""``plain_value``'s byte budget: exact at the edge (a value whose JSON fits is never
refused, one that does not is), and it stops early on a value shared many times."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from mcpgen.runtime.code_values import TooBig, bounded, plain_value

VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -12,
    2**80,
    1.5,
    float("nan"),
    'h\u00e9llo\n"\\',
    [],
    {},
    [1, [2, {"a": (3, 4)}]],
    {"k": {1, 2}},
    b"abc",
    {"x\n": None, 3: [None, "\u2603"]},
]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_the_budget_is_the_json_size(value: Any) -> None:
    size = len(json.dumps(plain_value(value), ensure_ascii=False).encode())
    assert plain_value(value, size) == plain_value(value)
    if not isinstance(value, dict) or not any("\n" in str(k) for k in value):
        with pytest.raises(TooBig):  # escaped keys are charged at their raw length
            plain_value(value, size - 1)


def test_an_aliased_value_is_refused_early() -> None:
    shared = ["x" * 1000] * 1000
    started = time.monotonic()
    with pytest.raises(TooBig):
        plain_value([shared] * 10_000, 64 * 1024)
    assert time.monotonic() - started < 0.5


def test_a_long_message_keeps_its_start_and_end() -> None:
    message = "Traceback\n" + "E" * 100_000 + "\nValueError: the end"
    cut = bounded(message, 1000)
    assert len(cut.encode()) <= 1000
    assert cut.startswith("Traceback") and cut.endswith("ValueError: the end")
    assert bounded("short", 1000) == "short"
