"""Where MCP tasks live (``runtime/tasks.py``): records in a TTL cache, this process's
(``local_cache.LocalCache``) or Redis's when replicas share state (``--redis-url``), so a
task created on one replica is read, awaited and cancelled on another.

A record is a JSON object: the task as clients see it (``taskId``, ``status``,
``statusMessage``, ``createdAt``, ``lastUpdatedAt``, ``ttl`` and ``pollInterval`` in ms)
plus what the server keeps: ``owner`` (the verified caller's key), ``replica`` (who runs
it), ``expiresAt`` (epoch seconds), ``modern`` (the era it was created in), ``result`` or
``error`` once it ends, ``inputRequests`` and ``call`` (tool, arguments, the round's
state: what any replica needs to run it again) while it waits for input (2026-07-28),
``counted`` (where the ``--max-tasks`` count holds it: ``tasks_count.uncount``),
``edit`` (the token of the ``TaskStore.update`` that wrote it last).

Each caller's task ids are kept in one index entry (newest last, bounded), changed in one
atomic step of the cache (``TTLCache.change``: a Redis transaction). Replicas that
run tasks keep a heartbeat entry alive; a ``working`` task whose replica's heartbeat is gone
ends ``failed``.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeGuard

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_REQUEST

from .tasks_count import BUCKET as BUCKET
from .tasks_count import ENTRY, count, uncount

if TYPE_CHECKING:
    from .local_cache import TTLCache

Record = dict[str, Any]
TERMINAL = frozenset({"completed", "failed", "cancelled"})
HEARTBEAT_TTL = 6.0  # seconds a replica's heartbeat lasts (renewed every HEARTBEAT_EVERY)
HEARTBEAT_EVERY = 1.0
MAX_OWNED = 1000  # task ids kept per caller (the oldest go first)
MAX_OWNED_BYTES = 100 * 1024 * 1024  # and the bytes of their records
MAX_STORED = 50_000  # tasks kept for all callers (``--max-tasks``; with Redis: all replicas)
SMALL = 1024  # a write of fewer bytes (progress) is counted when the task ends


def unreachable() -> MCPError:
    return MCPError(types.INTERNAL_ERROR, "The task store is unreachable; try again")


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def local_cache() -> TTLCache:
    from .local_cache import LocalCache, ValueCodec

    return LocalCache(ValueCodec(None), "tasks", 100_000)


def live(entries: Any) -> list[list[Any]]:
    """The entries of a caller's index that have not expired."""
    now = time.time()
    return [list(e) for e in entries or [] if isinstance(e, list) and e[1] > now]


class TaskStore:
    def __init__(self, cache: TTLCache) -> None:
        self.cache, self.cap = cache, MAX_STORED

    @staticmethod
    def remaining(record: Record) -> float:
        return float(record.get("expiresAt", 0)) - time.time()

    @classmethod
    def live_record(cls, stored: Any) -> TypeGuard[Record]:
        """Whether ``stored`` is a task's record that has not expired."""
        return isinstance(stored, dict) and cls.remaining(stored) > 0

    async def get(self, task_id: str) -> Record | None:
        """The live record, or None; -32603 while the store is away (``reached``)."""
        record = await self.cache.get("t:" + task_id)
        if self.live_record(record):
            return record
        await self.reached()
        return None

    async def reached(self) -> None:
        """-32603 unless the store answers (a transaction), asked after a miss: it proves
        nothing ("unknown" or "no tasks" would tell the client to give its tasks up)."""
        if not await self.cache.change("p:", lambda _: None):
            raise unreachable()

    async def stopped(self, replica: str, task_ids: list[str]) -> list[str]:
        """Those of the tasks ``replica`` runs that are cancelled or gone, read with its
        heartbeat at once (Redis: one MGET); none when that is missing too (the store is
        away: a miss proves nothing)."""
        beat, *stored = await self.cache.get_many(["r:" + replica, *("t:" + t for t in task_ids)])
        pairs = zip(task_ids, stored, strict=True)
        stop = [t for t, r in pairs if not self.live_record(r) or r["status"] == "cancelled"]
        return stop if beat else []

    async def records(self, task_ids: list[str]) -> list[Record]:
        """The live records of ``task_ids``, read at once (Redis: one MGET); none: -32603
        while the store is away (``reached``)."""
        stored = await self.cache.get_many(["t:" + task_id for task_id in task_ids])
        if not (found := [r for r in stored if self.live_record(r)]):
            await self.reached()
        return found

    async def create(self, record: Record) -> bool:
        """False when the store is unreachable: the task cannot be read by its id; -32600
        when ``cap`` tasks are stored (``tasks_count``: one caller's oldest tasks dropped
        from its index count no more). The record, its caller's index entry and its place
        under ``cap`` are written in one atomic step (Redis: a transaction): a create the
        store did not take took no place (its place given back after it, lost with the
        store, stayed taken until its ten minutes ended); one Redis ran whose answer was
        lost runs again, finds its record and changes nothing."""
        task_id, expires, fits = record["taskId"], record["expiresAt"], [True]
        dropped: list[list[Any]] = []
        keys = [ENTRY, "o:" + record["owner"], "t:" + task_id]

        def add(owned: list[list[Any]]) -> tuple[list[list[Any]], int]:
            return [*owned, [task_id, expires]], len(owned) + 1 - MAX_OWNED

        def take(stored: list[Any]) -> dict[str, tuple[Any, float] | None]:
            held, owned, there = stored
            if there is not None:  # taken (its answer lost): the tasks it dropped kept
                return {}
            dropped.clear()  # (those of a run whose EXEC another client's change failed)
            counted, fits[0] = count(held, expires, 1, self.cap)
            if not fits[0]:
                return {}
            ttl = max(self.remaining(record), 0.001)
            index = self._index(owned, add, dropped)
            return {keys[0]: counted, keys[1]: index, keys[2]: ({**record, "counted": ENTRY}, ttl)}

        taken = await self.cache.change_many(keys, take)
        if not fits[0]:
            full = f"The server keeps at most {self.cap} tasks (--max-tasks), all taken"
            raise MCPError(INVALID_REQUEST, full + ": try again once older ones expire")
        await self._drop(dropped if taken else [])
        return taken

    async def ended(self, owner: str, task_id: str, size: int) -> None:
        """Count the ``size`` bytes of ``task_id``'s record (``update``); past the caller's
        budget its oldest tasks go (never this one)."""

        def weigh(owned: list[list[Any]]) -> tuple[list[list[Any]], int]:
            sizes = [size if e[0] == task_id else sum(e[2:3]) for e in owned]
            owned = [[*e[:2], n] for e, n in zip(owned, sizes, strict=True)]
            drop, total = 0, sum(sizes)
            while total > MAX_OWNED_BYTES and drop < len(owned) and owned[drop][0] != task_id:
                total, drop = total - sizes[drop], drop + 1
            return owned, drop

        await self._edit(owner, weigh)

    async def _edit(
        self, owner: str, edit: Callable[[list[list[Any]]], tuple[list[list[Any]], int]]
    ) -> bool:
        """The caller's index changed by ``edit`` (the entries, how many of the oldest to
        drop) in one atomic step of the cache (Redis: a transaction), so concurrent creates
        and completions lose no entry; the dropped tasks are deleted after it: those any run
        of the step dropped that the index it wrote does not hold (a run again after a lost
        answer finds the first run's out already and drops none; each went from the index
        by a drop, uncounted once: ``uncount``)."""
        dropped: dict[str, list[Any]] = {}  # (by every run: task id -> entry)
        kept: list[tuple[Any, float] | None] = [None]  # (the index the last run wrote)

        def step(stored: Any) -> tuple[Any, float] | None:
            gone: list[list[Any]] = []
            kept[0] = self._index(stored, edit, gone)
            dropped.update((e[0], e) for e in gone)
            return kept[0]

        changed = await self.cache.change("o:" + owner, step)
        held = {e[0] for e in kept[0][0]} if kept[0] else set()
        gone = [e for task_id, e in dropped.items() if task_id not in held]
        await self._drop(gone if changed else [])  # (a failed transaction dropped none)
        return changed

    @staticmethod
    def _index(stored: Any, edit: Any, dropped: list[list[Any]]) -> tuple[Any, float] | None:
        """The index ``stored`` changed by ``edit``; ``dropped`` the entries it drops."""
        owned, drop = edit(live(stored))
        dropped[:] = owned[: max(drop, 0)]  # out of the index: out of memory too
        kept = owned[max(drop, 0) :]
        return (kept, max(max(e[1] for e in kept) - time.time(), 0.001)) if kept else None

    async def _drop(self, dropped: list[list[Any]]) -> None:
        for entry in dropped:  # (each record deleted as it is uncounted, where it was)
            await uncount(self.cache, entry[0], entry[1])

    async def owned(self, owner: str) -> list[list[Any]]:
        """``[task id, expires at, result bytes?]`` of the caller's tasks, oldest first
        (expired ones out)."""
        return live(await self.cache.get("o:" + owner))

    async def update(
        self,
        task_id: str,
        changes: Record | Callable[[Record], Record | None],
        *,
        status: str | None = None,
        took: list[bool] | None = None,
    ) -> Record | None:
        """The record with ``changes`` (or those ``changes(record)`` makes of it, None: none),
        written unless it has ended (or expired), or when ``status`` is given, unless it has
        that status: None then (``took`` says why: ``[True]`` when the store took the step,
        written or not; empty when the store took no write: its transaction's own answer,
        never a guess from the record read again); its bytes counted in the
        owner's budget (every way a record grows passes here). One atomic step of the
        cache (Redis: a transaction): a progress message written on one replica never
        brings back "working" over a cancellation written on another, and of two answers
        to one task's questions only one restarts it. A step Redis ran whose answer was lost,
        run again (``TTLCache.change``), finds its own write (``edit``): written, not None."""
        written: list[Record] = []
        mark = secrets.token_hex(8)  # (written with the changes: a run again knows its write)

        def edit(stored: Any) -> tuple[Any, float] | None:
            if self.live_record(stored) and stored.get("edit") == mark:  # (its answer lost)
                return stored, max(self.remaining(stored), 0.001)  # written: as that run said
            written.clear()  # (Redis runs it again when another replica changed the key)
            if not self.live_record(stored):
                return None
            ttl, was = max(self.remaining(stored), 0.001), stored["status"]
            made = changes(stored) if callable(changes) else changes
            if was in TERMINAL or was != (status or was) or made is None:
                return stored, ttl  # left as it is
            written[:] = [stored, made]
            stored.update(made, lastUpdatedAt=now_iso(), edit=mark)
            return stored, ttl

        if not await self.cache.change("t:" + task_id, edit):
            return None  # (the store took no write: its edit ran, the transaction failed)
        if took is not None:
            took[:] = [True]
        if not written:
            return None
        if written[0]["status"] in TERMINAL or len(json.dumps(written[1])) > SMALL:
            await self.ended(written[0]["owner"], task_id, len(json.dumps(written[0])))
        return written[0]

    async def answer(self, task_id: str, answers: Record) -> Record | None:
        """``answers`` (question key -> answer) added to the record's ``inputResponses`` in
        one atomic step, each while its question is asked and unanswered: the first answer
        is taken, a later one (another client's, to a question answered meanwhile) dropped,
        never written over a newer one: None then. -32603 when an answer to a question
        still asked was not written (the store away, or its transaction failed)."""
        wanted = [True]  # (until the record is read)

        def add(stored: Record) -> Record | None:
            asked, taken = stored.get("inputRequests") or {}, stored.get("inputResponses") or {}
            new = {k: v for k, v in answers.items() if k in asked and k not in taken}
            wanted[0] = bool(new) and stored["status"] == "input_required"
            return {"inputResponses": {**taken, **new}} if new else None

        written = await self.update(task_id, add, status="input_required")
        if written is None and wanted[0] and await self.get(task_id) is not None:
            raise unreachable()  # (gone meanwhile: None)
        return written

    async def beat(self, replica: str) -> None:
        await self.cache.set("r:" + replica, 1, HEARTBEAT_TTL)

    async def alive(self, replica: str) -> bool:
        return await self.cache.get("r:" + replica) is not None
