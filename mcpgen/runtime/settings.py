"""How a server runs: defaults from the manifest, overridden by environment variables
(``<PREFIX><NAME>``) and by command-line flags (``__main__``), in that order."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from .errors import ConfigError

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
SSE_PATH = "/sse"
WEBSOCKET_PATH = "/ws"
TRANSPORTS = ("stdio", "http", "sse", "websocket")
# what a boolean variable may say (any other is refused)
BOOLEANS = dict.fromkeys(("1", "true", "yes", "on"), True)
BOOLEANS |= dict.fromkeys(("0", "false", "no", "off", ""), False)
# The OAuth settings and the manifest's ``auth`` key giving each one's default
# (``Settings.defaults``; their flags: ``auth_keys.OAUTH_HELP``).
AUTH_SETTINGS = {
    "oauth_issuer": "issuer",
    "oauth_audience": "audience",
    "jwks_url": "jwksUrl",
    "jwks_file": "jwksFile",
    "introspection_url": "introspectionUrl",
}
# The server's own routes (http_guard, prometheus, http_legacy): an MCP endpoint at or under
# one was shadowed by it or, at /healthz, served without authentication.
OWN_PATHS = ("/healthz", "/metrics", SSE_PATH, WEBSOCKET_PATH, "/messages", "/.well-known")


def own_route(path: str) -> bool:
    return any(path == own or path.startswith(own + "/") for own in OWN_PATHS)


def offered(spec: Mapping[str, Any]) -> tuple[str, ...]:  # (``transports.offer``, or all)
    return tuple(spec.get("transports", TRANSPORTS))


@dataclass(frozen=True)
class Settings:
    """Every run-time setting (what each means: ``cli.HELP``); ``env_prefix``: the variables'."""

    env_prefix: str = "MCP_"
    transport: str = "stdio"
    host: str = "127.0.0.1"
    port: int = 8000
    path: str = "/mcp"
    stateless: bool = False
    json_response: bool = False
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    cors_origins: tuple[str, ...] = ()
    max_body_size: int = 4 * 1024 * 1024
    rate_limit: float = 0.0  # requests per second per caller; 0 = no limit
    rate_burst: int = 1
    retry_interval: int = 1000  # ms before clients resume a broken SSE stream; 0 = no field
    event_store_size: int = 1000  # 0 = no resumability
    shutdown_timeout: float = 10.0
    max_sessions: int = 1000  # open stateful sessions (streamable HTTP)
    max_sessions_per_caller: int = 0  # 0: half of max_sessions, at most 50
    max_tasks: int = 50_000  # MCP tasks kept for all callers (with Redis: all replicas)
    trusted_proxies: tuple[str, ...] = ()  # none: the rate limit keys on the peer address
    session_idle_timeout: float = 600.0  # seconds before an idle stateful session is closed
    header_timeout: float = 10.0  # seconds a client may take to send a request's headers
    body_timeout: float = 30.0  # seconds between two chunks of a request body
    public_url: str | None = None
    workers: int = 1
    log_level: str = "INFO"
    log_format: str = "text"
    oauth_issuer: str | None = None
    oauth_audience: str | None = None
    jwks_url: str | None = None
    jwks_file: str | None = None
    introspection_url: str | None = None
    redis_url: str | None = None  # state shared by replicas (events, limits, caches, ctx.store)
    # Seals 2026-07-28 requestState (and shared values) alike on every replica; only ever
    # from the environment (<PREFIX>STATE_SECRET), never a flag or the manifest.
    state_secret: str | None = field(default=None, repr=False)

    @classmethod
    def defaults(cls, spec: Mapping[str, Any]) -> Settings:  # the manifest's choices
        raw = dict(spec.get("settings", {}))
        raw.pop("state_secret", None)  # a secret comes from the environment only
        auth = spec.get("auth", {})
        if auth.get("type") == "oauth":
            for key, name in AUTH_SETTINGS.items():
                raw.setdefault(key, auth.get(name))
        values: dict[str, Any] = {}
        for name in raw.keys() & {item.name for item in fields(cls)}:
            value = raw[name]
            if isinstance(value, list):
                value = tuple(value)
            elif isinstance(getattr(cls, name), float) and isinstance(value, int):
                value = float(value)
            values[name] = value
        return cls(**values)

    @classmethod
    def from_env(
        cls, spec: Mapping[str, Any], environ: Mapping[str, str] | None = None
    ) -> Settings:  # the defaults, overridden by ``<PREFIX>*`` environment variables
        env = os.environ if environ is None else environ
        defaults = cls.defaults(spec)
        values: dict[str, Any] = {}
        for item in fields(cls)[1:]:  # (not env_prefix)
            key = defaults.env_prefix + item.name.upper()
            if (raw := env.get(key)) is not None:
                values[item.name] = _parse(key, raw, getattr(defaults, item.name))
        chosen = values.get("transport", defaults.transport)
        if chosen in TRANSPORTS and chosen not in offered(spec):
            raise ConfigError(
                f"{defaults.env_prefix}TRANSPORT: this server does not offer {chosen!r} "
                f"(it offers {', '.join(offered(spec))})"
            )
        return defaults.updated(values)

    def updated(self, values: Mapping[str, Any]) -> Settings:
        """These settings with ``values``, checked; signing keys given one way replace both."""
        if {"jwks_url", "jwks_file"} & set(values):
            values = {"jwks_url": None, "jwks_file": None, **values}
        return replace(self, **values).checked()

    def to_env(self) -> dict[str, str]:  # what makes ``from_env`` return these settings
        values = {k: v for k, v in asdict(self).items() if v is not None and k != "env_prefix"}
        return {
            self.env_prefix + k.upper(): ",".join(v) if isinstance(v, tuple) else str(v)
            for k, v in values.items()
        }

    def checked(self) -> Settings:
        for name in ("transport", "host", "path", "log_level", "log_format"):
            if not getattr(self, name):  # an empty host listened on every interface
                raise ConfigError(f"{name.replace('_', ' ')} must not be empty")
        if self.transport not in TRANSPORTS:
            raise ConfigError(f"unknown transport {self.transport!r}")
        if not self.path.startswith("/"):
            raise ConfigError(f"the HTTP path must start with '/': {self.path!r}")
        if own_route(self.path):
            raise ConfigError(f"the HTTP path {self.path!r} is a route of the server's own")
        if self.log_format not in ("text", "json"):
            raise ConfigError(f"log format must be text or json, not {self.log_format!r}")
        if self.log_level.upper() not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
            raise ConfigError(
                "log level must be DEBUG, INFO, WARNING, ERROR or CRITICAL, "
                f"not {self.log_level!r}"
            )
        counts = (self.workers, self.max_body_size, self.max_sessions, self.max_tasks)
        if min(counts) < 1 or self.rate_limit < 0 or self.max_sessions_per_caller < 0:
            raise ConfigError(
                "workers, max body size, sessions and tasks must be positive, rate limit >= 0"
            )
        timeouts = (self.session_idle_timeout, self.header_timeout, self.body_timeout)
        if min(*timeouts, self.shutdown_timeout) <= 0:
            raise ConfigError("timeouts must be positive")
        return self

    @property
    def sessions_per_caller(self) -> int:
        """Open sessions one verified caller may hold (never every slot when there are two)."""
        return self.max_sessions_per_caller or max(1, min(50, self.max_sessions // 2))

    @property
    def resumable(self) -> bool:
        """Streamable HTTP keeps events for clients whose SSE stream broke (stateful only)."""
        return self.transport == "http" and not self.stateless and self.event_store_size > 0

    @property
    def local(self) -> bool:
        return self.host in LOCAL_HOSTS

    @property
    def endpoint(self) -> str:  # the path clients connect to
        return {"sse": SSE_PATH, "websocket": WEBSOCKET_PATH}.get(self.transport, self.path)


def _parse(key: str, raw: str, default: object) -> object:
    try:
        if isinstance(default, bool):
            return BOOLEANS[raw.strip().lower()]
        if isinstance(default, int | float):
            return type(default)(raw)
    except (KeyError, ValueError):
        raise ConfigError(f"{key}: cannot read {raw!r}") from None
    return csv(raw) if isinstance(default, tuple) else raw or None


def csv(value: str) -> tuple[str, ...]:  # a flag's or a variable's list
    return tuple(part.strip() for part in value.split(",") if part.strip())
