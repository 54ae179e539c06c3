"""Server-wide settings in the model: the HTTP transports, authentication, deployment
files and CI files, and how they are read from the manifest (defaults filled in)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

# ``transports.offer`` by default: the two standard MCP transports.
OFFERED_TRANSPORTS = ("stdio", "http")


@dataclass(frozen=True)
class HttpSettings:
    """Defaults for the HTTP transports; each one can be changed at run time by a flag or by
    the environment variable ``{env_prefix}{NAME}`` (read by the runtime, ``runtime/settings.py``).
    """

    host: str
    port: int
    path: str
    stateless: bool
    json_response: bool
    allowed_hosts: tuple[str, ...]
    allowed_origins: tuple[str, ...]
    cors_origins: tuple[str, ...]
    max_body_size: int
    rate_limit: float  # requests per second per client; 0 = no limit
    rate_burst: int
    retry_interval: int  # milliseconds; 0 = no retry field
    event_store_size: int  # 0 = no resumability
    shutdown_timeout: float
    env_prefix: str  # e.g. "CALCULATOR_"
    max_sessions: int = 1000
    session_idle_timeout: float = 600.0
    # Redis for state replicas share (a default: <PREFIX>REDIS_URL overrides it). Never a
    # secret: a password belongs in the environment's URL, not in the manifest.
    redis_url: str | None = None


@dataclass(frozen=True)
class Deploy:
    """Deployment files rendered on request (``deploy:`` in the manifest): a Compose project
    (replicas, Redis, an nginx balancer) and Kubernetes manifests, under ``deploy/``."""

    compose: bool
    kubernetes: bool
    replicas: int  # Compose replicas; the Kubernetes Deployment's and the autoscaler's floor
    max_replicas: int  # the autoscaler's ceiling
    target_cpu: int  # average CPU utilization (percent of requests) the autoscaler keeps
    image: str  # the server image (built from the generated Dockerfile)
    redis: Literal["bundled", "external"]  # Kubernetes: a Redis of ours, or the URL in the Secret
    hosts: tuple[str, ...]  # public host names clients use (the allowed Host headers)
    port: int  # the balancer's port on the Compose host
    name: str  # Kubernetes object names (RFC 1123: lowercase letters, digits, '-')


@dataclass(frozen=True)
class Auth:
    """How HTTP clients authenticate. Secrets never appear here: static keys are read from
    the environment variable ``env``; OAuth needs only public data (issuer, audience, keys,
    the introspection endpoint: its client secret is read from the environment)."""

    type: Literal["none", "bearer", "apiKey", "oauth"]
    header: str
    env: str
    issuer: str | None
    audience: str | None
    jwks_url: str | None
    jwks_file: str | None
    introspection_url: str | None
    hide_unauthorized_tools: bool
    algorithms: tuple[str, ...]
    leeway: float
    scopes_supported: tuple[str, ...]  # every scope some tool needs, sorted

    @property
    def enabled(self) -> bool:
        return self.type != "none"


@dataclass(frozen=True)
class Ci:
    """Continuous integration files generated on request (manifest ``ci``)."""

    github: bool = False  # .github/workflows/mcp.yml
    mcpgen: str | None = None  # what that workflow installs mcpgen from (default: this version)


@dataclass(frozen=True)
class Observability:
    """Telemetry settings of the manifest (``observability``); the rest is ``OTEL_*``."""

    metrics: str = "protected"  # GET /metrics behind the MCP endpoint's auth, or "public"


DEFAULT_MAX_BODY_SIZE = 4 * 1024 * 1024  # the SDK's default for streamable HTTP
DEFAULT_RETRY_INTERVAL_MS = 1000
DEFAULT_EVENT_STORE_SIZE = 1000
DEFAULT_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384")


def http_settings(raw: dict[str, Any], env_prefix: str) -> HttpSettings:
    """``transports.http`` of the manifest."""
    rate = raw.get("rateLimit", {})
    return HttpSettings(
        host=raw.get("host", "127.0.0.1"),
        port=int(raw.get("port", 8000)),
        path=raw.get("path", "/mcp"),
        stateless=bool(raw.get("stateless", False)),
        json_response=bool(raw.get("jsonResponse", False)),
        allowed_hosts=tuple(raw.get("allowedHosts", [])),
        allowed_origins=tuple(raw.get("allowedOrigins", [])),
        cors_origins=tuple(raw.get("corsOrigins", [])),
        max_body_size=int(raw.get("maxBodySize", DEFAULT_MAX_BODY_SIZE)),
        rate_limit=float(rate.get("requestsPerSecond", 0)),
        rate_burst=int(rate.get("burst", max(1, math.ceil(2 * rate.get("requestsPerSecond", 0))))),
        retry_interval=int(raw.get("retryInterval", DEFAULT_RETRY_INTERVAL_MS)),
        event_store_size=int(raw.get("eventStoreSize", DEFAULT_EVENT_STORE_SIZE)),
        shutdown_timeout=float(raw.get("shutdownTimeout", 10)),
        env_prefix=env_prefix,
        max_sessions=int(raw.get("maxSessions", 1000)),
        session_idle_timeout=float(raw.get("sessionIdleTimeout", 600)),
        redis_url=raw.get("redisUrl"),
    )


def auth_settings(raw: dict[str, Any], env_prefix: str, scopes: set[str]) -> Auth:
    """``auth`` of the manifest; ``scopes``: every scope a tool, resource or prompt needs."""
    kind = raw.get("type", "none")
    return Auth(
        type=kind,
        header=raw.get("header", "X-API-Key" if kind == "apiKey" else "Authorization"),
        env=raw.get("env", f"{env_prefix}TOKENS"),
        issuer=raw.get("issuer"),
        audience=raw.get("audience"),
        jwks_url=raw.get("jwksUrl"),
        jwks_file=raw.get("jwksFile"),
        introspection_url=raw.get("introspectionUrl"),
        hide_unauthorized_tools=bool(raw.get("hideUnauthorizedTools", False)),
        algorithms=tuple(raw.get("algorithms", DEFAULT_ALGORITHMS)),
        leeway=float(raw.get("leeway", 30)),
        scopes_supported=tuple(sorted(scopes)),
    )
