"""Who may call what: the one policy every tool call, resource read and prompt passes. The
caller is resolved once per inbound message, on every transport and in both protocol eras
(``IdentityMiddleware``), and kept in a context variable; tables ask ``Policy`` before they
run anything (meta tools and code mode reach operations only through the tool table)."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

import mcp_types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, INVALID_REQUEST, ErrorData
from pydantic import ValidationError

from .identity import LOCAL, Identity
from .lifecycle import run_request

IDENTITY_KEY = "mcpgen.identity"  # where the HTTP auth middleware puts the caller (ASGI scope)
# A network request that did not pass the auth middleware: it may call nothing scoped.
UNVERIFIED = Identity("unverified", frozenset())
ANONYMOUS = Identity("anonymous", None)  # every caller when authentication is off
_CURRENT: ContextVar[Identity] = ContextVar("mcpgen_identity", default=LOCAL)

Kind = str  # "tool", "resource" (fixed URI or URI template), "prompt"


def current_identity() -> Identity:  # (``LOCAL`` on stdio and in memory)
    return _CURRENT.get()


def identity_of_request(request: object, network: bool) -> Identity:
    """The identity the HTTP and WebSocket apps put in the ASGI scope; stdio and in-memory
    requests carry none: the local user."""
    if isinstance(scope := getattr(request, "scope", None), Mapping):
        found = scope.get(IDENTITY_KEY)
        return found if isinstance(found, Identity) else UNVERIFIED
    return UNVERIFIED if network else LOCAL


def client_address(scope: Mapping[str, Any]) -> str:
    """The rate limit's key for a caller without a verified identity: its address, or for
    IPv6 its /64 (a client commonly holds all of one; an IPv4-mapped one is the IPv4)."""
    host = str((scope.get("client") or ("unknown", 0))[0])
    try:
        address = ipaddress.ip_address(host.partition("%")[0])
    except ValueError:
        return f"ip:{host}"
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is None:
            return f"ip:{ipaddress.IPv6Network((address, 64), strict=False)}"
        address = address.ipv4_mapped
    return f"ip:{address}"


class IdentityMiddleware:
    """SDK server middleware: resolves the caller of every inbound message once, and runs
    the request counted (for graceful shutdowns) and cancellable by a client disconnect."""

    def __init__(self, network: bool) -> None:
        self.network = network

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        token = _CURRENT.set(identity_of_request(ctx.request, self.network))
        try:
            if ctx.request_id is None:  # a notification
                return await call_next(ctx)
            return await run_request(ctx, lambda: call_next(ctx))
        except ValidationError as exc:
            if not _request_model(exc.title):  # not the SDK's check of a request's params
                raise
            raise invalid_params(exc) from None
        except MCPError as exc:
            if exc.error != BEFORE_INITIALIZE or ctx.session.client_params is not None:
                raise
            raise MCPError(INVALID_REQUEST, NOT_INITIALIZED) from None
        finally:
            _CURRENT.reset(token)


# What SDK 2.3 answers a request before ``initialize`` (on stdio, WebSocket, legacy SSE),
# and what streamable HTTP answers one without a session (400): -32600, saying why.
BEFORE_INITIALIZE = ErrorData(code=INVALID_PARAMS, message="Invalid request parameters", data="")
NOT_INITIALIZED = "Invalid Request: the connection is not initialized: send initialize first"


def _request_model(title: str) -> bool:
    """Whether a validation error's model is one of the SDK's requests or their params."""
    return title.endswith(("Request", "RequestParams")) and hasattr(mcp_types, title)


def invalid_params(exc: ValidationError) -> MCPError:
    """The SDK answers params that fail its model with a bare "Invalid request parameters":
    say which field and why, as a tool's invalid arguments do (no input values echoed)."""
    errors = exc.errors(include_url=False, include_input=False)
    paths = [[str(part) for part in e["loc"]] for e in errors]
    fields = [".".join(p if p[:1] == ["params"] else ["params", *p]) for p in paths]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    message = f"Invalid request parameters: {fields[0]}: {errors[0]['msg']}{more}"
    return MCPError(INVALID_PARAMS, message, data={"fields": fields})


def principal(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """What a sealed ``requestState`` is bound to: the caller, so a round trip's state
    cannot be replayed by anyone else (None for the local user)."""
    identity = current_identity()
    return None if identity is LOCAL else identity.key


class Policy:
    """Who may use what without scopes (``scopes.ScopedPolicy`` has them): every caller
    may use everything, and discovery hides nothing."""

    scoped = False

    def __init__(self, hide_unauthorized: bool = False) -> None:
        self.hide_unauthorized = hide_unauthorized  # ``hideUnauthorizedTools``

    def required(self, kind: Kind, name: str) -> tuple[str, ...]:
        return ()

    def missing(self, identity: Identity, kind: Kind, name: str) -> list[str]:
        return []

    def check(self, identity: Identity, kind: Kind, name: str) -> None:
        """Raise ``Forbidden`` unless ``identity`` holds every scope ``name`` needs."""

    def allowed(self, identity: Identity, kind: Kind, name: str) -> bool:
        return True

    def visible(self, identity: Identity, kind: Kind, name: str) -> bool:  # in lists, search
        return True

    def hides_from(self, identity: Identity | None) -> bool:  # anything, from discovery
        return False
