"""What the credential tests share: the schemes, a ``Credentials`` made for them, callers
with tokens from the local authorization server, and what the upstream was sent.

The fixtures (``auth``, ``upstream``, ``plain_upstream``) are imported by each test module.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

import anyio
import httpx2
import jwt
import pytest
from authserver import AuthServer, Upstream

from mcpgen.runtime.credentials import Credentials
from mcpgen.runtime.identity import Identity

SCHEMES: dict[str, dict[str, Any]] = {
    "bearerAuth": {"type": "http", "scheme": "bearer"},
    "apiKeyAuth": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
    "queryKey": {"type": "apiKey", "in": "query", "name": "api_key"},
    "cookieKey": {"type": "apiKey", "in": "cookie", "name": "session"},
    "basicAuth": {"type": "http", "scheme": "basic"},
    "oauthApp": {"type": "oauth2", "tokenUrl": "/token", "scopes": {"b": "", "a": ""}},
    "partnerKey": {"type": "apiKey", "in": "header", "name": "X-Upstream-Key"},
}
CLIENT = {
    "SHOP_BEARERAUTH_CLIENT_ID": "mcp-server",
    "SHOP_BEARERAUTH_CLIENT_SECRET": "server-secret",
}
BEARER = [{"bearerAuth": []}]


class ToolFailure(Exception):
    """Stands in for the runtime's tool error type."""


def run(fn: Callable[[], Awaitable[Any]]) -> Any:
    return anyio.run(fn)


@pytest.fixture
def auth() -> Iterator[AuthServer]:
    with AuthServer().running() as server:
        yield server


@pytest.fixture
def upstream(auth: AuthServer) -> Iterator[Upstream]:
    with Upstream(auth=auth).running() as api:
        yield api


@pytest.fixture
def plain_upstream() -> Iterator[Upstream]:
    with Upstream().running() as api:
        yield api


def exchange_config(auth: AuthServer, **extra: Any) -> dict[str, Any]:
    return {
        "bearerAuth": {
            "from": "tokenExchange",
            "tokenUrl": auth.token_url,
            "audience": "https://api.test",
            **extra,
        },
        "partnerKey": {"from": "header", "header": "X-Partner-Key"},
    }


def make(
    config: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    **options: Any,
) -> Credentials:
    options.setdefault("error", ToolFailure)
    options.setdefault("server_auth_header", "X-MCP-Key")
    return Credentials(SCHEMES, config, env_prefix="SHOP", environ=dict(environ or {}), **options)


def caller(auth: AuthServer, subject: str, **claims: Any) -> Identity:
    token = auth.issue(subject, **claims)
    exp = jwt.decode(token, options={"verify_signature": False})["exp"]
    return Identity(subject, frozenset(), exp, "client-app", auth.issuer, {}, token)


async def call(
    creds: Credentials,
    api: Upstream,
    security: list[dict[str, list[str]]],
    identity: Identity | None = None,
    inbound: Mapping[str, str] | None = None,
) -> httpx2.Response:
    """What the upstream caller does: credentials first, then the request (never before)."""
    headers, query, cookies = await creds.apply(security, identity, inbound)
    if cookies:
        headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
    async with httpx2.AsyncClient() as client:
        return await client.get(api.url + "/items", params=query, headers=headers)


def sent_token(received: Any) -> str:
    value = received.header("authorization")
    assert value is not None and value.startswith("Bearer ")
    return str(value[7:])


def claims_of(token: str) -> dict[str, Any]:
    decoded: dict[str, Any] = jwt.decode(token, options={"verify_signature": False})
    return decoded


def everything_sent(api: Upstream) -> list[str]:
    """Every header value, path and query string the upstream received."""
    found = []
    for request in api.received:
        found += [request.path, request.query] + [v for _, v in request.headers]
    return found


def assert_never_sent(api: Upstream, *secrets: str) -> None:
    for secret in secrets:
        signature = secret.rsplit(".", 1)[-1]
        for value in everything_sent(api):
            assert secret not in value and signature not in value
