"""Credentials for the wrapped API from environment variables (one identity for everyone)."""

from __future__ import annotations

import base64
import os
import time
from typing import Any

import httpx2

from .errors import ToolError

Json = Any


def env_name(scheme: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in scheme).upper()


class EnvCredentials:
    """Secrets named ``<PREFIX>_<SCHEME>`` (and ``_USERNAME``/``_PASSWORD``,
    ``_CLIENT_ID``/``_CLIENT_SECRET``), as the generated README lists them."""

    def __init__(self, settings: dict[str, Json]) -> None:
        self.settings = settings
        self.prefix = settings["envPrefix"]
        self._tokens: dict[str, tuple[str, float]] = {}

    def name(self, scheme: str) -> str:
        known: str | None = self.settings.get("credentialEnv", {}).get(scheme)
        return known or f"{self.prefix}_{env_name(scheme)}"

    def env(self, scheme: str, suffix: str = "") -> str | None:
        return os.environ.get(self.name(scheme) + suffix) or None

    def needs(self, name: str, scheme: dict[str, Json]) -> str:
        base = self.name(name)
        if scheme.get("type") == "http" and scheme.get("scheme") == "basic":
            return f"{base}_USERNAME and {base}_PASSWORD"
        if scheme.get("type") == "oauth2":
            return f"{base}_CLIENT_ID and {base}_CLIENT_SECRET"
        return base

    async def apply(
        self,
        name: str,
        scheme: dict[str, Json],
        parts: dict[str, dict[str, str]],
        client: httpx2.AsyncClient,
        base_url: str,
    ) -> bool:
        """Add the scheme's credential to ``parts`` (headers, query, cookies); False when
        its secret is not set."""
        kind = scheme.get("type")
        if kind == "apiKey":
            value = self.env(name)
            if value is None:
                return False
            parts[
                {"header": "headers", "query": "query", "cookie": "cookies"}[
                    scheme.get("in", "header")
                ]
            ][scheme["name"]] = value
            return True
        if kind == "http" and scheme.get("scheme") == "basic":
            user, password = self.env(name, "_USERNAME"), self.env(name, "_PASSWORD")
            if user is None or password is None:
                return False
            encoded = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
            parts["headers"]["Authorization"] = f"Basic {encoded}"
            return True
        if kind in ("http", "oauth2"):
            token = (
                self.env(name)
                if kind == "http"
                else await self._client_credentials(name, scheme, client, base_url)
            )
            if token is None:
                return False
            parts["headers"]["Authorization"] = f"Bearer {token}"
            return True
        return False

    async def _client_credentials(
        self, name: str, scheme: dict[str, Json], client: httpx2.AsyncClient, base_url: str
    ) -> str | None:
        cached = self._tokens.get(name)
        if cached and cached[1] > time.monotonic():
            return cached[0]
        client_id, secret = self.env(name, "_CLIENT_ID"), self.env(name, "_CLIENT_SECRET")
        if client_id is None or secret is None or not scheme.get("tokenUrl"):
            return None
        data = {"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret}
        if scheme.get("scopes"):
            data["scope"] = " ".join(sorted(scheme["scopes"]))
        token_url = str(scheme["tokenUrl"])
        if token_url.startswith("/"):  # relative to the API's origin
            token_url = str(httpx2.URL(base_url).copy_with(path=token_url, query=None))
        response = await client.post(token_url, data=data)
        if response.status_code >= 400:
            raise ToolError(f"the upstream token endpoint answered HTTP {response.status_code}")
        try:
            payload = response.json()
            token = str(payload["access_token"])
            lifetime = float(payload.get("expires_in", 300))
        except (ValueError, KeyError, TypeError):
            raise ToolError("the upstream token endpoint answered no access token") from None
        self._tokens[name] = (token, time.monotonic() + max(lifetime - 30, 10))
        return token
