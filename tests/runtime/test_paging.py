"""Paging of the generated servers' lists (``runtime.paging.page``): by count, and for tools
also by size, so a page of a big API's tools stays under the SDK client's 1 MiB event limit;
a cursor the server did not make is invalid params."""

from __future__ import annotations

from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp.shared.exceptions import MCPError

from mcpgen.runtime import paging


@pytest.fixture(scope="module")
def runtime() -> ModuleType:
    return paging


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


@pytest.mark.parametrize("cursor", ["x", "LTE=", "OTk5", "A" * 40, "\u00e9", "MS4w"])
def test_a_cursor_the_server_did_not_make_is_invalid_params(cursor: str) -> None:
    with pytest.raises(MCPError) as caught:
        paging.page(list(range(10)), cursor, 3)
    assert caught.value.error.code == -32602
