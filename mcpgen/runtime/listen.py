"""``subscriptions/listen`` (2026-07-28): the streams on which a client hears of changes,
served when the server offers a change notification (listChanged, ``resources.subscribe``).
Carried only then (``server.LISTENED``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.subscriptions import ListenHandler, SubscriptionBus
from mcp.shared.exceptions import MCPError

from .authz import ANONYMOUS, UNVERIFIED, client_address, current_identity
from .errors import not_found

if TYPE_CHECKING:
    from .events import Events
    from .resources import ResourceTable

LISTENS_PER_CALLER = 16  # open subscriptions/listen streams of one caller (the SDK: 1024 in all)
Listen = Any  # the SDK's ``on_subscriptions_listen`` handler


def listen_handler(events: Events, resources: ResourceTable | None) -> tuple[ListenHandler, Listen]:
    """The SDK's ``ListenHandler`` over the events' bus (each stream hearing of its caller's
    resource updates only), and the handler that checks a stream before it opens: resource
    subscriptions the caller may read, at most LISTENS_PER_CALLER streams of one caller, so
    one caller cannot take every one of the SDK's slots."""
    feed: SubscriptionBus = events.bus
    if resources is not None:
        from .resources import CallerBus

        feed = CallerBus(events.bus)
    listen = ListenHandler(feed)
    open_streams: dict[str, int] = {}  # caller key -> its open listen streams

    async def listen_authorized(
        ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        uris = [str(uri) for uri in params.notifications.resource_subscriptions or ()]
        if uris:
            if resources is None:
                raise not_found(uris[0])
            resources.listened(uris)
        caller = caller_key(ctx)
        if open_streams.get(caller, 0) >= LISTENS_PER_CALLER:
            raise MCPError(
                types.INVALID_REQUEST,
                f"too many listen streams: at most {LISTENS_PER_CALLER} open per caller "
                "(end one first)",
            )
        open_streams[caller] = open_streams.get(caller, 0) + 1
        try:
            return await listen(ctx, params)
        finally:
            open_streams[caller] -= 1
            if not open_streams[caller]:
                del open_streams[caller]

    return listen, listen_authorized


def caller_key(ctx: ServerRequestContext[Any, Any]) -> str:
    """Who a per-caller limit counts a request against: a verified caller's key, else (no
    authentication, or none verified) its client address as the rate limit keys it."""
    identity = current_identity()
    scope = getattr(ctx.request, "scope", None)
    if identity in (ANONYMOUS, UNVERIFIED) and isinstance(scope, Mapping):
        return client_address(scope)
    return identity.key
