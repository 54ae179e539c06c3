"""Paging of the generated servers' lists (``_runtime.page``): by count, and for tools also
by size, so a page of a big API's tools stays under the SDK client's 1 MiB event limit."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st

CALCULATOR_SRC = Path(__file__).resolve().parent.parent / "generated_examples/calculator/src"


@pytest.fixture(scope="module")
def runtime() -> Iterator[ModuleType]:
    sys.path.insert(0, str(CALCULATOR_SRC))
    try:
        from calculator_mcp import _runtime

        yield _runtime
    finally:
        sys.path.remove(str(CALCULATOR_SRC))


def _pages(runtime: ModuleType, weights: list[int], size: int) -> list[list[int]]:
    items = list(range(len(weights)))
    pages, cursor = [], None
    while True:
        shown, cursor = runtime.page(items, cursor, size, weights.__getitem__)
        pages.append(shown)
        if cursor is None:
            return pages


@given(st.lists(st.integers(0, 700_000), max_size=40), st.integers(1, 12))
def test_pages_cover_every_item_once_within_count_and_bytes(
    runtime: ModuleType, weights: list[int], size: int
) -> None:
    pages = _pages(runtime, weights, size)
    assert [i for shown in pages for i in shown] == list(range(len(weights)))
    for shown in pages:
        assert len(shown) <= size
        # over the byte budget only when one item alone is
        assert len(shown) == 1 or sum(weights[i] for i in shown) <= runtime.PAGE_BYTES


def test_big_tools_are_listed_in_more_pages(runtime: ModuleType) -> None:
    weights = [300_000] * 5  # three of these would pass the budget
    assert [len(p) for p in _pages(runtime, weights, 100)] == [1, 1, 1, 1, 1]
    assert [len(p) for p in _pages(runtime, [1_000] * 250, 100)] == [100, 100, 50]
    assert runtime.PAGE_BYTES * 2 <= 1024 * 1024  # the SDK client's limit per event
