"""The credential layer for wrapped APIs: env, RFC 8693 token exchange, and a header.

Every test runs a local authorization server and a local upstream (tests/runtime/
authserver.py) on 127.0.0.1 and asserts on what they received.
"""

from __future__ import annotations

import base64
import json
import logging
import socket
import sys
from collections.abc import Awaitable, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import anyio
import httpx2
import jwt
import pytest

from mcpgen.runtime.credentials import (
    ACCESS_TOKEN_TYPE,
    TOKEN_EXCHANGE_GRANT,
    CredentialConfigError,
    Credentials,
    MemoryCache,
    check_config,
)
from mcpgen.runtime.identity import LOCAL, Identity

sys.path.insert(0, str(Path(__file__).parent))
from authserver import AuthServer, Upstream

pytestmark = pytest.mark.timeout(60)

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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


# -- token exchange ------------------------------------------------------------------


def test_two_users_calling_concurrently_each_get_their_own_exchanged_token(
    auth: AuthServer, upstream: Upstream
) -> None:
    auth.delay = 0.2  # every exchange overlaps the other calls
    creds = make(exchange_config(auth), CLIENT)
    alice, bob = caller(auth, "alice"), caller(auth, "bob")
    answers: list[tuple[str, int, Any]] = []

    async def one(who: Identity) -> None:
        response = await call(creds, upstream, BEARER, who)
        answers.append((who.subject, response.status_code, response.json()["sub"]))

    async def main() -> None:
        async with anyio.create_task_group() as group:
            for _ in range(5):
                group.start_soon(one, alice)
                group.start_soon(one, bob)

    run(main)
    assert sorted(answers) == [("alice", 200, "alice")] * 5 + [("bob", 200, "bob")] * 5
    assert dict(auth.exchanges) == {"alice": 1, "bob": 1}  # single flight per caller
    assert len(upstream.received) == 10
    seen: dict[str, set[str]] = {"alice": set(), "bob": set()}
    for request in upstream.received:
        token = sent_token(request)
        claims = claims_of(token)
        assert claims["aud"] == "https://api.test" and claims["act"] == {"sub": "mcp-server"}
        seen[claims["sub"]].add(token)
    assert len(seen["alice"]) == len(seen["bob"]) == 1 and seen["alice"] != seen["bob"]
    assert_never_sent(upstream, alice.token or "", bob.token or "")


def test_the_exchange_request_follows_rfc_8693(auth: AuthServer, upstream: Upstream) -> None:
    creds = make(exchange_config(auth, scope="items:read"), CLIENT)
    alice = caller(auth, "alice")
    run(lambda: call(creds, upstream, BEARER, alice))
    (sent,) = auth.requests
    assert sent["grant_type"] == TOKEN_EXCHANGE_GRANT
    assert sent["subject_token"] == alice.token
    assert sent["subject_token_type"] == ACCESS_TOKEN_TYPE
    assert sent["audience"] == "https://api.test" and sent["scope"] == "items:read"
    assert "client_secret" not in sent and "client_id" not in sent
    pair = base64.b64decode(sent["_authorization"].removeprefix("Basic ")).decode()
    assert pair == "mcp-server:server-secret"
    assert claims_of(sent_token(upstream.received[0]))["scope"] == "items:read"


def test_client_authentication_in_the_body_when_configured(
    auth: AuthServer, upstream: Upstream
) -> None:
    creds = make(exchange_config(auth, clientAuth="post"), CLIENT)
    run(
        lambda: call(
            creds, upstream, [{"bearerAuth": ["items:write", "items:read"]}], caller(auth, "alice")
        )
    )
    (sent,) = auth.requests
    assert sent["client_id"] == "mcp-server" and sent["client_secret"] == "server-secret"
    assert sent["_authorization"] == ""
    assert sent["scope"] == "items:read items:write"  # the operation's scopes, no config scope


def test_one_exchange_per_token_lifetime_then_a_new_one(
    auth: AuthServer, upstream: Upstream
) -> None:
    auth.lifetime = 60  # cached for 45 s: a quarter of a short lifetime is kept as margin
    now = [0.0]
    creds = make(exchange_config(auth), CLIENT, cache=MemoryCache(clock=lambda: now[0]))
    alice = caller(auth, "alice")

    async def main() -> None:
        for moment in (0, 20, 44.9):
            now[0] = moment
            assert (await call(creds, upstream, BEARER, alice)).status_code == 200
        assert auth.exchanges["alice"] == 1
        now[0] = 45.1
        assert (await call(creds, upstream, BEARER, alice)).status_code == 200
        assert auth.exchanges["alice"] == 2

    run(main)
    tokens = [sent_token(r) for r in upstream.received]
    assert tokens[0] == tokens[1] == tokens[2] != tokens[3]


def test_the_cache_never_outlives_the_inbound_token(auth: AuthServer, upstream: Upstream) -> None:
    now = [1_000_000.0]
    cache = MemoryCache(clock=lambda: now[0])
    creds = make(exchange_config(auth), CLIENT, cache=cache, clock=lambda: now[0])
    base = caller(auth, "alice")
    alice = Identity(
        "alice", frozenset(), int(now[0]) + 100, "client-app", auth.issuer, {}, base.token
    )

    async def main() -> None:
        await call(creds, upstream, BEARER, alice)
        now[0] += 99  # the exchanged token lives 300 s, the inbound one 100 s
        await call(creds, upstream, BEARER, alice)
        assert auth.exchanges["alice"] == 1
        now[0] += 2
        await call(creds, upstream, BEARER, alice)
        assert auth.exchanges["alice"] == 2

    run(main)


def test_a_new_inbound_token_is_exchanged_anew_and_no_cache_key_holds_a_token(
    auth: AuthServer, upstream: Upstream
) -> None:
    cache = MemoryCache()
    creds = make(exchange_config(auth), CLIENT, cache=cache)
    first, second = caller(auth, "alice"), caller(auth, "alice")
    assert first.key == second.key and first.token != second.token

    async def main() -> None:
        await call(creds, upstream, BEARER, first)
        await call(creds, upstream, BEARER, second)

    run(main)
    assert auth.exchanges["alice"] == 2 and len(cache) == 2
    for key, (value, _) in cache._data.items():
        for inbound in (first.token or "", second.token or ""):
            assert inbound not in key and inbound not in value
            assert inbound.rsplit(".", 1)[-1] not in key + value
        assert first.key in key


@pytest.mark.parametrize("code", ["access_denied", "invalid_grant"])
def test_a_refused_exchange_is_a_tool_error_and_no_upstream_call(
    auth: AuthServer, upstream: Upstream, code: str
) -> None:
    auth.refuse = code
    creds = make(exchange_config(auth), CLIENT)
    with pytest.raises(ToolFailure, match=f"refused by the authorization server: HTTP 400 .{code}"):
        run(lambda: call(creds, upstream, BEARER, caller(auth, "alice")))
    assert upstream.received == []


def test_a_revoked_caller_is_refused_after_the_upstream_rejects_the_old_token(
    auth: AuthServer, upstream: Upstream
) -> None:
    creds = make(exchange_config(auth), CLIENT)
    alice, bob = caller(auth, "alice"), caller(auth, "bob")

    async def main() -> None:
        assert (await call(creds, upstream, BEARER, alice)).status_code == 200
        assert (await call(creds, upstream, BEARER, bob)).status_code == 200
        auth.revoke("alice")
        assert (await call(creds, upstream, BEARER, alice)).status_code == 401  # voided
        await creds.invalidate_all(BEARER, alice)  # what the upstream caller does on 401
        with pytest.raises(ToolFailure, match="invalid_grant: the subject's grant was revoked"):
            await call(creds, upstream, BEARER, alice)
        assert (await call(creds, upstream, BEARER, bob)).status_code == 200  # unaffected

    run(main)
    assert len(upstream.received) == 4  # the refused call never reached the upstream
    assert dict(auth.exchanges) == {"alice": 1, "bob": 1}


def test_an_unreachable_authorization_server_is_a_tool_error(plain_upstream: Upstream) -> None:
    config = {
        "bearerAuth": {
            "from": "tokenExchange",
            "tokenUrl": f"http://127.0.0.1:{free_port()}/token",
            "audience": "https://api.test",
        }
    }
    creds = make(config, CLIENT)
    alice = Identity("alice", token="some.inbound.token")
    with pytest.raises(ToolFailure, match=r"could not reach the authorization server \(Connect"):
        run(lambda: call(creds, plain_upstream, BEARER, alice))
    assert plain_upstream.received == []


def test_a_slow_or_broken_authorization_server_is_a_tool_error(
    auth: AuthServer, upstream: Upstream
) -> None:
    alice = caller(auth, "alice")
    auth.fail_status = 503
    with pytest.raises(ToolFailure, match="refused by the authorization server: HTTP 503"):
        run(lambda: call(make(exchange_config(auth), CLIENT), upstream, BEARER, alice))
    auth.fail_status, auth.delay = None, 2.0
    creds = make(exchange_config(auth), CLIENT, timeout=0.3)
    with pytest.raises(ToolFailure, match=r"could not reach the authorization server \(Read"):
        run(lambda: call(creds, upstream, BEARER, alice))
    assert upstream.received == []


@pytest.mark.parametrize(
    "who", [LOCAL, Identity("someone", frozenset())], ids=["local", "no-token"]
)
def test_a_caller_without_a_token_cannot_be_exchanged(
    auth: AuthServer, upstream: Upstream, who: Identity
) -> None:
    creds = make(exchange_config(auth), CLIENT)
    with pytest.raises(ToolFailure, match="not authenticated, or is local"):
        run(lambda: call(creds, upstream, BEARER, who))
    with pytest.raises(ToolFailure, match="not authenticated, or is local"):
        run(lambda: creds.for_scheme("bearerAuth", who))
    assert upstream.received == [] and auth.requests == []


def test_missing_client_secrets_are_named(auth: AuthServer, upstream: Upstream) -> None:
    creds = make(exchange_config(auth), {"SHOP_BEARERAUTH_CLIENT_ID": "mcp-server"})
    with pytest.raises(ToolFailure, match="set SHOP_BEARERAUTH_CLIENT_ID and SHOP_BEARERAUTH_CLI"):
        run(lambda: call(creds, upstream, BEARER, caller(auth, "alice")))
    assert auth.requests == [] and upstream.received == []


def test_concurrent_calls_share_one_failed_exchange(auth: AuthServer, upstream: Upstream) -> None:
    auth.refuse, auth.delay = "access_denied", 0.2
    creds = make(exchange_config(auth), CLIENT)
    alice = caller(auth, "alice")
    failures: list[str] = []

    async def one() -> None:
        try:
            await call(creds, upstream, BEARER, alice)
        except ToolFailure as exc:
            failures.append(str(exc))

    async def main() -> None:
        async with anyio.create_task_group() as group:
            for _ in range(6):
                group.start_soon(one)

    run(main)
    assert len(failures) == 6 and len(set(failures)) == 1 and "access_denied" in failures[0]
    assert len(auth.requests) == 1 and upstream.received == []


def test_a_refused_exchange_never_falls_back_to_the_servers_own_key(
    auth: AuthServer, plain_upstream: Upstream
) -> None:
    auth.refuse = "access_denied"
    creds = make(exchange_config(auth), {**CLIENT, "SHOP_APIKEYAUTH": "server-key"})
    either = [{"bearerAuth": []}, {"apiKeyAuth": []}]
    with pytest.raises(ToolFailure, match="access_denied"):
        run(lambda: call(creds, plain_upstream, either, caller(auth, "alice")))
    assert plain_upstream.received == []
    # a caller with nothing to exchange (stdio, the operator) uses the next alternative
    run(lambda: call(creds, plain_upstream, either, LOCAL))
    assert plain_upstream.received[0].header("x-api-key") == "server-key"


def test_an_authorization_server_echoing_the_inbound_token_is_refused(
    auth: AuthServer, upstream: Upstream
) -> None:
    auth.echo = True
    creds = make(exchange_config(auth), CLIENT)
    with pytest.raises(ToolFailure, match="with the caller's own token"):
        run(lambda: call(creds, upstream, BEARER, caller(auth, "alice")))
    assert upstream.received == []


def test_token_requests_never_follow_a_redirect(auth: AuthServer, plain_upstream: Upstream) -> None:
    auth.redirect_to = plain_upstream.url + "/steal"  # a 307 would resend the subject token
    creds = make(exchange_config(auth), CLIENT)
    with pytest.raises(ToolFailure, match="redirect"):
        run(lambda: creds.for_scheme("bearerAuth", caller(auth, "alice")))
    assert plain_upstream.received == []


def test_a_broken_cache_never_hands_one_callers_token_to_another(
    auth: AuthServer, upstream: Upstream
) -> None:
    class OneSlot:  # a faulty backend: every key reads the last value written
        value: str | None = None

        async def get(self, key: str) -> str | None:
            return self.value

        async def set(self, key: str, value: str, ttl: float) -> None:
            self.value = value

        async def delete(self, key: str) -> None:
            self.value = None

    creds = make(exchange_config(auth), CLIENT, cache=OneSlot())
    alice, bob = caller(auth, "alice"), caller(auth, "bob")

    async def main() -> None:
        assert (await call(creds, upstream, BEARER, alice)).json()["sub"] == "alice"
        assert (await call(creds, upstream, BEARER, bob)).json()["sub"] == "bob"
        assert (await call(creds, upstream, BEARER, alice)).json()["sub"] == "alice"

    run(main)
    assert dict(auth.exchanges) == {"alice": 2, "bob": 1}


def test_a_cache_outage_costs_exchanges_not_calls(auth: AuthServer, upstream: Upstream) -> None:
    class Down:
        async def get(self, key: str) -> str | None:
            raise ConnectionError("redis is down")

        async def set(self, key: str, value: str, ttl: float) -> None:
            raise ConnectionError("redis is down")

        async def delete(self, key: str) -> None:
            raise ConnectionError("redis is down")

    creds = make(exchange_config(auth), CLIENT, cache=Down())
    alice = caller(auth, "alice")

    async def main() -> None:
        for _ in range(2):
            assert (await call(creds, upstream, BEARER, alice)).status_code == 200

    run(main)
    assert auth.exchanges["alice"] == 2


def test_no_token_or_secret_appears_in_the_logs(
    auth: AuthServer, upstream: Upstream, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    creds = make(exchange_config(auth), CLIENT)
    alice = caller(auth, "alice")
    inbound = {"X-Partner-Key": "pk-alice-secret"}

    async def main() -> None:
        await call(creds, upstream, BEARER, alice)
        await call(creds, upstream, [{"partnerKey": []}], alice, inbound)
        auth.refuse = "access_denied"
        await creds.invalidate("bearerAuth", alice)
        with pytest.raises(ToolFailure):
            await call(creds, upstream, BEARER, alice)

    run(main)
    issued = sent_token(upstream.received[0])
    text = caplog.text + "".join(repr(r.args) for r in caplog.records)
    assert "token exchange for bearerAuth" in text and "failed" in text  # it does log
    for secret in (alice.token or "", issued, "server-secret", "pk-alice-secret"):
        assert secret not in text
        assert secret.rsplit(".", 1)[-1] not in text
    assert "alice" not in text  # not even the subject: callers appear as identity.key


# -- header -------------------------------------------------------------------------


def test_the_header_source_passes_only_the_allow_listed_header(
    auth: AuthServer, plain_upstream: Upstream
) -> None:
    creds = make(exchange_config(auth), CLIENT)
    alice = caller(auth, "alice")
    inbound = {
        "Authorization": f"Bearer {alice.token}",
        "x-partner-key": "  pk-alice  ",  # any case; surrounding spaces dropped
        "X-Other-Key": "other-secret",
        "Cookie": "sid=cookie-secret",
        "X-MCP-Key": "mcp-static-secret",
        "Mcp-Session-Id": "session-secret",
    }
    run(lambda: call(creds, plain_upstream, [{"partnerKey": []}], alice, inbound))
    (request,) = plain_upstream.received
    assert request.header("x-upstream-key") == "pk-alice"
    assert request.header("x-partner-key") is None and request.header("cookie") is None
    assert request.header("authorization") is None
    for value in everything_sent(plain_upstream):
        for secret in ("other-secret", "cookie-secret", "mcp-static-secret", "session-secret"):
            assert secret not in value
    assert_never_sent(plain_upstream, alice.token or "")
    assert auth.requests == []


def test_a_header_credential_for_a_bearer_scheme_becomes_its_authorization(
    plain_upstream: Upstream,
) -> None:
    creds = make({"bearerAuth": {"from": "header", "header": "X-Upstream-Token"}})
    for given in ("tok-123", "Bearer tok-123", "bearer tok-123"):
        run(lambda g=given: call(creds, plain_upstream, BEARER, None, {"X-Upstream-Token": g}))
    assert [r.header("authorization") for r in plain_upstream.received] == ["Bearer tok-123"] * 3


def test_a_header_carrying_the_mcp_token_is_refused(
    auth: AuthServer, plain_upstream: Upstream
) -> None:
    creds = make(exchange_config(auth), CLIENT)
    alice = caller(auth, "alice")
    with pytest.raises(ToolFailure, match="carries the MCP access token"):
        run(
            lambda: call(
                creds,
                plain_upstream,
                [{"partnerKey": []}],
                alice,
                {"X-Partner-Key": alice.token or ""},
            )
        )
    assert plain_upstream.received == []


def test_a_missing_or_doubled_header_is_refused(plain_upstream: Upstream) -> None:
    from starlette.datastructures import Headers

    creds = make({"partnerKey": {"from": "header", "header": "X-Partner-Key"}})
    with pytest.raises(ToolFailure, match="send the X-Partner-Key header"):
        run(lambda: call(creds, plain_upstream, [{"partnerKey": []}], None, {}))
    doubled = Headers(raw=[(b"x-partner-key", b"one"), (b"x-partner-key", b"two")])
    with pytest.raises(ToolFailure, match="exactly once"):
        run(lambda: call(creds, plain_upstream, [{"partnerKey": []}], None, doubled))
    with pytest.raises(ToolFailure, match="not a usable credential"):
        run(
            lambda: call(
                creds, plain_upstream, [{"partnerKey": []}], None, {"X-Partner-Key": "a\x01b"}
            )
        )
    assert plain_upstream.received == []


@pytest.mark.parametrize(
    "header",
    [
        "Authorization",
        "authorization",
        "Proxy-Authorization",
        "Cookie",
        "X-MCP-Key",
        "x-mcp-key",
        "Mcp-Session-Id",
        "MCP-Protocol-Version",
        "Host",
        "X-Forwarded-For",
        "Bad Header",
        "",
    ],
)
def test_configuration_refuses_headers_that_are_not_upstream_credentials(header: str) -> None:
    with pytest.raises(CredentialConfigError, match="partnerKey"):
        make({"partnerKey": {"from": "header", "header": header}})


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"nope": {"from": "env"}}, "no security scheme of that name"),
        ({"bearerAuth": {"from": "vault"}}, "'from' must be one of"),
        ({"bearerAuth": {"from": "env", "header": "X-A"}}, "unknown option"),
        ({"bearerAuth": {"from": "tokenExchange", "tokenUrl": "https://as/t"}}, "audience"),
        (
            {
                "bearerAuth": {
                    "from": "tokenExchange",
                    "tokenUrl": "http://as.example/t",
                    "audience": "a",
                }
            },
            "https",
        ),
        ({"bearerAuth": {"from": "tokenExchange", "tokenUrl": "/token", "audience": "a"}}, "https"),
        (
            {"basicAuth": {"from": "tokenExchange", "tokenUrl": "https://as/t", "audience": "a"}},
            "HTTP basic",
        ),
        (
            {
                "bearerAuth": {
                    "from": "tokenExchange",
                    "tokenUrl": "https://as/t",
                    "audience": "a",
                    "clientAuth": "jwt",
                }
            },
            "clientAuth",
        ),
        (
            {
                "bearerAuth": {
                    "from": "tokenExchange",
                    "tokenUrl": "https://as/t",
                    "audience": "a",
                    "tokenURL": "x",
                }
            },
            "unknown option",
        ),
    ],
)
def test_configuration_refuses_unsafe_or_unclear_settings(
    config: dict[str, Any], message: str
) -> None:
    with pytest.raises(CredentialConfigError, match=message):
        make(config)


# -- env (today's behaviour) ----------------------------------------------------------


ENV = {
    "SHOP_APIKEYAUTH": "header-key",
    "SHOP_QUERYKEY": "query-key",
    "SHOP_COOKIEKEY": "cookie-key",
    "SHOP_BASICAUTH_USERNAME": "ann",
    "SHOP_BASICAUTH_PASSWORD": "pa:ss",
    "SHOP_BEARERAUTH": "static-bearer",
}


def test_env_api_keys_go_where_the_scheme_says(plain_upstream: Upstream) -> None:
    creds = make(None, ENV)

    async def main() -> None:
        for scheme in ("apiKeyAuth", "queryKey", "cookieKey"):
            await call(creds, plain_upstream, [{scheme: []}])

    run(main)
    header, query, cookie = plain_upstream.received
    assert header.header("x-api-key") == "header-key" and header.query == ""
    assert query.query == "api_key=query-key" and query.header("x-api-key") is None
    assert cookie.header("cookie") == "session=cookie-key"


def test_env_basic_and_bearer(plain_upstream: Upstream) -> None:
    creds = make(None, ENV)

    async def main() -> None:
        await call(creds, plain_upstream, [{"basicAuth": []}])
        await call(creds, plain_upstream, BEARER)

    run(main)
    basic, bearer = (r.header("authorization") or "" for r in plain_upstream.received)
    assert base64.b64decode(basic.removeprefix("Basic ")).decode() == "ann:pa:ss"
    assert bearer == "Bearer static-bearer"


def test_env_client_credentials_are_cached(auth: AuthServer, upstream: Upstream) -> None:
    environ = {
        "SHOP_OAUTHAPP_CLIENT_ID": "mcp-server",
        "SHOP_OAUTHAPP_CLIENT_SECRET": "server-secret",
    }
    creds = make(None, environ, base_url=lambda: auth.url + "/api/v1")  # relative tokenUrl

    async def main() -> None:
        for _ in range(3):
            response = await call(creds, upstream, [{"oauthApp": []}])
            assert response.json()["sub"] == "mcp-server"
        await creds.invalidate("oauthApp")
        await call(creds, upstream, [{"oauthApp": []}])

    run(main)
    assert auth.grants["client_credentials"] == 2
    first = auth.requests[0]
    assert first["client_id"] == "mcp-server" and first["scope"] == "a b"


def test_env_picks_the_first_alternative_it_holds_secrets_for(plain_upstream: Upstream) -> None:
    creds = make(None, {"SHOP_APIKEYAUTH": "k1", "SHOP_QUERYKEY": "k2"})
    security = [{"bearerAuth": []}, {"apiKeyAuth": [], "queryKey": []}, {"cookieKey": []}]
    run(lambda: call(creds, plain_upstream, security))
    (request,) = plain_upstream.received
    assert request.header("x-api-key") == "k1" and request.query == "api_key=k2"
    assert run(lambda: creds.apply([])) == ({}, {}, {})
    assert run(lambda: creds.apply([{}])) == ({}, {}, {})  # anonymous access allowed


def test_env_says_what_is_missing(plain_upstream: Upstream) -> None:
    creds = make(None, {})
    security = [{"apiKeyAuth": []}, {"basicAuth": []}, {"oauthApp": []}]
    with pytest.raises(ToolFailure) as caught:
        run(lambda: call(creds, plain_upstream, security))
    assert str(caught.value) == (
        "missing credentials for the upstream API: set SHOP_APIKEYAUTH or set "
        "SHOP_BASICAUTH_USERNAME and SHOP_BASICAUTH_PASSWORD or set SHOP_OAUTHAPP_CLIENT_ID "
        "and SHOP_OAUTHAPP_CLIENT_SECRET"
    )
    assert plain_upstream.received == []


def test_env_names_from_the_spec_win() -> None:
    creds = make(None, {"LEGACY_KEY": "v"}, env_names={"apiKeyAuth": "LEGACY_KEY"})
    assert run(lambda: creds.apply([{"apiKeyAuth": []}]))[0] == {"X-API-Key": "v"}


def test_for_scheme_gives_handlers_the_callers_credential(
    auth: AuthServer, upstream: Upstream
) -> None:
    creds = make(exchange_config(auth), {**CLIENT, **ENV})
    alice = caller(auth, "alice")
    exchanged = run(lambda: creds.for_scheme("bearerAuth", alice))
    assert exchanged.source == "tokenExchange"
    assert claims_of(exchanged.value)["sub"] == "alice"
    assert dict(exchanged.headers) == {"Authorization": f"Bearer {exchanged.value}"}
    assert exchanged.value not in repr(exchanged)
    key = run(lambda: creds.for_scheme("queryKey"))
    assert (key.source, dict(key.query), dict(key.headers)) == ("env", {"api_key": "query-key"}, {})
    with pytest.raises(ToolFailure, match="no security scheme named"):
        run(lambda: creds.for_scheme("unknown"))


def test_environment_lists_every_variable_read(auth: AuthServer) -> None:
    creds = make(exchange_config(auth))
    names = {entry["name"]: entry for entry in creds.environment()}
    assert set(names) == {
        "SHOP_APIKEYAUTH",
        "SHOP_QUERYKEY",
        "SHOP_COOKIEKEY",
        "SHOP_BASICAUTH_USERNAME",
        "SHOP_BASICAUTH_PASSWORD",
        "SHOP_OAUTHAPP_CLIENT_ID",
        "SHOP_OAUTHAPP_CLIENT_SECRET",
        "SHOP_BEARERAUTH_CLIENT_ID",
        "SHOP_BEARERAUTH_CLIENT_SECRET",
    }  # partnerKey comes from a header, bearerAuth's own variable is not read
    assert all(entry["secret"] and entry["default"] is None for entry in names.values())
    json.dumps(creds.environment())


def test_memory_cache_expires_and_stays_bounded() -> None:
    now = [0.0]
    cache = MemoryCache(max_entries=3, clock=lambda: now[0])

    async def main() -> None:
        await cache.set("a", "1", 10)
        await cache.set("b", "2", 1)
        await cache.set("c", "3", 10)
        assert await cache.get("a") == "1"  # a is now the most recent
        await cache.set("d", "4", 10)  # evicts b, the oldest
        assert [await cache.get(k) for k in "abcd"] == ["1", None, "3", "4"]
        now[0] = 11
        assert await cache.get("a") is None
        await cache.set("e", "5", 0)
        assert await cache.get("e") is None

    run(main)


# -- the documentation's schema and the fixture's JWKS ---------------------------------


def doc_schema() -> dict[str, Any]:
    text = (Path(__file__).parents[2] / "docs" / "credentials.md").read_text()
    block = text.split("<!-- schema: openapi.credentials -->", 1)[1]
    fragment = json.loads(block.split("```json", 1)[1].split("```", 1)[0])
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": fragment["$defs"],
        **fragment["properties"]["credentials"],
    }


SCHEMA_CASES: list[tuple[dict[str, Any], bool]] = [
    ({}, True),
    ({"apiKeyAuth": {"from": "env"}}, True),
    ({"partnerKey": {"from": "header", "header": "X-Partner-Key"}}, True),
    (
        {
            "bearerAuth": {
                "from": "tokenExchange",
                "tokenUrl": "https://as.example/token",
                "audience": "https://api.example",
                "scope": "a b",
                "clientAuth": "post",
            }
        },
        True,
    ),
    (
        {
            "bearerAuth": {
                "from": "tokenExchange",
                "tokenUrl": "http://127.0.0.1:8080/token",
                "resource": "https://api.example/",
            }
        },
        True,
    ),
    ({"apiKeyAuth": {}}, False),
    ({"apiKeyAuth": {"from": "vault"}}, False),
    ({"apiKeyAuth": {"from": "env", "header": "X-A"}}, False),
    ({"partnerKey": {"from": "header"}}, False),
    ({"partnerKey": {"from": "header", "header": "Bad Header"}}, False),
    ({"bearerAuth": {"from": "tokenExchange", "tokenUrl": "https://as.example/t"}}, False),
    (
        {
            "bearerAuth": {
                "from": "tokenExchange",
                "tokenUrl": "http://as.example/t",
                "audience": "a",
            }
        },
        False,
    ),
    (
        {
            "bearerAuth": {
                "from": "tokenExchange",
                "tokenUrl": "https://as.example/t",
                "audience": "a",
                "clientAuth": "jwt",
            }
        },
        False,
    ),
]


@pytest.mark.parametrize(("config", "valid"), SCHEMA_CASES)
def test_the_documented_schema_agrees_with_the_runtime(config: dict[str, Any], valid: bool) -> None:
    import jsonschema

    schema = doc_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert jsonschema.Draft202012Validator(schema).is_valid(config) is valid
    if valid:
        check_config(SCHEMES, config)
    else:
        with pytest.raises(CredentialConfigError):
            check_config(SCHEMES, config)


def test_the_documented_yaml_examples_are_valid() -> None:
    import jsonschema
    import yaml

    text = (Path(__file__).parents[2] / "docs" / "credentials.md").read_text()
    examples = [part.split("```", 1)[0] for part in text.split("```yaml")[1:]]
    assert len(examples) == 2
    for example in examples:
        credentials = yaml.safe_load(example)["openapi"]["credentials"]
        jsonschema.validate(credentials, doc_schema())
        check_config(SCHEMES, credentials)


def test_the_fixture_publishes_the_keys_its_tokens_verify_with(auth: AuthServer) -> None:
    keys = httpx2.get(auth.jwks_url).json()["keys"]
    token = auth.issue("alice")
    (key,) = [k for k in keys if k["kid"] == jwt.get_unverified_header(token)["kid"]]
    claims = jwt.decode(token, jwt.PyJWK(key).key, algorithms=["RS256"], audience=auth.mcp_audience)
    assert claims["sub"] == "alice" and claims["iss"] == auth.issuer
    other = AuthServer()  # another server's keys do not verify it
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(
            other.issue("alice"),
            jwt.PyJWK(key).key,
            algorithms=["RS256"],
            audience=auth.mcp_audience,
        )
