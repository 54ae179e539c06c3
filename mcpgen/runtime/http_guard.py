"""The ASGI middleware in front of every HTTP and WebSocket transport: ``AuthMiddleware``
(Host/Origin checks against DNS rebinding, then the caller into the scope, charged to its
rate limit; ``http_auth.py`` checks credentials) and, for a POST of a message,
``PostGuard``, which also watches for a client that leaves."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
from starlette.responses import JSONResponse, Response
from starlette.websockets import WebSocket

from . import jsonrpc
from .authz import ANONYMOUS, IDENTITY_KEY, client_address
from .lifecycle import first_headers, observed_post
from .settings import Settings
from .shared_local import LocalRateLimiter

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from .shared import RateLimiter

logger = logging.getLogger(__name__)
HEALTH_PATH = "/healthz"
WELL_KNOWN = "/.well-known/oauth-protected-resource"
# Set in a request's scope by ``h11guard`` when its whole body came with its headers: a
# body already in cannot stall, so its ``receive`` needs no deadline (``timed``).
BODY_RECEIVED = "mcpgen.body_received"
STALLED = jsonrpc.error(jsonrpc.INVALID_REQUEST, "Request Timeout: the body stopped coming")
NO_STREAM = jsonrpc.error(
    jsonrpc.INVALID_REQUEST, "Method Not Allowed: a stateless server opens no stream"
)


def route_path(scope: Scope) -> str:
    """The path inside this app (without the prefix it is mounted under)."""
    path: str = scope.get("path", "")
    root: str = scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path


def error(status: int, code: str, description: str, headers: dict[str, str] | None = None) -> Any:
    body = {"error": code, "error_description": description}
    return JSONResponse(body, status_code=status, headers=headers)


async def respond(scope: Scope, receive: Receive, send: Send, response: Any) -> None:
    """Send an HTTP response, or refuse a WebSocket handshake with it."""
    if scope["type"] != "websocket":
        await response(scope, receive, send)
    elif "websocket.http.response" in scope.get("extensions", {}):
        await WebSocket(scope, receive, send).send_denial_response(response)
    else:
        await WebSocket(scope, receive, send).close(code=1008)


def _header_matches(value: str, allowed: Iterable[str]) -> bool:
    """``value`` is one of ``allowed``, or has any port where one ends in ``:*``."""
    return any(
        value == p
        or (p.endswith(":*") and value.startswith(p[:-1]) and value[len(p) - 1 :].isdigit())
        for p in allowed
    )


class TokenBuckets:
    """A token bucket per key (a verified identity or a client address): ``rate`` requests
    a second on average, bursts of ``burst``. The buckets are ``limiter``'s (Redis: the limit
    holds across replicas), else this process's, past MAX_KEYS the least recently used
    forgotten (back full); callers' and addresses' apart, so a flood of refused requests
    from many addresses never pushes out a caller's bucket."""

    MAX_KEYS = 10_000
    LONGEST_WAIT = 3600.0  # the most Retry-After ever says

    def __init__(self, rate: float, burst: int, limiter: RateLimiter | None = None) -> None:
        self.rate = rate
        self.burst = max(1, burst)
        self.limiter: RateLimiter = limiter or LocalRateLimiter(self.MAX_KEYS)
        self.addresses: RateLimiter = limiter or LocalRateLimiter(self.MAX_KEYS)

    async def wait(self, key: str) -> float:
        """0 when the request may go ahead, else the seconds until it may."""
        limiter = self.addresses if key.startswith("ip:") else self.limiter
        allowed, wait = await limiter.allow(key, self.rate, float(self.burst))
        return 0.0 if allowed else min(max(wait, 1e-6), self.LONGEST_WAIT)


class AuthMiddleware:
    """Checks the Host and Origin of every request but health checks (``refused``), then puts
    the caller of every other request but metadata and CORS preflights in
    ``scope[IDENTITY_KEY]`` (anonymous; ``http_auth.VerifyingMiddleware`` verifies it), with
    the rate limit and a time limit between the chunks of a request body."""

    verifies = False  # (``http_auth.VerifyingMiddleware``: ``verified``)

    def __init__(
        self,
        app: ASGIApp,
        settings: Settings,
        limiter: Any = None,
        public_paths: tuple[str, ...] = (),
        hosts: Sequence[str] = (),
        origins: Sequence[str] = (),
    ) -> None:
        self.app = app
        self.hosts = list(hosts)
        self.origins = list(origins)
        self.any_origin = "*" in self.origins
        self.settings = settings
        self.limiter = limiter
        self.public_paths = public_paths  # served without a credential (GET /metrics if public)

    async def _limited(self, scope: Scope, receive: Receive, send: Send, key: str) -> bool:
        if self.limiter is None or scope.get("method") == "OPTIONS":
            return False
        wait = await self.limiter.wait(key)
        if wait <= 0:
            return False
        retry = {"Retry-After": str(max(1, math.ceil(wait)))}
        await respond(scope, receive, send, error(429, "rate_limited", "Too many requests", retry))
        return True

    def metered(self, scope: Scope, receive: Receive, key: str) -> Receive:
        """A WebSocket's ``receive`` that charges every message to ``key``'s bucket (the
        handshake was charged like any request): past the rate, the next message is read only
        when the bucket allows it, so one connection cannot send more than the rate limit
        (the app of another transport refuses a WebSocket)."""
        limiter = self.limiter
        if limiter is None or scope["type"] != "websocket":
            return receive

        async def throttled() -> Message:
            message = await receive()
            if message.get("type") == "websocket.receive":
                while (wait := await limiter.wait(key)) > 0:
                    await anyio.sleep(wait)
            return message

        return throttled

    def refused(self, scope: Scope) -> Any:
        """DNS-rebinding protection: the answer when the Host header is no allowed host, or
        a browser's Origin no allowed origin; else None."""
        headers = first_headers(scope)  # read as starlette's ``Headers`` reads them: latin-1
        host = headers.get(b"host", b"").decode("latin-1")
        origin = headers.get(b"origin", b"").decode("latin-1")
        if self.hosts and not _header_matches(host, self.hosts):
            logger.warning("refused a request for host %r", host[:100])
            return error(421, "invalid_host", "Invalid Host header")
        if origin and not self.any_origin and not _header_matches(origin, self.origins):
            logger.warning("refused a request from origin %r", origin[:100])
            return error(403, "invalid_origin", "Invalid Origin header")
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = route_path(scope)  # (HEALTH_PATH: for load balancer probes)
        if path == HEALTH_PATH or scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        refused = self.refused(scope)
        if refused is not None:
            return await respond(scope, receive, send, refused)
        if path.startswith(WELL_KNOWN) or path in self.public_paths:
            public = path in self.public_paths  # (a public GET /metrics: limited by address)
            if public and await self._limited(scope, receive, send, client_address(scope)):
                return
            return await self.app(scope, receive, send)
        if scope.get("method") == "OPTIONS" or not self.verifies:
            if self.limiter is not None:
                address = client_address(scope)
                if await self._limited(scope, receive, send, address):
                    return
                receive = self.metered(scope, receive, address)
            scope[IDENTITY_KEY] = ANONYMOUS
            return await self.app(scope, timed(scope, receive, self.settings.body_timeout), send)
        await self.verified(scope, receive, send, path)

    async def verified(self, scope: Scope, receive: Receive, send: Send, path: str) -> None:
        raise NotImplementedError  # (``http_auth.VerifyingMiddleware``)


def timed(scope: Scope, receive: Receive, seconds: float) -> Receive:
    """``receive`` that reports a disconnect when the client stalls for ``seconds`` in the
    middle of a request body (slow-body attacks); waits after the body are not limited."""
    if scope["type"] != "http" or scope.get(BODY_RECEIVED):
        return receive
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


@dataclass(eq=False)
class PostGuard:
    """A POST to the MCP endpoint (streamable HTTP's ``path``, legacy SSE's ``/messages/``
    and under it) that is no JSON-RPC message, answered with the JSON-RPC error stdio gives
    where SDK 2.3 answers in plain text or otherwise (a body cut short: its 500 and
    traceback). The body is read whole first (as the SDK does): the answer does not depend
    on how it arrives."""

    app: ASGIApp
    path: str
    max_body_size: int
    unreadable: Callable[[bytes], str | None] | None = None  # (the SDK's answer: plain text)
    # False (stateless HTTP): a GET stream could never carry anything, yet the SDK would
    # hold one open, uncounted, for as long as the client likes: 405, as MCP allows
    streams: bool = True
    # True: the handlers of a POST whose client leaves are cancelled (``observed_post``)
    observe: bool = False
    json_response: bool = False

    def guards(self, scope: Scope) -> bool:
        if scope["type"] != "http" or scope["method"] != "POST":
            return False
        path = route_path(scope)
        return path == self.path or (self.path.endswith("/") and path.startswith(self.path))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.guards(scope):
            if not self.streams and scope.get("method") == "GET" and route_path(scope) == self.path:
                return await _answer(scope, receive, send, 405, NO_STREAM, {"Allow": "POST"})
            return await self.app(scope, receive, send)
        headers = first_headers(scope)
        kind = headers.get(b"content-type", b"").split(b";")[0]
        if kind.strip().lower() != b"application/json":  # (not application/jsonx)
            error = jsonrpc.error(jsonrpc.INVALID_REQUEST, "Content-Type must be application/json")
            return await _answer(scope, receive, send, 415, error)
        declared = headers.get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.max_body_size:
            return await _answer(scope, receive, send, 413, jsonrpc.TOO_LARGE)
        pending: list[Message] = []
        size = 0
        while not pending or pending[-1].get("more_body", False):
            pending.append(await receive())
            size += len(pending[-1].get("body", b""))
            if size > self.max_body_size:  # a chunked body, or more than it declared
                return await _answer(scope, receive, send, 413, jsonrpc.TOO_LARGE)
        if pending[-1]["type"] != "http.request":  # the client left or stalled (``timed``)
            return await _answer(scope, receive, send, 408, STALLED, {"Connection": "close"})
        body = pending[0].get("body", b"")  # (mostly the only message)
        if len(pending) > 1:
            body = b"".join(m.get("body", b"") for m in pending)
        invalid = jsonrpc.error_for_post(body)
        if invalid is None and self.unreadable is not None:
            invalid = self.unreadable(body)
        if invalid is not None:
            return await _answer(scope, receive, send, 400, invalid)
        pending.reverse()
        if self.observe:
            return await observed_post(self.app, scope, pending, receive, send, self.json_response)

        async def replay() -> Message:
            return pending.pop() if pending else await receive()

        await self.app(scope, replay, send)


async def _answer(
    scope: Scope, receive: Receive, send: Send, status: int, body: str, headers: Any = None
) -> None:
    await Response(body, status, headers, "application/json")(scope, receive, send)
