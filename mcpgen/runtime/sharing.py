"""The HTTP app's shared state: built from the settings, checked before serving, started and
stopped in the app's lifespan.

Without ``<PREFIX>REDIS_URL`` everything lives in this process, as on one machine. With it,
replicas behind a load balancer share events, rate limits, token caches and ``ctx.store``
through Redis (``runtime.shared``), and ``<PREFIX>STATE_SECRET`` seals the 2026-07-28
``requestState`` with the same key on every replica.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import os
import re
import weakref
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any

from mcp.server import ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.server.subscriptions import (
    PromptsListChanged,
    ResourceUpdated,
    ServerEvent,
    SubscriptionBus,
    ToolsListChanged,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .events import Events, connection_of
from .settings import Settings
from .shared import SharedState, SharedStateConfigError, TTLCache, shared_state

if TYPE_CHECKING:
    from starlette.applications import Starlette

logger = logging.getLogger(__name__)
Lifespan = Callable[[Any], AbstractAsyncContextManager[Any]]
SWITCHES_TTL = 365 * 86400.0  # seconds the switched state outlives its last change


def key_prefix(spec: Mapping[str, Any], secret: str) -> str:
    """Redis keys and the event channel are namespaced by the server's name and a tag of its
    secret, so several servers can share one Redis, even two of the same name (replicas of
    one server, configured alike, share the namespace)."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", str(spec["server"]["name"])).strip("-") or "mcp"
    tag = hmac.new(secret.encode(), b"mcpgen/shared/prefix", hashlib.sha256).hexdigest()
    return f"{name}-{tag[:12]}"


def shared_for(spec: Mapping[str, Any], settings: Settings) -> SharedState:
    """The set for these settings (no I/O yet): Redis when ``redis_url`` is set, and then
    only with a secret (unsealed, whoever reaches Redis could forge what it holds: a cached
    introspection answer for a token of their choosing, another caller's task or value)."""
    if settings.redis_url and not settings.state_secret:
        raise SharedStateConfigError(
            f"{settings.env_prefix}REDIS_URL needs {settings.env_prefix}STATE_SECRET (the same "
            "on every replica): without it the values kept in Redis are neither sealed nor "
            "authenticated"
        )
    secret = settings.state_secret
    prefix = key_prefix(spec, secret) if secret else "mcp"  # without Redis: no key is made
    return shared_state(settings.redis_url, prefix=prefix, secret=secret)


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


def replicate(server: Any, shared: SharedState, registry: dict[str, Any]) -> None:
    """``server`` (its events a ``ReplicaEvents``) told of events raised on other replicas,
    and its tools and prompts switched on or off as any replica's handler switched them."""
    switches = registry["switches"] = Switches(shared.cache("switches"), registry)
    server.middleware += [server.events.track, switches]
    shared.bus.subscribe(switches.heard)
    shared.on_remote_event(server.events.forward)
    shared.on_gap(switches.reload)  # a change may have gone unheard
    if server.listen is not None:
        shared.on_gap(server.listen.close)


class Switches:
    """``ctx.enable_tool`` and ``ctx.enable_prompt`` on every replica: the switches handlers
    flipped are one value in the shared cache (sealed, versioned), written before the
    handler's list-change notification leaves and read again by each replica when it hears
    one (or the value may have changed unheard: at its first request, after a gap), before
    it serves its next request. Lists and calls read the tables as in one process. A switch
    Redis did not take (it was away) stays ``pending`` here and is written with the next
    read, after the gap at the latest: the notification held meanwhile then tells the others."""

    KEY = "enabled"

    def __init__(self, cache: TTLCache, registry: dict[str, Any]) -> None:
        self.cache, self.registry = cache, registry
        self.declared = {k: set(t.hidden) for k in ("tools", "prompts") if (t := registry[k])}
        self.version: tuple[str, int] = ("", 0)  # the value applied: its start, its number
        self.pending: dict[tuple[str, str], bool] = {}  # (kind, name): switches not shared yet
        self._writes: set[asyncio.Task[None]] = set()
        self._reading: asyncio.Task[None] | None = None

    def set(self, kind: str, name: str, enabled: bool) -> None:
        """A handler's switch: here at once, then in the shared value (``flush`` waits)."""
        self.registry[kind].set_enabled(name, enabled)
        self.pending[kind, name] = enabled
        task = asyncio.create_task(self._read())
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _write(self) -> None:
        writing = dict(self.pending)

        def edit(value: Any) -> tuple[Any, float]:
            value = value or {"v": 0, "start": os.urandom(8).hex()}  # (Redis emptied: anew)
            value = {**value, "v": value["v"] + 1}
            for (kind, name), enabled in writing.items():
                value[kind] = {**value.get(kind, {}), name: enabled}
            return value, SWITCHES_TTL

        try:
            written = await self.cache.change(self.KEY, edit)
        except Exception:
            logger.exception("shared state: could not share a tool or prompt switch")
            written = False
        if not written:
            logger.warning(
                "shared state: %d switch(es) kept here until Redis is back", len(writing)
            )
            return
        for key, enabled in writing.items():
            if self.pending.get(key) == enabled:  # not switched again meanwhile
                del self.pending[key]

    async def flush(self) -> None:
        """Before a list change is published: the switches are where others will read."""
        await asyncio.gather(*self._writes)

    def heard(self, event: ServerEvent) -> None:
        """Bus listener (sync, before this replica's clients hear of the change)."""
        if isinstance(event, ToolsListChanged | PromptsListChanged):
            self.reload()

    def reload(self) -> None:
        self._reading = asyncio.create_task(self._read())

    async def _read(self) -> None:
        """Write what is pending, then apply the shared value (what another replica wrote
        meanwhile may come first)."""
        if self.pending:
            await self._write()
        try:
            value = await self.cache.get(self.KEY)
        except Exception:
            logger.exception("shared state: could not read the tool and prompt switches")
            return
        if value is None:
            return  # nothing switched, or Redis unreachable
        version = (value.get("start", ""), value["v"])  # one started anew applies whatever its v
        if version[0] == self.version[0] and version[1] <= self.version[1]:
            return  # an older value than applied
        self.version = version
        for kind, declared in self.declared.items():
            table, switched = self.registry[kind], value.get(kind, {})
            off = {n for n, on in switched.items() if not on and n in table.by_name}
            table.hidden.clear()
            table.hidden.update((declared - switched.keys()) | off)

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Any:
        """SDK server middleware: a request waits for the switches being read."""
        if self._reading is None:  # the first request: what was switched before this began
            self.reload()
        assert self._reading is not None
        if not self._reading.done():
            await asyncio.shield(self._reading)
        return await call_next(ctx)


class ReplicaEvents(Events):
    """The events of one replica among several: an event raised on another replica
    (``forward``, fed by the shared state's remote-event listener) goes to this replica's
    handshake-era connections: list changes to every one of them (none of them caused it),
    resource updates to those subscribed to the URI. Events raised here never come back
    through ``forward``, so no connection gets one twice."""

    def __init__(self, bus: SubscriptionBus | None = None) -> None:
        super().__init__(bus)
        # handshake-era connections seen on this replica: where events raised elsewhere go
        self._handshake: weakref.WeakSet[Any] = weakref.WeakSet()

    async def track(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """SDK server middleware: remembers each handshake-era connection (weakly)."""
        session = ctx.session
        if session is not None and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            connection = connection_of(session)
            if connection not in self._handshake:  # adding makes a new weak reference
                self._handshake.add(connection)
        return await call_next(ctx)

    async def forward(self, event: ServerEvent) -> None:
        """An event another replica published: to this replica's handshake connections
        (the bus has already given it to this replica's listen streams)."""
        if isinstance(event, ResourceUpdated):
            targets = self._subscribers(event.uri, getattr(event, "caller", None))
        else:
            targets = list(self._handshake)
        await self._notify(targets, event)

    def forget(self, connection: Any) -> None:
        super().forget(connection)
        self._handshake.discard(connection)
