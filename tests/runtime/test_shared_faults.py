"""Redis killed and restarted under two replicas of the shared-state set."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from typing import Any

import anyio
import pytest
from mcp.client import Client
from mcp.server import Server
from mcp.server.subscriptions import ListenHandler, ResourceUpdated, ServerEvent, ToolsListChanged
from redis_support import RedisServer, redis_server, slow_redis

from mcpgen.runtime.errors import ToolError
from mcpgen.runtime.shared import (
    SharedState,
    SharedStateConfigError,
    SharedStateUnavailable,
    shared_state,
)

__all__ = ["redis_server"]

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

LOGGER = "mcpgen.runtime.shared_redis"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Recorder:
    def __init__(self) -> None:
        self.events: list[ServerEvent] = []

    def __call__(self, event: ServerEvent) -> None:
        self.events.append(event)

    async def wait_for(self, count: int, timeout: float = 10.0) -> None:
        with anyio.fail_after(timeout):
            while len(self.events) < count:
                await asyncio.sleep(0.01)


async def wait_connected(*sets: SharedState, timeout: float = 10.0) -> None:
    with anyio.fail_after(timeout):
        while not all(s.status()["connected"] for s in sets):
            await asyncio.sleep(0.02)


def lines(caplog: pytest.LogCaptureFixture, text: str) -> int:
    return sum(1 for r in caplog.records if r.name == LOGGER and text in r.getMessage())


async def test_redis_killed_and_restarted(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    a = shared_state(redis_server.url, prefix="f", retry_interval=0.2)
    b = shared_state(redis_server.url, prefix="f", retry_interval=0.2)
    async with a, b:
        seen_a, seen_b = Recorder(), Recorder()
        a.bus.subscribe(seen_a)
        b.bus.subscribe(seen_b)
        gaps = {"a": 0, "b": 0}
        a.on_gap(lambda: gaps.__setitem__("a", gaps["a"] + 1))
        b.on_gap(lambda: gaps.__setitem__("b", gaps["b"] + 1))
        await a.bus.publish(ResourceUpdated(uri="file:///before"))
        await seen_b.wait_for(1)
        await a.cache("c").set("k", "v", ttl=60)
        await a.limiter.allow("warm", 1, 1)

        redis_server.kill()
        await asyncio.sleep(0.3)  # the listeners notice the closed connection

        # publish: local listeners at once; the other replica waits for Redis.
        await a.bus.publish(ToolsListChanged())
        assert seen_a.events[-1] == ToolsListChanged()
        await a.bus.publish(ToolsListChanged())  # coalesced with the queued one
        assert a.status()["pendingEvents"] == 1

        # allow: falls back to a bucket per replica (burst 3 each), and never waits on Redis.
        started = time.monotonic()
        on_a = [(await a.limiter.allow("u", 0.01, 3))[0] for _ in range(4)]
        on_b = [(await b.limiter.allow("u", 0.01, 3))[0] for _ in range(4)]
        for _ in range(100):  # many calls during the outage: still one log line
            await a.cache("c").get("k")
        elapsed = time.monotonic() - started
        assert on_a == on_b == [True, True, True, False]
        assert elapsed < 2.0, f"calls waited on the dead Redis: {elapsed:.2f} s"

        # cache: a miss and a silent set; per-user state: a clear error.
        assert await b.cache("c").get("k") is None
        await b.cache("c").set("k2", 1, ttl=5)
        with pytest.raises(SharedStateUnavailable, match=r"127\.0\.0\.1"):
            await b.state.get("someone", "draft")
        assert not a.status()["connected"] and not b.status()["connected"]
        assert seen_b.events == [ResourceUpdated(uri="file:///before")]
        assert lines(caplog, "is unreachable") == 2  # one per replica, not per call

        redis_server.start()
        await wait_connected(a, b)
        assert lines(caplog, "reachable again") == 2
        assert gaps == {"a": 1, "b": 1}

        # The event raised during the outage reaches b once, after recovery.
        await seen_b.wait_for(2)
        await asyncio.sleep(0.6)
        assert seen_b.events == [ResourceUpdated(uri="file:///before"), ToolsListChanged()]
        assert a.status()["pendingEvents"] == 0

        # Subscriptions are back in both directions.
        await b.bus.publish(ResourceUpdated(uri="file:///after-b"))
        await a.bus.publish(ResourceUpdated(uri="file:///after-a"))
        await seen_a.wait_for(5)
        await seen_b.wait_for(4)
        await asyncio.sleep(0.3)
        after = {ResourceUpdated(uri="file:///after-b"), ResourceUpdated(uri="file:///after-a")}
        # a's own: the first event and the two local ToolsListChanged publishes.
        assert seen_a.events[:3] == [
            ResourceUpdated(uri="file:///before"),
            ToolsListChanged(),
            ToolsListChanged(),
        ]
        assert len(seen_a.events) == 5 and set(seen_a.events[3:]) == after
        assert len(seen_b.events) == 4 and set(seen_b.events[2:]) == after

        # The limit is shared again (a fresh Redis: a fresh bucket), cache and state work.
        again = [(await (a if i % 2 else b).limiter.allow("u2", 0.01, 2))[0] for i in range(4)]
        assert again == [True, True, False, False]
        await a.cache("c").set("k", "v2", ttl=60)
        assert await b.cache("c").get("k") == "v2"
        await b.state.set("someone", "draft", "x")
        assert await a.state.get("someone", "draft") == "x"
        assert a.status()["outages"] == 1 and lines(caplog, "is unreachable") == 2


@pytest.mark.parametrize("mode", ["open", "closed"])
async def test_limiter_outage_modes(redis_server: RedisServer, mode: str) -> None:
    shared = shared_state(redis_server.url, limiter_outage=mode, retry_interval=0.2)  # type: ignore[arg-type]
    async with shared:
        assert [(await shared.limiter.allow("k", 0.01, 2))[0] for _ in range(3)] == [
            True,
            True,
            False,
        ]
        redis_server.kill()
        await asyncio.sleep(0.3)
        during = [await shared.limiter.allow("k", 0.01, 2) for _ in range(5)]
        if mode == "open":
            assert during == [(True, 0.0)] * 5
        else:
            assert during == [(False, 0.2)] * 5
        redis_server.start()
        await wait_connected(shared)
        assert [(await shared.limiter.allow("k", 0.01, 2))[0] for _ in range(3)] == [
            True,
            True,
            False,
        ]


async def test_a_stalled_redis_is_noticed_and_calls_do_not_hang(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    """SIGSTOP: the TCP connections stay open and nothing answers (a silent partition)."""
    caplog.set_level(logging.INFO, logger=LOGGER)
    a = shared_state(redis_server.url, prefix="s", retry_interval=0.2, liveness=0.5)
    b = shared_state(redis_server.url, prefix="s", retry_interval=0.2, liveness=0.5)
    async with a, b:
        seen_b = Recorder()
        b.bus.subscribe(seen_b)
        gaps: list[str] = []
        b.on_gap(lambda: gaps.append("b"))
        assert redis_server.process is not None
        os.kill(redis_server.process.pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            answers = await asyncio.gather(*(a.limiter.allow("k", 0.01, 3) for _ in range(5)))
            first = time.monotonic() - started
            started = time.monotonic()
            await a.limiter.allow("k", 0.01, 3)
            second = time.monotonic() - started
            assert first < 2.0 and second < 0.1, (first, second)  # one timeout, then none
            assert [ok for ok, _ in answers] == [True, True, True, False, False]  # local bucket
            await a.bus.publish(ToolsListChanged())
            with anyio.fail_after(8):  # liveness 0.5 s + 3 timeouts of 1 s, with slack
                while b.status()["connected"]:
                    await asyncio.sleep(0.05)
        finally:
            os.kill(redis_server.process.pid, signal.SIGCONT)
        await wait_connected(a, b)
        await asyncio.sleep(1.0)
        assert gaps == ["b"]
        assert len(seen_b.events) <= 1  # maybe lost in the gap, never twice
        await a.bus.publish(ResourceUpdated(uri="file:///after"))
        await seen_b.wait_for(len(seen_b.events) + 1)
        assert seen_b.events[-1] == ResourceUpdated(uri="file:///after")
        assert lines(caplog, "is unreachable") == 2


async def test_a_stalled_redis_is_probed_off_the_callers_path(redis_server: RedisServer) -> None:
    """One call at a time, each after ``retry_interval``: only the first waits for the
    timeout. Before, each such call was itself the probe and waited ~1 s on the frozen Redis."""
    shared = shared_state(redis_server.url, prefix="p", retry_interval=0.2)
    async with shared:
        assert redis_server.process is not None
        os.kill(redis_server.process.pid, signal.SIGSTOP)
        try:
            await shared.limiter.allow("k", 100, 100)  # waits for the timeout: Redis is away
            waits = []
            for _ in range(4):
                await asyncio.sleep(0.3)
                started = time.monotonic()
                assert (await shared.limiter.allow("k", 100, 100))[0]  # the local bucket
                assert await shared.cache("c").get("k") is None
                waits.append(time.monotonic() - started)
            assert max(waits) < 0.1, waits
        finally:
            os.kill(redis_server.process.pid, signal.SIGCONT)
        await wait_connected(shared)
        await shared.cache("c").set("k", 1, ttl=60)
        assert await shared.cache("c").get("k") == 1


async def test_gap_ends_listen_streams_so_clients_listen_again(redis_server: RedisServer) -> None:
    a = shared_state(redis_server.url, prefix="g", retry_interval=0.2)
    b = shared_state(redis_server.url, prefix="g", retry_interval=0.2)
    async with a, b:
        handler = ListenHandler(b.bus)
        b.on_gap(handler.close)
        server: Server[Any] = Server("b", on_subscriptions_listen=handler)
        async with Client(server, mode="2026-07-28") as client:
            async with client.listen(tools_list_changed=True) as subscription:
                await a.bus.publish(ToolsListChanged())
                got: list[ServerEvent] = []
                with anyio.fail_after(10):
                    async for event in subscription:
                        got.append(event)
                        if len(got) == 1:
                            redis_server.kill()
                            redis_server.start()
                # The loop ended: a graceful close, not SubscriptionLost.
            assert got == [ToolsListChanged()]
            await wait_connected(a, b)
            async with client.listen(tools_list_changed=True) as again:
                await a.bus.publish(ToolsListChanged())
                with anyio.fail_after(5):
                    assert await again.__aiter__().__anext__() == ToolsListChanged()


async def test_redis_full_or_wrong_database_is_a_fault_not_a_crash(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    """An error Redis answers (full under ``noeviction``, a database it lacks) is handled as
    an outage: before, it escaped every caller (each HTTP request a 500, a traceback at
    start)."""
    caplog.set_level(logging.INFO, logger=LOGGER)
    wrong = shared_state(redis_server.url[:-1] + "99", prefix="m", secret="s" * 32)
    with pytest.raises(SharedStateConfigError, match="unreachable at start: DB index"):
        await wrong.start()
    await wrong.aclose()
    shared = shared_state(redis_server.url, prefix="m", secret="s" * 32, retry_interval=0.2)
    async with shared:
        gaps: list[str] = []
        shared.on_gap(lambda: gaps.append("gap"))  # its callbacks write: once Redis takes one
        await shared.user_state("u").set("k", "v")
        redis_server.command("CONFIG", "SET", "maxmemory", "1")  # noeviction: writes refused
        assert await shared.limiter.allow("caller", 1, 5) == (True, 0.0)  # this replica's
        await shared.cache("c").set("k", 1, ttl=60)  # dropped, as while Redis is away
        assert await shared.cache("c").change("k", lambda old: (2, 60)) is False
        with pytest.raises(ToolError, match="unavailable right now"):
            await shared.user_state("u").set("k", "w")
        redis_server.command("CLIENT", "KILL", "TYPE", "pubsub")  # it subscribes again,
        await shared.bus.publish(ToolsListChanged())  # and publishes: neither is a write
        await asyncio.sleep(0.5)  # the probe writes: a full Redis answering PING is still away
        assert not shared.status()["connected"] and gaps == []
        redis_server.command("CONFIG", "SET", "maxmemory", "0")
        await asyncio.sleep(0.3)
        assert gaps == ["gap"] and shared.status()["pendingEvents"] == 0
        assert await shared.user_state("u").get("k") == "v"
        assert lines(caplog, "is unreachable (command not allowed when used memory") == 1
        assert lines(caplog, "reachable again") == 1
        # a ttl Redis refuses is the handler's error, not an outage of every caller's state
        with pytest.raises(ValueError, match="ttl"):
            await shared.user_state("u").set("k", "v", ttl=1e16)
        assert shared.status()["connected"] and shared.status()["outages"] == 1


async def test_one_probe_at_a_time(redis_server: RedisServer) -> None:
    """A full Redis takes SUBSCRIBE and refuses writes: the subscription's reconnects and
    the writes race a slow probe, never two probes at once (each logs its own recovery)."""
    shared = shared_state(redis_server.url, prefix="o", retry_interval=0.05)
    async with shared:
        link = shared._backend.link  # type: ignore[attr-defined]
        probe, running, most = link._recover, 0, 0

        async def counted() -> None:
            nonlocal running, most
            running += 1
            most = max(most, running)
            try:
                await asyncio.sleep(0.2)  # a slow probe
                await probe()
            finally:
                running -= 1

        link._recover = counted
        redis_server.command("CONFIG", "SET", "maxmemory", "1")
        for _ in range(10):
            redis_server.command("CLIENT", "KILL", "TYPE", "pubsub")  # it subscribes again
            await asyncio.sleep(0.1)
            await shared.cache("c").set("k", 1, ttl=60)  # a write it refuses
        redis_server.command("CONFIG", "SET", "maxmemory", "0")
        await wait_connected(shared)
        assert most == 1, f"{most} probes at once"


async def test_a_key_of_another_type_is_that_keys_miss_not_an_outage(
    redis_server: RedisServer,
) -> None:
    """A key overwritten by hand with a list (WRONGTYPE) reads as a miss and the next write
    replaces it: before, each read of it took Redis away from every caller, a flap."""
    shared = shared_state(redis_server.url, prefix="w", secret="s" * 32, retry_interval=0.2)
    async with shared:
        await shared.cache("c").set("k", 1, ttl=60)
        await shared.user_state("u").set("n", "v")
        await shared.limiter.allow("caller", 1, 5)
        for name in redis_server.command("KEYS", "w:*").split(b"\r\n")[2::2]:
            redis_server.command("DEL", name.decode())
            redis_server.command("RPUSH", name.decode(), "x")
        assert await shared.cache("c").get("k") is None
        assert await shared.user_state("u").get("n") is None
        assert await shared.limiter.allow("caller", 1, 5) == (True, 0.0)
        assert await shared.cache("c").change("k", lambda old: (old or 2, 60))
        assert await shared.cache("c").get("k") == 2
        assert shared.status()["connected"] and shared.status()["outages"] == 0


@pytest.mark.parametrize("refused", ["-evalsha", "-set", "-publish", "-watch", "-subscribe"])
async def test_an_acl_refusing_a_command_is_an_error_at_start(
    redis_server: RedisServer, refused: str
) -> None:
    """NOPERM for a command the set sends later: before, PING passed at start, then each use
    of it took Redis away and the probe brought it back, a flap of two warnings a second."""
    user = ["ACL", "SETUSER", "app", "on", ">pw-1", "~*", "&*", "+@all", refused]
    assert redis_server.command(*user).startswith(b"+OK")
    url = redis_server.url.replace("//", "//app:pw-1@")
    shared = shared_state(url, prefix="n", secret="s" * 32)
    with pytest.raises(SharedStateConfigError, match=f"permissions to run the '{refused[1:]}"):
        await shared.start()
    await shared.aclose()


async def test_a_huge_per_user_value_is_the_handlers_error(redis_server: RedisServer) -> None:
    """Redis serves one command at a time: a 120 MB value took 5 s to write and timed out,
    an outage for every caller of every replica (60 MB: 3 s that every replica waited)."""
    shared = shared_state(redis_server.url, prefix="h", secret="s" * 32)
    async with shared:
        with pytest.raises(ValueError, match="at most 8388608 bytes"):
            await shared.state.set("u", "big", "x" * (8 << 20))
        await shared.state.set("u", "fits", "x" * (5 << 20))
        assert len(await shared.state.get("u", "fits")) == 5 << 20
        assert shared.status()["connected"] and shared.status()["outages"] == 0


async def test_a_slow_redis_starts_and_answers(redis_server: RedisServer) -> None:
    """0.6 s an answer (under the 1 s timeout): slow, not away; start tries each kind of
    command (several round trips) without a deadline of its own to miss."""
    async with slow_redis(redis_server.port, 0.6) as url:
        shared = shared_state(url, prefix="l", secret="s" * 32)
        async with shared:
            await shared.cache("c").set("k", 1, ttl=60)
            assert await shared.cache("c").get("k") == 1 and shared.status()["outages"] == 0


async def test_replicas_started_at_once_all_start(redis_server: RedisServer) -> None:
    """start's commands (a transaction among them) on a key of each replica's own: on one
    key, a replica's write between another's WATCH and EXEC failed that one's start."""
    sets = [shared_state(redis_server.url, prefix="r", secret="s" * 32) for _ in range(6)]
    started = await asyncio.gather(*(s.start() for s in sets), return_exceptions=True)
    await asyncio.gather(*(s.aclose() for s in sets))
    assert started == [None] * 6
    assert redis_server.command("KEYS", "r:*") == b"*0\r\n"  # nothing kept


@pytest.mark.parametrize(
    "setting", [("CONFIG", "SET", "maxmemory", "1"), ("REPLICAOF", "127.0.0.1", "1")]
)
async def test_a_full_or_read_only_redis_at_start_is_an_outage(
    redis_server: RedisServer, setting: tuple[str, ...]
) -> None:
    """As while serving: the replica starts, degraded (a write at start refused it)."""
    redis_server.command(*setting)
    shared = shared_state(redis_server.url, prefix="d", secret="s" * 32, retry_interval=0.2)
    async with shared:
        with pytest.raises(ToolError, match="unavailable right now"):
            await shared.user_state("u").set("k", "v")
