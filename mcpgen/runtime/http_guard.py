"""The ASGI middleware in front of every HTTP and WebSocket transport.

Order, outermost first: Host/Origin checks (DNS rebinding), then authentication, which
puts the verified caller in the scope and charges its rate limit (the verified identity
when there is one, the client address for anonymous and refused requests). Scope checks
themselves happen at dispatch (``authz``); here a ``tools/call`` that the caller may not
make only gets the HTTP 403 ``insufficient_scope`` answer MCP clients use for step-up
authorization.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import anyio

from .auth import Authenticator, AuthError
from .authz import IDENTITY_KEY, Policy
from .http_streams import metered, until_expiry
from .identity import Identity
from .settings import Settings

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from .shared import RateLimiter

logger = logging.getLogger(__name__)
HEALTH_PATH = "/healthz"
WELL_KNOWN = "/.well-known/oauth-protected-resource"
FORBIDDEN = -32003
ANONYMOUS = Identity("anonymous", None)  # every caller when authentication is off


def route_path(scope: Scope) -> str:
    """The path inside this app (without the prefix it is mounted under)."""
    path: str = scope.get("path", "")
    root: str = scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path


def quote_param(value: str) -> str:
    return "".join(c for c in value if c.isprintable()).replace("\\", "\\\\").replace('"', "'")


def error(status: int, code: str, description: str, headers: dict[str, str] | None = None) -> Any:
    from starlette.responses import JSONResponse

    body = {"error": code, "error_description": description}
    return JSONResponse(body, status_code=status, headers=headers)


async def respond(scope: Scope, receive: Receive, send: Send, response: Any) -> None:
    """Send an HTTP response, or refuse a WebSocket handshake with it."""
    if scope["type"] == "websocket":
        from starlette.websockets import WebSocket

        websocket = WebSocket(scope, receive, send)
        if "websocket.http.response" in scope.get("extensions", {}):
            await websocket.send_denial_response(response)
        else:
            await websocket.close(code=1008)
        return
    await response(scope, receive, send)


def _header_matches(value: str, allowed: Iterable[str]) -> bool:
    for pattern in allowed:
        if value == pattern:
            return True
        if pattern.endswith(":*"):
            base = pattern[:-2]
            if value.startswith(base + ":") and value[len(base) + 1 :].isdigit():
                return True
    return False


class HostOriginMiddleware:
    """DNS-rebinding protection: the Host header must be an allowed host, and a browser's
    Origin an allowed origin. ``/healthz`` is exempt (for load balancer probes)."""

    def __init__(self, app: ASGIApp, hosts: Sequence[str], origins: Sequence[str]) -> None:
        self.app = app
        self.hosts = list(hosts)
        self.origins = list(origins)
        self.any_origin = "*" in self.origins

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and route_path(scope) != HEALTH_PATH:
            host, origin = _host_and_origin(scope["headers"])
            if self.hosts and not _header_matches(host, self.hosts):
                logger.warning("refused a request for host %r", host[:100])
                return await respond(
                    scope, receive, send, error(421, "invalid_host", "Invalid Host header")
                )
            if origin and not self.any_origin and not _header_matches(origin, self.origins):
                logger.warning("refused a request from origin %r", origin[:100])
                return await respond(
                    scope, receive, send, error(403, "invalid_origin", "Invalid Origin header")
                )
        await self.app(scope, receive, send)


def _host_and_origin(headers: Iterable[tuple[bytes, bytes]]) -> tuple[str, str | None]:
    """The first Host and Origin of raw ASGI headers (names come lower-cased), as
    starlette's ``Headers`` reads them: latin-1, the host "" when absent."""
    host: str | None = None
    origin: str | None = None
    for name, value in headers:
        if name == b"host" and host is None:
            host = value.decode("latin-1")
        elif name == b"origin" and origin is None:
            origin = value.decode("latin-1")
    return host or "", origin


class TokenBuckets:
    """A token bucket per key: ``rate`` requests a second on average, bursts of ``burst``.
    Keys are verified identities or client addresses. The buckets are ``limiter``'s: the
    shared state's (in Redis, so the limit holds across replicas), else this process's,
    where the least recently used keys are forgotten past MAX_KEYS (a forgotten key starts
    with a full bucket). Verified callers and addresses keep their buckets apart, so a
    flood of refused requests from many addresses never pushes out a caller's bucket."""

    MAX_KEYS = 10_000
    LONGEST_WAIT = 3600.0  # the most Retry-After ever says

    def __init__(self, rate: float, burst: int, limiter: RateLimiter | None = None) -> None:
        self.rate = rate
        self.burst = max(1, burst)
        if limiter is None:
            from .shared_local import LocalRateLimiter

            limiter = LocalRateLimiter(self.MAX_KEYS)
            self.addresses: RateLimiter = LocalRateLimiter(self.MAX_KEYS)
        else:
            self.addresses = limiter
        self.limiter = limiter

    async def wait(self, key: str) -> float:
        """0 when the request may go ahead, else the seconds until it may."""
        limiter = self.addresses if key.startswith("ip:") else self.limiter
        allowed, wait = await limiter.allow(key, self.rate, float(self.burst))
        return 0.0 if allowed else min(max(wait, 1e-6), self.LONGEST_WAIT)


def client_address(scope: Scope) -> str:
    client = scope.get("client") or ("unknown", 0)
    return f"ip:{client[0]}"


class AuthMiddleware:
    """Checks the credential of every request except health checks, metadata and CORS
    preflights, and puts the caller in ``scope[IDENTITY_KEY]`` (and ``scope["user"]`` for
    the SDK, which binds sessions to it). Also: the rate limit, and a time limit between
    the chunks of a request body (a client that stalls mid-body is cut off)."""

    def __init__(
        self,
        app: ASGIApp,
        auth: Authenticator,
        settings: Settings,
        policy: Policy,
        limiter: Any = None,
        metadata_url: Any = None,
        realm: str = "mcp",
        public_paths: tuple[str, ...] = (),
    ) -> None:
        self.app = app
        self.auth = auth
        self.settings = settings
        self.policy = policy
        self.limiter = limiter
        self.metadata_url = metadata_url
        self.realm = realm
        self.public_paths = public_paths  # served without a credential (GET /metrics if public)
        # step-up answers name the scope a call lacks: not when discovery hides the tool
        self.step_up = (
            settings.transport == "http" and policy.scoped and not policy.hide_unauthorized
        )

    async def _limited(self, scope: Scope, receive: Receive, send: Send, key: str) -> bool:
        if self.limiter is None or scope.get("method") == "OPTIONS":
            return False
        wait = await self.limiter.wait(key)
        if wait <= 0:
            return False
        retry = str(max(1, math.ceil(wait)))
        await respond(
            scope,
            receive,
            send,
            error(429, "rate_limited", "Too many requests", {"Retry-After": retry}),
        )
        return True

    def challenge(self, scope: Scope, failure: AuthError | None) -> str:
        """The ``WWW-Authenticate`` value of a 401: always a scheme and at least the realm
        (RFC 6750 section 3; a bare ``Bearer `` is not a valid header value and h11 drops
        the connection instead of sending it)."""
        params = [f'realm="{quote_param(self.realm)}"']
        if self.auth.kind == "oauth" and self.metadata_url is not None:
            params.append(f'resource_metadata="{quote_param(self.metadata_url(scope))}"')
        elif self.auth.kind == "apiKey":
            params.append(f'header="{quote_param(self.auth.header)}"')
        if failure is not None:
            params += [
                'error="invalid_token"',
                f'error_description="{quote_param(failure.description)}"',
            ]
        scheme = "ApiKey" if self.auth.kind == "apiKey" else "Bearer"
        return f"{scheme} {', '.join(params)}" if params else scheme  # "Bearer " is no header

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        path = route_path(scope)
        if path == HEALTH_PATH or path.startswith(WELL_KNOWN) or path in self.public_paths:
            return await self.app(scope, receive, send)
        if scope.get("method") == "OPTIONS" or not self.auth.enabled:
            if self.limiter is not None:
                address = client_address(scope)
                if await self._limited(scope, receive, send, address):
                    return
                receive = metered(scope, receive, self.limiter, address)
            scope[IDENTITY_KEY] = ANONYMOUS
            return await self.app(scope, timed(scope, receive, self.settings.body_timeout), send)
        from starlette.datastructures import Headers

        credential = self.auth.credential(Headers(scope=scope))
        failure: AuthError | None = None
        identity: Identity | None = None
        if credential is not None:
            try:
                identity = await self.auth.verify(credential)
            except AuthError as exc:
                failure = exc
        if identity is None:
            # refused or anonymous requests are limited by address, before any answer
            if await self._limited(scope, receive, send, client_address(scope)):
                return
            if failure is not None:
                logger.warning(
                    "refused a credential: %s", failure.description, extra={"path": path}
                )
            status = failure.status if failure else 401
            headers = (
                {"WWW-Authenticate": self.challenge(scope, failure)} if status == 401 else None
            )
            description = failure.description if failure else "Authentication required"
            code = "invalid_token" if failure else "unauthorized"
            return await respond(scope, receive, send, error(status, code, description, headers))
        if await self._limited(scope, receive, send, "id:" + identity.key):
            return
        scope[IDENTITY_KEY] = identity
        scope["user"] = sdk_user(identity)
        receive = metered(scope, receive, self.limiter, "id:" + identity.key)
        receive = timed(scope, receive, self.settings.body_timeout)
        if self.step_up and scope.get("method") == "POST" and identity.restricted:
            body, receive = await _read_body(receive, self.settings.max_body_size)
            if body is None:
                return await respond(
                    scope, receive, send, error(413, "too_large", "Request body too large")
                )
            denied = self._denied(body, identity)
            if denied is not None:
                return await self._insufficient(scope, receive, send, denied)
        if scope["type"] == "http" and scope.get("method") == "GET" and identity.expires_at:
            return await until_expiry(self.app, scope, receive, send, identity.expires_at)
        await self.app(scope, receive, send)

    def _denied(self, body: bytes, identity: Identity) -> dict[str, Any] | None:
        """The error for the first ``tools/call`` in the body the caller may not make."""
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):
            return None  # the transport answers the parse error
        for message in data if isinstance(data, list) else [data]:
            if not isinstance(message, dict) or message.get("method") != "tools/call":
                continue
            params = message.get("params")
            name = params.get("name") if isinstance(params, dict) else None
            if not isinstance(name, str) or "id" not in message:
                continue
            missing = self.policy.missing(identity, "tool", name)
            if missing:
                needed = list(self.policy.required("tool", name))
                return {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "error": {
                        "code": FORBIDDEN,
                        "message": f"Forbidden: tool {name!r} needs scope(s) {' '.join(missing)}",
                        "data": {"requiredScopes": needed, "missingScopes": missing},
                    },
                }
        return None

    async def _insufficient(
        self, scope: Scope, receive: Receive, send: Send, denied: dict[str, Any]
    ) -> None:
        from starlette.responses import JSONResponse

        missing = " ".join(denied["error"]["data"]["missingScopes"])
        params = ['error="insufficient_scope"', f'scope="{quote_param(missing)}"']
        if self.auth.kind == "oauth" and self.metadata_url is not None:
            params.append(f'resource_metadata="{quote_param(self.metadata_url(scope))}"')
        logger.warning("refused a tool call: %s", denied["error"]["message"])
        headers = {"WWW-Authenticate": "Bearer " + ", ".join(params)}
        await JSONResponse(denied, status_code=403, headers=headers)(scope, receive, send)


def sdk_user(identity: Identity) -> Any:
    """The caller as the SDK sees it (``scope["user"]``): its streamable HTTP and SSE
    transports bind every session to the caller that opened it (client, issuer, subject),
    so a session id presented by anyone else is answered 404. The subject given is the
    identity's key, so a client and a user of one name hold different sessions."""
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
    from mcp.server.auth.provider import AccessToken

    token = AccessToken(
        token=identity.key,  # never the credential itself
        client_id=identity.client or identity.subject,
        scopes=sorted(identity.scopes or ()),
        expires_at=identity.expires_at,
        subject=identity.key,  # issuer, client, subject and its kind: callers never merge
        claims={"iss": identity.issuer} if identity.issuer else None,
    )
    return AuthenticatedUser(token)


def timed(scope: Scope, receive: Receive, seconds: float) -> Receive:
    return _timed(receive, seconds) if scope["type"] == "http" else receive


def _timed(receive: Receive, seconds: float) -> Receive:
    """``receive`` that reports a disconnect when the client stalls for ``seconds`` in the
    middle of a request body (slow-body attacks); waits after the body are not limited."""
    done = False

    async def timed() -> Message:
        nonlocal done
        if done:
            return await receive()
        with anyio.move_on_after(seconds) as scope:
            message = await receive()
        if scope.cancelled_caught:
            logger.warning("a client stalled while sending a request body; dropped it")
            done = True
            return {"type": "http.disconnect"}
        if message.get("type") != "http.request" or not message.get("more_body", False):
            done = True
        return message

    return timed


async def _read_body(receive: Receive, limit: int) -> tuple[bytes | None, Receive]:
    """The whole request body (None past ``limit``), and a ``receive`` that replays it."""
    chunks: list[bytes] = []
    size = 0
    more = True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None, receive
        chunks.append(chunk)
        more = message.get("more_body", False)
    body = b"".join(chunks)
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return body, replay
