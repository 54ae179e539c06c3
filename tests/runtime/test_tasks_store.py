"""runtime/tasks_store.py: one caller's task index under concurrent creates and
completions, in this process and in Redis shared by two replicas (docs/tasks.md, "Who sees
a task"): no entry is lost, so the per-caller count and byte caps hold."""

from __future__ import annotations

import asyncio
import json
import time
import tracemalloc
from types import SimpleNamespace
from typing import Any

import pytest
from redis_support import REDIS_SERVER, SKIP_REASON, RedisServer
from test_shared import replicas

from mcpgen.runtime import shared_local, tasks_store
from mcpgen.runtime.tasks_store import TaskStore

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]
N = 20


def record(n: int) -> dict[str, Any]:
    return {
        "taskId": f"task-{n}",
        "owner": "alice",
        "status": "working",
        "expiresAt": time.time() + 60,
    }


@pytest.fixture(params=["local", "redis"])
async def stores(request: pytest.FixtureRequest, tmp_path: Any) -> Any:
    """Two stores on one backend: two replicas (Redis) or two users of one process."""
    if request.param == "local":
        cache = tasks_store.local_cache()
        yield TaskStore(cache), TaskStore(cache)
        return
    if REDIS_SERVER is None:
        pytest.skip(SKIP_REASON)
    server = RedisServer(tmp_path)
    server.start()
    try:
        async with replicas(server.url, n=2) as (a, b):
            yield TaskStore(a.cache("tasks")), TaskStore(b.cache("tasks"))
    finally:
        server.stop()


async def test_concurrent_creates_lose_no_index_entry(stores: Any) -> None:
    a, b = stores
    await asyncio.gather(*((a if n % 2 else b).create(record(n)) for n in range(N)))
    assert sorted(e[0] for e in await a.owned("alice")) == sorted(f"task-{n}" for n in range(N))


async def test_concurrent_completions_all_count_their_bytes(
    stores: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = stores
    for n in range(N):
        await a.create(record(n))
    await asyncio.gather(*((a if n % 2 else b).ended("alice", f"task-{n}", 10) for n in range(N)))
    assert [e[2:] for e in await a.owned("alice")] == [[10]] * N
    monkeypatch.setattr(tasks_store, "MAX_OWNED_BYTES", 10 * N - 1)  # one byte over: one goes
    await b.ended("alice", f"task-{N - 1}", 10)
    assert [e[0] for e in await a.owned("alice")] == [f"task-{n}" for n in range(1, N)]
    assert await a.get("task-0") is None


async def test_every_write_of_a_record_counts_in_the_callers_budget(
    stores: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only results, errors and kept calls were counted: the answers a client sends to a
    task's question (``inputResponses``, up to the body limit each) stayed in the record of
    a task cancelled before its handler took them, counted nowhere (a thousand: 4 GB)."""
    a, _ = stores
    monkeypatch.setattr(tasks_store, "MAX_OWNED_BYTES", 25_000)
    ids = [f"task-{n}" for n in range(5)]
    for n, task_id in enumerate(ids):
        await a.create({**record(n), "status": "input_required"})
        await a.update(task_id, {"inputResponses": {"q": "x" * 10_000}})
        await a.update(task_id, {"status": "cancelled"})
    kept = await a.records(ids)
    assert sum(len(json.dumps(r)) for r in kept) <= 25_000  # (50 kB before)
    assert [r["taskId"] for r in kept] == ids[-2:]


async def test_what_one_process_keeps_for_all_callers_is_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A caller's tasks may keep 100 MB, and a server with authentication has as many
    callers as credentials: the process keeps at most ``MAX_LOCAL_BYTES`` (here 1 MB) of
    records, and of ``ctx.store`` values, the least recently used out."""
    monkeypatch.setattr(shared_local, "MAX_LOCAL_BYTES", 1 << 20, raising=False)
    store, state = TaskStore(tasks_store.local_cache()), shared_local.local_user_state()
    tracemalloc.start()
    try:
        for n in range(16):  # 16 callers, 256 kB of result and 256 kB of ctx.store each
            await store.create({**record(n), "owner": f"caller-{n}"})
            await store.update(f"task-{n}", {"status": "completed", "result": f"{n:x}" * 2**18})
            await state.set(f"caller-{n}", "cart", f"{n:x}" * 2**18)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert held < 2.5 * (1 << 20), held  # (8.4 MB before)
    assert await store.get("task-15") and not await store.get("task-0")


async def test_a_cancel_among_progress_updates_on_another_replica_stays(stores: Any) -> None:
    """Progress (replica A) and a cancel (replica B) at once: the cancel is never written
    over (a read-modify-write of the record would bring "working" back, and the task
    would run on and end "completed" after the client was told "cancelled")."""
    a, b = stores
    for n in range(N):
        await a.create(record(n))

    async def progress(task_id: str) -> None:
        for step in range(10):
            await a.update(task_id, {"statusMessage": f"step {step}"})

    async def cancel(task_id: str) -> None:
        await asyncio.sleep(0)
        await b.update(task_id, {"status": "cancelled"})

    jobs = [job(f"task-{n}") for n in range(N) for job in (progress, cancel)]
    await asyncio.gather(*jobs)
    assert [(await a.get(f"task-{n}") or {}).get("status") for n in range(N)] == ["cancelled"] * N


async def test_one_of_two_concurrent_answers_restarts_a_task(stores: Any) -> None:
    """Two tasks/update at once on two replicas: the task runs again once, not twice."""
    a, b = stores
    await a.create({**record(0), "status": "input_required"})
    answers = [(s, {"status": "working", "replica": n}) for n, s in enumerate((a, b, a, b))]
    won = await asyncio.gather(
        *(s.update("task-0", changes, status="input_required") for s, changes in answers)
    )
    assert sum(1 for w in won if w is not None) == 1


async def test_a_late_answer_never_overwrites_a_newer_one(stores: Any) -> None:
    """Two replicas relaying one task's questions to their clients: a late answer to a
    question answered meanwhile (and followed by a newer one) replaced the record's whole
    ``inputResponses``, the newer question's answer lost before the handler read it; a
    second answer to one question overwrote the first. The first answer to a question
    still asked is kept; any other is dropped."""
    import mcp_types as types

    a, b = stores
    question = {
        "method": "elicitation/create",
        "params": {"message": "Which colour?", "requestedSchema": {"type": "object"}},
    }
    first = {"action": "accept", "content": {"colour": "red"}}
    asking = {"status": "input_required", "inputRequests": {"q2": question}}
    await a.create({**record(0), **asking, "inputResponses": {"q2": first}})

    def client(colour: str) -> Any:
        async def send_request(request: Any, result_type: Any, metadata: Any) -> Any:
            return types.ElicitResult(action="accept", content={"colour": colour})

        return SimpleNamespace(session=SimpleNamespace(send_request=send_request), request_id=7)

    await tasks_store._relay(b, client("late"), "task-0", "q1", question)  # (q1: answered)
    await tasks_store._relay(b, client("second"), "task-0", "q2", question)
    assert (await a.get("task-0") or {})["inputResponses"] == {"q2": first}


async def test_a_relayed_answer_not_taken_is_told_to_its_client(stores: Any) -> None:
    """A client answering a question relayed by its tasks/result after another answer was
    taken (the 0.25 s before the question is withdrawn) had its answer dropped without a
    word. It gets a warning log on that request now (tasks/result still waits: no error);
    the taken answer stays."""
    import mcp_types as types

    a, b = stores
    question = {
        "method": "elicitation/create",
        "params": {"message": "Which colour?", "requestedSchema": {"type": "object"}},
    }
    first = {"action": "accept", "content": {"colour": "red"}}
    asking = {"status": "input_required", "inputRequests": {"q1": question}}
    await a.create({**record(0), **asking, "inputResponses": {"q1": first}})
    logs: list[Any] = []

    async def send_request(request: Any, result_type: Any, metadata: Any) -> Any:
        return types.ElicitResult(action="accept", content={"colour": "late"})

    async def send_log_message(level: str, data: Any, name: Any, **options: Any) -> None:
        logs.append((level, data, name, options))

    session = SimpleNamespace(send_request=send_request, send_log_message=send_log_message)
    ctx = SimpleNamespace(session=session, request_id=7, protocol_version="2025-11-25")
    await tasks_store._relay(b, ctx, "task-0", "q1", question)
    assert (await a.get("task-0") or {})["inputResponses"] == {"q1": first}
    ((level, data, name, options),) = logs
    assert (level, name, options) == ("warning", "tasks", {"related_request_id": 7})
    assert data["taskId"] == "task-0" and "was not used" in data["message"], data

    logs.clear()  # taken: nobody told
    await a.update("task-0", {"inputResponses": None})
    await tasks_store._relay(b, ctx, "task-0", "q1", question)
    assert logs == [] and (await a.get("task-0") or {})["inputResponses"]["q1"]["content"] == {
        "colour": "late"
    }


class _Slow:
    """A cache that answers a read after a turn of the loop, as Redis does over the
    network (its ``change`` stays one atomic step)."""

    def __init__(self) -> None:
        self.inner = tasks_store.local_cache()

    async def get(self, key: str) -> Any:
        value = await self.inner.get(key)
        await asyncio.sleep(0)  # the answer on its way back
        return value

    async def get_many(self, keys: list[str]) -> list[Any]:
        return await self.inner.get_many(keys)

    async def set(self, key: str, value: Any, ttl: float) -> None:
        await self.inner.set(key, value, ttl)

    async def delete(self, key: str) -> None:
        await self.inner.delete(key)

    async def change(self, key: str, edit: Any) -> bool:
        return await self.inner.change(key, edit)

    async def change_many(self, keys: list[str], edit: Any) -> bool:
        return await self.inner.change_many(keys, edit)


async def test_two_answers_at_once_run_the_handler_again_once() -> None:
    """Two 2026 tasks/update for one input_required task, read before either writes: the
    handler runs again once (twice: a tool with side effects did them twice)."""
    _, started = await _answer_twice()
    assert started == ["task-0"]


async def test_two_answers_in_one_millisecond_are_not_a_store_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The loser of two tasks/update told "the store took no write" (-32603) from an
    unchanged ``lastUpdatedAt`` when the winner wrote in the millisecond of the record it
    read: the store's update says itself whether its transaction took the write."""
    monkeypatch.setattr(tasks_store, "now_iso", lambda: "2026-12-06T12:00:00.000Z")
    answered, started = await _answer_twice(lastUpdatedAt="2026-12-06T12:00:00.000Z")
    assert answered == [{}, {}] and started == ["task-0"]


async def test_an_answer_to_a_task_that_expires_meanwhile_is_unknown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A 2026 tasks/update whose task expires between its read and the store's step is
    -32602 (the task is unknown), not acknowledged as if another answer had been taken."""
    from mcp.shared.exceptions import MCPError

    expired: list[bool] = []
    live = tasks_store.TaskStore.live_record.__func__  # type: ignore[attr-defined]

    def live_until_expired(cls: Any, stored: Any) -> bool:
        return not expired and bool(live(cls, stored))

    monkeypatch.setattr(tasks_store.TaskStore, "live_record", classmethod(live_until_expired))
    update = tasks_store.TaskStore.update

    async def expiring(self: Any, *args: Any, **kwargs: Any) -> Any:
        expired.append(True)  # the ttl ends now: after the record was read
        return await update(self, *args, **kwargs)

    monkeypatch.setattr(tasks_store.TaskStore, "update", expiring)
    with pytest.raises(MCPError) as caught:
        await _answer_twice(single=True)
    assert caught.value.error.code == -32602


async def _answer_twice(single: bool = False, **fields: Any) -> tuple[list[Any], list[str]]:
    from contextlib import nullcontext
    from types import SimpleNamespace

    from mcpgen.runtime.authz import Policy, current_identity
    from mcpgen.runtime.tasks import Tasks
    from mcpgen.runtime.tasks_wire import TaskParams

    made = SimpleNamespace()
    tools = SimpleNamespace(
        policy=Policy(),
        context=lambda ctx, params: made,
        protocol_errors=lambda name: nullcontext(),
    )
    tasks = Tasks(tools, {"pick": "optional"}, _Slow())
    started: list[str] = []
    tasks._start = lambda task_id, *rest: started.append(task_id)  # type: ignore[method-assign]
    call = {"name": "pick", "arguments": {}, "state": None}
    waiting = {**record(0), "owner": current_identity().key, "status": "input_required"}
    await tasks.store.create({**waiting, "call": call, "tool": "pick", "replica": "r", **fields})
    meta = {
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        }
    }
    ctx = SimpleNamespace(protocol_version="2026-07-28", params={"_meta": meta})
    params = TaskParams(taskId="task-0", inputResponses={"colour": {"action": "accept"}})
    if single:
        return [await tasks.update(ctx, params)], started  # type: ignore[arg-type]
    answered = await asyncio.gather(tasks.update(ctx, params), tasks.update(ctx, params))  # type: ignore[arg-type]
    return list(answered), started


VIEWED = {"ttl": 60_000, "pollInterval": 500, "createdAt": "x", "lastUpdatedAt": "x"}


async def test_tasks_list_reads_the_records_in_one_round_trip(tmp_path: Any) -> None:
    """tasks/list on Redis: the caller's index and one MGET for its records, not a GET a
    task (up to MAX_OWNED round trips a page); expired or missing records are left out."""
    import redis

    from mcpgen.runtime.authz import Policy, current_identity
    from mcpgen.runtime.tasks import Tasks
    from mcpgen.runtime.tasks_wire import TaskParams

    if REDIS_SERVER is None:
        pytest.skip(SKIP_REASON)
    server = RedisServer(tmp_path)
    server.start()
    try:
        async with replicas(server.url, n=1) as (shared,):
            tasks = Tasks(SimpleNamespace(policy=Policy()), {}, shared.cache("tasks"))
            owner = current_identity().key
            for n in range(N):
                await tasks.store.create({**record(n), "owner": owner, "tool": "t", **VIEWED})
            await tasks.store.cache.delete("t:task-3")
            client = redis.Redis.from_url(server.url)
            client.config_resetstat()
            ctx = SimpleNamespace(protocol_version="2025-11-25", params={})
            listed = await tasks.list(ctx, TaskParams())  # type: ignore[arg-type]
            stats = client.info("commandstats")
            client.close()
    finally:
        server.stop()
    assert [t["taskId"] for t in listed["tasks"]] == [f"task-{n}" for n in range(N) if n != 3]
    # the index and the records: two MGETs (a key read alone is an MGET too: WRONGTYPE-proof)
    assert stats["cmdstat_mget"]["calls"] == 2 and "cmdstat_get" not in stats, stats


async def test_tasks_list_while_redis_is_away_is_an_error_to_retry(tmp_path: Any) -> None:
    """-32603 as tasks/get answers: an empty list told the client it had no tasks."""
    from mcp.shared.exceptions import MCPError

    from mcpgen.runtime.authz import Policy, current_identity
    from mcpgen.runtime.tasks import Tasks
    from mcpgen.runtime.tasks_wire import TaskParams

    if REDIS_SERVER is None:
        pytest.skip(SKIP_REASON)
    server = RedisServer(tmp_path)
    server.start()
    try:
        async with replicas(server.url, n=1) as (shared,):
            tasks = Tasks(SimpleNamespace(policy=Policy()), {}, shared.cache("tasks"))
            owner = current_identity().key
            await tasks.store.create({**record(0), "owner": owner, "tool": "t", **VIEWED})
            ctx = SimpleNamespace(protocol_version="2025-11-25", params={})
            assert len((await tasks.list(ctx, TaskParams()))["tasks"]) == 1  # type: ignore[arg-type]
            server.kill()
            with pytest.raises(MCPError, match="try again") as raised:
                await tasks.list(ctx, TaskParams())  # type: ignore[arg-type]
            assert raised.value.code == -32603
    finally:
        server.stop()


async def test_a_progress_message_is_cut_as_an_end_message_is() -> None:
    """Every tasks/get (and 50 a tasks/list page) shows it: a handler's 100 kB message was
    kept and sent whole."""
    store = TaskStore(tasks_store.local_cache())
    await store.create(record(0))
    await tasks_store.Progress(store, "task-0")(1, 2, "x" * 100_000)
    assert len((await store.get("task-0") or {})["statusMessage"]) == 500


async def test_the_heartbeat_reads_the_running_tasks_in_one_round_trip(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each beat: one read of the heartbeat and every running task's record (Redis: one
    MGET), where it was a GET a task a second; a task cancelled or gone is cancelled here."""
    from mcpgen.runtime import tasks as tasks_module
    from mcpgen.runtime.authz import Policy
    from mcpgen.runtime.tasks import Tasks

    reads: list[Any] = []

    class Counting(_Slow):
        async def get(self, key: str) -> Any:
            reads.append(key)
            return await super().get(key)

        async def get_many(self, keys: list[str]) -> list[Any]:
            reads.append(keys)
            return await self.inner.get_many(keys)

    monkeypatch.setattr(tasks_module, "HEARTBEAT_EVERY", 0.01)
    tasks = Tasks(SimpleNamespace(policy=Policy()), {}, Counting())
    for n in range(N):
        await tasks.store.create(record(n))
        tasks.running[f"task-{n}"] = asyncio.create_task(asyncio.sleep(60))
    await tasks.store.update("task-3", {"status": "cancelled"})
    await tasks.store.cache.delete("t:task-5")
    reads.clear()
    watcher = asyncio.create_task(tasks._watch())
    await asyncio.sleep(0.1)
    jobs = dict(tasks.running)
    assert [t for t, job in jobs.items() if job.cancelled()] == ["task-3", "task-5"]
    for job in jobs.values():
        job.cancel()
    tasks.running.clear()
    await watcher
    assert len(reads) >= 2 and all(len(r) == N + 1 for r in reads), reads[:3]


async def test_the_tasks_kept_for_all_callers_are_capped(
    stores: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every caller within its own budget, the store as a whole grew until Redis's
    maxmemory: past ``cap`` (``--max-tasks``) a new task is refused, on every replica, and a
    task one caller's budget dropped leaves room again."""
    from mcp.shared.exceptions import MCPError

    first, second = stores
    first.cap = second.cap = 3
    monkeypatch.setattr(tasks_store, "MAX_OWNED", 2)
    for n in range(4):  # caller-0's two oldest go: two kept
        assert await (first, second)[n % 2].create({**record(n), "owner": "caller-0"})
    assert await first.get("task-1") is None and await second.get("task-3") is not None
    assert await second.create({**record(4), "owner": "caller-1"})
    with pytest.raises(MCPError) as refused:
        await first.create({**record(5), "owner": "caller-2"})
    assert refused.value.error.code == -32600 and "at most 3 tasks" in str(refused.value)


async def test_concurrent_creates_do_not_pass_the_cap(stores: Any) -> None:
    """Checked, then counted: 50 creates at once on two replicas sharing Redis were all
    taken past a cap of 5 (r4); each counts itself before it reads the sum now."""
    from mcp.shared.exceptions import MCPError

    first, second = stores
    first.cap = second.cap = 5

    async def create(n: int) -> bool:
        try:
            return await (first, second)[n % 2].create({**record(n), "owner": f"caller-{n}"})
        except MCPError:
            return False

    taken = sum(await asyncio.gather(*(create(n) for n in range(50))))
    assert taken <= 5, taken  # (under contention some may be refused with room left)
    more = [await create(n) for n in range(50, 60)]  # a refused one gave its count back
    assert sum(more) == 5 - taken, (taken, more)


async def test_an_expired_task_frees_its_place_under_the_cap(
    stores: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task counts until the 10 minutes in which it expires have passed (no replica
    is told of an expiry: the counts are kept by when tasks expire), then frees its place."""
    from mcp.shared.exceptions import MCPError

    first, second = stores
    first.cap = second.cap = 2
    for n in range(2):
        assert await (first, second)[n].create({**record(n), "owner": f"caller-{n}"})
    with pytest.raises(MCPError):
        await second.create({**record(2), "owner": "caller-2"})
    later = time.time() + 2 * tasks_store.BUCKET
    monkeypatch.setattr(tasks_store.time, "time", lambda: later)
    fresh = {"taskId": "task-3", "owner": "caller-3", "status": "working"}
    for n, store in enumerate((first, second)):
        assert await store.create({**fresh, "taskId": f"task-{3 + n}", "expiresAt": later + 60})
    with pytest.raises(MCPError):
        await first.create({**fresh, "taskId": "task-5", "expiresAt": later + 60})


class _NoWrites:
    """A cache that reads but whose transactions fail after their edit ran (Redis: EXEC
    timing out, or refused when full)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def get(self, key: str) -> Any:
        return await self.inner.get(key)

    async def change(self, key: str, edit: Any) -> bool:
        edit(await self.inner.get(key))
        return False


async def test_a_write_the_store_does_not_take_is_not_reported_written() -> None:
    """``update`` answered the record as written when the transaction failed after its edit
    ran (a cancellation acknowledged, never written; an answer acknowledged, dropped). It
    answers None now, and an answer to a question still asked is -32603 (try again), while
    one to a question no longer asked is ignored (None), as before."""
    from mcp.shared.exceptions import MCPError

    cache = tasks_store.local_cache()
    good = TaskStore(cache)
    question = {"q1": {"method": "roots/list"}}
    await good.create({**record(0), "status": "input_required", "inputRequests": question})
    failing = TaskStore(_NoWrites(cache))  # type: ignore[arg-type]
    assert await failing.update("task-0", {"status": "cancelled"}) is None
    with pytest.raises(MCPError) as caught:
        await failing.answer("task-0", {"q1": {"roots": []}})
    assert caught.value.error.code == -32603
    assert (await good.get("task-0") or {})["status"] == "input_required"
    assert await failing.answer("task-0", {"q9": {"roots": []}}) is None  # (not asked)
    await good.answer("task-0", {"q1": {"roots": []}})
    assert await failing.answer("task-0", {"q1": {"roots": [1]}}) is None  # (answered)


class _IndexFailsOnce:
    """A cache whose first write of a caller's index fails after its edit ran (Redis:
    EXEC refused, or the store away a moment)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.failed = inner, False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def change(self, key: str, edit: Any) -> bool:
        if key.startswith("o:") and not self.failed:
            self.failed = True
            edit(await self.inner.get(key))
            return False
        return bool(await self.inner.change(key, edit))

    async def change_many(self, keys: list[str], edit: Any) -> bool:  # (a create's)
        if any(key.startswith("o:") for key in keys) and not self.failed:
            self.failed = True
            edit(await self.inner.get_many(keys))
            return False
        return bool(await self.inner.change_many(keys, edit))


async def test_a_create_the_store_does_not_take_gives_its_place_back(stores: Any) -> None:
    """A create counted under ``--max-tasks`` whose write then failed (-32603) held its
    place until its ten minutes ended: the next create, on any replica, was refused."""
    first, second = stores
    failing = TaskStore(_IndexFailsOnce(first.cache))  # type: ignore[arg-type]
    failing.cap = second.cap = 1
    assert not await failing.create({**record(0), "owner": "caller-0"})
    assert await second.create({**record(1), "owner": "caller-1"})


async def test_an_index_write_the_store_does_not_take_drops_no_task(
    stores: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The oldest tasks a failed index write would have dropped were deleted and
    uncounted all the same: gone while their ids stayed in the index."""
    first, second = stores
    monkeypatch.setattr(tasks_store, "MAX_OWNED", 1)
    assert await second.create({**record(0), "owner": "caller-0"})
    failing = TaskStore(_IndexFailsOnce(first.cache))  # type: ignore[arg-type]
    assert not await failing.create({**record(1), "owner": "caller-0"})
    assert await second.get("task-0") is not None
    assert [e[0] for e in await second.owned("caller-0")] == ["task-0"]


async def test_an_older_replicas_task_dropped_is_uncounted_where_it_was_counted(
    stores: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rolling upgrade (docs/tasks.md): a task an older replica created (counted in its
    ``n:<bucket>`` key, its record unmarked) and a newer one dropped (its caller's oldest)
    was uncounted in the newer one's entry: a task of the newer ones counted no more (one
    more admitted past the cap), the older ones' key counting the dropped task still."""
    from mcp.shared.exceptions import MCPError

    first, second = stores
    first.cap = second.cap = 1
    monkeypatch.setattr(tasks_store, "MAX_OWNED", 1)
    old = {**record(0), "owner": "caller-0"}  # as mcpgen 8fdb7232 creates it
    key = f"n:{int(old['expiresAt']) // tasks_store.BUCKET}"
    assert await first.cache.change(key, lambda stored: (1, 600))
    await first.cache.set("t:task-0", old, 60)
    assert await first.cache.change("o:caller-0", lambda _: ([["task-0", old["expiresAt"]]], 60))
    assert await second.create({**record(1), "owner": "caller-0"})  # task-0 dropped
    with pytest.raises(MCPError):  # task-1 still counted
        await first.create({**record(2), "owner": "caller-1"})
    assert await first.get("task-0") is None and await first.cache.get(key) is None
