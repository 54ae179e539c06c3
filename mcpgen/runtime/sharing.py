"""The HTTP app's shared state: built from the settings, checked before serving, started and
stopped in the app's lifespan.

Without ``<PREFIX>REDIS_URL`` everything lives in this process, as on one machine. With it,
replicas behind a load balancer share events, rate limits, token caches and ``ctx.store``
through Redis (``runtime.shared``), and ``<PREFIX>STATE_SECRET`` seals the 2026-07-28
``requestState`` with the same key on every replica.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any

from .settings import Settings
from .shared import SharedState, shared_state

if TYPE_CHECKING:
    from starlette.applications import Starlette

logger = logging.getLogger(__name__)
Lifespan = Callable[[Any], AbstractAsyncContextManager[Any]]


def key_prefix(spec: Mapping[str, Any]) -> str:
    """Redis keys and the event channel are namespaced by the server's name, so several
    servers can share one Redis (replicas of one server share the namespace)."""
    name = str(spec["server"]["name"])
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "mcp"


def shared_for(spec: Mapping[str, Any], settings: Settings) -> SharedState:
    """The set for these settings (no I/O yet): Redis when ``redis_url`` is set."""
    return shared_state(settings.redis_url, prefix=key_prefix(spec), secret=settings.state_secret)


def check_reachable(spec: Mapping[str, Any], settings: Settings) -> None:
    """Before serving: connect to Redis once (raises ``SharedStateConfigError``, a
    ``ConfigError``, naming the URL without its password). Nothing to do without Redis."""
    if not settings.redis_url:
        return

    async def probe() -> None:
        shared = shared_for(spec, settings)
        await shared.start()
        await shared.aclose()

    asyncio.run(probe())


def add_lifespan(app: Starlette, shared: SharedState) -> None:
    """Start ``shared`` before the app's own lifespan (the streamable HTTP session
    manager's) and close it after."""
    inner: Lifespan = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(application: Any) -> AsyncIterator[Any]:
        async with shared, inner(application) as state:
            if shared.url:
                logger.info("shared state in Redis at %s", shared.url)
            yield state

    app.router.lifespan_context = lifespan
