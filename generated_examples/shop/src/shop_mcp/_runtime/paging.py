"""Cursor paging of list results (both protocol eras; the SDK's high-level server has none)."""

from __future__ import annotations

import base64
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
    start = 0
    if cursor:
        start = _decode(cursor)
        if not 0 <= start <= len(items):
            raise MCPError(INVALID_PARAMS, "Invalid cursor")
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


def _decode(cursor: str) -> int:
    if len(cursor) > MAX_CURSOR:
        raise MCPError(INVALID_PARAMS, "Invalid cursor")
    try:
        text = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii")
    except (ValueError, UnicodeError):
        raise MCPError(INVALID_PARAMS, "Invalid cursor") from None
    if not text.isdigit():
        raise MCPError(INVALID_PARAMS, "Invalid cursor")
    return int(text)
