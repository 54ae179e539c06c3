"""Where JWT signing keys come from: a JWKS file (re-read when it changes) or URL (cached)."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .errors import AuthError, ConfigError

if TYPE_CHECKING:
    from .settings import Settings

logger = logging.getLogger(__name__)
# The OAuth settings' flags (``cli``; ``settings.AUTH_SETTINGS``: their manifest keys).
OAUTH_HELP = {
    "oauth_issuer": "authorization server (default {d.oauth_issuer})",
    "oauth_audience": "audience tokens must carry (default {d.oauth_audience})",
    "jwks_url": "URL of the authorization server's signing keys",
    "jwks_file": "a JWKS file with the signing keys",
    "introspection_url": "token introspection endpoint (RFC 7662) for opaque tokens",
}
JWKS_CACHE_SECONDS = 300
JWKS_MIN_REFRESH_SECONDS = 30
JWKS_RETRY_SECONDS = 5  # after a failed fetch, requests are refused (503) unfetched this long


class KeySource:
    async def find(self, kid: str | None) -> Any:
        raise NotImplementedError


def _pick(keys: Sequence[Any], kid: str | None) -> Any | None:
    if kid is None:
        return keys[0] if len(keys) == 1 else None
    return next((key for key in keys if key.key_id == kid), None)


def _unknown() -> Exception:
    return AuthError("token signed with an unknown key")


class FileKeys(KeySource):
    """A JWKS file, read again when it changes (replace the file to rotate keys)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.stamp = -1.0
        self.keys: list[Any] = []
        self._load()

    def _load(self) -> None:
        import jwt

        try:
            stamp = os.stat(self.path).st_mtime
            if stamp != self.stamp:
                with open(self.path, encoding="utf-8") as handle:
                    self.keys = list(jwt.PyJWKSet.from_json(handle.read()).keys)
                self.stamp = stamp
        except (OSError, ValueError, jwt.PyJWTError) as exc:
            if not self.keys:
                raise ConfigError(f"cannot read the JWKS file {self.path}: {exc}") from None
            logger.error("cannot reload the JWKS file %s: %s", self.path, exc)

    async def find(self, kid: str | None) -> Any:
        self._load()
        key = _pick(self.keys, kid)
        if key is None:
            raise _unknown()
        return key


class UrlKeys(KeySource):
    """Keys from the authorization server's JWKS URL, cached JWKS_CACHE_SECONDS; an unknown
    key id fetches them again at most every JWKS_MIN_REFRESH_SECONDS (so bad tokens cannot
    flood it), after a failure at most every JWKS_RETRY_SECONDS, the last keys fetched kept
    in use meanwhile (an issuer's outage refuses no caller it had keys for). The document is read up to
    ``capped.MAX_AUTH_ANSWER_BYTES``; a redirect is not followed (it could lead anywhere)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.keys: list[Any] = []
        self.fetched = 0.0
        self.refreshed = 0.0
        self.failed = -float(JWKS_RETRY_SECONDS)
        self._client: Any = None
        self._lock: Any = None

    async def _keys(self, refresh: bool) -> list[Any]:
        import anyio

        if self._lock is None:
            self._lock = anyio.Lock()
        stamp = time.monotonic()
        async with self._lock:  # one fetch at a time; the others use what it found
            if self.keys and self.fetched >= (stamp if refresh else stamp - JWKS_CACHE_SECONDS):
                return self.keys
            try:
                self.keys = await self._fetch()
                self.fetched = time.monotonic()
            except Exception:
                if not self.keys:
                    raise
                # the issuer is away: the keys it served last stay in use (_fetch said why)
        return self.keys

    async def _fetch(self) -> list[Any]:
        import httpx2
        import jwt

        from .capped import AUTH_ANSWER_SECONDS, MAX_AUTH_ANSWER_BYTES, fetch

        if self._client is None:
            self._client = httpx2.AsyncClient(timeout=AUTH_ANSWER_SECONDS)
        too_big = ValueError(f"an answer larger than {MAX_AUTH_ANSWER_BYTES} bytes")
        unavailable = AuthError("signing keys unavailable", status=503)
        if time.monotonic() - self.failed < JWKS_RETRY_SECONDS:
            raise unavailable  # it failed just now (and said why): not asked again yet
        try:
            sent = self._client.build_request("GET", self.url)
            answer = await fetch(
                self._client, sent, MAX_AUTH_ANSWER_BYTES, too_big, AUTH_ANSWER_SECONDS
            )
            answer.raise_for_status()
            document = answer.json()
            if not isinstance(document, dict):
                raise ValueError("not a JSON object")
            return list(jwt.PyJWKSet.from_dict(document).keys)
        except (httpx2.HTTPError, ValueError, jwt.PyJWTError) as exc:
            logger.error("cannot fetch the signing keys: %s", exc)
            self.failed = time.monotonic()
            raise unavailable from None

    async def find(self, kid: str | None) -> Any:
        key = _pick(await self._keys(False), kid)
        if key is None and time.monotonic() - self.refreshed > JWKS_MIN_REFRESH_SECONDS:
            self.refreshed = time.monotonic()
            key = _pick(await self._keys(True), kid)
        if key is None:
            raise _unknown()
        return key


def keys_from(settings: Settings) -> KeySource | None:
    if settings.jwks_file:
        return FileKeys(settings.jwks_file)
    if settings.jwks_url:
        return UrlKeys(settings.jwks_url)
    return None
