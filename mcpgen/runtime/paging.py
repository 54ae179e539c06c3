"""Cursor paging of list results (both protocol eras; the SDK's high-level server has none)."""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Callable, Sequence
from typing import TypeVar

from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

ItemT = TypeVar("ItemT")

# The SDK's client refuses a server-sent event over 1 MiB: a page of a big API's tools (GitHub:
# 100 tools can be 1.2 MB) is cut at half that, counted as ASCII-escaped JSON (never less).
PAGE_BYTES = 512 * 1024
MAX_CURSOR = 32  # characters: a cursor is a small number, anything longer is not ours


def page(
    items: Sequence[ItemT],
    cursor: str | None,
    size: int,
    weigh: Callable[[ItemT], int] | None = None,
) -> tuple[list[ItemT], str | None]:
    """One page of ``items`` from an opaque cursor: at most ``size`` items and, when they
    can be weighed, at most ``PAGE_BYTES`` (but at least one item). A bad cursor is invalid
    params."""
    start = _decode(cursor, len(items)) if cursor else 0
    end = min(start + size, len(items))
    if weigh is not None:
        total = 0
        for index in range(start, end):
            total += weigh(items[index])
            if total > PAGE_BYTES and index > start:
                end = index
                break
    next_cursor = base64.urlsafe_b64encode(str(end).encode()).decode() if end < len(items) else None
    return list(items[start:end]), next_cursor


def _decode(cursor: str, count: int) -> int:
    """Where a page starts, from a cursor ``page`` made for ``count`` items."""
    text = ""
    if len(cursor) <= MAX_CURSOR:
        with contextlib.suppress(ValueError, UnicodeError):
            text = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii")
    if not text.isdigit() or int(text) > count:
        raise MCPError(INVALID_PARAMS, "Invalid cursor")
    return int(text)
