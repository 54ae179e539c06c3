"""OAuth against a real authorization server's endpoints: signing keys from a JWKS URL
(cached, fetched again for a new key id, at most every 30 s) and opaque tokens checked by
token introspection (RFC 7662: client credentials, a cache for active answers, 503 when the
endpoint fails). The endpoints run under uvicorn in a thread; the MCP app in this process."""

from __future__ import annotations

import base64
import json
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
import rtkit
from authserver import serve
from rtbridge import http_client, running
from rtconnect import client_over
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from mcpgen.runtime.errors import ConfigError
from mcpgen.runtime.testing_oauth import TokenIssuer

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
POST = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
CLIENT_ID, CLIENT_SECRET = "rs", "s3cret"


class Endpoints:
    """A JWKS document and an introspection endpoint, counting what they are asked."""

    def __init__(self) -> None:
        self.keys: list[dict[str, Any]] = []
        self.tokens: dict[str, dict[str, Any]] = {}
        self.jwks_fetches = 0
        self.asked: Counter[str] = Counter()
        self.padding = 0  # bytes of padding in every answer (a hostile server)
        self.status = 200  # of the JWKS answer (500: a broken server)
        self.basic = "Basic " + base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()

    async def jwks(self, request: Request) -> Response:
        self.jwks_fetches += 1
        document = {"keys": self.keys, "pad": "x" * self.padding}
        return JSONResponse(document, status_code=self.status)

    async def introspect(self, request: Request) -> Response:
        form = await request.form()
        token = str(form.get("token", ""))
        self.asked[token] += 1
        if request.headers.get("authorization") != self.basic:
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        if token == "broken":
            return JSONResponse({"error": "server_error"}, status_code=500)
        answer = self.tokens.get(token, {"active": False})
        return JSONResponse({**answer, "pad": "x" * self.padding} if self.padding else answer)

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/jwks.json", self.jwks),
                Route("/introspect", self.introspect, methods=["POST"]),
                Route("/moved", lambda _: RedirectResponse("/jwks.json", status_code=302)),
            ]
        )


@pytest.fixture(scope="module")
def remote() -> Iterator[tuple[Endpoints, str]]:
    endpoints = Endpoints()
    with serve(endpoints.app()) as url:
        yield endpoints, url


@pytest.fixture
def endpoints(remote: tuple[Endpoints, str]) -> Endpoints:
    endpoints = remote[0]
    endpoints.keys, endpoints.tokens = [], {}
    endpoints.jwks_fetches = endpoints.padding = 0
    endpoints.status = 200
    endpoints.asked.clear()
    return endpoints


@pytest.fixture
def url(remote: tuple[Endpoints, str]) -> str:
    return remote[1]


async def statuses(app: Any, tokens: list[str]) -> list[tuple[int, str]]:
    """(status, error description) of an initialize POST with each token."""
    found = []
    async with http_client(app) as http:
        for token in tokens:
            response = await http.post(
                "/mcp", json=INITIALIZE, headers={**POST, **rtkit.bearer(token)}
            )
            description = (
                "" if response.status_code == 200 else response.json()["error_description"]
            )
            found.append((response.status_code, description))
    return found


def issuer(kid: str) -> TokenIssuer:
    return TokenIssuer(rtkit.ISSUER, rtkit.AUDIENCE, kid=kid)


async def test_keys_from_a_jwks_url_are_cached_and_rotate(endpoints: Endpoints, url: str) -> None:
    first, second, third = issuer("k1"), issuer("k2"), issuer("k3")
    endpoints.keys = first.jwks()["keys"]
    app = rtkit.app(transport="http-json", jwks_file=None, jwks_url=url + "/jwks.json")
    async with running(app):
        before = await statuses(app, [first.token(rtkit.SCOPES), first.token([rtkit.READ])])
        assert before == [(200, ""), (200, "")]
        assert endpoints.jwks_fetches == 1  # cached
        endpoints.keys = first.jwks()["keys"] + second.jwks()["keys"]  # the server rotates
        after = await statuses(app, [second.token(rtkit.SCOPES), first.token(rtkit.SCOPES)])
        assert after == [(200, ""), (200, "")]
        assert endpoints.jwks_fetches == 2  # a new key id fetched the keys again
        unknown = await statuses(app, [third.token(rtkit.SCOPES)])
        assert unknown == [(401, "token signed with an unknown key")]
        assert endpoints.jwks_fetches == 2  # not again within 30 s: bad tokens cannot flood it
        async with client_over(
            app, "http-json", "legacy", rtkit.bearer(second.token([rtkit.READ]))
        ) as client:
            notes = await client.call_tool("read_notes", {})
    assert notes.structured_content == {"notes": ["first", "second"]}


async def test_an_unreachable_jwks_url_answers_503(url: str) -> None:
    app = rtkit.app(transport="http-json", jwks_file=None, jwks_url="http://127.0.0.1:9/jwks.json")
    async with running(app):
        found = await statuses(app, [issuer("k1").token(rtkit.SCOPES)])
    assert found == [(503, "signing keys unavailable")]


async def test_a_huge_jwks_document_is_refused(
    endpoints: Endpoints, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("mcpgen.runtime.auth_keys.JWKS_RETRY_SECONDS", 0)  # asked at once again
    keys = issuer("k1")
    endpoints.keys, endpoints.padding = keys.jwks()["keys"], 5_000_000
    app = rtkit.app(transport="http-json", jwks_file=None, jwks_url=url + "/jwks.json")
    async with running(app):
        assert await statuses(app, [keys.token(rtkit.SCOPES)]) == [
            (503, "signing keys unavailable")
        ]
        endpoints.padding = 500_000  # under the cap: the keys are read
        assert await statuses(app, [keys.token(rtkit.SCOPES)]) == [(200, "")]


async def test_a_redirecting_jwks_url_is_not_followed(endpoints: Endpoints, url: str) -> None:
    """A redirect could lead anywhere (cloud metadata at 169.254.169.254): as token requests
    and introspection, the JWKS fetch never follows one."""
    keys = issuer("k1")
    endpoints.keys = keys.jwks()["keys"]
    app = rtkit.app(transport="http-json", jwks_file=None, jwks_url=url + "/moved")
    async with running(app):
        found = await statuses(app, [keys.token(rtkit.SCOPES)])
    assert found == [(503, "signing keys unavailable")]
    assert endpoints.jwks_fetches == 0


async def test_a_failing_jwks_url_is_not_asked_on_every_request(
    endpoints: Endpoints, url: str
) -> None:
    """While the JWKS URL fails, tokens (any caller can make one that names a key) do not
    each fetch it again: a flood of them would be one on the issuer, and each waits its turn
    behind the fetch before it (up to 10 s apiece with a slow issuer)."""
    keys = issuer("k1")
    endpoints.keys, endpoints.status = keys.jwks()["keys"], 500
    app = rtkit.app(transport="http-json", jwks_file=None, jwks_url=url + "/jwks.json")
    async with running(app):
        found = await statuses(app, [keys.token(rtkit.SCOPES)] * 5)
    assert found == [(503, "signing keys unavailable")] * 5
    assert endpoints.jwks_fetches == 1


async def test_expired_keys_stay_in_use_while_the_jwks_url_fails(
    endpoints: Endpoints, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cached keys expire while the issuer is away: its tokens are still verified with
    the keys it served last (every caller was refused 503 until it came back)."""
    keys = issuer("k1")
    endpoints.keys = keys.jwks()["keys"]
    app = rtkit.app(transport="http-json", jwks_file=None, jwks_url=url + "/jwks.json")
    async with running(app):
        assert (await statuses(app, [keys.token(rtkit.SCOPES)]))[0][0] == 200
        monkeypatch.setattr("mcpgen.runtime.auth_keys.JWKS_CACHE_SECONDS", 0)
        endpoints.status = 500
        found = await statuses(app, [keys.token(rtkit.SCOPES)] * 2)
    assert [status for status, _ in found] == [200, 200]
    assert endpoints.jwks_fetches == 2  # the second failure waits out JWKS_RETRY_SECONDS


def introspected(endpoints: Endpoints) -> None:
    now = int(time.time())
    good = {"active": True, "iss": rtkit.ISSUER, "client_id": "app1", "aud": [rtkit.AUDIENCE],
            "exp": now + 600, "sub": "alice"}  # fmt: skip
    endpoints.tokens = {
        "reader": {**good, "scope": rtkit.READ},
        "writer": {**good, "scope": " ".join(rtkit.SCOPES), "sub": "bob"},
        "inactive": {"active": False},
        "no-audience": {k: v for k, v in good.items() if k != "aud"},
        "other-audience": {**good, "aud": "https://other.example/mcp"},
        "other-issuer": {**good, "iss": "https://evil.example"},
        "expired": {**good, "exp": now - 600},
        "exp-a-string": {**good, "exp": str(now + 600)},
        # names nobody (issue 30 item 5: such tokens would all be one caller)
        "nobody": {k: v for k, v in good.items() if k not in ("sub", "client_id")},
    }


def introspecting(url: str, **changes: Any) -> Any:
    environ = {"FIXTURE_INTROSPECTION_CLIENT_ID": CLIENT_ID,
               "FIXTURE_INTROSPECTION_CLIENT_SECRET": CLIENT_SECRET}  # fmt: skip
    changes.setdefault("jwks_file", None)
    return rtkit.app(
        transport="http-json", environ_=environ, introspection_url=url + "/introspect", **changes
    )


async def test_opaque_tokens_are_introspected_and_cached(endpoints: Endpoints, url: str) -> None:
    introspected(endpoints)
    app = introspecting(url)
    async with running(app):
        for _ in range(2):  # the second session's check comes from the cache
            async with client_over(app, "http-json", "legacy", rtkit.bearer("reader")) as client:
                who = await client.call_tool("whoami", {})
                assert who.structured_content == {"subject": "alice", "scopes": [rtkit.READ]}
                notes = await client.call_tool("read_notes", {})
                assert notes.structured_content == {"notes": ["first", "second"]}
        async with client_over(app, "http-json", "legacy", rtkit.bearer("writer")) as client:
            written = await client.call_tool("write_note", {"text": "hello"})
    assert written.structured_content == {"written": 5}
    assert endpoints.asked["reader"] == 1


@pytest.mark.parametrize(
    "token",
    ["inactive", "no-audience", "other-audience", "other-issuer", "expired", "exp-a-string",
     "unknown", "nobody"],
)  # fmt: skip
async def test_introspection_refusals_answer_401(
    endpoints: Endpoints, url: str, token: str
) -> None:
    introspected(endpoints)
    app = introspecting(url)
    async with running(app), http_client(app) as http:
        for _ in range(2):
            response = await http.post(
                "/mcp", json=INITIALIZE, headers={**POST, **rtkit.bearer(token)}
            )
            assert response.status_code == 401, response.text
            assert 'error="invalid_token"' in response.headers["www-authenticate"]
    # an inactive answer is never cached (a revoked token stops at once); an active one
    # is, even when its claims are refused here, and they are checked again on every use
    if token in ("inactive", "unknown", "expired"):
        assert endpoints.asked[token] == 2
    else:
        assert endpoints.asked[token] == 1


async def test_a_limited_address_does_not_make_the_issuer_answer_each_junk_token(
    endpoints: Endpoints, url: str
) -> None:
    """Junk tokens from one address: once it is limited, none is introspected; a valid
    token from the same address, once seen active, is not charged to the address."""
    introspected(endpoints)
    app = introspecting(url, rate_limit=0.01, rate_burst=3)
    async with running(app):
        good = await statuses(app, ["reader"])
        junk = await statuses(app, [f"junk-{n}" for n in range(20)])
        after = await statuses(app, ["reader"] * 2)  # (its own bucket: 3)
    assert [status for status, _ in good + after] == [200] * 3
    assert [status for status, _ in junk] == [401, 401] + [429] * 18
    assert sum(endpoints.asked[f"junk-{n}"] for n in range(20)) == 2
    assert endpoints.asked["reader"] == 1


async def test_a_failing_introspection_endpoint_answers_503(endpoints: Endpoints, url: str) -> None:
    app = introspecting(url)
    async with running(app):
        assert await statuses(app, ["broken"]) == [(503, "token introspection unavailable")]
    down = introspecting("http://127.0.0.1:9")
    async with running(down):
        assert await statuses(down, ["reader"]) == [(503, "token introspection unavailable")]


async def test_a_huge_introspection_answer_is_a_failure(endpoints: Endpoints, url: str) -> None:
    introspected(endpoints)
    endpoints.padding = 5_000_000
    app = introspecting(url)
    async with running(app):
        assert await statuses(app, ["reader"]) == [(503, "token introspection unavailable")]
        endpoints.padding = 500_000  # under the cap: the answer is read
        assert await statuses(app, ["reader"]) == [(200, "")]


async def test_wrong_client_credentials_are_a_failure_not_a_refusal(
    endpoints: Endpoints, url: str
) -> None:
    """The endpoint refusing the resource server itself (401) is its failure: 503."""
    introspected(endpoints)
    environ = {"FIXTURE_INTROSPECTION_CLIENT_ID": CLIENT_ID,
               "FIXTURE_INTROSPECTION_CLIENT_SECRET": "wrong"}  # fmt: skip
    app = rtkit.app(transport="http-json", environ_=environ, jwks_file=None,
                    introspection_url=url + "/introspect")  # fmt: skip
    async with running(app):
        assert await statuses(app, ["reader"]) == [(503, "token introspection unavailable")]


async def test_jwts_are_checked_locally_when_keys_are_set_too(
    endpoints: Endpoints, url: str
) -> None:
    introspected(endpoints)
    app = introspecting(url, jwks_file=rtkit.jwks_file())
    async with running(app):
        found = await statuses(app, [rtkit.token(), "reader"])
    assert found == [(200, ""), (200, "")]
    assert sum(endpoints.asked.values()) == 1  # only the opaque token was asked about


def test_introspection_credentials_come_in_pairs(url: str) -> None:
    environ = {"FIXTURE_INTROSPECTION_CLIENT_ID": CLIENT_ID}
    with pytest.raises(ConfigError, match="INTROSPECTION_CLIENT_SECRET"):
        rtkit.app(transport="http", environ_=environ, jwks_file=None,
                  introspection_url=url + "/introspect")  # fmt: skip


async def test_a_websocket_of_a_revoked_opaque_token_is_closed(
    endpoints: Endpoints, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An introspected token is checked again while its WebSocket is open, as often as HTTP
    would ask (the cache's time, 1 s here): once revoked, the socket is closed (1008), not
    served until the token's ``exp`` (10 minutes; never without one)."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    from mcpgen.runtime import introspection

    monkeypatch.setattr(introspection, "CACHE_SECONDS", 1)
    introspected(endpoints)
    environ = {"FIXTURE_INTROSPECTION_CLIENT_ID": CLIENT_ID,
               "FIXTURE_INTROSPECTION_CLIENT_SECRET": CLIENT_SECRET}  # fmt: skip
    app = rtkit.app(transport="websocket", environ_=environ, jwks_file=None,
                    introspection_url=url + "/introspect")  # fmt: skip
    with serve(app) as base:
        ws_url = "ws" + base.removeprefix("http") + "/ws"
        async with connect(ws_url, additional_headers=rtkit.bearer("reader")) as websocket:
            await anyio.sleep(2.5)  # checked again twice, still active: still open
            await websocket.send(json.dumps(INITIALIZE))
            assert json.loads(await websocket.recv())["id"] == INITIALIZE["id"]
            endpoints.tokens["reader"] = {"active": False}  # revoked
            with pytest.raises(ConnectionClosed) as closed:
                with anyio.fail_after(5):
                    await websocket.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008, closed.value
    assert endpoints.asked["reader"] >= 3


async def test_a_legacy_sse_stream_of_a_revoked_opaque_token_ends(
    endpoints: Endpoints, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a WebSocket (above), a legacy SSE stream of an introspected token ends once the
    token is revoked: its notifications stop with the credential."""
    import httpx2

    from mcpgen.runtime import introspection

    monkeypatch.setattr(introspection, "CACHE_SECONDS", 1)
    introspected(endpoints)
    environ = {"FIXTURE_INTROSPECTION_CLIENT_ID": CLIENT_ID,
               "FIXTURE_INTROSPECTION_CLIENT_SECRET": CLIENT_SECRET}  # fmt: skip
    app = rtkit.app(transport="sse", environ_=environ, jwks_file=None,
                    introspection_url=url + "/introspect")  # fmt: skip
    with serve(app) as base:
        async with (
            httpx2.AsyncClient(base_url=base, timeout=10) as client,
            client.stream("GET", "/sse", headers=rtkit.bearer("reader")) as stream,
        ):
            lines = stream.aiter_lines()
            assert (await anext(lines)).startswith("event: endpoint")
            await anyio.sleep(2.5)  # checked again twice, still active: still open
            endpoints.tokens["reader"] = {"active": False}  # revoked
            with anyio.fail_after(5):
                async for _ in lines:
                    pass  # (pings) until the stream ends
    assert endpoints.asked["reader"] >= 3
