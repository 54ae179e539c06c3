"""What one server process needs of the shared-state interface (``shared.py`` has the
rest): a caller's view of per-user state (``BoundState``, ``ctx.store``) and its store's
interface, and ``requestState`` sealed under ``<PREFIX>STATE_SECRET``."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from mcp.server.request_state import RequestStateSecurity

from .errors import ConfigError, ToolError

if TYPE_CHECKING:
    from .settings import Settings

logger = logging.getLogger(__name__)


class SharedStateConfigError(ConfigError):
    """A shared-state setting that cannot work (bad URL, Redis unreachable at start, short
    secret); the message names the setting and never contains a password. A ``ConfigError``:
    the server's command line reports it in one line and exits."""


class SharedStateUnavailable(Exception):
    """Redis is unreachable right now and the call cannot be answered without it."""


class UserStateStore(Protocol):
    async def get(self, identity_key: str, name: str) -> Any | None: ...

    async def set(
        self, identity_key: str, name: str, value: Any, ttl: float | None = None
    ) -> None: ...

    async def delete(self, identity_key: str, name: str) -> None: ...


STORE_UNAVAILABLE = (
    "per-user state is unavailable right now (its store cannot be reached); try again"
)


class BoundState:
    """One caller's view of a ``UserStateStore``: what a handler sees as ``ctx.store``.
    Values are JSON, kept for ``ttl`` seconds (the store's default when None). While the
    store is unreachable every method raises ``ToolError`` (the server log says why once)."""

    def __init__(self, store: UserStateStore, identity_key: str) -> None:
        self._store, self._key = store, identity_key

    async def get(self, name: str, default: Any = None) -> Any:
        with _reachable():
            value = await self._store.get(self._key, name)
        return default if value is None else value

    async def set(self, name: str, value: Any, ttl: float | None = None) -> None:
        """Keep ``value`` under ``name``; None deletes it (it would read back as missing)."""
        if value is None:
            return await self.delete(name)
        with _reachable():
            await self._store.set(self._key, name, value, ttl)

    async def delete(self, name: str) -> None:
        with _reachable():
            await self._store.delete(self._key, name)


@contextmanager
def _reachable() -> Iterator[None]:
    try:
        yield
    except SharedStateUnavailable:
        raise ToolError(STORE_UNAVAILABLE) from None


def request_security(settings: Settings) -> RequestStateSecurity | None:
    """The SDK's ``requestState`` protection under ``<PREFIX>STATE_SECRET`` (AES-256-GCM,
    key derived by HKDF-SHA256 inside the SDK), so that every worker or replica opens what
    another sealed; None (a key of this process only) without one, with a warning when other
    workers could not open it (replicas that share Redis do not start without one:
    ``sharing.shared_for``)."""
    if settings.state_secret:
        check_secret(settings.state_secret)
        return RequestStateSecurity(keys=[settings.state_secret])
    if settings.workers > 1:
        logger.warning(
            "%sSTATE_SECRET is not set: a 2026-07-28 input_required round trip whose next "
            "round reaches another worker fails; set the same secret for every worker",
            settings.env_prefix,
        )
    return None


def check_secret(secret: str) -> None:
    """A secret to seal with: at least 32 bytes."""
    if len(secret.encode()) < 32:
        raise SharedStateConfigError(
            "the shared secret must be at least 32 characters of randomness; generate one with: "
            "python -c 'import secrets; print(secrets.token_hex(32))'"
        )


def check_name(what: str, value: str) -> None:
    if not isinstance(value, str) or not value or len(value) > 256:
        raise ValueError(f"{what} must be a non-empty string of at most 256 characters")
