"""Legacy HTTP+SSE (protocol 2024-11-05) and the session slots of SSE streams and WebSocket
connections: carried only by a package that offers ``sse`` or ``websocket``."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from mcp_types import jsonrpc_message_adapter
from pydantic import ValidationError

from . import jsonrpc
from .authz import IDENTITY_KEY
from .http_guard import PostGuard, error, respond, route_path
from .identity import Identity
from .settings import Settings

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.types import ASGIApp, Receive, Scope, Send

    from .server import GeneratedServer

logger = logging.getLogger(__name__)
SSE_ROUTE = "/sse"
MESSAGES_PATH = "/messages/"


class SessionSlots:
    """Legacy SSE streams and WebSocket connections are sessions too: at most
    ``max_sessions`` open at once, and ``sessions_per_caller`` of one verified caller, as
    for streamable HTTP (503 past either)."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.total = settings.max_sessions
        self.per_caller = settings.sessions_per_caller
        self.open = 0
        self.by_caller: dict[str, int] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        opening = scope["type"] == "websocket" or (
            scope["type"] == "http"
            and scope.get("method") == "GET"
            and route_path(scope) == SSE_ROUTE
        )
        if not opening:
            return await self.app(scope, receive, send)
        identity = scope.get(IDENTITY_KEY)
        key: str | None = None  # verified callers only; anonymous ones share the total
        if isinstance(identity, Identity) and scope.get("user") is not None:
            key = identity.key
        if self.open >= self.total or (
            key is not None and self.by_caller.get(key, 0) >= self.per_caller
        ):
            logger.warning("refused a new session: too many open")
            refusal = error(503, "too_many_sessions", "Too many open sessions")
            return await respond(scope, receive, send, refusal)
        self.open += 1
        if key is not None:
            self.by_caller[key] = self.by_caller.get(key, 0) + 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.open -= 1
            if key is not None:
                self.by_caller[key] -= 1
                if not self.by_caller[key]:
                    del self.by_caller[key]


def legacy_app(
    server: GeneratedServer, settings: Settings, routes: list[Any], security: Any
) -> Starlette:
    """The app of legacy HTTP+SSE or WebSocket: ``routes`` and the transport's, its sessions
    counted (``SessionSlots``, inside authentication: it knows the caller), SSE's POSTs
    guarded as streamable HTTP's (``PostGuard``)."""
    from starlette.applications import Starlette

    if settings.transport == "sse":
        routes = [*routes, *sse_routes(server, settings, security)]
    else:
        from .websocket import websocket_route

        routes = [*routes, websocket_route(server)]
    app = Starlette(routes=routes)
    app.add_middleware(SessionSlots, settings=settings)
    if settings.transport == "sse":  # a POST that is no message: the JSON-RPC errors of HTTP
        app.add_middleware(
            PostGuard,
            path=MESSAGES_PATH,
            max_body_size=settings.max_body_size,
            unreadable=unreadable,
        )
    return app


def unreadable(body: bytes) -> str | None:
    """The error answer to a POST ``body`` the SDK cannot read as a message (what
    ``error_for`` answers on stdio), None when it can. For legacy SSE, whose transport
    answers such a body with a plain-text 400 "Could not parse message"."""
    try:
        jsonrpc_message_adapter.validate_json(body, by_name=False)
    except ValidationError:
        try:
            return jsonrpc.error_for(body.decode())
        except UnicodeDecodeError:  # JSON text is UTF-8 (RFC 8259)
            return jsonrpc.error(jsonrpc.PARSE_ERROR, "Parse error")
    return None


def sse_routes(server: GeneratedServer, settings: Settings, security: Any) -> list[Any]:
    """Legacy HTTP+SSE (protocol 2024-11-05): GET /sse opens the stream, POST /messages/."""
    from mcp.server.sse import SseServerTransport
    from starlette.routing import Mount, Route

    transport = SseServerTransport(
        MESSAGES_PATH, security_settings=security, max_request_body_size=settings.max_body_size
    )

    class Stream:
        """GET /sse as a plain ASGI app (the transport sends the response itself)."""

        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            async with transport.connect_sse(scope, receive, send) as streams:
                await server.run(streams[0], streams[1], server.create_initialization_options())

    messages = transport.handle_post_message
    return [Route(SSE_ROUTE, Stream(), methods=["GET"]), Mount(MESSAGES_PATH, app=messages)]
