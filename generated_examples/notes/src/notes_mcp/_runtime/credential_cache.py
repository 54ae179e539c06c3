"""Where issued upstream tokens are kept, and one request per key at a time.

``TokenCache`` stores each token with whose it is (``owner``: the caller's identity key,
``subject``: a hash of the token it was issued for) and never returns an entry that does
not match the asking caller, whatever the backend hands back. Concurrent callers with the
same key share one request (single flight, per process). A backend outage costs requests,
never calls.
"""

from __future__ import annotations

import json
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Protocol

import anyio

from .credential_config import CredentialFailure

logger = logging.getLogger(__name__.rpartition(".")[0] + ".credentials")  # one logger for all


class CacheBackend(Protocol):
    """Where issued upstream tokens are kept (in memory by default; Redis can back it).

    Values are opaque strings; ``ttl`` is in seconds and always positive.
    """

    async def get(self, key: str) -> str | None: ...

    async def set(self, key: str, value: str, ttl: float) -> None: ...

    async def delete(self, key: str) -> None: ...


class MemoryCache:
    """A bounded in-process cache: expired entries are never returned; oldest go first."""

    def __init__(
        self, max_entries: int = 10_000, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.max_entries = max_entries
        self.clock = clock
        self._data: OrderedDict[str, tuple[str, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._data)

    async def get(self, key: str) -> str | None:
        entry = self._data.get(key)
        if entry is None:
            return None
        if entry[1] <= self.clock():
            del self._data[key]
            return None
        self._data.move_to_end(key)
        return entry[0]

    async def set(self, key: str, value: str, ttl: float) -> None:
        if ttl <= 0:
            self._data.pop(key, None)
            return
        self._data[key] = (value, self.clock() + ttl)
        self._data.move_to_end(key)
        if len(self._data) > self.max_entries:
            now = self.clock()
            for stale in [k for k, (_, end) in self._data.items() if end <= now]:
                del self._data[stale]
            while len(self._data) > self.max_entries:
                self._data.popitem(last=False)

    async def delete(self, key: str) -> None:
        self._data.pop(key, None)


class _Flight:
    """One token request in progress that callers with the same key wait for."""

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.value: str | None = None
        self.error: str | None = None


TokenRequest = Callable[[], Awaitable[tuple[str, float]]]
"""Asks for a token: (the token, seconds to keep it; 0 or less: do not keep it)."""


class TokenCache:
    """Issued tokens by key, over a backend, with one request in flight per key."""

    def __init__(self, backend: CacheBackend) -> None:
        self.backend = backend
        self._flights: dict[str, _Flight] = {}

    async def token(self, key: str, request: TokenRequest, *, owner: str, subject: str) -> str:
        """A cached token for ``key``, else one request shared by every concurrent caller
        (who all get its token, or its ``CredentialFailure``)."""
        found = await self._lookup(key, owner, subject)
        if found is not None:
            return found
        while (flight := self._flights.get(key)) is not None:
            await flight.done.wait()
            if flight.value is not None:
                return flight.value
            if flight.error is not None:
                raise CredentialFailure(flight.error)
            # the request was cancelled or crashed: try again, perhaps as the leader
        flight = _Flight()
        self._flights[key] = flight
        try:
            found = await self._lookup(key, owner, subject)
            if found is None:
                token, ttl = await request()
                if ttl > 0:
                    entry = {"token": token, "owner": owner, "subject": subject}
                    try:
                        await self.backend.set(key, json.dumps(entry), ttl)
                    except Exception as exc:  # a cache outage costs requests, not calls
                        logger.warning("credential cache unavailable: %s", type(exc).__name__)
                found = token
            flight.value = found
            return found
        except CredentialFailure as exc:
            flight.error = str(exc)
            raise
        finally:
            del self._flights[key]
            flight.done.set()

    async def forget(self, key: str) -> None:
        try:
            await self.backend.delete(key)
        except Exception as exc:
            logger.warning("credential cache unavailable: %s", type(exc).__name__)

    async def _lookup(self, key: str, owner: str, subject: str) -> str | None:
        try:
            raw = await self.backend.get(key)
        except Exception as exc:
            logger.warning("credential cache unavailable: %s", type(exc).__name__)
            return None
        if raw is None:
            return None
        try:
            entry = json.loads(raw)
        except ValueError:
            return None
        if not isinstance(entry, dict) or not isinstance(entry.get("token"), str):
            return None
        if entry.get("owner") != owner or entry.get("subject") != subject:
            logger.error("credential cache entry %s belongs to another caller; ignored", key[:40])
            return None
        token: str = entry["token"]
        return token
