"""The authorization server's token introspection endpoint (RFC 7662), with a short cache."""

from __future__ import annotations

import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .errors import ConfigError

if TYPE_CHECKING:
    from .local_cache import TTLCache

logger = logging.getLogger(__name__)
CACHE_SECONDS = 60  # an introspected token is trusted this long (or until it expires)
CACHE_SIZE = 10_000


class Introspection:
    """Asks ``url`` about a token, authenticated with ``<PREFIX>INTROSPECTION_CLIENT_ID`` /
    ``_SECRET`` (HTTP Basic). Active answers are cached by a hash of the token for
    CACHE_SECONDS (never past ``exp``); refusals are not, so a revoked token stops working
    within that time. An unreachable or broken endpoint raises ``ConnectionError``.

    ``shared`` (a shared-state TTL cache) replaces the in-process cache (which then only
    says which tokens were ``seen``), so replicas ask once per token between them; it hashes the token itself, and a miss (Redis away) only
    costs a request to the endpoint."""

    def __init__(
        self,
        url: str,
        prefix: str,
        environ: Mapping[str, str],
        shared: TTLCache | None = None,
    ) -> None:
        self.url = url
        client_id = environ.get(prefix + "INTROSPECTION_CLIENT_ID", "")
        secret = environ.get(prefix + "INTROSPECTION_CLIENT_SECRET", "")
        if bool(client_id) != bool(secret):
            raise ConfigError(
                f"set both {prefix}INTROSPECTION_CLIENT_ID and "
                f"{prefix}INTROSPECTION_CLIENT_SECRET, or neither"
            )
        self.credentials = (client_id, secret) if client_id else None
        if self.credentials is None:
            logger.warning("token introspection without client credentials: most servers refuse it")
        self.cache: OrderedDict[bytes, tuple[float, dict[str, Any]]] = OrderedDict()
        self.shared = shared
        self._client: Any = None

    async def claims(self, token: str) -> dict[str, Any]:
        key = hashlib.sha256(token.encode()).digest()
        now = time.monotonic()
        cached = self.cache.get(key)
        if self.shared is None and cached is not None and cached[0] > now:
            self.cache.move_to_end(key)
            return cached[1]
        shared = await self.shared.get(token) if self.shared is not None else None
        if isinstance(shared, dict):
            self._remember(key, now, shared)
            return shared
        claims = await self._ask(token)
        expires = claims.get("exp")
        keep = float(CACHE_SECONDS)
        if isinstance(expires, int | float) and not isinstance(expires, bool):
            keep = min(keep, max(0.0, expires - time.time()))
        if self.shared is not None:  # kept there; here only as seen
            if claims.get("active") is True and keep > 0:
                await self.shared.set(token, claims, keep)
            keep = 0.0
        self._remember(key, now + keep, claims)
        return claims

    def _remember(self, key: bytes, until: float, claims: dict[str, Any]) -> None:
        """Keep an active answer until ``until`` (monotonic); forget a refused token."""
        if claims.get("active") is not True:
            self.cache.pop(key, None)
            return
        self.cache[key] = (until, claims)
        self.cache.move_to_end(key)
        while len(self.cache) > CACHE_SIZE:
            self.cache.popitem(last=False)

    def seen(self, token: str) -> bool:
        """Whether ``token`` was active when last asked about (in this process; kept past
        CACHE_SECONDS until pushed out): ``VerifyingMiddleware`` charges a token not seen to
        its address before asking, so a refused address cannot make the issuer answer for
        every junk token, and a valid caller behind it pays once per token, not per call."""
        return hashlib.sha256(token.encode()).digest() in self.cache

    async def _ask(self, token: str) -> dict[str, Any]:
        import httpx2

        from .capped import AUTH_ANSWER_SECONDS, MAX_AUTH_ANSWER_BYTES, fetch

        if self._client is None:
            self._client = httpx2.AsyncClient(timeout=AUTH_ANSWER_SECONDS)
        form = {"token": token, "token_type_hint": "access_token"}
        too_big = ConnectionError(f"an answer larger than {MAX_AUTH_ANSWER_BYTES} bytes")
        try:
            sent = self._client.build_request(
                "POST", self.url, data=form, headers={"Accept": "application/json"}
            )
            response = await fetch(
                self._client,
                sent,
                MAX_AUTH_ANSWER_BYTES,
                too_big,
                AUTH_ANSWER_SECONDS,
                auth=self.credentials,
            )
        except (httpx2.HTTPError, ConnectionError) as exc:
            reason = str(exc) if exc is too_big else type(exc).__name__
            logger.error("token introspection failed: %s", reason)
            raise ConnectionError("introspection") from None
        if response.status_code != 200:
            logger.error("token introspection answered %d", response.status_code)
            raise ConnectionError("introspection")
        try:
            claims = response.json()
        except ValueError:
            claims = None
        if not isinstance(claims, dict):
            logger.error("token introspection answered something other than a JSON object")
            raise ConnectionError("introspection")
        return claims
