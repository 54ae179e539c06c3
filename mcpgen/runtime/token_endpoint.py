"""Requests to an OAuth token endpoint (client credentials, RFC 8693 token exchange).

One POST, no redirects followed, the client authenticated with its secret (HTTP Basic or
form fields), the answer read up to ``capped.MAX_AUTH_ANSWER_BYTES``. Every failure is a
``CredentialFailure`` whose message names the scheme and what went wrong, with the secrets
of the request taken out of anything the server said.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote_plus

import httpx2

from .capped import MAX_AUTH_ANSWER_BYTES, fetch
from .credential_config import CONTROL, MAX_HEADER_VALUE, CredentialFailure
from .errors import REDACTED

TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
DEFAULT_LIFETIME = 60.0
"""How long a token is cached when the authorization server gives no ``expires_in``."""
MAX_LIFETIME = 86400.0
"""The longest lifetime believed (24 h), however large the ``expires_in``."""


def exchange_form(
    subject_token: str, audience: str | None, resource: str | None, scope: str | None
) -> dict[str, str]:
    """The RFC 8693 request for an access token meant for ``audience``/``resource``."""
    form = {
        "grant_type": TOKEN_EXCHANGE_GRANT,
        "subject_token": subject_token,
        "subject_token_type": ACCESS_TOKEN_TYPE,
        "requested_token_type": ACCESS_TOKEN_TYPE,
    }
    if audience:
        form["audience"] = audience
    if resource:
        form["resource"] = resource
    if scope:
        form["scope"] = scope
    return form


async def token_request(
    client: httpx2.AsyncClient,
    scheme: str,
    url: str,
    form: dict[str, str],
    client_id: str,
    secret: str,
    client_auth: str,
    *,
    what: str,
    timeout: float,
    hidden: tuple[str, ...] = (),
) -> tuple[str, float]:
    """POST to a token endpoint; (access token, lifetime in seconds) or ``CredentialFailure``.

    ``hidden``: secrets besides the client secret that an error message may never show
    (the subject token of an exchange). The lifetime is ``expires_in``, at most
    ``MAX_LIFETIME`` (24 h); one that is not a finite number >= 0 counts as absent
    (``DEFAULT_LIFETIME``).
    """
    data = dict(form)
    headers = {"Accept": "application/json"}
    if client_auth == "basic":
        pair = f"{quote_plus(client_id)}:{quote_plus(secret)}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    else:
        data["client_id"] = client_id
        data["client_secret"] = secret
    secrets = (*hidden, secret)
    too_big = CredentialFailure(
        f"{what} for {scheme}: the authorization server's answer is larger than "
        f"{MAX_AUTH_ANSWER_BYTES} bytes"
    )
    try:
        sent = client.build_request("POST", url, data=data, headers=headers, timeout=timeout)
        response = await fetch(
            client, sent, MAX_AUTH_ANSWER_BYTES, too_big, timeout, follow_redirects=False
        )
    except httpx2.HTTPError as exc:
        raise CredentialFailure(
            f"{what} for {scheme}: could not reach the authorization server "
            f"({type(exc).__name__})"
        ) from None
    status = response.status_code
    payload: Any = None
    try:
        payload = response.json()
    except (ValueError, RecursionError):
        payload = None
    if 300 <= status < 400:
        raise CredentialFailure(
            f"{what} for {scheme}: the authorization server answered a redirect (HTTP "
            f"{status}); token requests never follow redirects"
        )
    if status >= 400 or (isinstance(payload, dict) and "error" in payload):
        detail = oauth_error(payload, secrets)
        raise CredentialFailure(
            f"{what} for {scheme} was refused by the authorization server: HTTP {status}"
            + (f" ({detail})" if detail else "")
        )
    if not isinstance(payload, dict):
        raise CredentialFailure(
            f"{what} for {scheme}: the authorization server did not answer JSON"
        )
    token = payload.get("access_token")
    if not isinstance(token, str) or not token:
        raise CredentialFailure(f"{what} for {scheme}: the answer has no access_token")
    token_type = payload.get("token_type")
    if isinstance(token_type, str) and token_type.lower() not in ("bearer", "n_a"):
        raise CredentialFailure(
            f"{what} for {scheme}: token_type {clean(token_type, secrets)!r} is not a "
            "bearer token"
        )
    if CONTROL.search(token) or len(token) > MAX_HEADER_VALUE:
        raise CredentialFailure(f"{what} for {scheme}: the issued token is not usable in a header")
    # Not a number, negative, NaN or infinite (JSON's 1e400): as if absent. Huge: 24 h.
    expires = payload.get("expires_in")
    lifetime = DEFAULT_LIFETIME
    if (
        isinstance(expires, int | float)
        and not isinstance(expires, bool)
        and 0 <= expires < math.inf  # exact for any int: never converts one to float
    ):
        lifetime = float(min(expires, MAX_LIFETIME))
    return token, lifetime


def clean(text: str, secrets: Sequence[str]) -> str:
    """``text`` with every secret replaced, control characters blanked, at most 200 chars."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return CONTROL.sub(" ", text)[:200]


def oauth_error(payload: Any, secrets: Sequence[str]) -> str:
    """``error: error_description`` of an OAuth error answer, with secrets taken out."""
    if not isinstance(payload, dict):
        return ""
    error, description = payload.get("error"), payload.get("error_description")
    parts = [clean(str(p), secrets) for p in (error, description) if isinstance(p, str) and p]
    return ": ".join(parts)
