"""The semantic diff of two surface locks: every change, and whether it breaks clients.

``diff(old, new)`` compares two locks (see :mod:`.lock`) and returns :class:`Change` items
sorted by level, item and path. The rules are listed with examples in ``docs/surface.md``.

Schemas are compared by what they accept. For an *input* schema the server validates
calls: anything that makes it accept less (narrowing) breaks callers, anything that makes
it accept more (widening) does not. For an *output* schema clients rely on what results
look like, so the direction flips, with two exceptions MCP clients live by: a new output
property and extra properties are compatible (clients ignore fields they do not know).
Where the direction cannot be told cheaply the change is reported as breaking ("assumed").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .changes import BREAKING, COMPATIBLE, DOCS, LEVELS, RANK, Change, _list
from .items import _Differ
from .lock import compact, estimate_tokens, wire

Json = Any
__all__ = [
    "BREAKING",
    "COMPATIBLE",
    "DOCS",
    "LEVELS",
    "RANK",
    "Change",
    "diff",
    "summary",
    "tools_list_cost",
]


def diff(old: Mapping[str, Json], new: Mapping[str, Json]) -> list[Change]:
    """Every change from lock ``old`` to lock ``new``, sorted by level, item, path."""
    return _Differ(old, new).run()


def tools_list_cost(lock: Mapping[str, Json]) -> tuple[int, int]:
    """(bytes, estimated tokens) of the lock's tools/list result."""
    totals = lock.get("totals")
    if isinstance(totals, dict) and isinstance(totals.get("toolsListBytes"), int):
        n = int(totals["toolsListBytes"])
        tokens = totals.get("toolsListTokens")
        return n, int(tokens) if isinstance(tokens, int) else estimate_tokens(n)
    listed = [compact(wire(e)) for e in _list(lock, "tools") if e.get("enabled", True) is not False]
    from mcpgen.model.build import tools_list_size

    n = tools_list_size(listed)
    return n, estimate_tokens(n)


def summary(
    changes: Iterable[Change], old: Mapping[str, Json], new: Mapping[str, Json]
) -> dict[str, int]:
    counts = {level: 0 for level in LEVELS}
    for change in changes:
        counts[change.level] += 1
    before, after = tools_list_cost(old), tools_list_cost(new)
    return {
        **counts,
        "tokensBefore": before[1],
        "tokensAfter": after[1],
        "bytesBefore": before[0],
        "bytesAfter": after[0],
    }
