"""The shared-state set over Redis, for replicas behind a load balancer.

Imported only when a Redis URL is configured; it imports ``redis`` (redis-py, asyncio API)
when the backend is built. The Redis objects are typed ``Any``: a generated server type-checks
without redis-py installed.

Keys (``<prefix>`` is the configured prefix: the server's name and a tag of its secret):
``<prefix>:events`` (the pub/sub channel), ``<prefix>:rl:<hash>`` (token buckets, a hash
that expires once full again), ``<prefix>:cache:<namespace>:<hash>`` and
``<prefix>:state:<hash>`` (JSON text, sealed when a secret is set, with TTL).
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from mcp.server.subscriptions import ServerEvent

from .local_cache import Edit, Edits, TTLCache, ValueCodec
from .sealing import SharedStateConfigError, SharedStateUnavailable, check_name
from .shared_local import LocalRateLimiter, check_limit, check_ttl
from .shared_redis_bus import RedisBus
from .shared_redis_link import RedisLink

__all__ = ["LimiterOutage", "RedisBackend", "RedisCache", "RedisLink", "RedisRateLimiter"]

LimiterOutage = Literal["local", "open", "closed"]  # the limiter while Redis is down

logger = logging.getLogger(__name__)
MAX_STATE_BYTES = 8 * 1024 * 1024  # a per-user value, sealed (Redis does one thing at a time)

# One token bucket, atomically, on the Redis clock (replicas' clocks never enter it).
# KEYS[1] the bucket; ARGV rate (tokens/s), burst, cost. Returns {allowed, retry-after text}.
TOKEN_BUCKET = """
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
if redis.call('TYPE', KEYS[1]).ok ~= 'hash' then redis.call('DEL', KEYS[1]) end
local saved = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(saved[1])
local at = tonumber(saved[2])
if tokens == nil or at == nil then
  tokens = burst
  at = now
end
local elapsed = now - at
if elapsed < 0 then elapsed = 0 end
tokens = math.min(burst, tokens + elapsed * rate)
local allowed = 0
local wait = '0'
if tokens >= cost then
  tokens = tokens - cost
  allowed = 1
elseif cost > burst then
  wait = 'inf'
else
  wait = string.format('%.6f', (cost - tokens) / rate)
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.6f', tokens), 'at', string.format('%.6f', now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return {allowed, wait}
"""


class RedisRateLimiter:
    """Token buckets in Redis (one Lua script per call, on the Redis clock), so a limit
    holds across replicas. While Redis is unreachable: ``outage="local"`` uses a bucket in
    this process (the limit then holds per replica), ``"open"`` allows every call,
    ``"closed"`` refuses every call (retry after ``retry_interval``).

    A bucket's key is hashed as the caches' are (keyed by the secret): no caller's address
    in Redis, nor a bucket one can find without the secret. Its value is not sealed: any
    value (forged, ``nan``) reads as at most a full bucket, as a deleted key does."""

    def __init__(
        self,
        link: RedisLink,
        prefix: str,
        *,
        outage: LimiterOutage = "local",
        fallback: LocalRateLimiter | None = None,
        values: ValueCodec,
    ) -> None:
        self._link = link
        self._prefix = f"{prefix}:rl:"
        self._hash = values.hash_key
        self._outage = outage
        self._fallback = fallback or LocalRateLimiter()
        self.script = link.client.register_script(TOKEN_BUCKET)

    async def allow(
        self, key: str, rate: float, burst: float, cost: float = 1.0
    ) -> tuple[bool, float]:
        check_limit(rate, burst, cost)
        done, reply = await self._link.run(
            self.script,
            keys=[self._prefix + self._hash(key)],
            args=[repr(rate), repr(burst), repr(cost)],
        )
        if done:
            allowed, wait = reply
            text = wait.decode() if isinstance(wait, bytes) else str(wait)
            return bool(int(allowed)), float(text)
        if self._outage == "open":
            return True, 0.0
        if self._outage == "closed":
            return False, self._link.retry_interval
        return self._fallback.take(key, rate, burst, cost)


class RedisCache:
    """A namespaced TTL cache in Redis: a miss (never an error) while Redis is down."""

    def __init__(self, link: RedisLink, values: ValueCodec, prefix: str, namespace: str) -> None:
        self._link = link
        self._values = values
        self._prefix = f"{prefix}:cache:{namespace}:"

    def _key(self, key: str) -> str:
        return self._prefix + self._values.hash_key(key)

    async def get(self, key: str) -> Any | None:
        return (await self.get_many([key]))[0]

    async def get_many(self, keys: list[str]) -> list[Any | None]:
        """One MGET (nil, not WRONGTYPE, for a key that is not a string: a miss)."""
        if not keys:
            return []
        names = [self._key(key) for key in keys]
        _, stored = await self._link.run(self._link.client.mget, names)
        pairs = zip(stored or [None] * len(names), names, strict=True)
        return [None if s is None else self._values.load(s, n) for s, n in pairs]

    async def set(self, key: str, value: Any, ttl: float) -> None:
        check_ttl(ttl)
        name = self._key(key)
        text = self._values.dump(value, name)
        await self._link.run(self._link.client.set, name, text, px=max(1, math.ceil(ttl * 1000)))

    async def delete(self, key: str) -> None:
        await self._link.run(self._link.client.delete, self._key(key))

    async def change(self, key: str, edit: Edit) -> bool:
        return await self.change_many([key], lambda values: {key: edit(values[0])})

    async def change_many(self, keys: list[str], edit: Edits) -> bool:
        """WATCH, MGET, then MULTI/EXEC the new values: retried while another client changed
        a key in between (one of them always succeeds), or when the answer of EXEC was lost
        (redis-py raises WatchError then: ``edit`` runs again on what EXEC wrote)."""
        return (await self._link.run(self._transaction, keys, edit))[0]

    async def _transaction(self, keys: list[str], edit: Edits) -> None:
        names = {key: self._key(key) for key in keys}
        async with self._link.client.pipeline(transaction=True) as pipe:
            while True:
                try:
                    await pipe.watch(*names.values())
                    stored = await pipe.mget(list(names.values()))  # (another type: None)
                    pairs = zip(stored, names.values(), strict=True)
                    changes = edit(
                        [None if s is None else self._values.load(s, n) for s, n in pairs]
                    )
                    pipe.multi()
                    for key, changed in changes.items():
                        if changed is None:
                            pipe.delete(names[key])
                        else:
                            check_ttl(changed[1])
                            text = self._values.dump(changed[0], names[key])
                            pipe.set(names[key], text, px=max(1, math.ceil(changed[1] * 1000)))
                    await pipe.execute()
                    return
                except self._link.watch_error:
                    continue


class RedisUserState:
    """Per-user values in Redis, keyed by a hash of (identity key, name) under the secret;
    ``SharedStateUnavailable`` while Redis is down (one replica's copy would disagree)."""

    def __init__(
        self, link: RedisLink, values: ValueCodec, prefix: str, *, default_ttl: float
    ) -> None:
        check_ttl(default_ttl)
        self._link = link
        self._values = values
        self._prefix = f"{prefix}:state:"
        self._ttl = default_ttl

    def _key(self, identity_key: str, name: str) -> str:
        check_name("identity key", identity_key)
        check_name("state name", name)
        if ":" in identity_key:
            raise ValueError("an identity key must not contain ':'")
        return self._prefix + self._values.hash_key(f"{identity_key}:{name}")

    async def _call(self, command: str, *args: Any, **kwargs: Any) -> Any:
        done, reply = await self._link.run(getattr(self._link.client, command), *args, **kwargs)
        if not done:
            raise SharedStateUnavailable(f"per-user state needs Redis at {self._link.url}")
        return reply

    async def get(self, identity_key: str, name: str) -> Any | None:
        key = self._key(identity_key, name)
        stored = (await self._call("mget", [key]))[0]  # (a key of another type: None)
        return None if stored is None else self._values.load(stored, key)

    async def set(self, identity_key: str, name: str, value: Any, ttl: float | None = None) -> None:
        ttl = self._ttl if ttl is None else ttl
        check_ttl(ttl)
        key = self._key(identity_key, name)
        if len(text := self._values.dump(value, key)) > MAX_STATE_BYTES:
            raise ValueError(f"a per-user value is at most {MAX_STATE_BYTES} bytes stored")
        await self._call("set", key, text, px=max(1, math.ceil(ttl * 1000)))

    async def delete(self, identity_key: str, name: str) -> None:
        await self._call("delete", self._key(identity_key, name))


class RedisBackend:
    def __init__(
        self,
        url: str,
        values: ValueCodec,
        *,
        prefix: str,
        state_ttl: float,
        retry_interval: float,
        liveness: float,
        limiter_outage: LimiterOutage,
        max_local_entries: int,
    ) -> None:
        self.link = RedisLink(url, retry_interval=retry_interval, probe_key=f"{prefix}:probe")
        self._values = values
        self._prefix = prefix
        self.bus = RedisBus(self.link, f"{prefix}:events", values, liveness=liveness)
        self.limiter = RedisRateLimiter(
            self.link,
            prefix,
            outage=limiter_outage,
            fallback=LocalRateLimiter(max_local_entries),
            values=values,
        )
        self.state = RedisUserState(self.link, values, prefix, default_ttl=state_ttl)

    def cache(self, namespace: str) -> TTLCache:
        return RedisCache(self.link, self._values, self._prefix, namespace)

    def on_gap(self, callback: Callable[[], None]) -> Callable[[], None]:
        return self.bus.on_gap(callback)

    def on_remote_event(
        self, listener: Callable[[ServerEvent], Awaitable[None]]
    ) -> Callable[[], None]:
        return self.bus.on_remote_event(listener)

    async def start(self) -> None:
        try:
            await self._try_commands()  # (each command: its own timeout)
        except self.link.outage_errors as exc:
            # full or read-only: it starts (writes fail, an outage, as when serving)
            if not any(full in str(exc) for full in ("'maxmemory'", "read only replica")):
                raise SharedStateConfigError(
                    f"Redis at {self.link.url} is unreachable at start: {self.link.scrub(exc)}"
                ) from None
        await self.bus.start()

    async def _try_commands(self) -> None:
        """Each kind of command the set sends, on a key of this replica's (nothing kept): an
        ACL refusing one (NOPERM) is an error at start, not an outage each use of it."""
        key, client = f"{self.link.probe_key}:{self.bus.origin}", self.link.client
        await self.limiter.script(keys=[key], args=["1", "1", "0"])
        async with client.pipeline(transaction=True) as pipe:
            await pipe.watch(key)
            await pipe.mget([key])
            pipe.multi()
            pipe.set(key, 1, px=1000, xx=True).delete(key)
            await pipe.execute()
        await client.publish(self.bus.channel, "")  # (not an event: ignored)
        async with self.link.subscriber.pubsub() as pubsub:  # its answer: NOPERM, or subscribed
            await pubsub.subscribe(self.bus.channel)
            await pubsub.get_message(timeout=self.link.timeout)

    async def aclose(self) -> None:
        if self.link.probe is not None:
            self.link.probe.cancel()
        await self.bus.aclose()
        for client in (self.link.client, self.link.subscriber):
            with contextlib.suppress(Exception):
                await client.aclose()

    def status(self) -> dict[str, Any]:
        return {
            "backend": "redis",
            "url": self.link.url,
            "connected": self.link.up and self.bus.subscribed,
            "outages": self.link.outages,
            "pendingEvents": self.bus.pending,
        }
