"""The generated tests' stand-in authorization server (``auth: oauth`` only)."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any


class TokenIssuer:
    """A stand-in authorization server: an RSA key made for this session, its JWKS, and
    access tokens signed with it."""

    def __init__(self, issuer: str, audience: str, kid: str = "test-key") -> None:
        from cryptography.hazmat.primitives.asymmetric import rsa

        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = kid
        self.issuer = issuer
        self.audience = audience

    def jwks(self) -> dict[str, Any]:
        from jwt.algorithms import RSAAlgorithm

        jwk: dict[str, Any] = json.loads(RSAAlgorithm.to_jwk(self.key.public_key()))
        jwk.update(kid=self.kid, alg="RS256", use="sig")
        return {"keys": [jwk]}

    def token(
        self,
        scopes: Sequence[str],
        *,
        audience: str | None = None,
        issuer: str | None = None,
        expires_in: int = 3600,
        subject: str = "test-user",
    ) -> str:
        import jwt

        now = int(time.time())
        claims = {
            "iss": self.issuer if issuer is None else issuer,
            "aud": self.audience if audience is None else audience,
            "sub": subject,
            "iat": now,
            "exp": now + expires_in,
            "scope": " ".join(scopes),
        }
        return jwt.encode(claims, self.key, algorithm="RS256", headers={"kid": self.kid})
