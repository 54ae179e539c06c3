"""The HTTP side of a generated server: streamable HTTP, legacy HTTP+SSE and WebSocket apps
with ``/healthz``, Protected Resource Metadata and the middleware stack (``http_guard``)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from . import sharing, telemetry
from .auth import authenticator
from .authz import IDENTITY_KEY
from .eventstore import MemoryEventStore
from .http_guard import (
    WELL_KNOWN,
    AuthMiddleware,
    HostOriginMiddleware,
    TokenBuckets,
    error,
    respond,
    route_path,
)
from .identity import Identity
from .settings import Settings

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.types import ASGIApp, Receive, Scope, Send

    from .server import GeneratedServer

logger = logging.getLogger(__name__)
LOCAL_HOST_HEADERS = ("127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]")
LOCAL_ORIGINS = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*")
HEALTH_PATH = "/healthz"
MESSAGES_PATH = "/messages/"
ServerFactory = Callable[..., "GeneratedServer"]


def security_lists(settings: Settings) -> tuple[list[str], list[str]]:
    """(allowed Host headers, allowed Origins): localhost only when bound locally."""
    hosts = list(settings.allowed_hosts)
    origins = [*settings.allowed_origins, *settings.cors_origins]
    if settings.local:
        hosts += LOCAL_HOST_HEADERS
        origins += LOCAL_ORIGINS
    return hosts, origins


def base_url(scope: Scope, settings: Settings) -> str:
    """The public URL of this app's root: the configured one, else from the request."""
    if settings.public_url:
        return settings.public_url.rstrip("/")
    from starlette.datastructures import Headers

    scheme = {"ws": "http", "wss": "https"}.get(
        scope.get("scheme", "http"), scope.get("scheme", "http")
    )
    host = Headers(scope=scope).get("host")
    if host is None:
        server = scope.get("server") or (settings.host, settings.port)
        host = f"{server[0]}:{server[1]}"
    return f"{scheme}://{host}{scope.get('root_path', '')}"


def create_app(
    spec: Mapping[str, Any],
    server_factory: ServerFactory,
    settings: Settings | None = None,
    environ: Mapping[str, str] | None = None,
) -> Starlette:
    """The ASGI app for ``settings.transport`` (http, sse or websocket).

    Mounted under a prefix (``Mount("/api", app)``), run ``app.router.lifespan_context(app)``
    inside the parent's lifespan: the streamable HTTP session manager and the shared state
    (``sharing``: Redis when ``redis_url`` is set) live there.
    """
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.middleware.cors import CORSMiddleware
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import BaseRoute, Route

    settings = (settings or Settings.from_env(spec, environ)).checked()
    if settings.transport != "stdio":
        from . import h11guard

        h11guard.HEADER_TIMEOUT = settings.header_timeout
    observed = telemetry.setup(spec, settings.transport, environ)
    shared = sharing.shared_for(spec, settings)
    server = server_factory(
        network=True,
        bus=shared.bus,
        shared=shared,
        request_state=sharing.request_security(settings),
    )
    replicated = bool(settings.redis_url)
    auth = authenticator(
        spec, settings, environ, shared.cache("introspection") if replicated else None
    )
    info = spec["server"]
    if not auth.enabled and not settings.local:
        logger.warning(
            "serving on %s without authentication: anyone who can reach it can call every tool",
            settings.host,
        )
    hosts, origins = security_lists(settings)
    if not settings.local and not settings.allowed_hosts:
        logger.warning(
            "no allowed hosts set (%sALLOWED_HOSTS): Host header checks are off",
            settings.env_prefix,
        )
        hosts = []

    def metadata_url(scope: Scope) -> str:
        return base_url(scope, settings) + WELL_KNOWN + settings.endpoint

    async def healthz(request: Request) -> Response:
        return JSONResponse(
            {
                "status": "ok",
                "server": info["name"],
                "version": info.get("version"),
                "pid": os.getpid(),
                "sharedState": sharing.health(shared),
            }
        )

    async def metadata(request: Request) -> Response:
        suffix = route_path(request.scope)[len(WELL_KNOWN) :]
        root = request.scope.get("root_path", "")
        if suffix not in ("", settings.endpoint, root + settings.endpoint):
            return JSONResponse({"error": "not_found"}, status_code=404)
        document = {
            "resource": base_url(request.scope, settings) + settings.endpoint,
            "authorization_servers": [settings.oauth_issuer],
            "bearer_methods_supported": ["header"],
            "scopes_supported": list(spec.get("auth", {}).get("scopesSupported", [])),
            "resource_name": info.get("title") or info["name"],
        }
        return JSONResponse(document, headers={"Cache-Control": "public, max-age=3600"})

    routes: list[BaseRoute] = [Route(HEALTH_PATH, healthz, methods=["GET"])]
    public: tuple[str, ...] = ()
    if observed is not None and observed.reader is not None:
        from .prometheus import METRICS_PATH, metrics_route

        routes.append(metrics_route(observed.reader))
        if spec.get("observability", {}).get("metrics") == "public":
            public = (METRICS_PATH,)
    if auth.kind == "oauth":
        routes.append(Route(WELL_KNOWN + "{rest:path}", metadata, methods=["GET"]))
    # Host/Origin checks run in HostOriginMiddleware, the same for every transport.
    no_rebinding_check = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    if settings.transport == "http":
        stateful = not settings.stateless and settings.event_store_size > 0
        app = server.streamable_http_app(
            streamable_http_path=settings.path,
            json_response=settings.json_response,
            stateless_http=settings.stateless,
            event_store=MemoryEventStore(settings.event_store_size) if stateful else None,
            retry_interval=(settings.retry_interval or None) if stateful else None,
            max_request_body_size=settings.max_body_size,
            session_idle_timeout=settings.session_idle_timeout,
            max_sessions=settings.max_sessions,
            transport_security=no_rebinding_check,
            host=settings.host,
            custom_starlette_routes=cast("list[Route]", routes),
        )
        if not settings.stateless:
            cap_sessions_per_caller(server.session_manager, settings.sessions_per_caller)
    else:
        from starlette.applications import Starlette

        if settings.transport == "sse":
            routes += _sse_routes(server, settings, no_rebinding_check)
        else:
            from .websocket import websocket_route

            routes.append(websocket_route(server))
        app = Starlette(routes=routes)
    sharing.add_lifespan(app, shared)
    if observed is not None:
        telemetry.flush_on_shutdown(app)
    # add_middleware wraps the app: the last one added runs first.
    resumable = (
        settings.transport == "http" and not settings.stateless and settings.event_store_size > 0
    )
    if settings.transport == "http" and (settings.json_response or not resumable):
        from .lifecycle import DisconnectMiddleware

        # a call whose client left cannot be resumed
        app.add_middleware(DisconnectMiddleware, json_response=settings.json_response)
    if settings.transport in ("sse", "websocket"):
        app.add_middleware(SessionSlots, settings=settings)  # inside auth: knows the caller
    limiter = (
        TokenBuckets(
            settings.rate_limit, settings.rate_burst, shared.limiter if replicated else None
        )
        if settings.rate_limit > 0
        else None
    )
    app.add_middleware(
        AuthMiddleware,
        auth=auth,
        settings=settings,
        policy=server.tools.policy,
        limiter=limiter,
        metadata_url=metadata_url,
        realm=str(info["name"]),
        public_paths=public,
    )
    app.add_middleware(HostOriginMiddleware, hosts=hosts, origins=origins)
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
            allow_headers=[
                "Authorization",
                "Content-Type",
                "Accept",
                "Last-Event-ID",
                "Mcp-Session-Id",
                "Mcp-Protocol-Version",
                "Mcp-Method",
                "Mcp-Name",
                auth.header,
            ],
            expose_headers=[
                "Mcp-Session-Id",
                "Mcp-Protocol-Version",
                "WWW-Authenticate",
                "Retry-After",
            ],
            max_age=600,
        )
    return app


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


def cap_sessions_per_caller(manager: Any, cap: int) -> None:
    """At most ``cap`` open sessions per verified caller: the SDK's session manager caps
    sessions in all (``max_sessions``) and binds each to its caller, but one token could
    open every slot. A caller at its cap gets the same 503 as a full server. Anonymous
    callers (no authentication) share the overall cap only. Wraps the manager's admission
    step (``mcp`` 2.3's ``_admit_session``, checked by the security tests)."""
    admit = manager._admit_session
    owners: dict[str, Any] = manager._session_owners

    def admit_capped(requestor: Any) -> Any:
        if requestor is not None and sum(o == requestor for o in owners.values()) >= cap:
            logger.warning("refused a new session: its caller already has %d open", cap)
            return None
        return admit(requestor)

    manager._admit_session = admit_capped


def _sse_routes(server: GeneratedServer, settings: Settings, security: Any) -> list[Any]:
    """Legacy HTTP+SSE (protocol 2024-11-05): GET /sse opens the stream, POST /messages/."""
    from mcp.server.sse import SseServerTransport
    from mcp.server.transport_security import RequestBodyLimitMiddleware
    from starlette.routing import Mount, Route

    transport = SseServerTransport(MESSAGES_PATH, security_settings=security)

    class Stream:
        """GET /sse as a plain ASGI app (the transport sends the response itself)."""

        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            async with transport.connect_sse(scope, receive, send) as streams:
                await server.run(streams[0], streams[1], server.create_initialization_options())

    messages = RequestBodyLimitMiddleware(transport.handle_post_message, settings.max_body_size)
    return [Route(SSE_ROUTE, Stream(), methods=["GET"]), Mount(MESSAGES_PATH, app=messages)]


SSE_ROUTE = "/sse"
