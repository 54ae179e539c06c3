"""The in-process caches: the tasks' store of one process (``tasks_store.local_cache``) and
the backend of ``shared.py`` without Redis (``LocalBackend``). Carried with tasks or with
shared state; stored values are the JSON text Redis would hold, bounded like
``shared_local``'s.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from mcp.server.request_state import AESGCMRequestStateCodec
from mcp.server.subscriptions import InMemorySubscriptionBus, ServerEvent

from .sealing import check_secret
from .shared_local import (
    LOCAL_STATUS,
    ExpiringMap,
    JsonValues,
    LocalRateLimiter,
    LocalUserState,
    check_ttl,
)

Edit = Callable[[Any | None], tuple[Any, float] | None]  # TTLCache.change: old -> (new, ttl)
# TTLCache.change_many: the old values -> {key: (new, ttl) or None to delete}, others left
Edits = Callable[[list[Any | None]], dict[str, tuple[Any, float] | None]]


class TTLCache(Protocol):
    async def get(self, key: str) -> Any | None:
        """The JSON value stored under ``key``, or None (missing, expired or unreachable)."""
        ...

    async def get_many(self, keys: list[str]) -> list[Any | None]:
        """``get`` of each key, in one round trip when the cache is remote."""
        ...

    async def set(self, key: str, value: Any, ttl: float) -> None:
        """Store a JSON value (not None) for ``ttl`` seconds."""
        ...

    async def delete(self, key: str) -> None: ...

    async def change(self, key: str, edit: Edit) -> bool:
        """Replace the value of ``key`` by ``edit(value or None)`` as one atomic step:
        ``(value, ttl)`` is stored, None deletes it. ``edit`` may run more than once. False
        when the cache was unreachable (then nothing may have changed)."""
        ...

    async def change_many(self, keys: list[str], edit: Edits) -> bool:
        """``change`` of several keys in one atomic step: ``edit(values)`` (which may run
        more than once) says which keys change (a key it leaves out is left as it is)."""
        ...


class ValueCodec(JsonValues):
    """How stored values and hashed keys are made: JSON, sealed when a secret is set."""

    def __init__(self, secret: str | None) -> None:
        if secret is None:
            self._codec: AESGCMRequestStateCodec | None = None
            self._hash_key = b"mcpgen/shared/key-hash"
        else:
            check_secret(secret)
            # Sub-keys of the secret, distinct from the requestState key the SDK derives from it.
            self._hash_key = _subkey(secret, "key-hash").encode()
            self._codec = AESGCMRequestStateCodec([_subkey(secret, "value-seal")])

    def hash_key(self, key: str) -> str:
        return hmac.new(self._hash_key, key.encode("utf-8", "surrogatepass"), "sha256").hexdigest()

    # A sealed value starts with the key it was stored under (its length first, so no key is
    # a prefix of another's): a value copied to another key, by whoever can write to Redis
    # without the secret, does not open there.
    def seal(self, text: str, where: str = "") -> str:
        if self._codec is None:
            return text
        return self._codec.seal(f"{len(where)}:{where}{text}".encode())

    def unseal(self, text: str, where: str = "") -> str:
        if self._codec is None:
            return text
        opened, bound = self._codec.unseal(text).decode(), f"{len(where)}:{where}"
        if not opened.startswith(bound):
            raise ValueError("a value sealed for another key")
        return opened[len(bound) :]


def _subkey(secret: str, label: str) -> str:
    return hmac.new(secret.encode(), f"mcpgen/shared/{label}".encode(), hashlib.sha256).hexdigest()


class LocalCache:
    def __init__(self, values: ValueCodec, namespace: str, max_entries: int) -> None:
        self._values = values
        self._namespace = namespace
        self._map = ExpiringMap(max_entries)

    def _key(self, key: str) -> str:
        return self._values.hash_key(f"{self._namespace}\x00{key}")

    async def get(self, key: str) -> Any | None:
        text = self._map.get(self._key(key))
        return None if text is None else self._values.load(text)

    async def get_many(self, keys: list[str]) -> list[Any | None]:
        return [await self.get(key) for key in keys]

    async def set(self, key: str, value: Any, ttl: float) -> None:
        check_ttl(ttl)
        self._map.set(self._key(key), self._values.dump(value), ttl)

    async def delete(self, key: str) -> None:
        self._map.delete(self._key(key))

    async def change(self, key: str, edit: Edit) -> bool:
        return await self.change_many([key], lambda values: {key: edit(values[0])})

    async def change_many(self, keys: list[str], edit: Edits) -> bool:
        # one process, and no I/O between the reads and the writes: one atomic step
        changes = edit([await self.get(key) for key in keys])
        for key, changed in changes.items():
            if changed is None:
                await self.delete(key)
            else:
                await self.set(key, *changed)
        return True


class LocalBackend:
    def __init__(self, values: ValueCodec, *, state_ttl: float, max_entries: int) -> None:
        self._values = values
        self._max = max_entries
        self.bus = InMemorySubscriptionBus()
        self.limiter = LocalRateLimiter(max_entries)
        self.state = LocalUserState(values, default_ttl=state_ttl, max_entries=max_entries)

    def cache(self, namespace: str) -> TTLCache:
        return LocalCache(self._values, namespace, self._max)

    def on_gap(self, callback: Callable[[], None]) -> Callable[[], None]:
        return lambda: None  # one process: nothing is ever missed

    def on_remote_event(
        self, listener: Callable[[ServerEvent], Awaitable[None]]
    ) -> Callable[[], None]:
        return lambda: None  # one process: no other replica publishes

    async def start(self) -> None:
        return None

    async def aclose(self) -> None:
        return None

    def status(self) -> dict[str, Any]:
        return dict(LOCAL_STATUS)
