"""Where MCP tasks live (``runtime/tasks.py``): records in a TTL cache, this process's
(``local_cache.LocalCache``) or Redis's when replicas share state (``--redis-url``), so a
task created on one replica is read, awaited and cancelled on another.

A record is a JSON object: the task as clients see it (``taskId``, ``status``,
``statusMessage``, ``createdAt``, ``lastUpdatedAt``, ``ttl`` and ``pollInterval`` in ms)
plus what the server keeps: ``owner`` (the verified caller's key), ``replica`` (who runs
it), ``expiresAt`` (epoch seconds), ``modern`` (the era it was created in), ``result`` or
``error`` once it ends, ``inputRequests`` and ``call`` (tool, arguments, the round's
state: what any replica needs to run it again) while it waits for input (2026-07-28).

Each caller's task ids are kept in one index entry (newest last, bounded). Replicas that
run tasks keep a heartbeat entry alive; a ``working`` task whose replica's heartbeat is gone
ends ``failed``.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .local_cache import TTLCache

Record = dict[str, Any]
TERMINAL = frozenset({"completed", "failed", "cancelled"})
HEARTBEAT_TTL = 6.0  # seconds a replica's heartbeat lasts (renewed every HEARTBEAT_EVERY)
HEARTBEAT_EVERY = 1.0
MAX_OWNED = 1000  # task ids kept per caller (the oldest go first)
MAX_OWNED_BYTES = 100 * 1024 * 1024  # and the bytes of their results


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def local_cache() -> TTLCache:
    from .local_cache import LocalCache, ValueCodec

    return LocalCache(ValueCodec(None), "tasks", 100_000)


class TaskStore:
    def __init__(self, cache: TTLCache) -> None:
        self.cache = cache

    @staticmethod
    def remaining(record: Record) -> float:
        return float(record.get("expiresAt", 0)) - time.time()

    async def get(self, task_id: str) -> Record | None:
        record = await self.cache.get("t:" + task_id)
        if not isinstance(record, dict) or self.remaining(record) <= 0:
            return None
        return record

    async def put(self, record: Record) -> None:
        ttl = self.remaining(record)
        if ttl > 0:
            await self.cache.set("t:" + record["taskId"], record, ttl)

    async def create(self, record: Record) -> None:
        await self.put(record)
        owned = await self.owned(record["owner"])
        owned.append([record["taskId"], record["expiresAt"]])
        await self._keep(record["owner"], owned, len(owned) - MAX_OWNED)

    async def ended(self, owner: str, task_id: str, size: int) -> None:
        """Count the ``size`` bytes of ``task_id``'s result; past the caller's budget its
        oldest tasks go (never this one)."""
        owned = await self.owned(owner)
        sizes = [size if e[0] == task_id else sum(e[2:3]) for e in owned]
        owned = [[*e[:2], n] for e, n in zip(owned, sizes, strict=True)]
        drop, total = 0, sum(sizes)
        while total > MAX_OWNED_BYTES and drop < len(owned) and owned[drop][0] != task_id:
            total, drop = total - sizes[drop], drop + 1
        await self._keep(owner, owned, drop)

    async def _keep(self, owner: str, owned: list[list[Any]], drop: int) -> None:
        """The caller's index without its ``drop`` oldest tasks, which are deleted."""
        for dropped in owned[: max(drop, 0)]:  # out of the index: out of memory too
            await self.cache.delete("t:" + dropped[0])
        kept = owned[max(drop, 0) :]
        if kept:
            await self.cache.set("o:" + owner, kept, max(e[1] for e in kept) - time.time())

    async def owned(self, owner: str) -> list[list[Any]]:
        """``[task id, expires at, result bytes?]`` of the caller's tasks, oldest first
        (expired ones out)."""
        entries = await self.cache.get("o:" + owner)
        now = time.time()
        return [list(e) for e in entries or [] if isinstance(e, list) and e[1] > now]

    async def update(self, task_id: str, changes: Record, *, force: bool = False) -> Record | None:
        """The record with ``changes``, written unless it has ended (or expired): None then.
        A terminal status is final; ``force`` is for what a cancellation writes last."""
        record = await self.get(task_id)
        if record is None or (record["status"] in TERMINAL and not force):
            return None
        record.update(changes, lastUpdatedAt=now_iso())
        await self.put(record)
        return record

    async def beat(self, replica: str) -> None:
        await self.cache.set("r:" + replica, 1, HEARTBEAT_TTL)

    async def alive(self, replica: str) -> bool:
        return await self.cache.get("r:" + replica) is not None


class Progress:
    """``Context.task``: progress during a task becomes its ``statusMessage``."""

    def __init__(self, store: TaskStore, task_id: str) -> None:
        self.store, self.task_id = store, task_id

    async def __call__(self, done: float, total: float | None, message: str | None) -> None:
        text = message or (f"{done:g}/{total:g}" if total else f"{done:g}")
        await self.store.update(self.task_id, {"statusMessage": text})

    async def asking(self, waiting: bool) -> None:
        """The handler waits for the client's answer (handshake era: over the back channel)."""
        await self.store.update(
            self.task_id, {"status": "input_required" if waiting else "working"}
        )
