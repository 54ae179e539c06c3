"""One Redis client of the shared-state set and what it knows of reaching Redis (up or
down), and URLs without their password for logs and errors. Imports ``redis`` only when a
link is made."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from .errors import REDACTED
from .sealing import SharedStateConfigError

logger = logging.getLogger(f"{__package__}.shared_redis")  # the Redis set's one logger


def redact_url(url: str) -> str:
    """``url`` without its password (userinfo or ``?password=``), fit for logs and errors."""
    scheme, sep, rest = url.partition("://")
    if "@" in rest:  # up to the last @: a password may hold / ? # unencoded (urlsplit stops)
        userinfo, _, host = rest.rpartition("@")
        user = userinfo.split(":", 1)[0]
        rest = f"{user}:{REDACTED}@{host}" if user else f"{REDACTED}@{host}"
    try:
        parts = urlsplit(scheme + sep + rest)
        query = urlencode(
            [
                (k, REDACTED if k.lower() == "password" else v)
                for k, v in parse_qsl(parts.query, keep_blank_values=True)
            ]
        )
        return urlunsplit(parts._replace(query=query))
    except ValueError:
        return "<unparseable URL>"


def without_password(text: str, url: str) -> str:
    """``text`` without the password of ``url`` as ``redact_url`` finds it, nor its part
    before an unencoded / ? # (which redis-py then reads as a port, and prints)."""
    password = url.partition("://")[2].rpartition("@")[0].partition(":")[2]
    for secret in sorted({password, re.split("[/?#]", password)[0]} - {""}, key=len)[::-1]:
        text = text.replace(secret, REDACTED)
    return text


class RedisLink:
    """One Redis client and what the set knows about reaching it: up or down, one warning
    per outage, one line on recovery. While down, no call tries Redis (``run``): a probe in
    the background does, each ``retry_interval`` (``_recover``)."""

    def __init__(
        self, url: str, *, retry_interval: float, probe_key: str, timeout: float = 1.0
    ) -> None:
        try:
            import redis.asyncio as aioredis
            from redis import exceptions
            from redis.asyncio.retry import Retry
            from redis.backoff import NoBackoff
        except ImportError:
            raise SharedStateConfigError(
                "a Redis URL is configured but the redis package is missing: "
                "pip install 'redis>=8.1,<9'"
            ) from None
        self.url = redact_url(url)
        self._url = url  # (with its password: for scrub)
        self.retry_interval = retry_interval
        self.timeout = timeout
        self.outage_errors: tuple[type[BaseException], ...] = (
            exceptions.ConnectionError,  # includes authentication and "loading" errors
            exceptions.TimeoutError,
            exceptions.ResponseError,  # full (maxmemory), read-only replica, no such database
            OSError,  # and TimeoutError, which asyncio.wait_for raises
        )
        self.watch_error: type[BaseException] = exceptions.WatchError
        common: dict[str, Any] = {"socket_timeout": timeout, "socket_connect_timeout": timeout}
        try:
            # Commands: one immediate retry replaces a pooled connection that died with the
            # server; a timeout is not retried (a stalled server would double the wait).
            self.client: Any = aioredis.Redis.from_url(
                url,
                retry=Retry(NoBackoff(), 1, supported_errors=(exceptions.ConnectionError,)),
                health_check_interval=5,
                **common,
            )
            # The event subscription: no retry at all, so a reconnection is never silent
            # (redis-py would resubscribe by itself and hide the gap in between).
            self.subscriber: Any = aioredis.Redis.from_url(
                url, retry=Retry(NoBackoff(), 0), **common
            )
        except ValueError as exc:
            raise SharedStateConfigError(f"bad Redis URL {self.url}: {self.scrub(exc)}") from None
        self.up = True
        self.outages = 0
        self._down_at = 0.0
        self.probe_key = probe_key
        self.probe: asyncio.Task[None] | None = None

    def scrub(self, exc: BaseException) -> str:
        return without_password(str(exc) or type(exc).__name__, self._url)

    async def run(
        self, command: Callable[..., Awaitable[Any]], /, *args: Any, **kwargs: Any
    ) -> tuple[bool, Any]:
        """``(True, reply)`` of one command, or ``(False, None)``: it failed, or Redis is down
        (then it is not tried: no call waits on a frozen server)."""
        if self.up:
            try:
                return True, await command(*args, **kwargs)
            except self.outage_errors as exc:
                self.failed(exc)
        return False, None

    def failed(self, exc: BaseException) -> None:
        if self.up:
            self.up = False
            self.outages += 1
            self._down_at = time.monotonic()
            if self.probe is None or self.probe.done():  # one at a time
                self.probe = asyncio.create_task(self._recover(), name="shared-redis-probe")
            logger.warning(
                "shared state: Redis at %s is unreachable (%s); serving degraded until it returns",
                self.url,
                self.scrub(exc),
            )

    async def _recover(self) -> None:
        """The one way back up: a write, as a full or read-only Redis refuses one (XX: it
        stores nothing). A read, a PUBLISH or a SUBSCRIBE such a Redis still takes."""
        while not self.up:
            await asyncio.sleep(self.retry_interval)
            with contextlib.suppress(Exception):
                await self.client.set(self.probe_key, 1, px=1000, xx=True)
                self.up = True
                logger.warning(
                    "shared state: Redis at %s is reachable again after %.1f s",
                    self.url,
                    time.monotonic() - self._down_at,
                )
