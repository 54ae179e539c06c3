"""The HTTP front door of a server with ``auth`` (carried only then): every request's
credential checked, the verified caller bound to its sessions, 401 challenges, the HTTP
403 ``insufficient_scope`` answer MCP clients use for step-up authorization (scope checks
themselves happen at dispatch, ``authz``), and GET streams that end with the caller's
token (``until_expiry``), as do 2026-07-28 listen streams."""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import math
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import anyio
from starlette.datastructures import Headers

from .auth import Authenticator
from .authz import _CURRENT, IDENTITY_KEY, Policy, client_address
from .errors import FORBIDDEN, AuthError
from .http_guard import (
    WELL_KNOWN,
    AuthMiddleware,
    error,
    respond,
    route_path,
    timed,
)
from .identity import Identity
from .lifecycle import first_headers

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from .settings import Settings

logger = logging.getLogger(__name__)


def presented(header: str, headers: Headers) -> str | None:
    """The credential a request presents in ``header``, "" for a malformed one, None for
    none; two of them are refused (which one is meant is ambiguous)."""
    values = headers.getlist(header)
    if len(values) > 1:
        raise AuthError(f"the {header} header was sent more than once")
    if not values:
        return None
    value = values[0]
    if header.lower() == "authorization":
        scheme, _, token = value.strip().partition(" ")
        return token.strip() if scheme.lower() == "bearer" else ""
    return value.strip()


def quote_param(value: str) -> str:
    """``value`` for a quoted-string of a header: printable ASCII only (HTTP/1.1 sends
    headers as latin-1; a character it lacks was a 500)."""
    return "".join(c for c in value if " " <= c <= "~").replace("\\", "\\\\").replace('"', "'")


@contextlib.contextmanager
def acting(identity: Identity) -> Iterator[None]:
    """``identity`` current while the HTTP layer passes its request on: what the SDK asks
    before any handler runs (``ToolTable.input_schema``) sees the verified caller too."""
    token = _CURRENT.set(identity)
    try:
        yield
    finally:
        _CURRENT.reset(token)


class VerifyingMiddleware(AuthMiddleware):
    """``AuthMiddleware`` that checks credentials: puts the verified caller in
    ``scope[IDENTITY_KEY]`` and ``scope["user"]`` (the SDK binds sessions to it)."""

    verifies = True

    def __init__(
        self,
        app: ASGIApp,
        auth: Authenticator,
        policy: Policy,
        settings: Settings,
        limiter: Any = None,
        realm: str = "mcp",
        subscriptions: Any = None,
        public_paths: tuple[str, ...] = (),
        hosts: Sequence[str] = (),
        origins: Sequence[str] = (),
    ) -> None:
        super().__init__(app, settings, limiter, public_paths, hosts, origins)
        self.auth = auth
        self.policy = policy
        self.realm = realm
        self.subscriptions = subscriptions  # resources.ReadableSubscriptions, or None

    def metadata_url(self, scope: Scope) -> str:
        """Where this server's Protected Resource Metadata is (``metadata_route``)."""
        return base_url(scope, self.settings) + WELL_KNOWN + self.settings.endpoint

    @functools.cached_property
    def step_up(self) -> bool:
        """Whether a call the caller lacks scopes for is answered HTTP 403 naming them (not
        when discovery hides the tool)."""
        policy = self.policy
        return self.settings.transport == "http" and policy.scoped and not policy.hide_unauthorized

    def challenge(self, scope: Scope, failure: AuthError | None) -> str:
        """The ``WWW-Authenticate`` value of a 401: always a scheme and at least the realm
        (RFC 6750 section 3; a bare ``Bearer `` is not a valid header value and h11 drops
        the connection instead of sending it)."""
        params = [f'realm="{quote_param(self.realm)}"']
        if self.auth.kind == "oauth":
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

    async def verified(self, scope: Scope, receive: Receive, send: Send, path: str) -> None:
        request = Headers(scope=scope)
        failure: AuthError | None = None
        identity: Identity | None = None
        charged = False  # to the address, before the issuer is asked about a new token
        try:
            credential = presented(self.auth.header, request)
            charged = credential is not None and self.auth.asks(credential)
            if charged and await self._limited(scope, receive, send, client_address(scope)):
                return
            if credential is not None:
                identity = await self.auth.verify(credential)
        except AuthError as exc:
            failure = exc
        if identity is None:
            # refused or anonymous requests are limited by address, before any answer
            if not charged and await self._limited(scope, receive, send, client_address(scope)):
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
        receive = self.metered(scope, receive, "id:" + identity.key)
        if identity.claims.get("active"):  # introspected: checked again while it lasts
            scope["mcpgen.recheck"] = functools.partial(self.auth.verify, credential or "")
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
        if self.subscriptions is not None and scope.get("method") == "GET":  # updates go there
            self.subscriptions.stream_opened(request.get("mcp-session-id", ""), identity)
        with acting(identity):
            lapses = identity.expires_at or "mcpgen.recheck" in scope
            if scope["type"] == "http" and lapses and streams(scope):
                return await until_expiry(self.app, scope, receive, send, identity)
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
        if self.auth.kind == "oauth":
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


def metadata_route(spec: Mapping[str, Any], settings: Settings) -> Any:
    """The Protected Resource Metadata route (RFC 9728) of a server with OAuth: where its
    clients find the authorization server."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    info = spec["server"]

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
        # derived from Host (no public_url), a shared cache must not keep it (Vary: Host
        # would not cover the scheme and root path it is derived from too)
        cache = "public" if settings.public_url else "private"
        return JSONResponse(document, headers={"Cache-Control": f"{cache}, max-age=3600"})

    return Route(WELL_KNOWN + "{rest:path}", metadata, methods=["GET"])


def cap_sessions_per_caller(manager: Any, cap: int) -> None:
    """At most ``cap`` open sessions per verified caller: the SDK's session manager caps
    sessions in all (``max_sessions``) and binds each to its caller, but one token could
    open every slot. A caller at its cap gets the same 503 as a full server. Anonymous
    callers (no authentication: the SDK binds their sessions to no one) share the overall
    cap only, so only a server with ``auth`` wraps the manager's admission step (``mcp``
    2.3's ``_admit_session``, checked by the security tests)."""
    admit = manager._admit_session
    owners: dict[str, Any] = manager._session_owners

    def admit_capped(requestor: Any) -> Any:
        if requestor is not None and sum(o == requestor for o in owners.values()) >= cap:
            logger.warning("refused a new session: its caller already has %d open", cap)
            return None
        return admit(requestor)

    manager._admit_session = admit_capped


def streams(scope: Scope) -> bool:
    """A GET stream, or a 2026-07-28 ``subscriptions/listen`` POST (as long-lived; the SDK
    refuses one whose ``Mcp-Method`` header does not name it)."""
    if scope.get("method") == "GET":
        return True
    return first_headers(scope).get(b"mcp-method") == b"subscriptions/listen"


async def lapse(scope: Scope, identity: Identity) -> None:
    """Return when the caller's token lapses: at its ``exp``, or for an introspected one
    (checked again as often as over HTTP: introspection's cache time) once revoked or when
    the endpoint gives no answer. For the streams that outlive their request."""
    expires, recheck = identity.expires_at, scope.get("mcpgen.recheck")
    while recheck is not None:
        from .introspection import CACHE_SECONDS  # (carried with OAuth)

        if expires is not None and expires <= time.time() + CACHE_SECONDS:
            break
        await anyio.sleep(CACHE_SECONDS)
        try:
            expires = (await recheck()).expires_at
        except Exception:  # refused (revoked) or no answer: as an expired token
            return
    await anyio.sleep(max(0.0, (expires or math.inf) - time.time()))


async def until_expiry(
    app: ASGIApp, scope: Scope, receive: Receive, send: Send, identity: Identity
) -> None:
    """A stream (streamable HTTP's GET or listen POST, the legacy SSE stream) served until
    the caller's token lapses (``lapse``), then ended: updates stop with the credential, and
    the client reconnects with a fresh one (WebSocket closes with 1008 the same way)."""
    state = {"started": False, "done": False, "lapsed": False}

    async def tracked(message: Message) -> None:
        if message["type"] == "http.response.start":
            state["started"] = True
        elif message["type"] == "http.response.body" and not message.get("more_body"):
            state["done"] = True
        await send(message)

    async def watch() -> None:
        await lapse(scope, identity)
        state["lapsed"] = True
        tg.cancel_scope.cancel()

    failed: Exception | None = None  # the app's own, raised as itself (not in a group)
    async with anyio.create_task_group() as tg:
        tg.start_soon(watch)
        try:
            await app(scope, receive, tracked)
        except Exception as exc:
            failed = exc
        tg.cancel_scope.cancel()
    if failed is not None:
        raise failed
    if state["lapsed"]:
        logger.info("ended a stream: its caller's token lapsed")
        if state["started"] and not state["done"]:
            await send({"type": "http.response.body", "body": b"", "more_body": False})


def base_url(scope: Scope, settings: Settings) -> str:
    """The public URL of this app's root: the configured one, else from the request."""
    if settings.public_url:
        return settings.public_url.rstrip("/")
    scheme = scope.get("scheme", "http")
    scheme = {"ws": "http", "wss": "https"}.get(scheme, scheme)
    host = Headers(scope=scope).get("host")
    if host is None:
        server = scope.get("server") or (settings.host, settings.port)
        host = f"{server[0]}:{server[1]}"
    return f"{scheme}://{host}{scope.get('root_path', '')}"
