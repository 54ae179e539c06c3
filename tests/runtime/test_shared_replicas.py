"""Replicas as separate processes on loopback ports, sharing state through a real Redis:
requests alternate between them, an event raised on one reaches listen streams on the
others once, a rate limit holds across them, a two-round call crosses replicas, and Redis
is killed and restarted under them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp.client import Client
from mcp.client.subscriptions import Subscription
from mcp.server.subscriptions import ResourceUpdated, ServerEvent, ToolsListChanged
from redis_support import REDIS_SERVER, SKIP_REASON, RedisServer
from replica_support import Replica, replicas

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.timeout(120),
    pytest.mark.skipif(REDIS_SERVER is None, reason=SKIP_REASON),
]

SECRET = "replica-secret-" + "0123456789abcdef" * 2


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Replica]]:
    directory = tmp_path_factory.mktemp("replicas")
    server = RedisServer(directory)
    server.start()
    try:
        with replicas(3, directory, redis_url=server.url, secret=SECRET) as started:
            yield started
    finally:
        server.stop()


@asynccontextmanager
async def clients(*group: Replica) -> AsyncIterator[list[Client]]:
    async with AsyncExitStack() as stack:
        opened = [await stack.enter_async_context(Client(r.url, mode="2026-07-28")) for r in group]
        for client in opened:
            await client.list_tools()
        yield opened


def said(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def collect(subscription: Subscription, count: int, quiet: float = 0.5) -> list[ServerEvent]:
    """``count`` events, then whatever else arrives within ``quiet`` seconds (a duplicate)."""
    events: list[ServerEvent] = []
    iterator = subscription.__aiter__()
    with anyio.fail_after(10):
        while len(events) < count:
            events.append(await iterator.__anext__())
    with anyio.move_on_after(quiet):
        events.append(await iterator.__anext__())
    return events


async def test_requests_alternate_between_replicas(three: list[Replica]) -> None:
    async with clients(*three) as opened:
        names = [said(await opened[i % 3].call_tool("whoami", {})) for i in range(6)]
    assert names == ["a", "b", "c", "a", "b", "c"]


async def test_event_on_one_replica_reaches_listeners_on_the_others_once(
    three: list[Replica],
) -> None:
    uris = [f"file:///doc-{i}" for i in range(5)]
    async with (
        clients(*three) as (a, b, c),
        b.listen(resource_subscriptions=uris) as on_b,
        c.listen(resource_subscriptions=uris, tools_list_changed=True) as on_c,
        a.listen(tools_list_changed=True) as on_a,
    ):
        for uri in uris:
            assert said(await a.call_tool("touch", {"uri": uri})) == "published on a"
        await b.call_tool("touch", {})  # ToolsListChanged, raised on b
        got_b, got_c, got_a = await asyncio.gather(
            collect(on_b, 5), collect(on_c, 6), collect(on_a, 1)
        )
    assert got_b == [ResourceUpdated(uri=u) for u in uris]
    assert sorted(map(repr, got_c)) == sorted(
        map(repr, [*(ResourceUpdated(uri=u) for u in uris), ToolsListChanged()])
    )
    assert got_a == [ToolsListChanged()]


async def test_rate_limit_holds_across_replicas(three: list[Replica]) -> None:
    async with clients(*three) as opened:
        results = [
            await opened[i % 3].call_tool("limited", {"bucket": "shared", "rate": 0.01, "burst": 4})
            for i in range(9)
        ]
    outcomes = [not r.is_error for r in results]
    assert outcomes == [True] * 4 + [False] * 5
    assert said(results[4]).startswith("limited: retry")
    assert {said(r) for r in results[:4]} == {"ok on a", "ok on b", "ok on c"}


async def test_two_round_call_crosses_replicas(three: list[Replica]) -> None:
    answer = types.ElicitResult(action="accept", content={"colour": "teal"})
    async with clients(three[0], three[1]) as (a, b):
        first = await a.session.call_tool("paint", {}, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult) and first.request_state
        done = await b.call_tool(
            "paint", {}, input_responses={"colour": answer}, request_state=first.request_state
        )
    assert said(done) == "asked by a, answered on b: teal"


async def test_redis_killed_and_restarted_under_replicas(tmp_path: Path) -> None:
    server = RedisServer(tmp_path)
    server.start()
    try:
        with replicas(2, tmp_path, redis_url=server.url, secret=SECRET, prefix="k") as pair:
            await _outage(server, pair)
    finally:
        server.stop()
    for replica in pair:
        log = replica.log_text()
        assert log.count("is unreachable") == 1, log
        assert log.count("reachable again") == 1, log
        assert "Traceback" not in log, log


async def _outage(server: RedisServer, pair: list[Replica]) -> None:
    a_replica, b_replica = pair
    async with clients(a_replica, b_replica) as (a, b):
        async with b.listen(resource_subscriptions=["file:///x", "file:///y"]) as on_b:
            server.kill()
            await anyio.sleep(0.5)
            assert not b_replica.health()["connected"]
            # Calls that do not need Redis still work; the limiter falls back per replica.
            assert said(await a.call_tool("whoami", {})) == "a"
            limited = [
                not (
                    await b.call_tool("limited", {"bucket": "o", "rate": 0.01, "burst": 2})
                ).is_error
                for _ in range(3)
            ]
            assert limited == [True, True, False]
            assert said(await a.call_tool("touch", {"uri": "file:///x"})) == "published on a"
            assert a_replica.health()["pendingEvents"] == 1

            server.start()
            with anyio.fail_after(10):
                while not all(r.health()["connected"] for r in pair):
                    await anyio.sleep(0.1)
            # The event raised during the outage arrives once, then new ones flow again.
            assert await collect(on_b, 1) == [ResourceUpdated(uri="file:///x")]
            await a.call_tool("touch", {"uri": "file:///y"})
            assert await collect(on_b, 1) == [ResourceUpdated(uri="file:///y")]
        shared_again = [
            not (await (a if i % 2 else b).call_tool(
                "limited", {"bucket": "after", "rate": 0.01, "burst": 2}
            )).is_error
            for i in range(4)
        ]  # fmt: skip
        assert shared_again == [True, True, False, False]
