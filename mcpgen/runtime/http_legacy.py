"""Legacy HTTP+SSE (protocol 2024-11-05), and the session slots and idle clock of SSE
streams and WebSocket connections: carried only by a package that offers ``sse`` or
``websocket``."""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, Any, Self

import anyio
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.jsonrpc_dispatcher import cancelled_request_id_from_params
from mcp_types import (
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from . import jsonrpc
from .authz import IDENTITY_KEY
from .http_guard import PostGuard, error, respond, route_path
from .identity import Identity
from .settings import Settings

if TYPE_CHECKING:
    from types import TracebackType

    from starlette.applications import Starlette
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from .server import GeneratedServer

logger = logging.getLogger(__name__)
SSE_ROUTE = "/sse"
MESSAGES_PATH = "/messages/"


class IdleClock:
    """The idle timer of one SSE or WebSocket session: ``scope``, entered around
    ``server.run``, is cancelled once ``timeout`` seconds pass with no message either way
    and no request of the client being worked on (a tool call running silently holds the
    session, as a request in flight holds a streamable HTTP one). A call waiting on the
    client's answer to the server's question (elicitation, sampling, roots) holds nothing:
    a handler asks one question at a time, so the session is held while more of the
    client's requests are unanswered than of the server's; a question the server withdraws
    (``notifications/cancelled``: its call was cancelled or timed out) is no longer asked.
    ``watch`` wraps the run's streams."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.pending: dict[Any, int] = {}  # the client's unanswered requests, by id
        self.asked: set[Any] = set()  # the server's requests the client has not answered
        self.scope = anyio.CancelScope(deadline=anyio.current_time() + timeout)

    def saw(self, item: object, inbound: bool) -> None:
        message: Any = getattr(item, "message", None)  # an Exception has none
        key = same_id(getattr(message, "id", None))
        if isinstance(message, JSONRPCRequest):
            if inbound:
                self.pending[key] = self.pending.get(key, 0) + 1
            else:
                self.asked.add(key)
        elif getattr(message, "method", "") == "notifications/cancelled":  # never answered
            cancelled = same_id(cancelled_request_id_from_params(message.params))
            self.answered(cancelled) if inbound else self.asked.discard(cancelled)  # withdrawn
        elif isinstance(message, JSONRPCResponse | JSONRPCError):
            self.asked.discard(key) if inbound else self.answered(key)
        held = sum(self.pending.values()) > len(self.asked)
        self.scope.deadline = math.inf if held else anyio.current_time() + self.timeout

    def answered(self, request_id: Any) -> None:
        if (left := self.pending.pop(request_id, 0) - 1) > 0:
            self.pending[request_id] = left

    def watch(self, read: Any, write: Any) -> tuple[Watched, Watched]:
        return Watched(read, self), Watched(write, self)


def same_id(value: Any) -> Any:
    """A request id as the SDK's dispatcher matches it: "7" and 7 are one (its cancel, its
    answer)."""
    return coerce_request_id(value) if isinstance(value, str) else value


class Watched:
    """A session's stream, read by the server (the client's messages) or written (its own),
    each message shown to the ``IdleClock``; the sender's context (``last_context``) passes
    through."""

    def __init__(self, stream: Any, clock: IdleClock) -> None:
        self.stream, self.clock = stream, clock

    @property
    def last_context(self) -> Any:
        return getattr(self.stream, "last_context", None)

    async def receive(self) -> Any:
        item = await self.stream.receive()
        self.clock.saw(item, True)
        return item

    async def send(self, item: Any, /) -> None:
        self.clock.saw(item, False)
        await self.stream.send(item)

    async def aclose(self) -> None:
        await self.stream.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


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
    """The app of legacy HTTP+SSE or WebSocket: ``routes`` (the WebSocket's among them:
    ``http_app`` adds it) and SSE's, its sessions counted (``SessionSlots``, inside
    authentication: it knows the caller), SSE's POSTs guarded as streamable HTTP's
    (``PostGuard``)."""
    from starlette.applications import Starlette

    if settings.transport == "sse":  # (a WebSocket's route is among ``routes``)
        routes = [*routes, *sse_routes(server, settings, security)]
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
        """GET /sse as a plain ASGI app (the transport sends the response itself). The end
        of the stream is sent once ``connect_sse`` has forgotten the session: a client that
        saw it end and POSTs gets 404 at once, as for an unknown session."""

        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            last: list[Message] = []

            async def sending(message: Message) -> None:
                if message["type"] == "http.response.body" and not message.get("more_body"):
                    return last.append(message)
                await send(message)

            try:
                async with transport.connect_sse(scope, receive, sending) as streams:
                    clock = IdleClock(settings.session_idle_timeout)
                    with clock.scope:
                        read, write = clock.watch(*streams)
                        await server.run(read, write, server.create_initialization_options())
                    if clock.scope.cancelled_caught:
                        logger.info("closing an idle SSE session")
            finally:
                for message in last:
                    await send(message)

    messages = transport.handle_post_message
    return [Route(SSE_ROUTE, Stream(), methods=["GET"]), Mount(MESSAGES_PATH, app=messages)]
