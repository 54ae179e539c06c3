"""Authentication of the HTTP apps, in this process: static keys (bearer and API key, two
keys during a rotation, wrong and missing keys) and OAuth access tokens checked against a
JWKS file (missing credential, Protected Resource Metadata, bad, expired, foreign-audience
and forged tokens, a good token). Keys from a JWKS URL and introspected opaque tokens are in
``test_rt_auth_remote``."""

from __future__ import annotations

from typing import Any

import pytest
import rtkit
from rtbridge import BASE, http_client, running
from rtconnect import client_over

from mcpgen.runtime.errors import ConfigError
from mcpgen.runtime.http_guard import WELL_KNOWN
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


async def post(spec: dict[str, Any], headers: dict[str, str], **changes: Any) -> Any:
    """One initialize POST to the stateless JSON app of ``spec``."""
    async with running(rtkit.app(spec, "http-json", **changes)) as app, http_client(app) as http:
        return await http.post("/mcp", json=INITIALIZE, headers={**POST, **headers})


# -- static keys -----------------------------------------------------------------------------


def key_headers(kind: str, key: str) -> dict[str, str]:
    return rtkit.bearer(key) if kind == "bearer" else {"X-API-Key": key}


@pytest.mark.parametrize("kind", ["bearer", "apiKey"])
@pytest.mark.parametrize("key", rtkit.STATIC_KEYS, ids=["old", "new"])
async def test_every_configured_key_works(kind: str, key: str) -> None:
    """Several keys at once: rotation is add the new key, move clients, drop the old one."""
    spec = rtkit.make_spec(kind)
    async with (
        running(rtkit.app(spec, "http-json")) as app,
        client_over(app, "http-json", "legacy", key_headers(kind, key)) as client,
    ):
        who = await client.call_tool("whoami", {})
    assert who.structured_content is not None
    assert who.structured_content["subject"].startswith("key-")  # a fingerprint, not the key
    assert key not in str(who.structured_content)
    assert who.structured_content["scopes"] is None  # a key grants every scope


@pytest.mark.parametrize("kind", ["bearer", "apiKey"])
async def test_two_keys_are_two_callers(kind: str) -> None:
    spec = rtkit.make_spec(kind)
    subjects = set()
    async with running(rtkit.app(spec, "http-json")) as app:
        for key in rtkit.STATIC_KEYS:
            async with client_over(app, "http-json", "legacy", key_headers(kind, key)) as client:
                subjects.add(str((await client.call_tool("whoami", {})).structured_content))
    assert len(subjects) == 2


@pytest.mark.parametrize("kind", ["bearer", "apiKey"])
async def test_a_wrong_key_is_refused(kind: str) -> None:
    response = await post(rtkit.make_spec(kind), key_headers(kind, "not-a-key"))
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert 'error="invalid_token"' in challenge
    if kind == "apiKey":
        assert challenge.startswith("ApiKey ") and 'header="X-API-Key"' in challenge
    assert "not-a-key" not in response.text


@pytest.mark.parametrize("kind", ["bearer", "apiKey"])
async def test_a_missing_key_is_refused(kind: str) -> None:
    response = await post(rtkit.make_spec(kind), {})
    assert response.status_code == 401
    assert response.json()["error"] == "unauthorized"
    assert "invalid_token" not in response.headers["www-authenticate"]


async def test_a_bearer_key_needs_the_bearer_scheme() -> None:
    spec = rtkit.make_spec("bearer")
    response = await post(spec, {"Authorization": f"Basic {rtkit.STATIC_KEYS[0]}"})
    assert response.status_code == 401


@pytest.mark.parametrize("kind", ["bearer", "apiKey"])
@pytest.mark.parametrize("value", ["", " , ,"], ids=["unset", "blank"])
def test_missing_keys_stop_the_server(kind: str, value: str) -> None:
    spec = rtkit.make_spec(kind)
    environ = {rtkit.KEYS_ENV: value} if value else {}
    with pytest.raises(ConfigError, match=rtkit.KEYS_ENV):
        rtkit.app(spec, "http", environ_=environ)


async def test_without_auth_every_caller_is_unrestricted() -> None:
    """``auth: none``: every request is the anonymous caller, with every scope (scopes are
    enforced only with OAuth)."""
    spec = rtkit.make_spec("none")
    async with (
        running(rtkit.app(spec, "http-json")) as app,
        client_over(app, "http-json", "legacy", {}) as client,
    ):
        notes = await client.call_tool("read_notes", {})
        who = await client.call_tool("whoami", {})
    assert notes.structured_content == {"notes": ["first", "second"]}
    assert who.structured_content == {"subject": "anonymous", "scopes": None}


# -- OAuth ---------------------------------------------------------------------------------


async def test_a_missing_token_is_refused_with_a_challenge() -> None:
    response = await post(rtkit.make_spec(), {})
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert "invalid_token" not in challenge
    assert f'resource_metadata="{BASE}{WELL_KNOWN}/mcp"' in challenge


@pytest.mark.parametrize("spec", ["oauth", "bearer", "apiKey"])
async def test_a_credential_header_sent_twice_is_refused(spec: str) -> None:
    """Which of two is meant is ambiguous (a proxy in front may have checked the other one):
    refused, as a ``header`` credential source refuses its header sent twice."""
    good = rtkit.token(rtkit.SCOPES) if spec == "oauth" else rtkit.STATIC_KEYS[0]
    name, value = next(iter(key_headers("bearer" if spec == "oauth" else spec, good).items()))
    twice = [(name, value), (name, value.replace(good, "other"))]
    app = rtkit.app(rtkit.make_spec(spec), "http-json")
    async with running(app), http_client(app) as http:
        response = await http.post("/mcp", json=INITIALIZE, headers=[*POST.items(), *twice])
    assert response.status_code == 401, response.text
    said = f"the {name} header was sent more than once"  # not "unknown key" nor "expected..."
    assert said in response.text and said in response.headers["WWW-Authenticate"]


@pytest.mark.parametrize("transport", ["http", "sse", "websocket"])
async def test_protected_resource_metadata(transport: str) -> None:
    async with running(rtkit.app(transport=transport)) as app, http_client(app) as http:
        endpoint = {"http": "/mcp", "sse": "/sse", "websocket": "/ws"}[transport]
        response = await http.get(WELL_KNOWN + endpoint)
        bare = await http.get(WELL_KNOWN)
        other = await http.get(WELL_KNOWN + "/elsewhere")
    assert response.status_code == 200 and bare.status_code == 200
    document = response.json()
    assert document["resource"] == BASE + endpoint
    assert document["authorization_servers"] == [rtkit.ISSUER]
    assert document["scopes_supported"] == rtkit.SCOPES
    assert document["bearer_methods_supported"] == ["header"]
    assert other.status_code == 404


@pytest.mark.parametrize("public_url", [None, "https://mcp.example.com"])
async def test_metadata_from_the_host_header_is_kept_by_no_shared_cache(
    public_url: str | None,
) -> None:
    """Without ``public_url`` the document names the Host the request sent (maybe forged
    when Host checks are off): a shared cache keeping it would serve that to everyone."""
    app = rtkit.app(public_url=public_url, host="0.0.0.0")  # no allowed hosts: no checks
    async with running(app), http_client(app) as http:
        response = await http.get(WELL_KNOWN + "/mcp", headers={"Host": "forged.example"})
    assert response.json()["resource"] == (public_url or "http://forged.example") + "/mcp"
    expected = "public" if public_url else "private"
    assert response.headers["Cache-Control"] == f"{expected}, max-age=3600"


async def test_no_metadata_without_oauth() -> None:
    async with running(rtkit.app(rtkit.make_spec("bearer"))) as app, http_client(app) as http:
        response = await http.get(WELL_KNOWN + "/mcp")
    assert response.status_code == 404


@pytest.mark.parametrize(
    ("claims", "reason"),
    [
        ({"expires_in": -600}, "expired"),
        ({"audience": "https://other.example/mcp"}, "audience"),
        ({"issuer": "https://evil.example"}, "issuer"),
    ],
    ids=["expired", "wrong-audience", "wrong-issuer"],
)
async def test_bad_tokens_are_refused(claims: dict[str, Any], reason: str) -> None:
    response = await post(rtkit.make_spec(), rtkit.bearer(rtkit.token(**claims)))
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]
    assert reason in response.json()["error_description"]


@pytest.mark.parametrize(
    "token", ["not-a-jwt", "a.b.c", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0."], ids=str
)
async def test_malformed_tokens_are_refused(token: str) -> None:
    response = await post(rtkit.make_spec(), rtkit.bearer(token))
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]


async def test_a_token_signed_by_another_key_is_refused() -> None:
    forger = TokenIssuer(rtkit.ISSUER, rtkit.AUDIENCE, kid="fixture-key")  # same kid, new key
    response = await post(rtkit.make_spec(), rtkit.bearer(forger.token(rtkit.SCOPES)))
    assert response.status_code == 401
    unknown = TokenIssuer(rtkit.ISSUER, rtkit.AUDIENCE, kid="another-key")
    response = await post(rtkit.make_spec(), rtkit.bearer(unknown.token(rtkit.SCOPES)))
    assert response.status_code == 401
    assert "unknown key" in response.json()["error_description"]


async def test_a_good_token_reaches_the_tools_as_its_subject() -> None:
    headers = rtkit.bearer(rtkit.token([rtkit.READ], subject="alice"))
    async with (
        running(rtkit.app(transport="http-json")) as app,
        client_over(app, "http-json", "legacy", headers) as client,
    ):
        tools = await client.list_tools()
        who = await client.call_tool("whoami", {})
    assert {"echo", "read_notes", "write_note"} <= {t.name for t in tools.tools}
    assert who.structured_content == {"subject": "alice", "scopes": [rtkit.READ]}


def test_oauth_needs_signing_keys_or_introspection() -> None:
    spec = rtkit.make_spec()
    settings = rtkit.settings(spec, "http", jwks_file=None)
    from mcpgen.runtime.http_app import create_app

    with pytest.raises(ConfigError, match="JWKS_URL"):
        create_app(spec, rtkit.factory(spec), settings, {})


def test_identities_whose_parts_hold_a_nul_get_keys_of_their_own() -> None:
    """The key hashed the parts joined with NUL: a client ``a\\0b`` with subject ``c`` and a
    client ``a`` with subject ``b\\0c`` (claims a token may carry) shared one key, so one
    rate limit, session and ``ctx.store``; so did a subject ``s\\0username`` and the username
    ``s``. The key of an identity without a NUL stays what it was (Redis keys derive from it)."""
    import hashlib

    from mcpgen.runtime.identity import Identity

    twins = [Identity("c", client="a\x00b", issuer="i"), Identity("b\x00c", client="a", issuer="i")]
    assert twins[0].key != twins[1].key
    kinds = [Identity("s\x00username", client="c"), Identity("s", client="c", kind="username")]
    assert kinds[0].key != kinds[1].key
    before = hashlib.sha256(b"https://idp\x00app\x00alice").hexdigest()[:32]
    assert Identity("alice", client="app", issuer="https://idp").key == before
