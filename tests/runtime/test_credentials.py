"""The credential layer for wrapped APIs: RFC 8693 token exchange (its cache, single
flight, failures and logs). The env and header sources are in test_credentials_sources.py.

Every test runs a local authorization server and a local upstream (tests/runtime/
authserver.py) on 127.0.0.1 and asserts on what they received.
"""

from __future__ import annotations

import base64
import logging
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from authserver import AuthServer, Upstream
from credkit import (
    BEARER,
    CLIENT,
    ToolFailure,
    assert_never_sent,
    auth,
    call,
    caller,
    claims_of,
    exchange_config,
    make,
    plain_upstream,
    run,
    sent_token,
    upstream,
)

from mcpgen.runtime.credentials import MemoryCache
from mcpgen.runtime.identity import LOCAL, Identity
from mcpgen.runtime.testing import free_port
from mcpgen.runtime.token_endpoint import (
    ACCESS_TOKEN_TYPE,
    DEFAULT_LIFETIME,
    MAX_LIFETIME,
    TOKEN_EXCHANGE_GRANT,
    token_request,
)

pytestmark = pytest.mark.timeout(60)
FIXTURES = (auth, upstream, plain_upstream)

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


@pytest.mark.parametrize("chunked", [False, True], ids=["declared", "chunked"])
def test_a_huge_token_answer_is_refused_unread(
    auth: AuthServer, upstream: Upstream, chunked: bool
) -> None:
    """A hostile AS answering 5 MB: refused at the cap, the rest never read or kept."""
    auth.oversize, auth.chunked = 5_000_000, chunked
    creds = make(exchange_config(auth), CLIENT)
    alice = caller(auth, "alice")
    with pytest.raises(ToolFailure, match="answer is larger than 1048576 bytes") as refused:
        run(lambda: call(creds, upstream, BEARER, alice))
    assert alice.token and alice.token not in str(refused.value)
    assert "server-secret" not in str(refused.value) and upstream.received == []
    auth.oversize = 500_000  # under the cap: a long answer is still a token
    assert run(lambda: call(creds, upstream, BEARER, alice)).json()["sub"] == "alice"


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


@pytest.mark.parametrize(
    ("expires_in", "lifetime"),
    [
        ("3600", 3600.0),
        ("1e300", MAX_LIFETIME),  # absurdly long: believed for 24 h at most
        ("1" + "0" * 400, MAX_LIFETIME),  # an int too large for a float
        ("1e400", DEFAULT_LIFETIME),  # JSON reads it as infinity
        ("-1e400", DEFAULT_LIFETIME),
        ("NaN", DEFAULT_LIFETIME),
        ("-5", DEFAULT_LIFETIME),
        ('"3600"', DEFAULT_LIFETIME),
        ("true", DEFAULT_LIFETIME),
    ],
)
def test_an_absurd_expires_in_is_capped_or_ignored(expires_in: str, lifetime: float) -> None:
    body = '{"access_token": "tok", "token_type": "Bearer", "expires_in": ' + expires_in + "}"
    answer = httpx2.MockTransport(lambda _: httpx2.Response(200, content=body.encode()))

    async def main() -> tuple[str, float]:
        async with httpx2.AsyncClient(transport=answer) as client:
            form = {"grant_type": "client_credentials"}
            return await token_request(
                client,
                "oauth",
                "https://as.test/token",
                form,
                "id",
                "secret",
                "post",
                what="token",
                timeout=5,
            )

    assert run(main) == ("tok", lifetime)
