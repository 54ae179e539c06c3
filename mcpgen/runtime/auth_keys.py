"""Where JWT signing keys come from: a JWKS file (re-read when it changes) or URL (cached)."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .errors import ConfigError

if TYPE_CHECKING:
    from .settings import Settings

logger = logging.getLogger(__name__)
JWKS_CACHE_SECONDS = 300
JWKS_MIN_REFRESH_SECONDS = 30


class KeySource:
    async def find(self, kid: str | None) -> Any:
        raise NotImplementedError


def _pick(keys: Sequence[Any], kid: str | None) -> Any | None:
    if kid is None:
        return keys[0] if len(keys) == 1 else None
    return next((key for key in keys if key.key_id == kid), None)


def _unknown() -> Exception:
    from .auth import AuthError

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
    """Keys from the authorization server's JWKS URL, cached; an unknown key id fetches
    them again at most every JWKS_MIN_REFRESH_SECONDS (so bad tokens cannot flood it)."""

    def __init__(self, url: str) -> None:
        from jwt import PyJWKClient

        self.client = PyJWKClient(url, cache_jwk_set=True, lifespan=JWKS_CACHE_SECONDS, timeout=10)
        self.refreshed = 0.0

    async def _keys(self, refresh: bool) -> list[Any]:
        import anyio
        import jwt

        from .auth import AuthError

        try:
            found = await anyio.to_thread.run_sync(self.client.get_jwk_set, refresh)
        except jwt.PyJWKClientError as exc:
            logger.error("cannot fetch the signing keys: %s", exc)
            raise AuthError("signing keys unavailable", status=503) from None
        return list(found.keys)

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
