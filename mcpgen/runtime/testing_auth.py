"""The generated tests' credentials for a server with authentication (``auth`` other than
none): static keys, or tokens of the stand-in authorization server (``testing_oauth``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .testing import Credentials


class AuthCredentials(Credentials):
    """What the test servers accept and what the test clients send, for the spec's auth."""

    keys = ("old-test-key", "new-test-key")  # two static keys, as during a rotation

    def __init__(self, spec: Mapping[str, Any]) -> None:
        super().__init__(spec)
        self.auth = spec.get("auth", {})
        self.type = self.auth.get("type", "none")
        self.issuer: Any = None  # testing_oauth.TokenIssuer
        self.token = ""
        if self.type == "oauth":
            from .testing_oauth import TokenIssuer

            self.issuer = TokenIssuer(
                self.settings.oauth_issuer or "", self.settings.oauth_audience or ""
            )
            self.token = self.issuer.token(self.auth.get("scopesSupported", []))

    def server_env(self, folder: Path) -> dict[str, str]:
        if self.issuer is not None:
            path = folder / "jwks.json"
            path.write_text(json.dumps(self.issuer.jwks()), "utf-8")
            return {self.settings.env_prefix + "JWKS_FILE": str(path)}
        if self.type in ("bearer", "apiKey"):
            return {str(self.auth["env"]): ",".join(self.keys)}
        return {}

    def headers(self, credential: str | None = None) -> dict[str, str]:
        header = str(self.auth.get("header") or "Authorization")
        if self.type == "oauth":
            return {"Authorization": f"Bearer {credential or self.token}"}
        if self.type in ("bearer", "apiKey"):
            key = credential or self.keys[-1]
            return {header: f"Bearer {key}" if header.lower() == "authorization" else key}
        return {}
