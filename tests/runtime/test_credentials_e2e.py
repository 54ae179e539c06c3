"""Per-caller upstream credentials, end to end, with a real generated server.

A local authorization server (tests/runtime/authserver.py: JWKS, and a token endpoint with
the RFC 8693 token-exchange grant, counting exchanges per subject) issues the callers' MCP
tokens; a local upstream logs every header it receives and checks the bearer tokens it is
sent against the same authorization server (audience ``https://api.test``). The server is
built with ``python -m mcpgen build`` and run as ``python -m creds_mcp --transport http``
(or stdio) with ``PYTHONPATH=<out>/src``; the tests speak raw MCP over HTTP to it.

The wrapped API's operations: ``whoami`` (bearerAuth, from tokenExchange), ``either``
(bearerAuth, else apiKeyAuth from the environment) and ``partner_data`` (partnerKey, from
the X-Partner-Key request header); ``whoami_by_hand`` is a hand-written handler that
calls /whoami itself with ``ctx.credential("bearerAuth")``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "security"))
from authserver import AuthServer, Received, Upstream  # noqa: E402
from sec_harness import Built, Mcp, Server, build, refused, tool_text  # noqa: E402

pytestmark = pytest.mark.timeout(300)

API = """
openapi: 3.1.0
info: {title: Creds API, version: 1.0.0}
servers: [{url: "http://127.0.0.1:9"}]
paths:
  /whoami:
    get:
      operationId: whoami
      security: [{bearerAuth: []}]
      responses: {"200": {description: ok, content: {application/json: {schema: {type: object}}}}}
  /either:
    get:
      operationId: either
      security: [{bearerAuth: []}, {apiKeyAuth: []}]
      responses: {"200": {description: ok, content: {application/json: {schema: {type: object}}}}}
  /partner/data:
    get:
      operationId: partnerData
      security: [{partnerKey: []}]
      responses: {"200": {description: ok, content: {application/json: {schema: {type: object}}}}}
components:
  securitySchemes:
    bearerAuth: {type: http, scheme: bearer}
    apiKeyAuth: {type: apiKey, in: header, name: X-API-Key}
    partnerKey: {type: apiKey, in: header, name: X-Upstream-Key}
"""

MANIFEST = """
mcpgen: 1
server: {{name: creds, version: 0.1.0, package: creds_mcp}}
auth:
  type: oauth
  issuer: "https://as.test"
  audience: "https://mcp.test"
  jwksUrl: "{auth}/jwks"
openapi:
  source: api.yaml
  mode: tools
  credentials:
    bearerAuth: {{from: tokenExchange, tokenUrl: "{auth}/token", audience: "https://api.test"}}
    partnerKey: {{from: header, header: X-Partner-Key}}
tools:
  - name: whoami_by_hand
    description: Calls /whoami with the caller's own upstream credential.
    context: true
    input: {{type: object, properties: {{}}}}
"""

HANDLERS = {
    "whoami_by_hand": """
        import os
        from typing import Any

        import httpx2


        async def handle(args: Any, ctx: Any) -> Any:
            credential = await ctx.credential("bearerAuth")
            async with httpx2.AsyncClient() as client:
                url = os.environ["CREDS_API_BASE_URL"] + "/whoami"
                response = await client.get(url, headers=dict(credential.headers))
            return {
                "status": response.status_code,
                "upstream": response.json(),
                "subject": ctx.identity.subject,
                "claim": ctx.identity.claims.get("sub"),
                "source": credential.source,
            }
    """,
}

CLIENT_SECRET = "server-secret"
SERVER_KEY = "server-env-key-0123"
PARTNER_KEY = "pk-partner-4567"


@dataclass
class World:
    auth: AuthServer
    api: Upstream
    built: Built
    server: Server

    def env(self) -> dict[str, str]:
        return server_env(self.api)

    def mcp(self, token: str, **headers: str) -> Mcp:
        return Mcp(self.server.url, {"Authorization": f"Bearer {token}", **headers})

    def call(self, token: str, tool: str, **headers: str) -> Any:
        with self.mcp(token, **headers) as mcp:
            return mcp.call(tool)

    def upstream_since(self, mark: int, path: str | None = None) -> list[Received]:
        return [r for r in self.api.received[mark:] if path is None or r.path == path]


def server_env(api: Upstream) -> dict[str, str]:
    return {
        "CREDS_API_BASE_URL": api.url,
        "CREDS_API_BEARERAUTH_CLIENT_ID": "mcp-server",
        "CREDS_API_BEARERAUTH_CLIENT_SECRET": CLIENT_SECRET,
        "CREDS_API_APIKEYAUTH": SERVER_KEY,
    }


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder = tmp_path_factory.mktemp("creds-e2e")
    authority = AuthServer()
    upstream = Upstream(auth=authority, open_paths=("/either", "/partner"))
    with authority.running() as auth, upstream.running() as api:
        manifest = MANIFEST.format(auth=auth.url)
        built = build(folder, manifest, "creds_mcp", {"api.yaml": API}, HANDLERS)
        server = Server(built, "--log-level", "DEBUG", env=server_env(api))
        try:
            yield World(auth, api, built, server)
        finally:
            server.stop()


def bearer(received: Received) -> str:
    header = received.header("authorization") or ""
    assert header.startswith("Bearer "), received.headers
    return header[7:]


def claims(token: str) -> dict[str, Any]:
    decoded: dict[str, Any] = jwt.decode(token, options={"verify_signature": False})
    return decoded


def structured(response: Any) -> Any:
    assert not refused(response), response
    return json.loads(tool_text(response))


def inbound(world: World, subject: str) -> str:
    return world.auth.issue(subject, lifetime=600)


# -- token exchange ----------------------------------------------------------------------


def test_two_users_at_once_each_reach_the_upstream_as_themselves(world: World) -> None:
    tokens = {user: inbound(world, user) for user in ("alice", "bob")}
    mark = len(world.api.received)
    world.auth.delay = 0.3  # every call of a user overlaps that user's one exchange
    try:
        with ThreadPoolExecutor(8) as pool:
            jobs = [
                (user, pool.submit(world.call, tokens[user], "whoami"))
                for user in 4 * ["alice", "bob"]
            ]
            answers = [(user, job.result()) for user, job in jobs]
    finally:
        world.auth.delay = 0.0
    for user, answer in answers:
        assert structured(answer)["sub"] == user  # the upstream verified the user's token
    seen = world.upstream_since(mark, "/whoami")
    assert len(seen) == 8
    subjects: Counter[str] = Counter()
    for request in seen:
        token = bearer(request)
        assert token not in tokens.values()  # never an inbound token
        given = claims(token)
        assert given["aud"] == "https://api.test" and given["act"] == {"sub": "mcp-server"}
        subjects[given["sub"]] += 1
        for _, value in request.headers:  # nor anywhere else in the request
            assert not any(t in value for t in tokens.values())
    assert subjects == Counter({"alice": 4, "bob": 4})
    assert world.auth.exchanges["alice"] == 1 and world.auth.exchanges["bob"] == 1
    # each exchange presented that user's own inbound token
    sent = {claims(r["subject_token"])["sub"]: r["subject_token"] for r in world.auth.requests}
    assert sent["alice"] == tokens["alice"] and sent["bob"] == tokens["bob"]


def test_one_exchange_per_token_lifetime_then_a_new_one(world: World) -> None:
    token = inbound(world, "carla")
    world.auth.lifetime = 8  # kept for 8 - 2 s (a quarter of a short lifetime goes)
    try:
        mark = len(world.api.received)
        assert structured(world.call(token, "whoami"))["sub"] == "carla"
        exchanged = time.monotonic()  # the exchange happened before this
        for _ in range(2):
            assert structured(world.call(token, "whoami"))["sub"] == "carla"
        assert world.auth.exchanges["carla"] == 1
        time.sleep(max(0.0, 6.2 - (time.monotonic() - exchanged)))
        assert structured(world.call(token, "whoami"))["sub"] == "carla"
        assert world.auth.exchanges["carla"] == 2
    finally:
        world.auth.lifetime = 300
    used = [bearer(r) for r in world.upstream_since(mark, "/whoami")]
    assert len(used) == 4 and used[0] == used[1] == used[2] != used[3]
    assert claims(used[3])["exp"] > claims(used[0])["exp"]


def test_a_token_the_upstream_refuses_is_exchanged_again(world: World) -> None:
    token = inbound(world, "dan")
    assert structured(world.call(token, "whoami"))["sub"] == "dan"
    mark = len(world.api.received)
    first = bearer(world.api.received[-1])
    world.auth.revoked_tokens.add(claims(first)["jti"])  # the upstream now answers 401
    answer = world.call(token, "whoami")
    assert refused(answer) and "HTTP 401" in tool_text(answer)
    assert structured(world.call(token, "whoami"))["sub"] == "dan"
    assert world.auth.exchanges["dan"] == 2
    used = [bearer(r) for r in world.upstream_since(mark, "/whoami")]
    assert used[0] == first and used[1] != first


def test_a_refused_exchange_is_a_tool_error_and_no_upstream_request(world: World) -> None:
    token = inbound(world, "erin")
    world.auth.revoke("erin")
    mark = len(world.api.received)
    for tool in ("whoami", "either"):  # either: no fallback to the server's own API key
        answer = world.call(token, tool)
        text = tool_text(answer)
        assert refused(answer)
        assert "token exchange for bearerAuth was refused by the authorization server" in text
        assert "invalid_grant" in text and token not in text
    world.auth.refuse = "access_denied"
    try:
        answer = world.call(inbound(world, "fay"), "whoami")
    finally:
        world.auth.refuse = None
    assert refused(answer) and "access_denied" in tool_text(answer)
    assert world.upstream_since(mark) == []


def test_a_grant_revoked_after_use_is_refused_at_the_next_exchange(world: World) -> None:
    token = inbound(world, "gus")
    assert structured(world.call(token, "whoami"))["sub"] == "gus"
    world.auth.revoke("gus")  # refuses new exchanges and voids the issued token
    mark = len(world.api.received)
    answer = world.call(token, "whoami")  # the cached token: the upstream refuses it
    assert refused(answer) and "HTTP 401" in tool_text(answer)
    assert len(world.upstream_since(mark)) == 1
    answer = world.call(token, "whoami")  # exchanged again: refused, nothing sent
    assert refused(answer) and "invalid_grant" in tool_text(answer)
    assert len(world.upstream_since(mark)) == 1


def test_a_handler_gets_the_callers_credential_like_an_operation(world: World) -> None:
    token = inbound(world, "hal")
    mark = len(world.api.received)
    assert structured(world.call(token, "whoami"))["sub"] == "hal"
    mine = structured(world.call(token, "whoami_by_hand"))
    assert mine == {
        "status": 200,
        "upstream": {"ok": True, "sub": "hal", "path": "/whoami"},
        "subject": "hal",
        "claim": "hal",
        "source": "tokenExchange",
    }
    operation, handler = (bearer(r) for r in world.upstream_since(mark, "/whoami"))
    assert operation == handler and world.auth.exchanges["hal"] == 1  # one cache for both
    other = structured(world.call(inbound(world, "ivy"), "whoami_by_hand"))
    assert other["upstream"]["sub"] == "ivy" and world.auth.exchanges["ivy"] == 1


# -- search and code mode ------------------------------------------------------------------


@pytest.fixture(scope="module")
def mode_servers(
    world: World, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Server]]:
    """The same server in search mode and in code mode (built side by side)."""
    folder = tmp_path_factory.mktemp("creds-modes")
    manifests = {
        mode: MANIFEST.format(auth=world.auth.url).replace("mode: tools", f"mode: {mode}")
        for mode in ("search", "code")
    }
    with ThreadPoolExecutor(2) as pool:
        jobs = {
            mode: pool.submit(build, folder / mode, text, "creds_mcp", {"api.yaml": API}, HANDLERS)
            for mode, text in manifests.items()
        }
        built = {mode: job.result() for mode, job in jobs.items()}
    servers = {mode: Server(b, env=server_env(world.api)) for mode, b in built.items()}
    try:
        yield servers
    finally:
        for server in servers.values():
            server.stop()


def test_operations_reached_through_search_and_code_mode_use_the_callers_token(
    world: World, mode_servers: dict[str, Server]
) -> None:
    calls = {
        "search": ("call_operation", {"name": "whoami", "arguments": {}}),
        "code": ("execute", {"code": "whoami()"}),
    }
    for mode, (tool, arguments) in calls.items():
        users = {
            f"{mode}-lee": inbound(world, f"{mode}-lee"),
            f"{mode}-max": inbound(world, f"{mode}-max"),
        }
        mark = len(world.api.received)
        for user, token in 2 * list(users.items()):
            with Mcp(mode_servers[mode].url, {"Authorization": f"Bearer {token}"}) as mcp:
                answer = mcp.call(tool, arguments)
            found = structured(answer)
            assert (found.get("result") or found)["sub"] == user, found
        seen = world.upstream_since(mark, "/whoami")
        assert sorted(claims(bearer(r))["sub"] for r in seen) == sorted(2 * list(users))
        assert not {bearer(r) for r in seen} & set(users.values())
        assert all(world.auth.exchanges[user] == 1 for user in users)


# -- the header source --------------------------------------------------------------------


BASELINE = {"host", "accept", "accept-encoding", "connection", "user-agent"}


def test_the_header_source_passes_only_the_allow_listed_header(world: World) -> None:
    token = inbound(world, "jo")
    mark = len(world.api.received)
    extra = {
        "X-Partner-Key": PARTNER_KEY,
        "X-Other": "not-for-upstream",
        "Cookie": "session=abc",
        "X-Forwarded-For": "10.0.0.1",
        "X-Upstream-Key": "smuggled",
    }
    answer = world.call(token, "partner_data", **extra)
    assert structured(answer)["path"] == "/partner/data"
    (request,) = world.upstream_since(mark)
    names = {k.lower() for k, _ in request.headers}
    assert names - BASELINE == {"x-upstream-key"}
    assert request.all("x-upstream-key") == [PARTNER_KEY]
    assert not any(token in v or "not-for-upstream" in v for _, v in request.headers)
    assert world.auth.exchanges["jo"] == 0

    mark = len(world.api.received)
    missing = world.call(token, "partner_data")
    assert refused(missing) and "send the X-Partner-Key header" in tool_text(missing)
    # the caller's own MCP token, in any spelling (issue 30 item 10), never goes upstream
    for spelling in (token, f"Bearer {token}", f"bearer  {token}", f"{token},", f'"{token}"'):
        own = world.call(token, "partner_data", **{"X-Partner-Key": spelling})
        assert refused(own) and "carries the MCP access token" in tool_text(own), spelling
        assert token not in tool_text(own)
    assert world.upstream_since(mark) == []


# -- logs, and the local caller -------------------------------------------------------------


def test_no_token_or_secret_reaches_the_servers_log(world: World) -> None:
    token = inbound(world, "kim")
    assert structured(world.call(token, "whoami"))["sub"] == "kim"
    world.call(token, "partner_data", **{"X-Partner-Key": PARTNER_KEY})
    log = world.server.stderr()
    assert "token exchange for bearerAuth" in log and " DEBUG " in log  # the log is captured
    secrets = {CLIENT_SECRET, SERVER_KEY, PARTNER_KEY}
    secrets |= {r["subject_token"] for r in world.auth.requests if r.get("subject_token")}
    secrets |= {bearer(r) for r in world.api.received if r.header("authorization")}
    assert len(secrets) > 10
    leaked = sorted(s[:16] for s in secrets if s in log)
    assert leaked == []
    for secret in secrets:  # not even the signature part of a JWT
        if secret.count(".") == 2:
            assert secret.rsplit(".", 1)[1] not in log


def test_stdio_uses_env_credentials_only_where_configured(world: World) -> None:
    exchanges = sum(world.auth.exchanges.values())
    token_requests = len(world.auth.requests)
    mark = len(world.api.received)
    answers = stdio_calls(world, ["either", "whoami", "partner_data", "whoami_by_hand"])
    either, whoami, partner, by_hand = answers
    assert structured(either)["path"] == "/either"
    (request,) = world.upstream_since(mark)
    assert request.path == "/either" and request.all("x-api-key") == [SERVER_KEY]
    assert request.header("authorization") is None
    assert refused(whoami) and "needs the caller's own access token" in tool_text(whoami)
    assert refused(partner) and "send the X-Partner-Key header" in tool_text(partner)
    assert refused(by_hand) and "needs the caller's own access token" in tool_text(by_hand)
    assert len(world.upstream_since(mark)) == 1
    assert sum(world.auth.exchanges.values()) == exchanges
    assert len(world.auth.requests) == token_requests


def stdio_calls(world: World, tools: list[str]) -> list[Any]:
    """Each tool called once over stdio (the handshake era), in order."""
    messages: list[dict[str, Any]] = [
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    for index, tool in enumerate(tools, 1):
        messages.append(
            {
                "jsonrpc": "2.0",
                "id": index,
                "method": "tools/call",
                "params": {"name": tool, "arguments": {}},
            }
        )
    process = subprocess.Popen(
        [sys.executable, "-m", "creds_mcp", "--transport", "stdio"],
        env={**os.environ, "PYTHONPATH": str(world.built.src), **world.env()},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    answers: dict[int, Any] = {}
    try:
        for message in messages[:2]:
            process.stdin.write(json.dumps(message) + "\n")
            process.stdin.flush()
            if "id" in message:
                json.loads(process.stdout.readline())
        for message in messages[2:]:  # one at a time: the upstream log is in call order
            process.stdin.write(json.dumps(message) + "\n")
            process.stdin.flush()
            while True:
                reply = json.loads(process.stdout.readline())
                if reply.get("id") == message["id"]:
                    answers[message["id"]] = reply
                    break
    finally:
        process.stdin.close()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        assert process.stderr is not None
        log = process.stderr.read()
        process.stderr.close()
        process.stdout.close()
    assert SERVER_KEY not in log and CLIENT_SECRET not in log
    return [answers[i] for i in range(1, len(tools) + 1)]
