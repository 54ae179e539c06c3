"""The runtime's wiring of the shared state, in one process: events from another replica
reach handshake connections once (and local ones never twice), the HTTP rate limit and the
introspection cache over the shared pieces, ``ctx.store``, and the settings that carry a
Redis URL and a secret."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp.server.subscriptions import ResourceUpdated, ToolsListChanged
from redis_support import RedisServer, redis_server

from mcpgen.runtime import authz, sealing, sharing
from mcpgen.runtime.context import Context
from mcpgen.runtime.errors import ConfigError, ToolError
from mcpgen.runtime.events import CallerUpdate
from mcpgen.runtime.http_guard import TokenBuckets
from mcpgen.runtime.identity import Identity
from mcpgen.runtime.introspection import Introspection
from mcpgen.runtime.resources import CallerBus
from mcpgen.runtime.settings import Settings
from mcpgen.runtime.shared import SharedState, shared_state
from mcpgen.runtime.shared_local import local_user_state

__all__ = ["redis_server"]
pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]
SECRET = "x" * 40
SPEC: dict[str, Any] = {"server": {"name": "relay test"}, "settings": {}}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def two(url: str | None) -> AsyncIterator[list[SharedState]]:
    sets = [shared_state(url, prefix="w", secret=SECRET) for _ in range(2)]
    for s in sets:
        await s.start()
    try:
        yield sets
    finally:
        for s in sets:
            await s.aclose()


class FakeSession:
    """A handshake-era connection (its own session object) that records the notifications
    sent on its standalone channel, ``outbound``."""

    protocol_version = "2025-11-25"

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.outbound = self

    async def notify(self, method: str, params: dict[str, Any] | None) -> None:
        names = {"notifications/tools/list_changed": "tools"}
        self.sent.append(names.get(method) or (params or {})["uri"])


class FakeRequest:
    def __init__(self, session: FakeSession) -> None:
        self.session = session
        self.protocol_version = session.protocol_version


async def seen(events: sharing.ReplicaEvents, session: FakeSession) -> None:
    """``session`` makes a request (through the tracking middleware)."""

    async def call_next(ctx: Any) -> None:
        return None

    await events.track(FakeRequest(session), call_next)  # type: ignore[arg-type]


async def test_events_from_another_replica_reach_handshake_connections_once(
    redis_server: RedisServer,
) -> None:
    async with two(redis_server.url) as (a, b):
        on_a, on_b = sharing.ReplicaEvents(a.bus), sharing.ReplicaEvents(b.bus)
        a.on_remote_event(on_a.forward)
        b.on_remote_event(on_b.forward)
        caller, bystander_a, bystander_b = FakeSession(), FakeSession(), FakeSession()
        for events, session in ((on_a, caller), (on_a, bystander_a), (on_b, bystander_b)):
            await seen(events, session)
        subscribed = FakeSession()
        await seen(on_b, subscribed)
        on_b.subscribed[subscribed] = {"file:///x"}

        await on_a.publish(ToolsListChanged(), FakeRequest(caller))  # type: ignore[arg-type]
        await on_a.publish(ResourceUpdated(uri="file:///x"))
        with anyio.fail_after(5):
            while len(bystander_b.sent) < 1 or not subscribed.sent:
                await asyncio.sleep(0.02)
        await asyncio.sleep(0.3)  # anything more would be a duplicate
    assert caller.sent == ["tools"]  # its own change, once: not again through the bus
    assert bystander_a.sent == []  # a local list change goes to the caller's connection only
    assert bystander_b.sent == ["tools"]  # another replica's: to every handshake connection
    assert subscribed.sent == ["tools", "file:///x"]


async def test_a_modern_session_is_not_tracked() -> None:
    events = sharing.ReplicaEvents()
    modern = FakeSession()
    modern.protocol_version = "2026-07-28"
    await seen(events, modern)
    await events.forward(ToolsListChanged())
    assert modern.sent == []


async def test_the_http_rate_limit_holds_across_replicas(redis_server: RedisServer) -> None:
    async with two(redis_server.url) as (a, b):
        limits = [TokenBuckets(0.01, 3, s.limiter) for s in (a, b)]
        waits = [await limits[i % 2].wait("id:alice") for i in range(4)]
        other = await limits[1].wait("id:bob")
    assert waits[:3] == [0.0, 0.0, 0.0] and waits[3] > 1
    assert other == 0.0


async def test_the_in_process_rate_limit_keeps_its_behaviour() -> None:
    limit = TokenBuckets(1.0, 2)
    waits = [await limit.wait("ip:1") for _ in range(3)]
    assert waits[:2] == [0.0, 0.0] and 0.9 < waits[2] <= 1.0


async def test_introspection_answers_are_shared(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []

    async def ask(self: Introspection, token: str) -> dict[str, Any]:
        asked.append(token)
        return {"active": token != "revoked", "sub": "alice"}

    monkeypatch.setattr(Introspection, "_ask", ask)
    async with two(redis_server.url) as (a, b):
        first, second = (
            Introspection(
                "https://as.example/introspect", "T_", {}, shared=s.cache("introspection")
            )
            for s in (a, b)
        )
        assert (await first.claims("tok"))["sub"] == "alice"
        assert (await second.claims("tok"))["sub"] == "alice"
        await first.claims("revoked")
        await second.claims("revoked")  # refusals are not cached
        # no answer is served from the process: each keeps only that it saw "tok" active
        # (not charged to its address again: http_auth); a refused token is not seen
        assert all(until <= time.monotonic() for until, _ in first.cache.values())
        assert first.seen("tok") and second.seen("tok") and not second.seen("revoked")
    assert asked == ["tok", "revoked", "revoked"]


async def test_ctx_store_is_per_caller_and_answers_a_tool_error_when_unreachable(
    redis_server: RedisServer,
) -> None:
    store = local_user_state()
    ctx = Context(request=None, registry={"store": store})  # type: ignore[arg-type]
    await ctx.store.set("draft", {"n": 1})
    assert await ctx.store.get("draft") == {"n": 1}
    await ctx.store.set("draft", None)  # None deletes
    assert await ctx.store.get("draft", "gone") == "gone"
    alone = Context(request=None)  # type: ignore[arg-type]  # outside a server: this process's
    await alone.store.set("k", 2)
    assert await Context(request=None).store.get("k") == 2  # type: ignore[arg-type]

    shared = shared_state(redis_server.url, prefix="w2", retry_interval=0.2)
    await shared.start()
    try:
        ctx = Context(request=None, registry={"store": shared.state})  # type: ignore[arg-type]
        await ctx.store.set("k", "v")
        redis_server.kill()
        with pytest.raises(ToolError, match="unavailable") as caught:
            await ctx.store.get("k")
        assert "127.0.0.1" not in str(caught.value)  # no internal address for the client
    finally:
        await shared.aclose()


def test_settings_hide_the_secret_and_take_it_only_from_the_environment() -> None:
    spec = {"server": {"name": "s"}, "settings": {"env_prefix": "S_", "state_secret": "leak" * 10}}
    assert Settings.defaults(spec).state_secret is None
    settings = Settings.from_env(spec, {"S_STATE_SECRET": SECRET, "S_REDIS_URL": "redis://r:1/0"})
    assert settings.state_secret == SECRET and settings.redis_url == "redis://r:1/0"
    assert SECRET not in repr(settings)


def test_redis_unreachable_at_start_is_a_config_error_without_the_password() -> None:
    settings = Settings(
        redis_url="redis://:hunter2@127.0.0.1:1/0", transport="http", state_secret=SECRET
    )
    with pytest.raises(ConfigError, match=r"unreachable at start") as caught:
        sharing.check_reachable(SPEC, settings)
    assert "hunter2" not in str(caught.value)
    sharing.check_reachable(SPEC, Settings())  # without Redis: nothing to check


def test_redis_without_a_state_secret_is_refused_before_connecting() -> None:
    """Unsealed, the values in Redis could be forged by whoever reaches it (another server
    sharing the Redis): a cached introspection answer for a token of their choosing."""
    settings = Settings(redis_url="redis://127.0.0.1:1/0", transport="http", env_prefix="R_")
    with pytest.raises(ConfigError, match="R_REDIS_URL needs R_STATE_SECRET"):
        sharing.check_reachable(SPEC, settings)  # refused before trying port 1
    with pytest.raises(ConfigError, match="STATE_SECRET"):
        sharing.shared_for(SPEC, settings)


def test_a_short_state_secret_is_refused() -> None:
    with pytest.raises(ConfigError, match="32 characters"):
        sealing.request_security(Settings(state_secret="short"))
    assert sharing.key_prefix(SPEC, SECRET).startswith("relay-test-")


async def test_two_servers_of_one_name_on_one_redis_keep_apart(redis_server: RedisServer) -> None:
    """Two servers named alike (two teams' copies of one manifest) under their own secrets
    on one Redis: neither overwrites the other's ``ctx.store`` values nor spends its rate
    limit."""
    first = sharing.shared_for(SPEC, Settings(redis_url=redis_server.url, state_secret=SECRET))
    second = sharing.shared_for(
        SPEC, Settings(redis_url=redis_server.url, state_secret=SECRET[::-1] + "y")
    )
    async with first, second:
        await first.state.set("alice", "draft", "first's")
        await second.state.set("alice", "draft", "second's")
        assert await first.state.get("alice", "draft") == "first's"
        assert await second.state.get("alice", "draft") == "second's"
        assert (await first.limiter.allow("ip:10.0.0.1", 0.001, 1))[0]
        assert not (await first.limiter.allow("ip:10.0.0.1", 0.001, 1))[0]
        assert (await second.limiter.allow("ip:10.0.0.1", 0.001, 1))[0]


async def test_a_callers_update_from_another_replica_reaches_that_caller_only(
    redis_server: RedisServer,
) -> None:
    """An update of per-caller content (``ctx.notify_resource_updated(uri,
    caller_only=True)``) raised on one replica: on the other, the caller's handshake
    connection and listen stream hear of it, another caller's subscribed to the same URI
    do not (they learnt when and what someone else changed)."""
    async with two(redis_server.url) as (a, b):
        on_a, on_b = sharing.ReplicaEvents(a.bus), sharing.ReplicaEvents(b.bus)
        b.on_remote_event(on_b.forward)
        heard: dict[str, list[Any]] = {"alice": [], "bob": []}
        connections = {"alice": FakeSession(), "bob": FakeSession()}
        for name, connection in connections.items():
            await seen(on_b, connection)
            on_b.subscribed[connection] = {"file:///x"}
            on_b.callers[connection] = Identity(subject=name).key
            token = authz._CURRENT.set(Identity(subject=name))  # a listen stream of ``name``
            try:
                CallerBus(b.bus).subscribe(heard[name].append)
            finally:
                authz._CURRENT.reset(token)
        await on_a.publish(CallerUpdate("file:///x", Identity(subject="alice").key))
        with anyio.fail_after(5):
            while not (connections["alice"].sent and heard["alice"]):
                await asyncio.sleep(0.02)
        await asyncio.sleep(0.3)  # anything for Bob would have come by now
    assert connections["alice"].sent == ["file:///x"] and connections["bob"].sent == []
    assert [e.uri for e in heard["alice"]] == ["file:///x"] and heard["bob"] == []
