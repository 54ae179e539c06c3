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


def count(held: Any, expires: float, n: int, cap: float = math.inf) -> tuple[Any, bool]:
    """The entry ``held`` with ``n`` more tasks stored that expire at ``expires`` (epoch
    seconds), unless that passes ``cap`` (then unchanged, and False): ``(entry, ttl)``, or
    None when it counts nothing. It counts them by the 10 minutes in which they expire
    (bucket -> count), checked and counted in one atomic step of its caller (Redis: a
    transaction, so concurrent creates on any replica never pass the cap); a bucket that
    has ended is dropped: its tasks have expired (a bare counter would keep them: an
    expiry tells nobody)."""
    bucket, now = str(int(expires) // BUCKET), time.time()
    held = held if isinstance(held, dict) else {}
    counts = {b: c for b, c in held.items() if (int(b) + 1) * BUCKET > now and c > 0}
    fits = sum(counts.values()) + n <= cap
    counts[bucket] = counts.get(bucket, 0) + (n if fits else 0)
    counts = {b: c for b, c in counts.items() if c > 0}
    last = max(map(int, counts), default=0)
    return ((counts, max((last + 1) * BUCKET - now, 0.001)) if counts else None), fits


async def uncount(cache: TTLCache, task_id: str, expires: float) -> None:
    """The task ``task_id``, that expires at ``expires``, no longer kept (dropped from its
    caller's index): its record deleted and the task uncounted in one atomic step (Redis:
    a transaction), so once only: a step Redis ran whose answer was lost runs again (as
    ``change_many`` says) and, the record gone, changes nothing (twice, it made room for a
    task more than ``--max-tasks``). Uncounted where it was counted: a record not marked
    ``counted`` was created by an older replica, counted in its ``n:<bucket>`` key if that
    holds a count (else by this code before the mark: here too). A record Redis evicted
    is counted until its 10 minutes end."""
    bucket = int(expires) // BUCKET
    record, older = "t:" + task_id, f"n:{bucket}"
    ends = max((bucket + 1) * BUCKET - time.time(), 0.001)

    def less(stored: list[Any]) -> dict[str, tuple[Any, float] | None]:
        there, old, held = stored
        if there is None:  # uncounted already (or evicted)
            return {}
        mine = isinstance(there, dict) and there.get("counted") == ENTRY
        if not mine and isinstance(old, int) and old > 0:  # (as mcpgen 8fdb7232 counts)
            return {record: None, older: (old - 1, ends) if old > 1 else None}
        return {record: None, ENTRY: count(held, expires, -1)[0]}

    await cache.change_many([record, older, ENTRY], less)
