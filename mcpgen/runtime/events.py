"""Telling clients that something changed, in both protocol eras, and per-connection log levels:
2026-07-28 clients listen on ``subscriptions/listen`` streams, fed by the subscription bus
(shared by replicas: ``sharing.ReplicaEvents``); handshake-era clients hear of list changes
on the connection that caused them, of resource updates on every one subscribed to the URI.
"""

from __future__ import annotations

import logging
import weakref
from dataclasses import dataclass
from typing import Any, get_args

import anyio
import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    SubscriptionBus,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPError
from mcp_types import EmptyResult, SetLevelRequestParams
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

logger = logging.getLogger(__name__)

Event = ToolsListChanged | ResourcesListChanged | PromptsListChanged | ResourceUpdated
SEND_TIMEOUT = 5.0  # seconds a client's connection may take to take one notification
# a level that would apply to no other request is refused rather than accepted and dropped
NO_LEVEL = (
    "logging/setLevel needs a connection that outlasts the request, and this one does not "
    "(stateless HTTP in the handshake era): use a stateful session, or the 2026-07-28 "
    'protocol, where each request asks for its logs (_meta "io.modelcontextprotocol/logLevel")'
)
LIST_CHANGED: dict[type[Event], Any] = {
    ToolsListChanged: types.ToolListChangedNotification,
    ResourcesListChanged: types.ResourceListChangedNotification,
    PromptsListChanged: types.PromptListChangedNotification,
}
LEVELS = get_args(types.LoggingLevel)  # from the least severe


def connection_of(session: ServerSession) -> Any:
    """The connection a (per-request) session object belongs to: the SDK makes a new
    ``ServerSession`` for every request, so per-client state is keyed on this."""
    return getattr(session, "_connection", session)


def lives_one_request(connection: Any) -> bool:
    """Stateless HTTP in the handshake era: the connection is the request, and nothing
    kept for it (a log level, a subscription) would ever apply."""
    return not getattr(connection, "has_standalone_channel", True)


class Events:
    """The bus, the resource subscriptions and the log levels of one server process.

    Per-client state is keyed weakly on the SDK's ``Connection`` and holds nothing that
    refers back to it: a request's session object refers to its connection (and to the
    whole request), so a value holding one would keep every connection alive for good (a
    stateless server leaked ~20 kB a request that way). Notifications outside a request go
    on the connection's own standalone channel, ``Connection.outbound``.
    """

    def __init__(self, bus: SubscriptionBus | None = None) -> None:
        self.bus: SubscriptionBus = bus or InMemorySubscriptionBus()
        # connection -> the URIs it subscribed to (resources.subscribe)
        self.subscribed: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
        # connection -> the caller it subscribed as (whose ``CallerUpdate``s it hears)
        self.callers: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        # (session id, its caller's key) -> its connection, when it subscribed (for GET streams)
        self.sessions: weakref.WeakValueDictionary[tuple[str, str], Any] = (
            weakref.WeakValueDictionary()
        )
        self._levels: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()

    async def set_level(
        self, ctx: ServerRequestContext[Any, Any], params: SetLevelRequestParams
    ) -> EmptyResult:
        connection = connection_of(ctx.session)
        if lives_one_request(connection):
            raise MCPError(types.INVALID_REQUEST, NO_LEVEL)
        self._levels[connection] = params.level
        return EmptyResult()

    def level_enabled(self, session: ServerSession, level: str) -> bool:
        floor = self._levels.get(connection_of(session), "debug")
        return LEVELS.index(level) >= LEVELS.index(floor)

    async def publish(
        self, event: Event, request: ServerRequestContext[Any, Any] | None = None
    ) -> None:
        """Tell listeners of both eras: the bus, the handshake connections subscribed (resource
        updates) or the caller's own (list changes raised in ``request``; on stateless HTTP,
        that request's own stream: the connection ends with it)."""
        await self.bus.publish(event)
        targets: list[Any] = []
        if isinstance(event, ResourceUpdated):
            targets = self._subscribers(event.uri, getattr(event, "caller", None))
        elif request is not None and request.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            connection = connection_of(request.session)
            targets = [RequestStream(request) if lives_one_request(connection) else connection]
        await self._notify(targets, event)

    def _subscribers(self, uri: str, caller: str | None = None) -> list[Any]:
        """The connections subscribed to ``uri`` (as ``caller``, when it is one caller's)."""
        subscribed = list(self.subscribed.items())
        return [c for c, u in subscribed if uri in u and caller in (None, self.callers.get(c))]

    def forget(self, connection: Any) -> None:  # a connection that is gone
        self.subscribed.pop(connection, None)

    async def _notify(self, targets: list[Any], event: Event) -> None:
        async def one(target: Any) -> None:
            try:
                with anyio.fail_after(SEND_TIMEOUT):
                    await _send(target, event)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
                self.forget(target)
            except TimeoutError:  # a client not reading: it misses this one, not the others
                logger.debug("a client took more than %s s to take a notification", SEND_TIMEOUT)
            except Exception:  # one broken client must not stop the others
                logger.debug("could not notify a client", exc_info=True)

        if len(targets) == 1:
            await one(targets[0])
        elif targets:
            async with anyio.create_task_group() as group:
                for target in targets:
                    group.start_soon(one, target)


@dataclass(frozen=True)
class CallerUpdate(ResourceUpdated):
    """The resource changed for one caller only (``Identity.key``: its content reads per
    caller, from ``ctx.store``): only that caller's subscriptions hear of it."""

    caller: str


@dataclass(eq=False)
class RequestStream:
    """The stream of a request whose connection ends with it (stateless HTTP): where a list
    change raised in that request goes. An SSE answer carries it; a JSON answer cannot."""

    request: ServerRequestContext[Any, Any]


async def _send(target: Any, event: Event) -> None:
    """One notification on a connection's standalone channel, or on a ``RequestStream``."""
    if isinstance(event, ResourceUpdated):
        await target.outbound.notify("notifications/resources/updated", {"uri": event.uri})
    elif isinstance(target, RequestStream):
        request = target.request
        notice = LIST_CHANGED[type(event)]()
        await request.session.send_notification(notice, related_request_id=request.request_id)
    else:
        await target.outbound.notify(LIST_CHANGED[type(event)]().method, None)
