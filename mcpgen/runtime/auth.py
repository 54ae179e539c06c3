"""Checking the credential an HTTP or WebSocket request presents: static keys, or OAuth 2.1
access tokens (JWTs against the issuer's keys, opaque tokens by introspection, RFC 7662).
A verified credential becomes an ``Identity``; nothing here forwards it anywhere. Carried
only by a package whose manifest configures ``auth``."""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import re
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .errors import AuthError, ConfigError
from .identity import Identity
from .settings import Settings

if TYPE_CHECKING:  # OAuth's modules: a package without OAuth does not carry them
    from .auth_keys import KeySource
    from .introspection import Introspection
    from .local_cache import TTLCache

logger = logging.getLogger(__name__)
DEFAULT_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384")
_BASE64URL = re.compile(r"[A-Za-z0-9_-]*")
IDENTITY_CLAIMS = ("sub", "client_id", "username")  # the first one present names the caller
IDENTITY_KINDS = {"sub": "subject", "client_id": "client", "username": "username"}


class Authenticator:
    """No authentication (``auth: none``): every request passes as the anonymous caller;
    the base of those that verify a credential."""

    enabled = False
    kind = "none"

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = config
        self.header = str(config.get("header") or "Authorization")

    async def verify(self, credential: str) -> Identity:
        return Identity("anonymous")

    def asks(self, credential: str) -> bool:
        """Whether checking ``credential`` asks another server (``OAuthTokens``)."""
        return False


class StaticKeys(Authenticator):
    """Bearer tokens or API keys from one environment variable (comma separated): to
    rotate, add the new key, move clients over, then remove the old one. Each key grants
    every scope."""

    enabled = True

    def __init__(self, config: Mapping[str, Any], environ: Mapping[str, str]) -> None:
        super().__init__(config)
        self.kind = str(config.get("type"))
        name = str(config.get("env"))
        self.keys = [
            key.strip().encode() for key in environ.get(name, "").split(",") if key.strip()
        ]
        if not self.keys:
            raise ConfigError(f"auth {self.kind}: set {name} to one or more keys (comma separated)")
        logger.info(
            "accepting %d key(s): %s", len(self.keys), ", ".join(map(fingerprint, self.keys))
        )

    async def verify(self, credential: str) -> Identity:
        given = credential.encode()
        found = None
        for key in self.keys:  # compare with every key, in constant time
            if hmac.compare_digest(given, key):
                found = key
        if not credential or found is None:
            raise AuthError("unknown key")
        # the key is kept (never logged) so that a header credential source can refuse it
        return Identity(fingerprint(found), None, issuer="static", token=credential)


def fingerprint(key: bytes) -> str:
    return "key-" + hashlib.sha256(key).hexdigest()[:8]


def _time_claim(claims: Mapping[str, Any], name: str) -> float | None:
    """A NumericDate claim, refused when it is anything but a JSON number."""
    value = claims.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise AuthError(f"claim {name!r} is not a number")
    return float(value)


def claimed_scopes(claims: Mapping[str, Any]) -> frozenset[str]:
    value = claims.get("scope", claims.get("scp", ""))
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, list):
        return frozenset(str(item) for item in value)
    return frozenset()


def looks_like_jwt(token: str) -> bool:
    """Three dot-separated base64url parts (a JWS): anything else is an opaque token."""
    parts = token.split(".")
    return len(parts) == 3 and all(parts[:2]) and all(_BASE64URL.fullmatch(p) for p in parts)


class OAuthTokens(Authenticator):
    """OAuth 2.1 resource server: JWT access tokens checked for signature (JWKS), issuer,
    audience (the resource indicator) and expiry; opaque tokens (or every token, without
    signing keys) asked about at the introspection endpoint, with the same checks on its
    answer; scopes from ``scope`` or ``scp``."""

    enabled = True
    kind = "oauth"

    def __init__(
        self,
        config: Mapping[str, Any],
        settings: Settings,
        environ: Mapping[str, str],
        cache: TTLCache | None = None,
    ) -> None:
        from .auth_keys import keys_from
        from .introspection import Introspection

        super().__init__(config)
        if not settings.oauth_issuer or not settings.oauth_audience:
            raise ConfigError("auth oauth: the issuer and the audience must be set")
        self.issuer = settings.oauth_issuer
        self.audience = settings.oauth_audience
        self.algorithms = list(config.get("algorithms") or DEFAULT_ALGORITHMS)
        self.leeway = float(config.get("leeway", 30))
        self.keys: KeySource | None = keys_from(settings)
        self.introspection: Introspection | None = None
        if settings.introspection_url:
            self.introspection = Introspection(
                settings.introspection_url, settings.env_prefix, environ, shared=cache
            )
        if self.keys is None and self.introspection is None:
            prefix = settings.env_prefix
            raise ConfigError(
                f"auth oauth: set {prefix}JWKS_URL or {prefix}JWKS_FILE (the signing keys) "
                f"or {prefix}INTROSPECTION_URL (token introspection)"
            )

    def asks(self, credential: str) -> bool:
        """Whether checking ``credential`` asks the introspection endpoint about a token not
        seen active before (``Introspection.seen``)."""
        if self.introspection is None or (self.keys is not None and looks_like_jwt(credential)):
            return False
        return bool(credential) and not self.introspection.seen(credential)

    async def verify(self, credential: str) -> Identity:
        if not credential:
            raise AuthError("expected a Bearer token")
        if self.keys is not None and (self.introspection is None or looks_like_jwt(credential)):
            claims = await self._jwt_claims(credential, self.keys)
        else:
            assert self.introspection is not None
            try:
                claims = await self.introspection.claims(credential)
            except ConnectionError:
                raise AuthError("token introspection unavailable", status=503) from None
            if claims.get("active") is not True:
                raise AuthError("token is not active")
            self._check_claims(claims)
        return self._identity(claims, credential)

    def _check_claims(self, claims: Mapping[str, Any]) -> None:
        """What ``jwt.decode`` checks of a JWT, for an introspection answer."""
        expires = _time_claim(claims, "exp")
        if expires is not None and expires + self.leeway < time.time():
            raise AuthError("token expired")
        if claims.get("iss", self.issuer) != self.issuer:
            raise AuthError("token from an unexpected issuer")
        audience = claims.get("aud")
        audiences = [audience] if isinstance(audience, str) else audience
        if not isinstance(audiences, list) or self.audience not in audiences:
            # MCP: a server accepts only tokens issued for it; an answer without aud cannot say so
            raise AuthError("token not issued for this resource (audience)")

    def _identity(self, claims: Mapping[str, Any], credential: str) -> Identity:
        expires = _time_claim(claims, "exp")
        # Who the token speaks for, and by which claim: a client-credentials token of
        # client "carol" (no sub) and a user "carol" are two callers (``Identity.kind``).
        # A token naming nobody has no identity to key state, sessions and limits on.
        kind, subject = next(
            ((name, claims[name]) for name in IDENTITY_CLAIMS if claims.get(name)), ("", None)
        )
        if subject is None:
            raise AuthError("token names no subject (sub, client_id or username)")
        client = claims.get("client_id") or claims.get("azp")
        return Identity(
            str(subject),
            claimed_scopes(claims),
            int(expires) if expires is not None else None,
            client=str(client) if client else None,
            issuer=self.issuer,
            claims=dict(claims),
            token=credential,
            kind=IDENTITY_KINDS[kind],
        )

    async def _jwt_claims(self, credential: str, keys: KeySource) -> dict[str, Any]:
        import jwt

        try:
            header = jwt.get_unverified_header(credential)
        except jwt.PyJWTError:
            raise AuthError("malformed token") from None
        if header.get("alg") not in self.algorithms:
            alg = str(header.get("alg"))  # the caller's text, unsigned: short and ASCII
            raise AuthError(f"signature algorithm {alg[:20]!a} is not accepted")
        key = await keys.find(header.get("kid"))
        try:
            claims: dict[str, Any] = jwt.decode(
                credential,
                key,
                algorithms=self.algorithms,
                audience=self.audience,
                issuer=self.issuer,
                leeway=self.leeway,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.ExpiredSignatureError:
            raise AuthError("token expired") from None
        except jwt.InvalidAudienceError:
            raise AuthError("token not issued for this resource (audience)") from None
        except jwt.InvalidIssuerError:
            raise AuthError("token from an unexpected issuer") from None
        except jwt.PyJWTError as exc:
            raise AuthError(f"invalid token: {exc}") from None
        for name in ("exp", "nbf", "iat"):
            _time_claim(claims, name)
        return claims


def authenticator(
    spec: Mapping[str, Any],
    settings: Settings,
    environ: Mapping[str, str] | None = None,
    introspection_cache: TTLCache | None = None,
) -> Authenticator:
    """The authenticator the manifest declares; ``introspection_cache`` (shared by replicas)
    keeps token introspection answers instead of this process."""
    config = spec.get("auth", {})
    env = os.environ if environ is None else environ
    kind = config.get("type", "none")
    if kind == "oauth":
        return OAuthTokens(config, settings, env, introspection_cache)
    if kind in ("bearer", "apiKey"):
        return StaticKeys(config, env)
    return Authenticator(config)
