"""The HTTP side of a generated server: streamable HTTP, legacy HTTP+SSE and WebSocket apps
with ``/healthz``, Protected Resource Metadata and the middleware stack (``http_guard``)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any, cast

from mcp.server.transport_security import TransportSecuritySettings
from sse_starlette.sse import AppStatus
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from . import telemetry
from .authz import IDENTITY_KEY
from .errors import ConfigError
from .eventstore import MemoryEventStore, events_per_session
from .http_guard import HEALTH_PATH, AuthMiddleware, PostGuard, TokenBuckets
from .sealing import request_security
from .settings import Settings
from .shared_local import LOCAL_STATUS

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from .auth import Authenticator
    from .server import GeneratedServer
    from .shared import SharedState

logger = logging.getLogger(__name__)
LOCAL_HOST_HEADERS = ("127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]")
LOCAL_ORIGINS = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*")
# CORS: the request headers a browser's MCP client sends (HTTP's, MCP's own and, if another,
# the auth header), and the response headers it reads
HTTP_HEADERS = ["Authorization", "Content-Type", "Accept", "Last-Event-ID"]
MCP_HEADERS = ["Mcp-Session-Id", "Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name"]
CORS_EXPOSED = ["Mcp-Session-Id", "Mcp-Protocol-Version", "WWW-Authenticate", "Retry-After"]


def require_sharing() -> None:
    """A ``ConfigError`` for a Redis URL given to a package built without replicas (sharing)."""
    if find_spec(f"{__package__}.sharing") is None:
        raise ConfigError(
            "built without Redis: the manifest plans no replicas (give it "
            "transports.http.redisUrl or a deploy: section, then rebuild)"
        )


def create_app(
    spec: Mapping[str, Any],
    server_factory: Callable[..., GeneratedServer],
    settings: Settings | None = None,
    environ: Mapping[str, str] | None = None,
) -> Starlette:
    """The ASGI app for ``settings.transport`` (http, sse or websocket). Mounted under a
    prefix (``Mount("/api", app)``), run ``app.router.lifespan_context(app)`` inside the
    parent's lifespan: the session manager and the shared state live there."""
    # SSE streams end once the calls in flight have (serve.py), in each worker process too
    AppStatus.disable_automatic_graceful_drain()  # type: ignore[no-untyped-call]
    settings = (settings or Settings.from_env(spec, environ)).checked()
    observed = telemetry.setup(spec, settings.transport, environ)
    shared: SharedState | None = None  # this process only, without a Redis URL
    if settings.redis_url:
        require_sharing()
        from .sharing import shared_for

        shared = shared_for(spec, settings)
    bus, state = (shared.bus if shared is not None else None), request_security(settings)
    server = server_factory(network=True, bus=bus, shared=shared, request_state=state)
    if server.tasks is not None:
        server.tasks.store.cap = settings.max_tasks
    auth: Authenticator | None = None  # (without ``auth`` every caller is anonymous)
    if spec.get("auth", {}).get("type", "none") != "none":  # the package carries auth.py
        from .auth import authenticator

        cache = shared.cache("introspection") if shared is not None else None
        auth = authenticator(spec, settings, environ, cache)
    info = spec["server"]
    if auth is None and not settings.local:
        logger.warning(
            "serving on %s without authentication: anyone who can reach it can call every tool",
            settings.host,
        )
    # Allowed Host headers and Origins: localhost only when bound locally; no Host check at
    # all when not bound locally and no host is set (a warning says so).
    hosts = list(settings.allowed_hosts)
    origins = [*settings.allowed_origins, *settings.cors_origins]
    if settings.local:
        hosts += LOCAL_HOST_HEADERS
        origins += LOCAL_ORIGINS
    elif not hosts:
        prefix = settings.env_prefix
        logger.warning("no allowed hosts set (%sALLOWED_HOSTS): Host header checks are off", prefix)

    async def healthz(request: Request) -> Response:
        # 200 while Redis is away: the replica still serves (degraded), and a balancer that
        # dropped every replica at once would turn an outage of Redis into one of the service
        state = LOCAL_STATUS if shared is None else shared.status()
        health = {"status": "ok", "server": info["name"], "version": info.get("version")}
        return JSONResponse({**health, "sharedState": state})

    routes: list[BaseRoute] = [Route(HEALTH_PATH, healthz, methods=["GET"])]
    public: tuple[str, ...] = ()
    if observed is not None and observed.metrics is not None:
        from .prometheus import METRICS_PATH, metrics_route

        hides = server.tools.policy.hides_from  # labels name tools: not for whom some are hidden
        worker = str(os.getpid()) if settings.workers > 1 else None  # each counts its own
        routes.append(
            metrics_route(observed.metrics, lambda s: not hides(s.get(IDENTITY_KEY)), worker)
        )
        if spec.get("observability", {}).get("metrics") == "public":
            public = (METRICS_PATH,)
    if auth is not None and auth.kind == "oauth":  # the package carries http_auth.py
        from .http_auth import metadata_route

        routes.append(metadata_route(spec, settings))
    # Host/Origin checks run in AuthMiddleware, the same for every transport.
    no_rebinding_check = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    if settings.transport == "http":
        if settings.stateless:  # what a handshake-era client is told it will hear of
            server.stateless(streamed=not settings.json_response)
        resumable = settings.resumable
        app = server.streamable_http_app(
            streamable_http_path=settings.path,
            json_response=settings.json_response,
            stateless_http=settings.stateless,
            event_store=MemoryEventStore(settings.event_store_size) if resumable else None,
            retry_interval=(settings.retry_interval or None) if resumable else None,
            max_request_body_size=settings.max_body_size,
            session_idle_timeout=settings.session_idle_timeout,
            max_sessions=settings.max_sessions,
            transport_security=no_rebinding_check,
            custom_starlette_routes=cast("list[Route]", routes),
        )
        if resumable:  # one store, a view of it per session
            events_per_session(server.session_manager)
        if not settings.stateless and auth is not None:  # sessions of verified callers
            from .http_auth import cap_sessions_per_caller

            cap_sessions_per_caller(server.session_manager, settings.sessions_per_caller)
    else:
        from .http_legacy import legacy_app

        if settings.transport == "websocket":
            from .websocket import websocket_route

            routes = [*routes, websocket_route(server, settings.session_idle_timeout)]
        app = legacy_app(server, settings, routes, no_rebinding_check)
    if shared is not None:
        from .sharing import add_lifespan

        add_lifespan(app, shared)
    if observed is not None:
        telemetry.flush_on_shutdown(app)
    # add_middleware wraps the app: the last one added runs first.
    if settings.transport == "http":  # a POST that is no message: JSON-RPC errors (SSE's too)
        app.add_middleware(
            PostGuard,
            path=settings.path,
            max_body_size=settings.max_body_size,
            streams=not settings.stateless,
            # a call whose client left cannot be resumed
            observe=settings.json_response or not settings.resumable,
            json_response=settings.json_response,
        )
    limiter = None
    if settings.rate_limit > 0:
        buckets = shared.limiter if shared is not None else None
        limiter = TokenBuckets(settings.rate_limit, settings.rate_burst, buckets)
    checks: dict[str, Any] = {"public_paths": public, "hosts": hosts, "origins": origins}
    if auth is None:
        app.add_middleware(AuthMiddleware, settings, limiter, **checks)
    else:  # the package carries http_auth.py
        from .http_auth import VerifyingMiddleware

        policy, realm = server.tools.policy, str(info["name"])
        app.add_middleware(
            VerifyingMiddleware, auth, policy, settings, limiter, realm, server.readable, **checks
        )
    if settings.cors_origins:
        auth_header = "Authorization" if auth is None else auth.header
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
            allow_headers=[*HTTP_HEADERS, *MCP_HEADERS, auth_header],
            expose_headers=CORS_EXPOSED,
            max_age=600,
        )
    return app
