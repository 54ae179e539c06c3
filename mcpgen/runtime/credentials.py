"""Credentials for the wrapped API, chosen per security scheme of its OpenAPI document.

Three sources, set per scheme by ``openapi.credentials`` in the manifest (``env`` when a
scheme is not named):

- ``env``: the server's own secrets from environment variables (API key, HTTP basic,
  bearer token, OAuth2 client credentials). Every caller reaches the upstream as the server.
- ``tokenExchange`` (RFC 8693): the caller's verified inbound token is exchanged at an
  authorization server for a token meant for the upstream (its own audience); the caller
  reaches the upstream as themselves. The inbound token itself never goes upstream.
- ``header``: a credential for the upstream that the caller (or a gateway in front of the
  server) sends in one allow-listed request header; never the MCP access token.

Secrets are never logged: at most a short fingerprint (``fingerprint``) of a token is.
The configuration is parsed in ``credential_config``, OAuth tokens are got by
``upstream_tokens`` (requested in ``token_endpoint``, kept in ``credential_cache``); this
module puts them together.
"""

from __future__ import annotations

import base64
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import httpx2

from .credential_cache import CacheBackend, MemoryCache
from .credential_config import (
    CredentialConfigError,
    CredentialFailure,
    Parts,
    Scheme,
    SchemeSource,
    check_config,
    env_name,
    fetches_tokens,
    fingerprint,
    from_header,
    missing,
    parse_sources,
    place,
    requirement_scopes,
    variables,
)
from .identity import LOCAL, Identity

if TYPE_CHECKING:  # made only when a source needs tokens (not carried otherwise)
    from .upstream_tokens import UpstreamTokens

__all__ = [
    "SKEW",
    "CacheBackend",
    "Credential",
    "CredentialConfigError",
    "CredentialError",
    "Credentials",
    "MemoryCache",
    "check_config",
    "fingerprint",
]


SKEW = 30.0
"""Seconds before an upstream token's end at which a cached copy is no longer used."""

Requirement = Mapping[str, Sequence[str]]
ErrorFactory = Callable[[str], BaseException]


class CredentialError(Exception):
    """The default error for a credential that cannot be had; pass ``error=`` to replace it."""


@dataclass(frozen=True)
class Credential:
    """One scheme's credential, placed as the scheme says (repr hides every secret).

    ``value`` is the secret as the scheme carries it: the API key, the bearer token, or the
    base64 ``user:password`` of HTTP basic.
    """

    scheme: str
    source: str
    value: str = field(repr=False)
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    query: Mapping[str, str] = field(default_factory=dict, repr=False)
    cookies: Mapping[str, str] = field(default_factory=dict, repr=False)


class Credentials:
    """The upstream credential of every security scheme, for a given caller.

    ``schemes``: the OpenAPI security schemes as the build stores them (``securitySchemes``
    in ``_spec.json``). ``config``: ``openapi.credentials`` of the manifest. ``env_prefix``
    and ``env_names`` (``credentialEnv``) name the environment variables, as ``Upstream``
    did. ``base_url`` (a string or a function read at each call) resolves a relative OAuth2
    ``tokenUrl``. ``error`` builds the exception raised when a credential cannot be had
    (the runtime's tool error). ``server_auth_header`` is the header the MCP server reads
    its own callers' credential from: it can never be a ``header`` source. ``http`` is the
    client (or a function returning it) for token requests; redirects are never followed.
    """

    def __init__(
        self,
        schemes: Mapping[str, Scheme],
        config: Mapping[str, Mapping[str, Any]] | None = None,
        *,
        env_prefix: str,
        env_names: Mapping[str, str] | None = None,
        base_url: str | Callable[[], str] = "",
        error: ErrorFactory = CredentialError,
        cache: CacheBackend | None = None,
        http: httpx2.AsyncClient | Callable[[], httpx2.AsyncClient] | None = None,
        server_auth_header: str | None = None,
        timeout: float = 10.0,
        skew: float = SKEW,
        environ: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.schemes = dict(schemes)
        self.env_prefix = env_prefix
        self.env_names = dict(env_names or {})
        self._error = error
        self.cache: CacheBackend = cache if cache is not None else MemoryCache()
        self._http, self._base_url, self._timeout = http, base_url, timeout
        self._skew, self._clock = skew, clock
        self._tokens: UpstreamTokens | None = None
        self._environ = environ
        self.sources = parse_sources(self.schemes, config, server_auth_header)

    # -- public --------------------------------------------------------------------------

    async def apply(
        self,
        security: Sequence[Requirement],
        identity: Identity | None = None,
        inbound_headers: Mapping[str, str] | None = None,
    ) -> Parts:
        """Headers, query and cookies of the first security alternative that can be met.

        An alternative is skipped when a credential is not available (a variable not set,
        a header not sent, a caller with no token to exchange); a token request that fails
        raises at once, so a refused caller never falls back to the server's own secrets.
        """
        if not security:
            return {}, {}, {}
        who = identity or LOCAL
        needs: list[str] = []
        for alternative in security:
            missing = [
                reason
                for name in alternative
                if (reason := self._unavailable(name, who, inbound_headers)) is not None
            ]
            if missing:
                needs.append(" and ".join(missing))
                continue
            headers: dict[str, str] = {}
            query: dict[str, str] = {}
            cookies: dict[str, str] = {}
            for name, scopes in alternative.items():
                credential = await self.for_scheme(name, who, inbound_headers, scopes=scopes)
                headers.update(credential.headers)
                query.update(credential.query)
                cookies.update(credential.cookies)
            return headers, query, cookies
        raise self._error("missing credentials for the upstream API: " + " or ".join(needs))

    async def for_scheme(
        self,
        name: str,
        identity: Identity | None = None,
        inbound_headers: Mapping[str, str] | None = None,
        *,
        scopes: Sequence[str] = (),
    ) -> Credential:
        """The caller's credential for one scheme (for handlers and overrides too).

        ``scopes``: the operation's required scopes for an OAuth2 scheme; a token exchange
        asks for them when the configuration sets no ``scope``.
        """
        who = identity or LOCAL
        source = self.sources.get(name)
        if source is None:
            raise self._error(f"the upstream API has no security scheme named {name!r}")
        try:
            reason = self._unavailable(name, who, inbound_headers)
            if reason is not None:
                raise CredentialFailure(f"missing credentials for the upstream API: {reason}")
            if source.source == "tokenExchange":
                value = await self._exchanged(source, who, scopes)
            elif source.source == "header":
                value = from_header(source, inbound_headers, who.token or "")
            else:
                value = await self._from_env(source)
        except CredentialFailure as exc:
            raise self._error(str(exc)) from None
        headers, query, cookies = place(source.spec, value)
        return Credential(name, source.source, value, headers, query, cookies)

    async def invalidate(
        self, name: str, identity: Identity | None = None, *, scopes: Sequence[str] = ()
    ) -> None:
        """Forget a cached upstream token (call it when the upstream answers 401 with it)."""
        source = self.sources.get(name)
        if source is None:
            return
        who = identity or LOCAL
        client_id = self._env(name, "_CLIENT_ID")
        if source.source == "tokenExchange" and who.token:
            key = self.tokens.exchange_key(
                source, who, self._scope(source, scopes), client_id or ""
            )
        elif fetches_tokens(source) and client_id:  # (a user-flow scheme fetches none)
            key = self.tokens.client_key(source, client_id)
        else:
            return
        await self.tokens.forget(key)

    async def invalidate_all(
        self, security: Sequence[Requirement], identity: Identity | None = None
    ) -> None:
        """Forget the caller's cached tokens for every scheme an operation may use (on 401)."""
        for alternative in security:
            for name, scopes in alternative.items():
                await self.invalidate(name, identity, scopes=scopes)

    def env_name(self, scheme: str) -> str:
        """The environment variable holding a scheme's secret (the base of the others)."""
        return self.env_names.get(scheme) or f"{self.env_prefix}_{env_name(scheme)}"

    def environment(self) -> list[dict[str, Any]]:
        """Every environment variable the credentials read, for ``_spec.json``/README."""
        return [
            {
                "name": name,
                "description": f"{meaning} ({scheme})",
                "secret": secret,
                "required": False,
                "default": None,
            }
            for name, scheme, meaning, secret in variables(self.sources, self.env_name)
        ]

    @property
    def tokens(self) -> UpstreamTokens:
        """Tokens from an authorization server (token exchange, OAuth2 client credentials),
        made when a source first needs one: a package whose sources need none does not
        carry ``upstream_tokens``."""
        if self._tokens is None:
            from .upstream_tokens import UpstreamTokens

            self._tokens = UpstreamTokens(
                self.cache,
                http=self._http,
                base_url=self._base_url,
                timeout=self._timeout,
                skew=self._skew,
                clock=self._clock,
            )
        return self._tokens

    async def aclose(self) -> None:
        """Close the HTTP client this object made itself (never one it was given)."""
        if self._tokens is not None:
            await self._tokens.aclose()

    # -- availability --------------------------------------------------------------------

    def _unavailable(
        self, name: str, identity: Identity, inbound: Mapping[str, str] | None
    ) -> str | None:
        """Why a scheme's credential cannot be had right now (None: it can be tried)."""
        source = self.sources.get(name)
        if source is None:
            return f"{name}: not a security scheme of the upstream API"
        return missing(
            source, self.env_name(name), partial(self._env, name), identity.token, inbound
        )

    # -- env -----------------------------------------------------------------------------

    def _env(self, scheme: str, suffix: str = "") -> str | None:
        environ = os.environ if self._environ is None else self._environ
        return environ.get(self.env_name(scheme) + suffix) or None

    async def _from_env(self, source: SchemeSource) -> str:
        name, kind = source.scheme, source.spec.get("type")
        if kind == "http" and source.spec.get("scheme") == "basic":
            user, password = self._env(name, "_USERNAME"), self._env(name, "_PASSWORD")
            assert user is not None and password is not None
            return base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        if kind == "oauth2" and source.spec.get("tokenUrl"):  # (else a token got out of band)
            client_id, secret = self._client_secret(name)
            token: str = await self.tokens.client_credentials(source, client_id, secret)
            return token  # typed here: a package without token modules sees them as Any
        value = self._env(name)
        assert value is not None
        return value

    def _client_secret(self, scheme: str) -> tuple[str, str]:
        """The OAuth2 client of a scheme (``_unavailable`` has checked that both are set)."""
        client_id, secret = self._env(scheme, "_CLIENT_ID"), self._env(scheme, "_CLIENT_SECRET")
        assert client_id is not None and secret is not None
        return client_id, secret

    # -- token exchange ------------------------------------------------------------------

    async def _exchanged(
        self, source: SchemeSource, identity: Identity, scopes: Sequence[str]
    ) -> str:
        client_id, secret = self._client_secret(source.scheme)
        scope = self._scope(source, scopes)
        token: str = await self.tokens.exchanged(source, identity, scope, client_id, secret)
        return token

    def _scope(self, source: SchemeSource, scopes: Sequence[str]) -> str | None:
        if source.scope is not None:
            return source.scope
        return requirement_scopes(scopes)
