"""runtime/tasks_count.py, the ``--max-tasks`` count (docs/tasks.md, "Who sees a task"),
when the store goes away in the middle of a create or loses the answer of a step it took:
a place is taken only by a task the store keeps, and given back once."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import pytest
from redis_support import REDIS_SERVER, SKIP_REASON, RedisServer
from test_shared import replicas

from mcpgen.runtime import tasks_store
from mcpgen.runtime.tasks_store import TaskStore

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def record(n: int, owner: str) -> dict[str, Any]:
    return {
        "taskId": f"task-{n}",
        "owner": owner,
        "status": "working",
        "expiresAt": time.time() + 60,
    }


async def admitted(store: TaskStore, first: int, n: int) -> int:
    """How many of ``n`` creates (each its own caller's) the store takes."""
    from mcp.shared.exceptions import MCPError

    taken = 0
    for k in range(first, first + n):
        with contextlib.suppress(MCPError):  # (-32600: all taken)
            taken += await store.create(record(k, f"caller-{k}"))
    return taken


@pytest.fixture
def redis(tmp_path: Any) -> Any:
    if REDIS_SERVER is None:
        pytest.skip(SKIP_REASON)
    server = RedisServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


class _StopsRedis:
    """A cache whose Redis stops (its data saved, as a restart with persistence keeps it)
    once ``after`` writes went through, before the next one."""

    def __init__(self, inner: Any, server: RedisServer, after: int) -> None:
        self.inner, self.server, self.left = inner, server, after

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _stop(self) -> None:
        if self.left == 0:
            self.server.command("SAVE")
            self.server.kill()
        self.left -= 1

    async def set(self, key: str, value: Any, ttl: float) -> None:
        self._stop()
        await self.inner.set(key, value, ttl)

    async def change(self, key: str, edit: Any) -> bool:
        self._stop()
        return bool(await self.inner.change(key, edit))

    async def change_many(self, keys: list[str], edit: Any) -> bool:
        self._stop()
        return bool(await self.inner.change_many(keys, edit))


@pytest.mark.parametrize("after", [0, 1, 2])
async def test_a_create_redis_stops_in_holds_no_place_unless_its_task_is_kept(
    redis: RedisServer, after: int
) -> None:
    """Redis stopped (and started again) after the first of a create's writes (its count)
    or the second (its record): the create failed (-32603), so did the give-back of its place, which stayed taken,
    by no task, until its ten minutes ended. The count, the record and the index are one
    write now: a create Redis stops before took no place, one it took is kept."""
    async with replicas(redis.url, n=2, retry_interval=0.05) as (a, b):
        first, second = TaskStore(a.cache("tasks")), TaskStore(b.cache("tasks"))
        first.cap = second.cap = 1
        stopping = TaskStore(_StopsRedis(first.cache, redis, after))  # type: ignore[arg-type]
        stopping.cap = 1
        taken = await stopping.create(record(0, "caller-0"))
        if redis.process is None:
            redis.start()  # (with what it saved)
        for _ in range(100):
            if a.status()["connected"] and b.status()["connected"]:
                break
            await asyncio.sleep(0.05)
        kept = await second.get("task-0") is not None
        assert kept == taken, (taken, kept)
        assert await admitted(second, 1, 2) == (0 if taken else 1)
        assert after > 0 or not taken  # (the failure is seen: stopped before any write)


async def test_a_lost_answer_uncounts_a_dropped_task_once(
    redis: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Redis ran the step that uncounted a task its caller's index dropped, its answer was
    lost (the connection broke), and redis-py raised WatchError, so the step ran again:
    the task was uncounted twice, and one task more than ``--max-tasks`` was admitted."""
    from redis.asyncio.client import Pipeline
    from redis.exceptions import ConnectionError as Broken

    monkeypatch.setattr(tasks_store, "MAX_OWNED", 1)
    losing, lost = [False], []
    execute = Pipeline._execute_transaction

    async def answer_lost(self: Any, connection: Any, commands: Any, *args: Any) -> Any:
        if not losing[0] or len(lost) % 2:  # (every other answer: the next run's comes)
            return await execute(self, connection, commands, *args)
        read, reads = connection.read_response, [0]

        async def reading(*options: Any, **named: Any) -> Any:
            reads[0] += 1
            answer = await read(*options, **named)
            if reads[0] == len(commands) + 2:  # EXEC's (after MULTI's and each QUEUED)
                lost.append(answer)  # Redis ran it
                raise Broken("the answer was lost")
            return answer

        connection.read_response = reading
        try:
            return await execute(self, connection, commands, *args)
        finally:
            del connection.read_response

    uncount = tasks_store.uncount

    async def uncounting(*args: Any) -> None:
        losing[0] = True
        try:
            await uncount(*args)
        finally:
            losing[0] = False

    monkeypatch.setattr(Pipeline, "_execute_transaction", answer_lost)
    monkeypatch.setattr(tasks_store, "uncount", uncounting)
    async with replicas(redis.url, n=1) as (shared,):
        store = TaskStore(shared.cache("tasks"))
        store.cap = 2
        assert await store.create(record(0, "caller-0"))
        assert await store.create(record(1, "caller-0"))  # task-0 dropped, uncounted
        assert lost, "no answer was lost"
        assert await store.get("task-0") is None and await store.get("task-1") is not None
        assert await admitted(store, 2, 2) == 1  # (task-1 and one more: 2)


class _AnswerLost:
    """A cache each of whose atomic steps runs twice, the second time on what the first
    wrote: a Redis transaction whose answer was lost (redis-py: WatchError, run again)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.runs = inner, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def change(self, key: str, edit: Any) -> bool:
        await self.inner.change(key, edit)
        self.runs += 1
        return bool(await self.inner.change(key, edit))

    async def change_many(self, keys: list[str], edit: Any) -> bool:
        await self.inner.change_many(keys, edit)
        self.runs += 1
        return bool(await self.inner.change_many(keys, edit))


@pytest.mark.parametrize("where", ["local", "redis"])
async def test_a_create_whose_answer_was_lost_is_taken_once(
    where: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A create run again after its answer was lost counted its task twice, added it to
    its caller's index twice (the second time dropping it as the oldest past the limit,
    its record deleted), and uncounted the task it dropped twice."""
    monkeypatch.setattr(tasks_store, "MAX_OWNED", 1)
    server = None
    if where == "redis":
        if REDIS_SERVER is None:
            pytest.skip(SKIP_REASON)
        server = RedisServer(tmp_path)
        server.start()
    try:
        async with replicas(server and server.url, n=1) as (shared,):
            plain = TaskStore(shared.cache("tasks"))
            lossy = TaskStore(_AnswerLost(plain.cache))  # type: ignore[arg-type]
            plain.cap = lossy.cap = 3
            assert await plain.create(record(0, "caller-0"))
            assert await lossy.create(record(1, "caller-0"))  # task-0 dropped
            assert lossy.cache.runs >= 2  # type: ignore[attr-defined]
            assert [e[0] for e in await plain.owned("caller-0")] == ["task-1"]
            assert await plain.get("task-0") is None and await plain.get("task-1") is not None
            assert await admitted(plain, 2, 3) == 2  # (task-1 and two more: 3)
    finally:
        if server is not None:
            server.stop()
