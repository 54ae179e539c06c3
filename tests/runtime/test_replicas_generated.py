"""Replicas of a generated server (``mcpgen build`` of a small manifest, run as
``python -m relay_mcp --transport http --redis-url ...``) sharing state through a real
redis-server: requests alternate between replicas, an event raised on one reaches a listen
stream and a handshake-era session on another (once), a two-round elicitation crosses
replicas, a completion handler's ``ctx.store`` is shared as a tool's, the rate limit holds
across them, and Redis is killed and restarted under them.

Replica a and c run stateless HTTP, b stateful HTTP (handshake-era sessions live there).
Each test calls with its own bearer token: the rate limit (20 requests, then 0.01/s) is kept
per verified caller, so tests do not spend each other's budget.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from generated_support import META, Plan, answer_of, build_relay, call_request, start, text_of
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import Subscription
from mcp.server.subscriptions import ServerEvent, ToolsListChanged
from redis_support import REDIS_SERVER, SKIP_REASON, RedisServer
from replica_support import Replica

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.slow,
    pytest.mark.timeout(120),
    pytest.mark.skipif(REDIS_SERVER is None, reason=SKIP_REASON),
]
TOKENS = ["tok-alternate", "tok-events", "tok-paint", "tok-limit", "tok-other", "tok-outage"]
TOKENS += ["tok-complete", "tok-complete-other"]
BURST = 20


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Cluster:
    redis: RedisServer
    a: Replica
    b: Replica  # stateful
    c: Replica

    @property
    def all(self) -> list[Replica]:
        return [self.a, self.b, self.c]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    directory = tmp_path_factory.mktemp("relay")
    out = build_relay(directory, burst=BURST)
    redis = RedisServer(directory)
    redis.start()
    plans = [Plan("a"), Plan("b", ("--no-stateless",)), Plan("c")]
    try:
        with start(out, plans, directory, redis_url=redis.url, tokens=TOKENS) as (a, b, c):
            yield Cluster(redis, a, b, c)
    finally:
        redis.stop()


class Caller:
    """One HTTP client sending stateless 2026-07-28 calls to whichever replica it is told."""

    def __init__(self, http: httpx2.AsyncClient, token: str) -> None:
        self.http = http
        self.token = token
        self.ids = 0

    async def post(self, replica: Replica, tool: str, arguments: dict[str, Any] | None = None,
                   **params: Any) -> httpx2.Response:  # fmt: skip
        self.ids += 1
        body, headers = call_request(self.ids, tool, arguments or {}, self.token, **params)
        return await self.http.post(replica.url, content=body, headers=headers)

    async def call(self, replica: Replica, tool: str, arguments: dict[str, Any] | None = None,
                   **params: Any) -> dict[str, Any]:  # fmt: skip
        response = await self.post(replica, tool, arguments, **params)
        assert response.status_code == 200, (response.status_code, response.text[:300])
        return answer_of(response)

    async def complete(self, replica: Replica, value: str) -> list[str]:
        """A stateless 2026-07-28 completion of prompt greet's ``colour``: its values."""
        values: list[str] = (await self.completion(replica, value))["result"]["completion"][
            "values"
        ]
        return values

    async def completion(self, replica: Replica, value: str) -> dict[str, Any]:
        """The answer to a stateless 2026-07-28 completion of prompt greet's ``colour``."""
        self.ids += 1
        params = {"ref": GREET, "argument": {"name": "colour", "value": value}, "_meta": META}
        body = {"jsonrpc": "2.0", "id": self.ids, "method": "completion/complete", "params": params}
        _, headers = call_request(self.ids, "", {}, self.token)
        headers = {**headers, "mcp-method": "completion/complete"}
        del headers["mcp-name"]
        return answer_of(await self.http.post(replica.url, json=body, headers=headers))


GREET = {"type": "ref/prompt", "name": "greet"}


@asynccontextmanager
async def caller(token: str) -> AsyncIterator[Caller]:
    async with httpx2.AsyncClient(timeout=20) as http:
        yield Caller(http, token)


def client(replica: Replica, token: str, mode: str, **options: Any) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    return Client(streamable_http_client(replica.url, http_client=http), mode=mode, **options)


async def collect(subscription: Subscription, count: int, quiet: float = 0.7) -> list[ServerEvent]:
    """``count`` events, then whatever else arrives within ``quiet`` seconds (a duplicate)."""
    events: list[ServerEvent] = []
    iterator = subscription.__aiter__()
    with anyio.fail_after(10):
        while len(events) < count:
            events.append(await iterator.__anext__())
    with anyio.move_on_after(quiet):
        events.append(await iterator.__anext__())
    return events


async def test_requests_alternate_between_replicas(cluster: Cluster) -> None:
    async with caller("tok-alternate") as one:
        names = [text_of(await one.call(cluster.all[i % 3], "whoami")) for i in range(6)]
        # what a handler keeps with ctx.store on one replica, another reads
        assert text_of(await one.call(cluster.a, "remember", {"value": "blue"})) == "kept on a"
        recalled = [text_of(await one.call(r, "recall")) for r in (cluster.c, cluster.b)]
    assert names == ["a", "b", "c", "a", "b", "c"]
    assert recalled == ["blue (read on c)", "blue (read on b)"]
    async with caller("tok-other") as stranger:  # per verified caller: another token, nothing
        assert text_of(await stranger.call(cluster.c, "recall")) == "nothing (read on c)"


async def test_event_on_a_reaches_listen_stream_and_handshake_session_on_b(
    cluster: Cluster,
) -> None:
    notified: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            notified.append(message.method)

    async with (
        client(cluster.b, "tok-events", "2026-07-28") as modern,
        client(cluster.b, "tok-events", "legacy", message_handler=on_message) as legacy,
        modern.listen(tools_list_changed=True) as on_b,
        caller("tok-events") as one,
    ):
        assert legacy.protocol_version not in ("2026-07-28", None)
        await legacy.list_tools()
        await anyio.sleep(0.3)  # the handshake session's standalone stream is open
        assert text_of(await one.call(cluster.a, "touch")) == "published on a"
        assert await collect(on_b, 1) == [ToolsListChanged()]
        with anyio.fail_after(10):
            while not notified:
                await anyio.sleep(0.05)
        await anyio.sleep(0.5)
        assert len(notified) == 1, notified  # from a, through Redis, once
        # Raised by the handshake session itself on b: once to it, once to b's listen stream.
        result = await legacy.call_tool("touch", {})
        assert not result.is_error
        assert await collect(on_b, 1) == [ToolsListChanged()]
        await anyio.sleep(0.5)
        assert len(notified) == 2, notified


async def test_elicitation_second_round_lands_on_another_replica(cluster: Cluster) -> None:
    colour = types.ElicitResult(action="accept", content={"colour": "teal"})
    async with caller("tok-paint") as one:
        first = await one.call(cluster.a, "paint")
        asked = first["result"]
        assert asked.get("resultType") == "input_required", asked
        (key,) = asked["inputRequests"]
        state = asked["requestState"]
        assert "asked on a" not in state  # sealed, not readable
        second = await one.call(
            cluster.c,
            "paint",
            inputResponses={key: colour.model_dump(mode="json", exclude_none=True)},
            requestState=state,
        )
        assert text_of(second) == "asked on a, answered on c: teal"
        # the sealed state is bound to its caller: another token cannot replay it
        async with caller("tok-other") as stranger:
            replayed = await stranger.post(
                cluster.c, "paint", inputResponses={}, requestState=state
            )
        assert replayed.status_code == 400
        assert answer_of(replayed)["error"]["data"] == {"reason": "invalid_request_state"}


async def test_rate_limit_holds_across_replicas(cluster: Cluster) -> None:
    async with caller("tok-limit") as one, caller("tok-other") as other:
        statuses = [
            (await one.post(cluster.all[i % 3], "whoami")).status_code for i in range(BURST)
        ]
        refused = [await one.post(replica, "whoami") for replica in cluster.all]
        unaffected = await other.post(cluster.b, "whoami")
    assert statuses == [200] * BURST
    assert [r.status_code for r in refused] == [429, 429, 429]
    assert all(int(r.headers["retry-after"]) >= 1 for r in refused)
    assert unaffected.status_code == 200


async def test_redis_killed_and_restarted_mid_run(cluster: Cluster) -> None:
    a, c = cluster.a, cluster.c
    async with (
        caller("tok-outage") as one,
        client(c, "tok-outage", "2026-07-28") as modern,
        modern.listen(tools_list_changed=True) as before,
    ):
        cluster.redis.kill()
        with anyio.fail_after(10):
            while any(shared(r)["connected"] for r in (a, c)):
                await anyio.sleep(0.1)
        # calls that do not need Redis go on (the limiter falls back to this replica's)
        assert [text_of(await one.call(r, "whoami")) for r in (a, c, a)] == ["a", "c", "a"]
        failed = (await one.call(c, "recall"))["result"]
        assert failed["isError"] and "unavailable" in failed["content"][0]["text"]
        refused = (await one.completion(c, "red"))["error"]  # what prompts/get answers
        assert refused["code"] == types.INVALID_REQUEST and "unavailable" in refused["message"]
        assert text_of(await one.call(a, "touch")) == "published on a"
        assert shared(a)["pendingEvents"] == 1

        cluster.redis.start()
        with anyio.fail_after(15):
            while not all(shared(r)["connected"] for r in cluster.all):
                await anyio.sleep(0.1)
        # c's subscription had a gap: its listen stream ends gracefully (clients listen again)
        ended: list[ServerEvent] = []
        with anyio.fail_after(10):
            async for event in before:
                ended.append(event)
        assert ended in ([], [ToolsListChanged()])
    with anyio.fail_after(10):  # a publishes the event it queued once the others are back
        while shared(a)["pendingEvents"]:
            await anyio.sleep(0.1)
    async with (
        client(c, "tok-outage", "2026-07-28") as modern,
        modern.listen(tools_list_changed=True) as again,
    ):
        assert text_of(await one_call(a, "touch")) == "published on a"
        assert await collect(again, 1) == [ToolsListChanged()]
        assert text_of(await one_call(c, "recall")) == "nothing (read on c)"
    for replica in cluster.all:
        log = replica.log_text()
        assert log.count("is unreachable") == 1, log[-3000:]
        assert log.count("reachable again") == 1, log[-3000:]
        assert "Traceback" not in log, log[-3000:]


def shared(replica: Replica) -> dict[str, Any]:
    """What the replica's /healthz says of its shared state."""
    status = replica.health()["sharedState"]
    assert isinstance(status, dict)
    return status


async def one_call(replica: Replica, tool: str) -> dict[str, Any]:
    async with caller("tok-outage") as one:
        return await one.call(replica, tool)


async def test_a_completion_handlers_store_is_shared_by_replicas(cluster: Cluster) -> None:
    """A completion handler's ``ctx.store`` is the caller's on every replica, as a tool's:
    it reads what a tool kept on another replica, and what it keeps there a tool or another
    completion reads on a third, in both eras."""
    async with caller("tok-complete") as one:
        assert text_of(await one.call(cluster.a, "remember", {"value": "blue"})) == "kept on a"
        assert await one.complete(cluster.c, "red") == ["blue (completed on c)"]
        assert text_of(await one.call(cluster.b, "recall")) == "red (read on b)"
        async with client(cluster.b, "tok-complete", "legacy") as legacy:
            assert legacy.protocol_version not in ("2026-07-28", None)
            argument = {"name": "colour", "value": "green"}
            greet = types.PromptReference(type="ref/prompt", name="greet")
            done = await legacy.complete(greet, argument)
            assert done.completion.values == ["red (completed on b)"]
        assert await one.complete(cluster.a, "teal") == ["green (completed on a)"]
    async with caller("tok-complete-other") as stranger:  # another caller: its own
        assert await stranger.complete(cluster.c, "x") == ["nothing (completed on c)"]
