"""Upstream OAuth tokens: requested at the token endpoint and cached until near their end.

Two grants: the server's own token (client credentials), and the caller's token exchanged
for one meant for the upstream (RFC 8693). Each cache key names the configuration and, for
an exchange, the caller and a digest of the inbound token, so that no caller is ever given
a token made for another. ``Credentials`` decides which grant a scheme uses; this module
only gets the tokens.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable

import httpx2

from .credential_cache import CacheBackend, TokenCache
from .credential_config import CredentialFailure, SchemeSource, fingerprint
from .identity import Identity
from .token_endpoint import exchange_form, token_request

logger = logging.getLogger(__name__)


def digest(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:32]


class UpstreamTokens:
    """Tokens from the authorization servers of the upstream's OAuth2 schemes.

    ``http`` is the client (or a function returning it) for token requests; without one a
    client is made on first use and closed by ``aclose``. ``base_url`` (a string or a
    function read at each call) resolves a relative ``tokenUrl``. A token is kept until
    ``skew`` seconds before it ends (at most a quarter of its lifetime early), and never
    beyond the end of the inbound token it was exchanged for.
    """

    def __init__(
        self,
        cache: CacheBackend,
        *,
        http: httpx2.AsyncClient | Callable[[], httpx2.AsyncClient] | None,
        base_url: str | Callable[[], str],
        timeout: float,
        skew: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._tokens = TokenCache(cache)
        self._http = http
        self._own_http: httpx2.AsyncClient | None = None
        self._base_url = base_url
        self.timeout = timeout
        self.skew = skew
        self._clock = clock

    # -- client credentials --------------------------------------------------------------

    def client_key(self, source: SchemeSource, client_id: str) -> str:
        tag = digest(self.token_url(source), client_id)
        return f"mcpgen:credentials:{source.scheme}:client:{tag}"

    async def client_credentials(self, source: SchemeSource, client_id: str, secret: str) -> str:
        """The server's own OAuth2 token, cached until near its end."""
        name = source.scheme
        form = {"grant_type": "client_credentials"}
        scopes = source.spec.get("scopes") or {}
        if scopes:
            form["scope"] = " ".join(sorted(scopes))

        async def request() -> tuple[str, float]:
            token, lifetime = await token_request(
                self._client(),
                name,
                self.token_url(source),
                form,
                client_id,
                secret,
                "post",
                what="token",
                timeout=self.timeout,
            )
            logger.info(
                "client credentials for %s: upstream token %s, expires in %.0f s",
                name,
                fingerprint(token),
                lifetime,
            )
            return token, self._ttl(lifetime, None)

        key = self.client_key(source, client_id)
        return await self._tokens.token(key, request, owner="server", subject="")

    def token_url(self, source: SchemeSource) -> str:
        url = str(source.token_url or source.spec.get("tokenUrl") or "")
        if url.startswith("/"):  # relative to the API's origin
            base = self._base_url() if callable(self._base_url) else self._base_url
            origin = httpx2.URL(base)
            url = str(origin.copy_with(path=url, query=None))
        return url

    # -- token exchange ------------------------------------------------------------------

    def exchange_key(
        self, source: SchemeSource, identity: Identity, scope: str | None, client_id: str
    ) -> str:
        assert identity.token
        config = digest(
            source.token_url or "",
            source.audience or "",
            source.resource or "",
            scope or "",
            client_id,
        )
        subject = digest(identity.token)
        return f"mcpgen:credentials:{source.scheme}:{config}:{identity.key}:{subject}"

    async def exchanged(
        self,
        source: SchemeSource,
        identity: Identity,
        scope: str | None,
        client_id: str,
        secret: str,
    ) -> str:
        """The caller's upstream token: from the cache, or exchanged (one request per key)."""
        name = source.scheme
        inbound = identity.token
        assert inbound
        form = exchange_form(inbound, source.audience, source.resource, scope)

        async def request() -> tuple[str, float]:
            assert source.token_url is not None
            try:
                token, lifetime = await token_request(
                    self._client(),
                    name,
                    source.token_url,
                    form,
                    client_id,
                    secret,
                    source.client_auth,
                    what="token exchange",
                    timeout=self.timeout,
                    hidden=(inbound,),
                )
            except CredentialFailure as exc:
                logger.warning(
                    "token exchange for %s failed for caller %s (inbound %s): %s",
                    name,
                    identity.key[:12],
                    fingerprint(inbound),
                    exc,
                )
                raise
            if token == inbound:
                raise CredentialFailure(
                    f"the authorization server answered the token exchange for {name} with "
                    "the caller's own token; it is never passed to the upstream API"
                )
            logger.info(
                "token exchange for %s: caller %s, inbound %s -> upstream %s, expires in %.0f s",
                name,
                identity.key[:12],
                fingerprint(inbound),
                fingerprint(token),
                lifetime,
            )
            return token, self._ttl(lifetime, identity.expires_at)

        key = self.exchange_key(source, identity, scope, client_id)
        return await self._tokens.token(key, request, owner=identity.key, subject=digest(inbound))

    # -- shared --------------------------------------------------------------------------

    async def forget(self, key: str) -> None:
        await self._tokens.forget(key)

    def _ttl(self, lifetime: float, ends_at: int | None) -> float:
        """How long to keep a token: until shortly before it (or the inbound token) ends."""
        ttl = lifetime - min(self.skew, lifetime / 4)
        if ends_at is not None:
            ttl = min(ttl, ends_at - self._clock())
        return ttl

    def _client(self) -> httpx2.AsyncClient:
        if isinstance(self._http, httpx2.AsyncClient):
            return self._http
        if self._http is not None:
            return self._http()
        if self._own_http is None:
            self._own_http = httpx2.AsyncClient(timeout=httpx2.Timeout(self.timeout))
        return self._own_http

    async def aclose(self) -> None:
        """Close the HTTP client this object made itself (never one it was given)."""
        if self._own_http is not None:
            await self._own_http.aclose()
            self._own_http = None
