"""Issue 30, items 15, 3, 5 and 14 (identities): attacks on a running generated server's
front door and identities, over the wire, in both protocol eras where they apply.

- 15: every refusal of a missing credential is a 401 with a valid ``WWW-Authenticate``
  (RFC 6750 ``Bearer realm="..."``, ``resource_metadata`` with OAuth), for static bearer
  keys, API keys and OAuth, on streamable HTTP (POST and GET), legacy SSE and the WebSocket
  upgrade;
- 3: a prompt that embeds a scoped resource is refused to a caller without the scope;
- 5: a token naming no subject (no ``sub``, ``client_id`` or ``username``) is refused;
- 14: a client-credentials token of client ``carol`` and a user ``carol`` are two callers.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sec_harness import (
    WORKTREE,
    Built,
    LegacySse,
    Mcp,
    Server,
    ServerPool,
    Tokens,
    build,
    raw_http,
    status_of,
    tool_text,
)

pytestmark = [pytest.mark.security, pytest.mark.timeout(120)]

KEY = "k-0123456789abcdef"
HELLO = """
  - name: hello
    description: Say hello.
    input: {type: object, properties: {}}
"""
KEYED = """
mcpgen: 1
server: {name: keyed, version: 0.1.0, package: keyed_mcp, description: Keys.}
transports: {offer: [stdio, http, sse, websocket]}  # attacked over each
auth: {type: bearer, env: KEYED_KEYS}
tools:""" + HELLO
APIKEYED = """
mcpgen: 1
server: {name: apikeyed, version: 0.1.0, package: apikeyed_mcp, description: Keys.}
transports: {offer: [stdio, http, sse, websocket]}  # attacked over each
auth: {type: apiKey, header: X-API-Key, env: APIKEYED_KEYS}
tools:""" + HELLO
VAULT = """
mcpgen: 1
server: {name: vault, version: 0.1.0, package: vault_mcp, description: A vault.}
transports: {offer: [stdio, http, sse, websocket]}  # attacked over each
auth:
  type: oauth
  issuer: https://auth.example.com
  audience: https://mcp.example.com/mcp
  jwksFile: jwks.json
  hideUnauthorizedTools: HIDE
  leeway: 0
tools:
  - name: remember
    description: Keeps a note for its caller, and says the one kept before.
    context: true
    input: {type: object, properties: {note: {type: string}}}
resources:
  - {uri: "vault://hr/salaries", name: salaries, mimeType: text/plain, text: "alice 9000", scopes: [hr]}
  - {uri: "vault://menu", name: menu, mimeType: text/plain, text: "soup"}
prompts:
  - name: payroll
    description: Embeds the salaries.
    messages: [{role: user, resource: {uri: "vault://hr/salaries"}}]
  - name: lunch
    description: Embeds the menu.
    messages: [{role: user, resource: {uri: "vault://menu"}}]
"""
REMEMBER = """
from typing import Any


async def handle(args: Any, ctx: Any) -> str:
    before = await ctx.store.get("note", "nothing")
    if args.note:
        await ctx.store.set("note", args.note)
    return f"before: {before}"
"""
# RFC 7235 challenge: a scheme, then auth-params name="quoted value" separated by commas
CHALLENGE = re.compile(r'^(Bearer|ApiKey) [a-z_]+="[^"\\]*"(, [a-z_]+="[^"\\]*")*$')


@pytest.fixture(scope="module")
def built(workdir: Path) -> dict[str, Built]:
    jobs = {
        "keyed": (KEYED, "keyed_mcp", {}),
        "apikeyed": (APIKEYED, "apikeyed_mcp", {}),
        "vault": (VAULT.replace("HIDE", "true"), "vault_mcp", {"remember": REMEMBER}),
        "vault_open": (VAULT.replace("HIDE", "false"), "vault_mcp", {"remember": REMEMBER}),
    }
    return {
        name: build(workdir / ("i30-" + name), manifest, package, handlers=handlers)
        for name, (manifest, package, handlers) in jobs.items()
    }


@pytest.fixture(scope="module")
def servers(built: dict[str, Built], tokens: Tokens) -> Iterator[dict[str, Server]]:
    pool = ServerPool()
    keys = {"KEYED_KEYS": KEY, "APIKEYED_KEYS": KEY}
    jwks = {"VAULT_JWKS_FILE": str(tokens.jwks)}
    started = {}
    for transport in ("http", "sse", "websocket"):
        for kind in ("keyed", "apikeyed"):
            started[f"{kind}-{transport}"] = pool.start(
                built[kind], transport=transport, env=keys, wait=False
            )
        started[f"vault-{transport}"] = pool.start(
            built["vault"], transport=transport, env=jwks, wait=False
        )
    started["vault_open-http"] = pool.start(built["vault_open"], env=jwks, wait=False)
    try:
        for server in started.values():
            server.wait_for_port()
        yield started
    finally:
        pool.close()


# -- 15. a missing credential gets a proper 401 ----------------------------------------------


def assert_challenge(status: int, challenge: str | None, kind: str, where: str) -> None:
    assert status == 401, (where, status)
    assert challenge is not None and CHALLENGE.match(challenge), (where, challenge)
    assert 'realm="' in challenge, (where, challenge)
    if kind == "vault":
        assert 'resource_metadata="http://127.0.0.1:' in challenge, (where, challenge)
    if kind == "apikeyed":
        assert 'header="X-API-Key"' in challenge, (where, challenge)


def challenge_of(raw: bytes) -> str | None:
    for line in raw.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"www-authenticate":
            return value.strip().decode("latin-1")
    return None


KINDS = ["keyed", "apikeyed", "vault"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_15_streamable_http_without_a_credential(
    servers: dict[str, Server], kind: str, era: str
) -> None:
    """POST /mcp (either era) and GET /mcp without a credential: 401, a valid challenge."""
    server = servers[f"{kind}-http"]
    client = Mcp(server.url, era=era)
    answer = client.initialize() if era == "handshake" else client.send("tools/list")
    assert_challenge(answer.status, answer.headers.get("www-authenticate"), kind, "POST /mcp")
    request = f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
    request += "Accept: text/event-stream\r\nConnection: close\r\n\r\n"
    raw = raw_http(server.port, request.encode())
    assert_challenge(status_of(raw), challenge_of(raw), kind, "GET /mcp")


@pytest.mark.parametrize("kind", KINDS)
def test_15_legacy_sse_without_a_credential(servers: dict[str, Server], kind: str) -> None:
    """GET /sse and POST /messages/ without a credential: 401, a valid challenge."""
    server = servers[f"{kind}-sse"]
    for method, path, body in (("GET", "/sse", b""), ("POST", "/messages/?session_id=x", b"{}")):
        request = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
        request += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        raw = raw_http(server.port, request.encode() + b"Connection: close\r\n\r\n" + body)
        assert_challenge(status_of(raw), challenge_of(raw), kind, f"{method} {path}")
    stream = LegacySse(server.url)
    assert stream.status == 401 and stream.endpoint is None
    stream.close()


@pytest.mark.parametrize("kind", KINDS)
def test_15_websocket_upgrade_without_a_credential(servers: dict[str, Server], kind: str) -> None:
    """A WebSocket upgrade without a credential is refused with an HTTP 401 and a valid
    challenge (not an accepted socket, not a dropped connection)."""
    server = servers[f"{kind}-websocket"]
    request = (
        f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: mcp\r\n\r\n"
    )
    raw = raw_http(server.port, request.encode(), timeout=5)
    assert_challenge(status_of(raw), challenge_of(raw), kind, "GET /ws")


@pytest.mark.parametrize("kind", ["keyed", "apikeyed"])
def test_15_a_key_still_opens_the_door(servers: dict[str, Server], kind: str) -> None:
    header = {"Authorization": f"Bearer {KEY}"} if kind == "keyed" else {"X-API-Key": KEY}
    answer = Mcp(servers[f"{kind}-http"].url, header).send("tools/list")
    assert answer.status == 200 and "hello" in answer.text


# -- 3. a prompt that embeds a scoped resource ---------------------------------------------


@pytest.mark.parametrize("variant", ["vault", "vault_open"])
@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_3_prompt_embedding_a_scoped_resource_needs_its_scope(
    servers: dict[str, Server], tokens: Tokens, variant: str, era: str
) -> None:
    """prompts/get of a prompt embedding ``vault://hr/salaries`` (scopes [hr]) with a token
    lacking ``hr``: refused, the text never sent (with and without hideUnauthorizedTools);
    with ``hr`` it is served; a prompt embedding an unscoped resource is served to anyone."""
    url = servers[f"{variant}-http"].url
    user = Mcp(url, tokens.bearer(["user"]), era=era)
    if era == "handshake":
        assert user.initialize().status == 200
    answer = user.send("prompts/get", {"name": "payroll"})
    assert "alice 9000" not in answer.text, answer.text
    assert answer.status in (200, 400, 403) and "error" in answer.only, answer.text
    listed = json.dumps(user.rpc("prompts/list"))
    assert ("payroll" in listed) == (variant == "vault_open"), listed
    assert "soup" in json.dumps(user.rpc("prompts/get", {"name": "lunch"}))
    hr = Mcp(url, tokens.bearer(["hr"]), era=era)
    if era == "handshake":
        assert hr.initialize().status == 200
    assert "alice 9000" in json.dumps(hr.rpc("prompts/get", {"name": "payroll"}))


def test_3_validate_warns_about_an_unscoped_prompt_embedding_a_scoped_resource(
    built: dict[str, Built],
) -> None:
    manifest = built["vault"].root.parent / "mcpgen.yaml"
    done = subprocess.run(
        [sys.executable, "-m", "mcpgen", "validate", str(manifest)],
        env={"PYTHONPATH": str(WORKTREE), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    warnings = [line for line in output.splitlines() if "warning" in line and "vault://" in line]
    assert len(warnings) == 1 and "prompts[0]" in warnings[0] + output, output
    assert "hr" in warnings[0], warnings


# -- 5 and 14. identities never merge ----------------------------------------------------------


def remember(url: str, headers: dict[str, str], note: str = "") -> tuple[int, str]:
    with Mcp(url, headers) as client:
        answer = client.send("tools/call", {"name": "remember", "arguments": {"note": note}})
        return answer.status, tool_text(answer.only) if answer.status == 200 else answer.text


@pytest.mark.parametrize("transport", ["http", "websocket"])
def test_5_a_token_naming_no_subject_is_refused(
    servers: dict[str, Server], tokens: Tokens, transport: str
) -> None:
    """Two JWTs from the trusted issuer, neither with ``sub``, ``client_id`` nor
    ``username``: refused (401 invalid_token), so they cannot share one caller's store."""
    server = servers[f"vault-{transport}"]
    first = tokens.token(["user"], subject=None, jti="one")
    if transport == "http":
        status, text = remember(server.url, {"Authorization": "Bearer " + first}, "mine")
        assert status == 401 and "invalid_token" in text, (status, text)
        second = tokens.token(["user"], subject=None, jti="two")
        status, text = remember(server.url, {"Authorization": "Bearer " + second})
        assert status == 401 and "mine" not in text, (status, text)
    else:
        request = (
            f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            f"Sec-WebSocket-Version: 13\r\nAuthorization: Bearer {first}\r\n\r\n"
        )
        raw = raw_http(server.port, request.encode(), timeout=5)
        assert status_of(raw) == 401, raw[:300]


def test_14_a_client_and_a_user_of_one_name_are_two_callers(
    servers: dict[str, Server], tokens: Tokens
) -> None:
    """A client-credentials token of client ``carol`` (no ``sub``) keeps a note; a token of
    the user ``carol`` issued to client ``carol`` does not see it, and the other way round."""
    url = servers["vault-http"].url
    client = {"Authorization": "Bearer " + tokens.token(["user"], subject=None, client_id="carol")}
    user = {"Authorization": "Bearer " + tokens.token(["user"], subject="carol", client_id="carol")}
    assert remember(url, client, "the client's") == (200, "before: nothing")
    assert remember(url, user, "the user's") == (200, "before: nothing")
    assert remember(url, client) == (200, "before: the client's")
    assert remember(url, user) == (200, "before: the user's")


def test_14_a_session_of_the_client_is_not_the_users(
    servers: dict[str, Server], tokens: Tokens
) -> None:
    """A stateful session opened by client ``carol`` answers 404 to user ``carol``."""
    url = servers["vault-http"].url
    client = Mcp(
        url, {"Authorization": "Bearer " + tokens.token([], subject=None, client_id="carol")}
    )
    assert client.initialize().status == 200 and client.session
    user = Mcp(
        url, {"Authorization": "Bearer " + tokens.token([], subject="carol", client_id="carol")}
    )
    user.era, user.session = "handshake", client.session
    assert user.send("tools/list").status == 404
    assert client.send("tools/list").status == 200
