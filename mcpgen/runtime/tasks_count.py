"""The ``--max-tasks`` count of ``tasks_store`` (docs/tasks.md): the tasks kept for all
callers (with Redis: by all replicas), in one entry of the tasks' cache (``n:``).

Servers generated before that entry (mcpgen 8fdb7232) count in one key per 10 minutes
(``n:<bucket>``); during a rolling upgrade both run. A record this code counted says so
(``counted``), so a task an older replica created and counted is uncounted where it was
counted when a newer one drops it (``uncount``)."""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .local_cache import TTLCache

BUCKET = 600  # seconds: stored tasks are counted by the 10 minutes in which they expire
ENTRY = "n:"  # (the record field ``counted`` names it)


async def count(cache: TTLCache, expires: float, n: int, cap: float = math.inf) -> bool:
    """``n`` more tasks stored that expire at ``expires`` (epoch seconds), unless that
    passes ``cap`` (False). One entry counts them by the 10 minutes in which they expire
    (bucket -> count), checked and counted in one atomic step (Redis: a transaction, so
    concurrent creates on any replica never pass the cap); a bucket that has ended is
    dropped: its tasks have expired (a bare counter would keep them: an expiry tells
    nobody)."""
    bucket, now, fits = str(int(expires) // BUCKET), time.time(), [True]

    def add(stored: Any) -> tuple[Any, float] | None:
        held = stored if isinstance(stored, dict) else {}
        counts = {b: c for b, c in held.items() if (int(b) + 1) * BUCKET > now and c > 0}
        fits[0] = sum(counts.values()) + n <= cap
        counts[bucket] = counts.get(bucket, 0) + (n if fits[0] else 0)
        counts = {b: c for b, c in counts.items() if c > 0}
        last = max(map(int, counts), default=0)
        return (counts, max((last + 1) * BUCKET - now, 0.001)) if counts else None

    await cache.change(ENTRY, add)
    return fits[0]


async def uncount(cache: TTLCache, expires: float, record: Any) -> None:
    """One task that expires at ``expires`` no longer kept (dropped from its caller's
    index), uncounted where it was counted: a ``record`` (read before it was deleted) not
    marked ``counted`` was created by an older replica, counted in its ``n:<bucket>`` key
    if that holds a count (else by this code before the mark: here too when evicted)."""
    bucket, older = int(expires) // BUCKET, [False]
    ends = max((bucket + 1) * BUCKET - time.time(), 0.001)

    def less(stored: Any) -> tuple[Any, float] | None:  # (as mcpgen 8fdb7232 counts)
        older[0] = isinstance(stored, int) and stored > 0
        return (stored - 1, ends) if older[0] and stored > 1 else None

    if isinstance(record, dict) and record.get("counted") != ENTRY:
        await cache.change(f"n:{bucket}", less)
    if not older[0]:
        await count(cache, expires, -1)
