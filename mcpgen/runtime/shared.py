"""State that replicas share: events, rate limits, caches, per-user state, requestState keys.

One server process keeps all of this in memory (``shared_state(None)``); replicas share it
through Redis (``shared_state("redis://...")``, in a package that carries the backend): the
pieces have one interface either way, so the rest of the runtime never asks which it has.

- ``bus``: a ``mcp.server.subscriptions.SubscriptionBus`` for the SDK's ``ListenHandler``
  (``subscriptions/listen``) and any local listener (the forwarder to handshake-era
  sessions); ``publish`` reaches the listeners of every replica exactly once.
- ``limiter``: a token bucket per key, ``allow(key, rate, burst) -> (allowed, retry_after)``.
- ``cache(namespace)``: a TTL cache of JSON values (token introspection, token exchange).
  Keys are hashed before they are stored, so a raw token may be passed as a key.
- ``state``: per-user values for handlers (``ctx.state``), by (identity key, name), with TTL.
- ``request_state_security(secret)``: the SDK's ``RequestStateSecurity`` under one configured
  secret, so a round trip sealed on one replica opens on another.

Faults (Redis only): unreachable at start raises ``SharedStateConfigError`` naming the URL
(password removed). Lost while serving: one warning per outage and one line on recovery;
``publish`` still reaches local listeners and holds the event for the other replicas until
Redis returns; the limiter falls back to a per-replica bucket (``limiter_outage="local"``,
the default; or ``"open"``/``"closed"``); the cache misses; ``state`` raises
``SharedStateUnavailable``. The pub/sub subscription is re-established by itself; since
pub/sub has no replay, ``on_gap`` callbacks run when it is back (wire ``ListenHandler.close``
to it, so listen streams end gracefully and clients re-listen and refetch).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from importlib.util import find_spec
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from mcp.server.request_state import RequestStateSecurity
from mcp.server.subscriptions import ServerEvent, SubscriptionBus

from .local_cache import TTLCache, ValueCodec
from .sealing import (
    BoundState,
    SharedStateConfigError,
    SharedStateUnavailable,
    UserStateStore,
    check_secret,
)
from .shared_redis_link import redact_url, without_password

if TYPE_CHECKING:
    from .shared_redis import LimiterOutage

__all__ = [
    "BoundState",
    "RateLimiter",
    "SharedState",
    "SharedStateConfigError",
    "SharedStateUnavailable",
    "TTLCache",
    "UserStateStore",
    "ValueCodec",
    "connect",
    "redact_url",
    "request_state_security",
    "shared_state",
    "without_password",
]

RemoteListener = Callable[[ServerEvent], Awaitable[None]]


def request_state_security(
    secret: str | None, *, previous: Sequence[str] = ()
) -> RequestStateSecurity:
    """The SDK's ``requestState`` protection under one configured secret (AES-256-GCM, key
    derived by HKDF-SHA256 inside the SDK), so every replica configured alike opens what
    another sealed. ``previous`` are older secrets still accepted (rotation). Without a
    secret: a key held by this process only (``RequestStateSecurity.ephemeral``)."""
    if secret is None:
        if previous:
            raise SharedStateConfigError("previous requestState secrets given without a secret")
        return RequestStateSecurity.ephemeral()
    ring = [secret, *previous]
    for value in ring:
        check_secret(value)
    try:
        return RequestStateSecurity(keys=ring)
    except ValueError as exc:  # duplicates in the ring
        raise SharedStateConfigError(f"requestState secrets: {exc}") from None


class RateLimiter(Protocol):
    async def allow(
        self, key: str, rate: float, burst: float, cost: float = 1.0
    ) -> tuple[bool, float]:
        """Take ``cost`` tokens from ``key``'s bucket (refilled at ``rate`` per second up to
        ``burst``). Returns (allowed, seconds until the call would be allowed; 0 if it was)."""
        ...


class _Backend(Protocol):
    @property
    def bus(self) -> SubscriptionBus: ...

    @property
    def limiter(self) -> RateLimiter: ...

    @property
    def state(self) -> UserStateStore: ...

    def cache(self, namespace: str) -> TTLCache: ...

    def on_gap(self, callback: Callable[[], None]) -> Callable[[], None]: ...

    def on_remote_event(self, listener: RemoteListener) -> Callable[[], None]: ...

    async def start(self) -> None: ...

    async def aclose(self) -> None: ...

    def status(self) -> dict[str, Any]: ...


class SharedState:
    """The whole set, built by ``shared_state`` (no I/O) and started by ``start`` or
    ``async with``. Build it before the server (the SDK's ``ListenHandler`` takes the bus at
    construction) and start it in the server's lifespan."""

    def __init__(self, backend: _Backend, *, url: str | None) -> None:
        self._backend = backend
        self.url = redact_url(url) if url else None
        self._caches: dict[str, TTLCache] = {}

    @property
    def bus(self) -> SubscriptionBus:
        return self._backend.bus

    @property
    def limiter(self) -> RateLimiter:
        return self._backend.limiter

    @property
    def state(self) -> UserStateStore:
        return self._backend.state

    def cache(self, namespace: str) -> TTLCache:
        """The cache for one use (``"introspection"``, ``"exchange"``); one object per name."""
        if not namespace or ":" in namespace:
            raise ValueError(f"cache namespace must be a non-empty name without ':': {namespace!r}")
        if namespace not in self._caches:
            self._caches[namespace] = self._backend.cache(namespace)
        return self._caches[namespace]

    def on_gap(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Run ``callback`` (synchronous, on the event loop) when this replica's event
        subscription is back after an outage, since events raised elsewhere meanwhile may be
        lost; never called in process. Wire ``ListenHandler.close`` to it (streams end
        gracefully, clients re-listen and refetch). Returns an unsubscribe callable."""
        return self._backend.on_gap(callback)

    def on_remote_event(self, listener: RemoteListener) -> Callable[[], None]:
        """Await ``listener(event)`` for each event another replica published (never for
        one published here: the bus's own listeners have it at once), in a task of its own,
        once per event. The runtime forwards them to its handshake-era sessions. Never
        called in process. Returns an unsubscribe callable."""
        return self._backend.on_remote_event(listener)

    def user_state(self, identity_key: str) -> BoundState:
        return BoundState(self._backend.state, identity_key)

    def status(self) -> dict[str, Any]:
        """For ``/healthz``: backend, redacted URL, whether Redis is reachable, outages seen."""
        return self._backend.status()

    async def start(self) -> None:
        await self._backend.start()

    async def aclose(self) -> None:
        await self._backend.aclose()

    async def __aenter__(self) -> SharedState:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def shared_state(
    url: str | None,
    *,
    prefix: str = "mcp",
    secret: str | None = None,
    limiter_outage: LimiterOutage = "local",
    state_ttl: float = 86400.0,
    retry_interval: float = 0.5,
    liveness: float = 3.0,
    max_local_entries: int = 10000,
) -> SharedState:
    """Build the set: in-process when ``url`` is empty, else over Redis (nothing imported
    from ``redis``, no connection made until ``start``). ``prefix`` namespaces every Redis
    key and the pub/sub channel (``sharing.key_prefix``: two servers can share one Redis);
    ``secret`` (optional, >= 32 characters) seals cached and per-user values and keys their
    hashes (``request_state_security`` takes the same); ``state_ttl``: per-user values'
    default lifetime; ``retry_interval``: how often a lost Redis is tried again;
    ``liveness``: quiet seconds on the subscription before a PING checks Redis still
    answers; ``max_local_entries`` bounds each in-process store."""
    if not prefix or any(c.isspace() for c in prefix):
        raise SharedStateConfigError(f"shared-state prefix must be a word: {prefix!r}")
    if limiter_outage not in ("local", "open", "closed"):
        raise SharedStateConfigError(
            f"limiter_outage must be local, open or closed: {limiter_outage!r}"
        )
    for name, value in (("retry_interval", retry_interval), ("liveness", liveness)):
        if not (math.isfinite(value) and value > 0):
            raise SharedStateConfigError(f"{name} must be a positive number: {value!r}")
    values = ValueCodec(secret)
    backend: _Backend
    if not url:
        from .local_cache import LocalBackend

        backend = LocalBackend(values, state_ttl=state_ttl, max_entries=max_local_entries)
    else:
        try:
            scheme, database = urlsplit(url).scheme, urlsplit(url).path.strip("/")
        except ValueError as exc:
            raise SharedStateConfigError(f"bad Redis URL: {exc}") from None
        if scheme not in ("redis", "rediss", "unix"):
            raise SharedStateConfigError(
                f"shared-state URL must start with redis://, rediss:// or unix://: "
                f"{redact_url(url)}"
            )
        if scheme != "unix" and database and not database.isdecimal():  # redis-py: then 0
            raise SharedStateConfigError(f"the database must be a number: {redact_url(url)}")
        if find_spec(f"{__package__}.shared_redis") is None:  # a manifest without replicas
            raise SharedStateConfigError("built without Redis: the manifest plans no replicas")
        from .shared_redis import RedisBackend

        backend = RedisBackend(
            url,
            values,
            prefix=prefix,
            state_ttl=state_ttl,
            retry_interval=retry_interval,
            liveness=liveness,
            limiter_outage=limiter_outage,
            max_local_entries=max_local_entries,
        )
    return SharedState(backend, url=url)


async def connect(url: str | None, **options: Any) -> SharedState:
    """``shared_state(url, **options)``, started: Redis checked and subscribed. Close it with
    ``await shared.aclose()``."""
    shared = shared_state(url, **options)
    await shared.start()
    return shared
