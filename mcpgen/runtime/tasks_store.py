"""Where MCP tasks live (``runtime/tasks.py``): records in a TTL cache, this process's
(``local_cache.LocalCache``) or Redis's when replicas share state (``--redis-url``), so a
task created on one replica is read, awaited and cancelled on another.

A record is a JSON object: the task as clients see it (``taskId``, ``status``,
``statusMessage``, ``createdAt``, ``lastUpdatedAt``, ``ttl`` and ``pollInterval`` in ms)
plus what the server keeps: ``owner`` (the verified caller's key), ``replica`` (who runs
it), ``expiresAt`` (epoch seconds), ``modern`` (the era it was created in), ``result`` or
``error`` once it ends, ``inputRequests`` and ``call`` (tool, arguments, the round's
state: what any replica needs to run it again) while it waits for input (2026-07-28),
``counted`` (where the ``--max-tasks`` count holds it: ``tasks_count.uncount``).

Each caller's task ids are kept in one index entry (newest last, bounded), changed in one
atomic step of the cache (``TTLCache.change``: a Redis transaction). Replicas that
run tasks keep a heartbeat entry alive; a ``working`` task whose replica's heartbeat is gone
ends ``failed``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeGuard

import mcp_types as types
from mcp.shared.exceptions import MCPError, NoBackChannelError
from mcp.shared.message import ServerMessageMetadata
from mcp_types import INVALID_REQUEST
from pydantic import TypeAdapter

from .tasks_count import BUCKET as BUCKET
from .tasks_count import ENTRY, count, uncount
from .tasks_wire import RELATED

if TYPE_CHECKING:
    from .local_cache import TTLCache

Record = dict[str, Any]
QUESTION: TypeAdapter[types.InputRequest] = TypeAdapter(types.InputRequest)
TERMINAL = frozenset({"completed", "failed", "cancelled"})
HEARTBEAT_TTL = 6.0  # seconds a replica's heartbeat lasts (renewed every HEARTBEAT_EVERY)
HEARTBEAT_EVERY = 1.0
MAX_OWNED = 1000  # task ids kept per caller (the oldest go first)
MAX_OWNED_BYTES = 100 * 1024 * 1024  # and the bytes of their records
MAX_STORED = 50_000  # tasks kept for all callers (``--max-tasks``; with Redis: all replicas)
SMALL = 1024  # a write of fewer bytes (progress) is counted when the task ends
UNUSED = (  # (a handshake-era answer to a task's question that came too late)
    "this answer to its question came after another was taken (or once it was no longer"
    " asked) and was not used"
)


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
        and completions lose no entry; the dropped tasks are deleted after it."""
        dropped: list[list[Any]] = []
        changed = await self.cache.change(
            "o:" + owner, lambda stored: self._index(stored, edit, dropped)
        )
        await self._drop(dropped if changed else [])  # (a failed transaction dropped none)
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
        to one task's questions only one restarts it."""
        written: list[Record] = []

        def edit(stored: Any) -> tuple[Any, float] | None:
            written.clear()  # (Redis runs it again when another replica changed the key)
            if not self.live_record(stored):
                return None
            ttl, was = max(self.remaining(stored), 0.001), stored["status"]
            made = changes(stored) if callable(changes) else changes
            if was in TERMINAL or was != (status or was) or made is None:
                return stored, ttl  # left as it is
            written[:] = [stored, made]
            stored.update(made, lastUpdatedAt=now_iso())
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


class Progress:
    """``Context.task``: progress during a task becomes its ``statusMessage``. A handshake-era
    question is kept in the record's ``inputRequests`` (a 2026-07-28 ``tasks/update`` may
    answer it) and travels on the newest ``tasks/result`` request of the task in flight
    (``channels``: task id -> those requests), sent again when a newer one comes."""

    def __init__(
        self, store: TaskStore, task_id: str, channels: Any = None, events: Any = None
    ) -> None:
        self.store, self.task_id, self.events = store, task_id, events
        self.channels: dict[str, list[Any]] = {} if channels is None else channels
        self.session, self.request_id = self, task_id  # the channel ``Context.ask`` uses
        self.request: Any = None  # the tasks/result request asked on last (its headers)
        self.key = ""  # the question's key in ``inputRequests``

    async def __call__(self, done: float, total: float | None, message: str | None) -> None:
        text = message or (f"{done:g}/{total:g}" if total else f"{done:g}")
        await self.store.update(self.task_id, {"statusMessage": text[:500]})  # as an end's

    async def asking(self, waiting: bool) -> None:
        """The handler has its answer (``waiting`` False): the task works again."""
        changes = {"status": "working", "inputRequests": None, "inputResponses": None}
        await self.store.update(self.task_id, changes)

    async def channel(self, request: Any) -> tuple[Any, Any]:
        """``request`` naming the task in its ``_meta`` (as the handshake era's tasks
        specify), kept in the record; the task reads input_required until it is answered,
        which ``send_request`` (this object is the channel) waits for."""
        params = request.params or types.RequestParams()
        meta = {**(params.meta or {}), RELATED: {"taskId": self.task_id}}
        named = request.model_copy(update={"params": params.model_copy(update={"meta": meta})})
        self.key = f"question-{secrets.token_hex(4)}"  # (keys are unique over a task's life)
        asked = {self.key: named.model_dump(by_alias=True, mode="json", exclude_none=True)}
        await self.store.update(self.task_id, {"status": "input_required", "inputRequests": asked})
        return self, named

    async def send_request(self, request: Any, result_type: Any, metadata: Any) -> Any:
        """The answer from the client over the newest tasks/result request in flight, or from
        a 2026 ``tasks/update`` (the record's ``inputResponses``), whichever comes first."""
        loop, via = asyncio.get_running_loop(), None
        sending: asyncio.Future[Any] = loop.create_future()  # (no request to carry it yet)
        try:
            while True:
                if (newest := (self.channels.get(self.task_id) or [None])[-1]) is not via:
                    sending.cancel()  # (its request ended, or a newer one came: asked there)
                    via, sending = newest, loop.create_future()
                    if via is not None:
                        self.request = via.request
                        related = metadata.related_request_id and via.request_id
                        meta = ServerMessageMetadata(related_request_id=related)
                        sending = asyncio.ensure_future(
                            via.session.send_request(request, result_type, metadata=meta)
                        )
                if sending.done():
                    return await self.first(sending.result(), result_type, via)
                with contextlib.suppress(MCPError):  # (the store away: asked again)
                    record = await self.store.get(self.task_id) or {}
                    if (answer := (record.get("inputResponses") or {}).get(self.key)) is not None:
                        return result_type.model_validate(answer)
                await asyncio.sleep(0.1)
        finally:
            sending.cancel()

    async def first(self, answer: Any, result_type: Any, via: Any) -> Any:
        """The first answer taken (``TaskStore.answer``): ``answer``, from ``via``'s client,
        unless another came first (a 2026 ``tasks/update``, acknowledged: the handler used
        the later one); ``via``'s client is told then (``unused``). With the store away,
        ``answer``."""
        dumped = answer.model_dump(by_alias=True, mode="json", exclude_none=True)
        with contextlib.suppress(MCPError):
            if await self.store.answer(self.task_id, {self.key: dumped}) is None:
                record = await self.store.get(self.task_id) or {}
                if (taken := (record.get("inputResponses") or {}).get(self.key)) is not None:
                    await unused(via, self.task_id, self.events)
                    return result_type.model_validate(taken)
        return answer


async def unused(ctx: Any, task_id: str, events: Any) -> None:
    """Tell the client of ``ctx`` (a tasks/result request) that its answer to the task's
    question was not used: another was taken first, or it is asked no more. A warning log
    on that request: no JSON-RPC error (tasks/result MUST still wait for the task's end;
    a response cannot be answered), as a 2026 ``tasks/update`` to a question answered
    meanwhile is acknowledged (SEP-2663: a server SHOULD ignore it)."""
    from .context import Context

    note = {"taskId": task_id, "message": f"Task {task_id}: {UNUSED}"}
    try:
        await Context(ctx, events=events).log("warning", note, "tasks")
    except Exception:  # (best effort: the connection may be gone)
        logging.getLogger("mcp_server").debug("task %s: not told", task_id, exc_info=True)


def relay(
    store: TaskStore, ctx: Any, record: Record, asked: dict[str, Any], here: Any, events: Any
) -> None:
    """The handshake-era questions of a task that runs on another replica (not ``here``)
    asked on the tasks/result request ``ctx`` (each once: ``asked``, key -> its asking),
    their answers written to the record, where that replica's ``Progress.send_request``
    reads them. Each tasks/result in flight elsewhere asks it too: the first answer is taken
    (``TaskStore.answer``), and the question withdrawn from the others (cancelled:
    ``notifications/cancelled``) once it is answered or no longer asked."""
    running = record["status"] != "input_required" or record["taskId"] in here
    questions = {} if running else record.get("inputRequests") or {}
    answered = record.get("inputResponses") or {}
    for key, question in questions.items():
        if key not in asked and key not in answered:
            relaying = _relay(store, ctx, record["taskId"], key, question, events)
            asked[key] = asyncio.ensure_future(relaying)
    for key, asking in asked.items():
        if not asking.done() and (key not in questions or key in answered):
            asking.cancel()  # answered (here or elsewhere) or withdrawn: asked no more
        elif asking.done() and not asking.cancelled():
            asking.result()  # (this request cannot carry a question: that error)


async def _relay(
    store: TaskStore, ctx: Any, task_id: str, key: str, question: Any, events: Any = None
) -> None:
    from .context import ANSWER_TYPES, _no_channel

    request = QUESTION.validate_python(question)
    related = None if request.method == "roots/list" else ctx.request_id
    try:
        answer = await ctx.session.send_request(
            request, ANSWER_TYPES[request.method], metadata=ServerMessageMetadata(related)
        )
    except NoBackChannelError:
        cannot = f"Task {task_id} asks its client ({request.method}), which this request cannot"
        raise MCPError(INVALID_REQUEST, f"{cannot} carry {_no_channel(ctx)}") from None
    dumped = answer.model_dump(by_alias=True, mode="json", exclude_none=True)
    if await store.answer(task_id, {key: dumped}) is None:  # (another taken, or withdrawn)
        await unused(ctx, task_id, events)
