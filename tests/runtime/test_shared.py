"""mcpgen.runtime.shared: the in-process set, the Redis set (two instances as two replicas),
the SDK's ListenHandler on the bus, and requestState sealed on one instance, opened on another."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client import Client
from mcp.server import Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.subscriptions import (
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPError
from redis_support import RedisServer, redis_server

from mcpgen.runtime.identity import Identity
from mcpgen.runtime.shared import (
    SharedState,
    SharedStateConfigError,
    redact_url,
    request_state_security,
    shared_state,
)

__all__ = ["redis_server"]  # the fixture, imported for pytest

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

SECRET = "s" * 16 + "0123456789abcdef0123456789abcdef"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # redis.asyncio needs asyncio


@asynccontextmanager
async def replicas(url: str | None, n: int = 2, **options: Any) -> AsyncIterator[list[SharedState]]:
    sets = [shared_state(url, prefix="t", **options) for _ in range(n)]
    for s in sets:
        await s.start()
    try:
        yield sets
    finally:
        for s in sets:
            await s.aclose()


class Recorder:
    def __init__(self) -> None:
        self.events: list[ServerEvent] = []
        self.changed = asyncio.Event()

    def __call__(self, event: ServerEvent) -> None:
        self.events.append(event)
        self.changed.set()

    async def wait_for(self, count: int, timeout: float = 5.0) -> None:
        with anyio.fail_after(timeout):
            while len(self.events) < count:
                self.changed.clear()
                await self.changed.wait()


# ---- in-process -------------------------------------------------------------------------


async def test_memory_set_limits_caches_and_stores() -> None:
    async with replicas(None, n=1) as (shared,):
        assert shared.status()["backend"] == "memory"
        got = [await shared.limiter.allow("k", rate=1.0, burst=3) for _ in range(4)]
        assert [ok for ok, _ in got] == [True, True, True, False]
        assert 0.9 < got[3][1] <= 1.0  # one token at 1/s
        assert (await shared.limiter.allow("other", 1.0, 3))[0]  # buckets are per key
        assert await shared.limiter.allow("k", 1.0, 3, cost=5) == (False, float("inf"))

        cache = shared.cache("introspection")
        await cache.set("token-abc", {"active": True}, ttl=0.2)
        assert await cache.get("token-abc") == {"active": True}
        assert await shared.cache("exchange").get("token-abc") is None
        value = await cache.get("token-abc")
        value["active"] = False  # a copy: the cache keeps what was stored
        assert await cache.get("token-abc") == {"active": True}
        await asyncio.sleep(0.3)
        assert await cache.get("token-abc") is None
        with pytest.raises(ValueError):
            await cache.set("x", None, ttl=1)

        alice, bob = Identity("alice").key, Identity("bob").key
        await shared.state.set(alice, "cart", [1, 2], ttl=0.2)
        assert await shared.state.get(alice, "cart") == [1, 2]
        assert await shared.state.get(bob, "cart") is None
        view = shared.user_state(bob)
        await view.set("cart", {"n": 1})
        assert await view.get("cart") == {"n": 1}
        await view.delete("cart")
        assert await view.get("cart", "none") == "none"
        await asyncio.sleep(0.3)
        assert await shared.state.get(alice, "cart") is None


async def test_memory_bus_delivers_once_to_each_listener() -> None:
    async with replicas(None, n=1) as (shared,):
        first, second = Recorder(), Recorder()
        shared.bus.subscribe(first)
        unsubscribe = shared.bus.subscribe(second)
        await shared.bus.publish(ToolsListChanged())
        unsubscribe()
        await shared.bus.publish(ResourceUpdated(uri="file:///a"))
        assert first.events == [ToolsListChanged(), ResourceUpdated(uri="file:///a")]
        assert second.events == [ToolsListChanged()]


def test_configuration_errors_are_clear() -> None:
    with pytest.raises(SharedStateConfigError, match="redis://"):
        shared_state("http://:pw@example.com/")
    with pytest.raises(SharedStateConfigError, match="bad Redis URL: Invalid IPv6"):
        shared_state("redis://:hunter2@[::1/0")  # (was a traceback)
    with pytest.raises(SharedStateConfigError, match="database must be a number") as caught:
        shared_state("redis://:hunter2@h/prod")  # (redis-py took database 0, silently)
    assert "hunter2" not in str(caught.value)
    with pytest.raises(SharedStateConfigError, match="32 characters"):
        shared_state(None, secret="short")
    with pytest.raises(SharedStateConfigError, match="32 characters"):
        request_state_security("short")
    with pytest.raises(SharedStateConfigError, match="limiter_outage"):
        shared_state(None, limiter_outage="maybe")  # type: ignore[arg-type]
    assert redact_url("redis://user:hunter2@h:6379/0") == "redis://user:REDACTED@h:6379/0"
    assert redact_url("redis://:hunter2@h/0") == "redis://REDACTED@h/0"
    assert redact_url("rediss://h/0?password=hunter2&db=1") == "rediss://h/0?password=REDACTED&db=1"
    assert "hunter2" not in redact_url("unix:///run/r.sock?password=hunter2")
    for mark in "/?#":  # a password holding them unencoded (base64 has /) was printed whole
        url = f"redis://u:hunter{mark}2pw@h:6379/0"
        assert redact_url(url) == "redis://u:REDACTED@h:6379/0"
        with pytest.raises(SharedStateConfigError) as caught:  # (redis-py: "port 'hunter'")
            shared_state(url, secret="s" * 32)
        assert "hunter" not in str(caught.value) and "2pw" not in str(caught.value)


# ---- Redis: two instances are two replicas ----------------------------------------------


async def test_bus_fans_out_across_replicas_exactly_once(redis_server: RedisServer) -> None:
    async with replicas(redis_server.url, n=3) as sets:
        recorders = [Recorder() for _ in sets]
        for shared, recorder in zip(sets, recorders, strict=True):
            shared.bus.subscribe(recorder)
        extra = Recorder()  # a second local listener (the handshake-era forwarder's place)
        sets[1].bus.subscribe(extra)

        sent: list[ServerEvent] = []
        for i in range(20):
            event = ResourceUpdated(uri=f"file:///{i}")
            sent.append(event)
            await sets[i % 3].bus.publish(event)
        for event in (ToolsListChanged(), PromptsListChanged(), ResourcesListChanged()):
            sent.append(event)
            await sets[0].bus.publish(event)

        for recorder in [*recorders, extra]:
            await recorder.wait_for(len(sent))
        await asyncio.sleep(0.3)  # a duplicate would arrive by now
        for recorder in [*recorders, extra]:
            assert sorted(map(repr, recorder.events)) == sorted(map(repr, sent))
        # The publisher's own listeners got its events at once, not through Redis.
        assert sets[0].bus.received == 13  # type: ignore[attr-defined]  # 20 - its own 7
        assert recorders[0].events[0] == ResourceUpdated(uri="file:///0")


async def test_bus_drops_repeated_and_foreign_messages(redis_server: RedisServer) -> None:
    async with replicas(redis_server.url, n=1) as (shared,):
        recorder = Recorder()
        shared.bus.subscribe(recorder)
        message = json.dumps({"o": "elsewhere", "i": "elsewhere:1", "k": "tools"})
        # A retried PUBLISH: the same message id twice. And noise on the channel.
        for payload in (message, message, "not json", '{"o": "x"}', '{"o":"x","i":"x:2","k":"?"}'):
            redis_server.command("PUBLISH", "t:events", json.dumps(payload))
        await recorder.wait_for(1)
        await asyncio.sleep(0.3)
        assert recorder.events == [ToolsListChanged()]


async def test_with_a_secret_only_sealed_events_are_delivered(redis_server: RedisServer) -> None:
    """Whoever reaches Redis without the secret (another server on it, even one of the same
    name) cannot make this server's clients see notifications."""
    async with (
        replicas(redis_server.url, n=2, secret=SECRET) as (a, b),
        replicas(redis_server.url, n=1, secret=SECRET[::-1]) as (other,),
    ):
        recorder = Recorder()
        a.bus.subscribe(recorder)
        forged = json.dumps({"o": "elsewhere", "i": "elsewhere:1", "k": "tools"})
        redis_server.command("PUBLISH", "t:events", json.dumps(forged))
        await other.bus.publish(ResourceUpdated(uri="file:///other-secret"))
        await b.bus.publish(ResourceUpdated(uri="file:///x"))
        await recorder.wait_for(1)
        await asyncio.sleep(0.3)
        assert recorder.events == [ResourceUpdated(uri="file:///x")]


async def test_listen_stream_gets_events_raised_on_another_replica(
    redis_server: RedisServer,
) -> None:
    async with replicas(redis_server.url, n=2) as (replica_a, replica_b):
        server_b = Server("b", on_subscriptions_listen=ListenHandler(replica_b.bus))
        async with Client(server_b, mode="2026-07-28") as client:
            listen = client.listen(tools_list_changed=True, resource_subscriptions=["file:///x"])
            async with listen as subscription:
                await replica_a.bus.publish(ResourceUpdated(uri="file:///other"))  # not asked for
                await replica_a.bus.publish(ResourceUpdated(uri="file:///x"))
                await replica_a.bus.publish(ToolsListChanged())
                received: list[ServerEvent] = []
                with anyio.fail_after(5):
                    async for event in subscription:
                        received.append(event)
                        if len(received) == 2:
                            break
        assert received == [ResourceUpdated(uri="file:///x"), ToolsListChanged()]


async def test_rate_limit_holds_across_replicas(redis_server: RedisServer) -> None:
    async with replicas(redis_server.url, n=2) as (a, b):
        results = [await (a if i % 2 else b).limiter.allow("user", 0.5, 5) for i in range(8)]
        assert [ok for ok, _ in results] == [True] * 5 + [False] * 3
        assert all(1.5 < wait <= 2.0 for _, wait in results[5:])  # one token at 0.5/s
        assert (await b.limiter.allow("someone-else", 0.5, 5))[0]

        # Atomic: 60 concurrent takes from a burst of 25 through both replicas.
        takes = [(a if i % 2 else b).limiter.allow("crowd", 0.001, 25) for i in range(60)]
        outcomes = await asyncio.gather(*takes)
        assert sum(ok for ok, _ in outcomes) == 25

        # Refill on the Redis clock: 20 tokens/s, empty bucket, 0.25 s later about 5 more.
        for _ in range(3):
            await a.limiter.allow("refill", 20, 3)
        assert not (await b.limiter.allow("refill", 20, 3))[0]
        await asyncio.sleep(0.25)
        refilled = [(await b.limiter.allow("refill", 20, 3))[0] for _ in range(5)]
        assert refilled == [True, True, True, False, False]


def _keys(redis_server: RedisServer, pattern: str) -> list[str]:
    reply = redis_server.command("KEYS", pattern).decode().split("\r\n")
    return [line for line in reply if line.startswith("t:")]


async def test_rate_limit_buckets_name_no_caller_and_a_forged_one_is_at_most_full(
    redis_server: RedisServer,
) -> None:
    """The buckets were ``t:rl:ip:203.0.113.7``: Redis showed every caller's address (and a
    tenant sharing it could name the bucket of an address it knows, to reset it). They are
    hashed under the secret as the cache keys are. Their values are not sealed, and need not
    be: whatever a writer without the secret puts there gives at most a full bucket, as
    deleting the key does (which no seal prevents)."""
    caller, burst = "ip:203.0.113.7", 3
    async with replicas(redis_server.url, n=1, secret=SECRET) as (a,):
        await a.limiter.allow(caller, 0.001, burst)
        (bucket,) = _keys(redis_server, "t:rl:*")
        assert "203.0.113.7" not in bucket and caller not in bucket, bucket
    redis_server.command("FLUSHALL")
    async with replicas(redis_server.url, n=1, secret=SECRET[::-1]) as (other,):
        await other.limiter.allow(caller, 0.001, burst)
        assert _keys(redis_server, "t:rl:*") != [bucket]  # another secret, another key
    async with replicas(redis_server.url, n=1, secret=SECRET) as (a,):
        for tokens, at in [("1e300", "0"), ("nan", "nan"), ("inf", "-inf"), ("3", "-1e300")]:
            redis_server.command("HSET", bucket, "tokens", tokens, "at", at)
            passed = [(await a.limiter.allow(caller, 0.001, burst))[0] for _ in range(5)]
            assert passed == [True] * burst + [False] * 2, (tokens, at, passed)


async def test_cache_is_shared_expires_and_hides_tokens(redis_server: RedisServer) -> None:
    token = "eyJhbGciOi.raw-bearer-token.signature"
    async with replicas(redis_server.url, n=2, secret=SECRET) as (a, b):
        await a.cache("introspection").set(token, {"active": True, "sub": "alice"}, ttl=0.4)
        await a.cache("exchange").set(token, {"access_token": "downstream-secret"}, ttl=5)
        assert await b.cache("introspection").get(token) == {"active": True, "sub": "alice"}
        assert await b.cache("exchange").get(token) == {"access_token": "downstream-secret"}
        dump = redis_server.command("KEYS", "*")
        keys = redis_server.command("KEYS", "t:cache:*").decode()
        assert keys.count("t:cache:introspection:") == 1 and keys.count("t:cache:exchange:") == 1
        for key in [line for line in keys.split("\r\n") if line.startswith("t:cache:")]:
            stored = redis_server.command("GET", key)
            assert b"downstream-secret" not in stored and b"alice" not in stored  # sealed
        assert token.encode() not in dump
        await asyncio.sleep(0.5)
        assert await b.cache("introspection").get(token) is None
        await b.cache("exchange").delete(token)
        assert await a.cache("exchange").get(token) is None

    # Another secret cannot read those values: a miss, not an error.
    async with replicas(redis_server.url, n=1, secret=SECRET) as (a,):
        await a.cache("c").set("k", [1], ttl=5)
    async with replicas(redis_server.url, n=1, secret=SECRET[::-1]) as (other,):
        assert await other.cache("c").get("k") is None


async def test_user_state_is_shared_per_identity_with_ttl(redis_server: RedisServer) -> None:
    alice, bob = Identity("alice", issuer="i").key, Identity("bob", issuer="i").key
    async with replicas(redis_server.url, n=2, state_ttl=30) as (a, b):
        await a.state.set(alice, "draft", {"text": "hi"})
        (draft,) = _keys(redis_server, "t:state:*")
        await a.state.set(alice, "short", 1, ttl=0.3)
        assert await b.state.get(alice, "draft") == {"text": "hi"}
        assert await b.state.get(bob, "draft") is None
        assert await b.user_state(alice).get("short") == 1
        ttl_ms = int(redis_server.command("PTTL", draft)[1:].split(b"\r")[0])
        assert 29_000 < ttl_ms <= 30_000  # the default TTL
        await asyncio.sleep(0.4)
        assert await b.state.get(alice, "short") is None
        await b.user_state(alice).delete("draft")
        assert await a.state.get(alice, "draft") is None
        with pytest.raises(ValueError):
            await a.state.set("has:colon", "x", 1)


async def test_user_state_keys_name_no_user_without_the_secret(redis_server: RedisServer) -> None:
    """The keys were ``t:state:<identity key>:<name>``, the identity key an unkeyed sha256 of
    (issuer, client, subject): a tenant of the Redis without the secret could compute a known
    user's (``alice@example.com``), see whether and what they store, and delete or roll back
    those values. The whole key is hashed under the secret, as the rate-limit buckets are."""
    alice = Identity("alice@example.com", issuer="https://idp.example").key
    async with replicas(redis_server.url, n=1, secret=SECRET) as (a,):
        await a.state.set(alice, "draft", {"text": "hi"})
        (key,) = _keys(redis_server, "t:state:*")
        assert alice not in key and "draft" not in key, key
    redis_server.command("FLUSHALL")
    async with replicas(redis_server.url, n=1, secret=SECRET[::-1]) as (other,):
        await other.state.set(alice, "draft", {"text": "hi"})
        assert _keys(redis_server, "t:state:*") != [key]  # another secret, another key


async def test_a_value_that_is_not_utf8_reads_as_a_miss(redis_server: RedisServer) -> None:
    """Bytes written over a key by whoever reaches Redis without the secret read as a miss,
    as any forgery does (they raised UnicodeDecodeError: that caller's every read failed)."""
    import redis

    alice = Identity("alice", issuer="i").key
    async with replicas(redis_server.url, n=1, secret=SECRET) as (a,):
        await a.state.set(alice, "notes", {"text": "hi"})
        (key,) = _keys(redis_server, "t:state:*")
        redis.Redis(port=redis_server.port).set(key, b"\xff\xfe")
        assert await a.state.get(alice, "notes") is None


def _value(reply: bytes) -> str:
    """The value of a raw GET reply (``$<length>\r\n<value>\r\n``)."""
    return reply.split(b"\r\n")[1].decode()


async def test_a_sealed_value_copied_to_another_key_does_not_open(
    redis_server: RedisServer,
) -> None:
    """Whoever can write to Redis without the secret cannot move a sealed value to a key of
    their own: alice's ``ctx.store`` value read as mallory's, an admin's introspection
    answer served for mallory's token."""
    alice, mallory = Identity("alice", issuer="i").key, Identity("mallory", issuer="i").key
    async with replicas(redis_server.url, n=1, secret=SECRET) as (a,):
        await a.state.set(alice, "notes", {"text": "alice's secret"})
        (alices,) = _keys(redis_server, "t:state:*")
        await a.state.set(mallory, "notes", {"text": "mine"})
        (mallorys,) = [k for k in _keys(redis_server, "t:state:*") if k != alices]
        redis_server.command("SET", mallorys, _value(redis_server.command("GET", alices)))
        assert await a.state.get(mallory, "notes") is None
        assert await a.state.get(alice, "notes") == {"text": "alice's secret"}

        cache = a.cache("introspection")
        await cache.set("admin-token", {"active": True, "sub": "admin"}, ttl=30)
        keys = redis_server.command("KEYS", "t:cache:introspection:*").decode().split("\r\n")
        admin_key = next(k for k in keys if k.startswith("t:cache:"))
        await cache.set("mallory-token", {"active": True, "sub": "mallory"}, ttl=30)
        keys = redis_server.command("KEYS", "t:cache:introspection:*").decode().split("\r\n")
        mallory_key = next(k for k in keys if k.startswith("t:cache:") and k != admin_key)
        redis_server.command("SET", mallory_key, _value(redis_server.command("GET", admin_key)))
        assert await cache.get("mallory-token") is None
        assert await cache.get("admin-token") == {"active": True, "sub": "admin"}


async def test_unreachable_at_start_names_the_url_without_password() -> None:
    from mcpgen.runtime.testing import free_port

    url = f"redis://:hunter2hunter2@127.0.0.1:{free_port()}/0"
    shared = shared_state(url)
    with pytest.raises(SharedStateConfigError) as caught:
        await shared.start()
    message = str(caught.value)
    assert "unreachable at start" in message and "127.0.0.1" in message
    assert "hunter2" not in message
    await shared.aclose()


# ---- requestState: sealed on one replica, opened on another -----------------------------

ASK = types.ElicitRequest(
    params=types.ElicitRequestFormParams(
        message="Which colour?",
        requested_schema={"type": "object", "properties": {"colour": {"type": "string"}}},
    )
)


def _elicit_server(security: RequestStateSecurity) -> Server[Any]:
    async def call_tool(
        ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        answer = (params.input_responses or {}).get("colour")
        if answer is None:
            return types.InputRequiredResult(
                input_requests={"colour": ASK}, request_state="round-1"
            )
        assert isinstance(answer, types.ElicitResult)
        text = f"{params.request_state}: {answer.content['colour']}"  # type: ignore[index]
        return types.CallToolResult(content=[types.TextContent(text=text)])

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[types.Tool(name="paint", input_schema={"type": "object"})]
        )

    server: Server[Any] = Server("paint", on_call_tool=call_tool, on_list_tools=list_tools)
    server.middleware.append(RequestStateBoundary(security, default_audience="paint"))
    return server


async def _two_rounds(first: Server[Any], second: Server[Any]) -> str:
    async with (
        Client(first, mode="2026-07-28") as client_a,
        Client(second, mode="2026-07-28") as client_b,
    ):
        await client_a.list_tools()
        await client_b.list_tools()
        round_1 = await client_a.session.call_tool("paint", {}, allow_input_required=True)
        assert isinstance(round_1, types.InputRequiredResult)
        assert round_1.request_state and round_1.request_state != "round-1"  # sealed
        answer = types.ElicitResult(action="accept", content={"colour": "teal"})
        try:
            done = await client_b.call_tool(
                "paint", {}, input_responses={"colour": answer}, request_state=round_1.request_state
            )
        except MCPError as exc:
            return f"rejected: {exc}"
        block = done.content[0]
        assert isinstance(block, types.TextContent)
        return block.text


async def test_request_state_opens_on_another_replica_with_the_same_secret() -> None:
    a = _elicit_server(request_state_security(SECRET))
    b = _elicit_server(request_state_security(SECRET))
    assert await _two_rounds(a, b) == "round-1: teal"


async def test_request_state_fails_with_another_secret_or_none() -> None:
    for other in (request_state_security(SECRET[::-1]), request_state_security(None)):
        a = _elicit_server(request_state_security(SECRET))
        outcome = await _two_rounds(a, _elicit_server(other))
        assert outcome == "rejected: Invalid or expired requestState"


async def test_workers_given_one_state_secret_open_each_others_request_state() -> None:
    """``<PREFIX>STATE_SECRET`` (``sealing.request_security``, what the HTTP app seals with):
    two workers with the same secret open each other's state, a short secret is refused,
    and without one each process has a key of its own."""
    from mcpgen.runtime.sealing import request_security
    from mcpgen.runtime.settings import Settings

    def worker(secret: str) -> Server[Any]:
        security = request_security(Settings(state_secret=secret, workers=2))
        assert security is not None
        return _elicit_server(security)

    assert await _two_rounds(worker(SECRET), worker(SECRET)) == "round-1: teal"
    outcome = await _two_rounds(worker(SECRET), worker(SECRET[::-1]))
    assert outcome == "rejected: Invalid or expired requestState"
    assert request_security(Settings()) is None
    with pytest.raises(SharedStateConfigError, match="at least 32"):
        request_security(Settings(state_secret="short"))


async def test_request_state_rotation_accepts_the_previous_secret() -> None:
    old, new = SECRET, SECRET[::-1]
    a = _elicit_server(request_state_security(old))
    b = _elicit_server(request_state_security(new, previous=[old]))
    assert await _two_rounds(a, b) == "round-1: teal"


def test_redis_is_imported_only_when_a_url_is_configured() -> None:
    import subprocess
    import sys

    code = (
        "import asyncio, sys\n"
        "from mcpgen.runtime.shared import shared_state\n"
        "async def main():\n"
        "    async with shared_state(None) as s:\n"
        "        await s.limiter.allow('k', 1, 1)\n"
        "asyncio.run(main())\n"
        "print('redis' in sys.modules, 'mcpgen.runtime.shared_redis' in sys.modules)\n"
        "shared_state('redis://127.0.0.1:1/0')\n"
        "print('redis' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    ).stdout.split()
    assert out == ["False", "False", "True"]
