"""An OAuth2 scheme with only user flows (``implicit``, ``authorizationCode``: Azure's
specs) or an ``openIdConnect`` one gives the server no token of its own: it read none and
every call needing it failed ("the OAuth2 scheme has no client-credentials tokenUrl"),
with no variable the operator could set. The server now reads an access token got out of
band (``az account get-access-token``) from the scheme's variable and sends it as a
bearer token; the build's warning and a call without it name the variable."""

from __future__ import annotations

from typing import Any

import pytest
from wirekit import imported, operations, recorder, upstream

from mcpgen.problems import Level
from mcpgen.runtime.errors import ToolError

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

FLOWS = {
    "implicit": {"authorizationUrl": "https://login.example/authorize", "scopes": {"r": "read"}},
    "authorizationCode": {
        "authorizationUrl": "https://login.example/authorize",
        "tokenUrl": "https://login.example/token",
        "scopes": {},
    },
}


def document(scheme: Any) -> Any:
    op = {"operationId": "send", "responses": {"204": {"description": "ok"}}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {"/x": {"get": {**op, "security": [{"azure_auth": ["r"]}]}}},
        "components": {"securitySchemes": {"azure_auth": scheme}},
    }


SCHEMES = [
    {"type": "oauth2", "flows": {"implicit": FLOWS["implicit"]}},
    {"type": "oauth2", "flows": {"authorizationCode": FLOWS["authorizationCode"]}},
    {"type": "oauth2", "flows": FLOWS},
    {"type": "openIdConnect", "openIdConnectUrl": "https://login.example/.well-known"},
]


@pytest.mark.parametrize("scheme", SCHEMES)
async def test_a_user_flow_scheme_sends_the_token_its_variable_holds(scheme: Any) -> None:
    data = document(scheme)
    schemes = imported(data).security_schemes
    with recorder() as rec:
        rec.answer(204, "application/json", b"")
        result = await upstream(rec.url, schemes).call(operations(data)["send"], {})
    assert not result.is_error, result.content
    assert rec.seen[0].headers["authorization"] == "Bearer secret-azure_auth"


async def test_without_the_variable_the_call_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    data = document(SCHEMES[0])
    schemes = imported(data).security_schemes
    with recorder() as rec:
        api = upstream(rec.url, schemes)
        monkeypatch.delenv("MCPGEN_TEST_WIRE_API_AZURE_AUTH")
        with pytest.raises(ToolError) as failed:
            await api.call(operations(data)["send"], {})
    message = str(failed.value)
    assert not rec.seen and "set MCPGEN_TEST_WIRE_API_AZURE_AUTH to an access token" in message


def test_the_build_warns_with_the_variable_at_the_scheme() -> None:
    result = imported(document(SCHEMES[0]))
    (warned,) = [p for p in result.problems if "no token of its own" in p.message]
    assert warned.level is Level.WARNING
    assert warned.field == "#/components/securitySchemes/azure_auth"
    assert "_AZURE_AUTH" in warned.message and "access token" in warned.message, warned.message


async def test_a_401_with_a_client_id_set_fetches_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A user-flow scheme's 401 forgets no client-credentials token: its package does not
    carry ``upstream_tokens`` (the call failed with an internal error, not the API's 401)."""
    data = document(SCHEMES[0])
    schemes = imported(data).security_schemes
    monkeypatch.setenv("MCPGEN_TEST_WIRE_API_AZURE_AUTH_CLIENT_ID", "cid")
    with recorder() as rec:
        rec.answer(401, "application/json", b'{"error": "expired"}')
        api = upstream(rec.url, schemes)
        result = await api.call(operations(data)["send"], {})
    assert result.is_error and rec.seen, result.content
    assert api.credentials._tokens is None  # no token client was made
