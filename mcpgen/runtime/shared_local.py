"""What one server process keeps in memory: rate-limit buckets and per-user state
(``ctx.store``; ``local_cache.py`` has the caches). Values are stored as the JSON text Redis
would hold, so a handler sees the same copy-on-read behaviour with either backend. Every
store is bounded (least recently used entries go first)."""

from __future__ import annotations

import json
import math
import sys
import time
from collections import OrderedDict
from typing import Any

from .sealing import check_name

LOCAL_STATUS = {"backend": "memory", "connected": True, "outages": 0}  # for /healthz
MAX_LOCAL_BYTES = 256 << 20  # of the texts one map (tasks, ctx.store, a cache) keeps


class JsonValues:
    """How stored values are kept: the JSON text Redis would hold (``local_cache.ValueCodec``
    also seals it under the configured secret)."""

    def dump(self, value: Any, where: str = "") -> str:  # (sealed: opens only under ``where``)
        if value is None:
            raise ValueError("None cannot be stored: it reads back as a miss")
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        return self.seal(text, where)

    def load(self, stored: str | bytes, where: str = "") -> Any | None:
        """The value stored under ``where``, None when unreadable (another secret or key)."""
        try:
            text = stored.decode() if isinstance(stored, bytes) else stored
            return json.loads(self.unseal(text, where))
        except Exception:  # unreadable entry: treat as a miss (the caller recomputes it)
            return None

    def seal(self, text: str, where: str = "") -> str:
        return text

    def unseal(self, text: str, where: str = "") -> str:
        return text


class ExpiringMap:
    """key -> (expires at, monotonic clock; stored text), bounded in entries and in bytes
    (``MAX_LOCAL_BYTES``: what callers store is theirs to size), least recently used out."""

    def __init__(self, max_entries: int) -> None:
        self._data: OrderedDict[str, tuple[float, str]] = OrderedDict()
        self._max = max(1, max_entries)
        self.size = 0  # bytes of the texts

    def get(self, key: str) -> str | None:
        entry = self._data.get(key)
        if entry is None or entry[0] <= time.monotonic():
            self.delete(key)  # (expired; a miss deletes nothing)
            return None
        self._data.move_to_end(key)
        return entry[1]

    def set(self, key: str, text: str, ttl: float) -> None:
        self.delete(key)  # (then added last)
        self._data[key] = (time.monotonic() + ttl, text)
        self.size += sys.getsizeof(text)
        while len(self._data) > self._max or self.size > MAX_LOCAL_BYTES:
            self.size -= sys.getsizeof(self._data.popitem(last=False)[1][1])

    def delete(self, key: str) -> None:
        if (entry := self._data.pop(key, None)) is not None:
            self.size -= sys.getsizeof(entry[1])


def check_ttl(ttl: float) -> None:
    if not (isinstance(ttl, int | float) and 0 < ttl <= 1e10):  # Redis refuses ~1e16 s
        raise ValueError(f"ttl must be a positive number of seconds up to 1e10: {ttl!r}")


def check_limit(rate: float, burst: float, cost: float) -> None:
    for name, value in (("rate", rate), ("burst", burst), ("cost", cost)):
        if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a positive number: {value!r}")


class LocalRateLimiter:
    """Token buckets in this process (also the Redis limiter's fallback during an outage)."""

    def __init__(self, max_keys: int = 10000) -> None:
        # key -> (tokens, monotonic time of that count)
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._max = max(1, max_keys)

    async def allow(
        self, key: str, rate: float, burst: float, cost: float = 1.0
    ) -> tuple[bool, float]:
        return self.take(key, rate, burst, cost)

    def take(self, key: str, rate: float, burst: float, cost: float = 1.0) -> tuple[bool, float]:
        check_limit(rate, burst, cost)
        now = time.monotonic()
        tokens, then = self._buckets.get(key, (burst, now))
        tokens = min(burst, tokens + max(0.0, now - then) * rate)
        allowed = tokens >= cost
        if allowed:
            tokens -= cost
        # A cost above the burst can never be paid: say so with an infinite wait.
        retry_after = 0.0 if allowed else (cost - tokens) / rate if cost <= burst else math.inf
        self._buckets[key] = (tokens, now)
        self._buckets.move_to_end(key)
        while len(self._buckets) > self._max:
            self._buckets.popitem(last=False)  # a forgotten bucket comes back full
        return allowed, retry_after


class LocalUserState:
    def __init__(self, values: JsonValues, *, default_ttl: float, max_entries: int) -> None:
        check_ttl(default_ttl)
        self._values, self._ttl = values, default_ttl
        self._map = ExpiringMap(max_entries)

    @staticmethod
    def _key(identity_key: str, name: str) -> str:
        check_name("identity key", identity_key)
        check_name("state name", name)
        return f"{identity_key}\x00{name}"

    async def get(self, identity_key: str, name: str) -> Any | None:
        text = self._map.get(self._key(identity_key, name))
        return None if text is None else self._values.load(text)

    async def set(self, identity_key: str, name: str, value: Any, ttl: float | None = None) -> None:
        ttl = self._ttl if ttl is None else ttl
        check_ttl(ttl)
        self._map.set(self._key(identity_key, name), self._values.dump(value), ttl)

    async def delete(self, identity_key: str, name: str) -> None:
        self._map.delete(self._key(identity_key, name))


def local_user_state(ttl: float = 86400.0, max_entries: int = 10000) -> LocalUserState:
    """Per-user state in this process, unsealed: ``ctx.store`` of a server without Redis."""
    return LocalUserState(JsonValues(), default_ttl=ttl, max_entries=max_entries)
