"""The credential layer for wrapped APIs: the ``header`` and ``env`` sources, the
configuration rules, ``Context.credential`` for handlers, and the documented schema.

Every test runs a local upstream (and, where tokens are issued, a local authorization
server: tests/runtime/authserver.py) on 127.0.0.1 and asserts on what it received.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx2
import jwt
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from authserver import AuthServer, Upstream
from credkit import (
    BEARER,
    CLIENT,
    SCHEMES,
    ToolFailure,
    assert_never_sent,
    auth,
    call,
    caller,
    claims_of,
    everything_sent,
    exchange_config,
    make,
    plain_upstream,
    run,
    upstream,
)

from mcpgen.runtime.context import Context
from mcpgen.runtime.credentials import (
    CredentialConfigError,
    Credentials,
    MemoryCache,
    check_config,
)
from mcpgen.runtime.errors import ToolError
from mcpgen.runtime.identity import LOCAL, Identity

pytestmark = pytest.mark.timeout(60)
FIXTURES = (auth, upstream, plain_upstream)

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


def test_a_server_key_in_any_spelling_is_refused_as_an_upstream_credential(
    plain_upstream: Upstream,
) -> None:
    """A static-key server (``auth: bearer``): its own key, passed back in the header a
    ``header`` source reads, never goes upstream (issue 30 item 10)."""
    from mcpgen.runtime.auth import StaticKeys

    keys = StaticKeys({"type": "bearer", "env": "KEYS"}, {"KEYS": "server-key-1234"})
    who = run(lambda: keys.verify("server-key-1234"))
    creds = make({"partnerKey": {"from": "header", "header": "X-Partner-Key"}})
    for given in ("server-key-1234", "Bearer server-key-1234", "server-key-1234,"):
        with pytest.raises(ToolFailure, match="carries the MCP access token"):
            run(
                lambda g=given: call(
                    creds, plain_upstream, [{"partnerKey": []}], who, {"X-Partner-Key": g}
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


def handler_context(creds: Credentials | None, identity: Identity, **headers: str) -> Context:
    """The ``ctx`` a handler gets, as the tables build it (the request is a stand-in)."""
    request: Any = SimpleNamespace(request=SimpleNamespace(headers=headers))
    registry = {} if creds is None else {"credentials": creds}
    return Context(request, registry=registry, identity=identity)


def test_a_handlers_context_gets_the_callers_credential(
    auth: AuthServer, upstream: Upstream
) -> None:
    creds = make(exchange_config(auth), CLIENT)
    alice, bob = caller(auth, "alice"), caller(auth, "bob")

    async def main() -> None:
        mine = await handler_context(creds, alice).credential("bearerAuth")
        again = await handler_context(creds, alice).credential("bearerAuth")
        theirs = await handler_context(creds, bob).credential("bearerAuth")
        assert mine.value == again.value != theirs.value
        assert claims_of(mine.value)["sub"] == "alice" and claims_of(theirs.value)["sub"] == "bob"
        assert auth.exchanges == {"alice": 1, "bob": 1}
        await handler_context(creds, alice).forget_credential("bearerAuth")
        renewed = await handler_context(creds, alice).credential("bearerAuth")
        assert renewed.value != mine.value and auth.exchanges["alice"] == 2
        partner = await handler_context(creds, alice, **{"X-Partner-Key": "pk-1"}).credential(
            "partnerKey"
        )
        assert dict(partner.headers) == {"X-Upstream-Key": "pk-1"}
        with pytest.raises(ToolFailure, match="caller's own access token"):
            await handler_context(creds, LOCAL).credential("bearerAuth")
        with pytest.raises(ToolError, match="wraps no API"):
            await handler_context(None, alice).credential("bearerAuth")
        await handler_context(None, alice).forget_credential("bearerAuth")  # nothing to do

    run(main)


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
    assert all(entry["default"] is None for entry in names.values())
    public = {name for name, entry in names.items() if not entry["secret"]}
    assert public == {n for n in names if n.endswith(("_USERNAME", "_CLIENT_ID"))}
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


ROOT = Path(__file__).parents[2]


def manifest_schema() -> dict[str, Any]:
    """``openapi.credentials`` as the manifest schema says it (what the build checks first)."""
    full = json.loads((ROOT / "mcpgen" / "schema" / "manifest.schema.json").read_text())
    section = full["$defs"]["openapi"]["properties"]["credentials"]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {"openapiCredential": full["$defs"]["openapiCredential"]},
        **section,
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
def test_the_manifest_schema_agrees_with_the_runtime(config: dict[str, Any], valid: bool) -> None:
    import jsonschema

    schema = manifest_schema()
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

    text = (ROOT / "docs" / "security.md").read_text()
    examples = [part.split("```", 1)[0] for part in text.split("```yaml")[1:]]
    examples = [e for e in examples if "credentials:" in e]
    assert examples
    for example in examples:
        credentials = yaml.safe_load(example)["openapi"]["credentials"]
        jsonschema.validate(credentials, manifest_schema())
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
