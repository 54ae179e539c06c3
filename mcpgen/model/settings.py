"""Server-wide settings in the model (HTTP, auth, deployment, CI), and ``read``, which makes
a model dataclass from its section of the manifest, defaults filled in."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields
from functools import cache
from typing import Any, Literal, TypeVar

# ``transports.offer`` by default: the two standard MCP transports.
OFFERED_TRANSPORTS = ("stdio", "http")


@dataclass(frozen=True, kw_only=True)
class HttpSettings:
    """Defaults for the HTTP transports (a flag or ``{env_prefix}{NAME}`` changes each)."""

    host: str = "127.0.0.1"
    port: int = 8000
    path: str = "/mcp"
    stateless: bool = False
    json_response: bool = False
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    cors_origins: tuple[str, ...] = ()
    max_body_size: int = 4 * 1024 * 1024  # the SDK's default for streamable HTTP
    rate_limit: float  # requests per second per client; 0 = no limit
    rate_burst: int
    retry_interval: int = 1000  # milliseconds; 0 = no retry field
    event_store_size: int = 1000  # 0 = no resumability
    shutdown_timeout: float = 10.0
    env_prefix: str  # e.g. "CALCULATOR_"
    max_sessions: int = 1000
    session_idle_timeout: float = 600.0
    # Redis for state replicas share (<PREFIX>REDIS_URL overrides it; never a password)
    redis_url: str | None = None


@dataclass(frozen=True, kw_only=True)
class Deploy:
    """Deployment files (``deploy:``): a Compose project and Kubernetes manifests."""

    compose: bool = True
    kubernetes: bool = True
    replicas: int = 3  # Compose replicas; the Kubernetes Deployment's and the autoscaler's floor
    max_replicas: int  # the autoscaler's ceiling
    target_cpu: int = 70  # average CPU utilization (percent of requests) the autoscaler keeps
    image: str  # the server image (built from the generated Dockerfile)
    redis: Literal["bundled", "external"]  # Kubernetes: a Redis of ours, or the URL in the Secret
    hosts: tuple[str, ...] = ()  # public host names clients use (the allowed Host headers)
    port: int = 8080  # the balancer's port on the Compose host
    name: str  # Kubernetes object names (RFC 1123: lowercase letters, digits, '-')


@dataclass(frozen=True, kw_only=True)
class Auth:
    """How HTTP clients authenticate (no secrets: static keys are read from ``env``)."""

    type: Literal["none", "bearer", "apiKey", "oauth"] = "none"
    header: str
    env: str
    issuer: str | None = None
    audience: str | None = None
    jwks_url: str | None = None
    jwks_file: str | None = None
    introspection_url: str | None = None
    hide_unauthorized_tools: bool = False
    algorithms: tuple[str, ...] = (
        "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384",
    )  # fmt: skip
    leeway: float = 30.0
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


Section = TypeVar("Section")


@cache  # a few dozen field names, asked for once per field of every tool
def camel(name: str) -> str:
    """A model field's name in the manifest and on the wire: ``mime_type`` -> ``mimeType``."""
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), name)


def read(cls: type[Section], raw: dict[str, Any], **known: Any) -> Section:
    """A manifest section as the dataclass ``cls``: each field not ``known`` from its
    camelCase key (a list as a tuple, a number as the field's type), else its default."""
    values = dict(known)
    for item in fields(cls):  # type: ignore[arg-type]
        key = camel(item.name)
        if item.name in known or key not in raw:
            continue
        value = raw[key]
        if isinstance(value, list):
            value = tuple(value)
        elif item.type in ("int", "float"):
            value = int(value) if item.type == "int" else float(value)
        values[item.name] = value
    return cls(**values)


def http_settings(raw: dict[str, Any], env_prefix: str) -> HttpSettings:
    """``transports.http`` of the manifest."""
    rate = float(raw.get("rateLimit", {}).get("requestsPerSecond", 0))
    burst = raw.get("rateLimit", {}).get("burst", max(1, math.ceil(2 * rate)))
    return read(HttpSettings, raw, env_prefix=env_prefix, rate_limit=rate, rate_burst=int(burst))


def auth_settings(raw: dict[str, Any], env_prefix: str, scopes: set[str]) -> Auth:
    """``auth`` of the manifest; ``scopes``: every scope a tool, resource or prompt needs."""
    env = raw.get("env", f"{env_prefix}TOKENS")
    return read(Auth, raw, header=auth_header(raw), env=env, scopes_supported=tuple(sorted(scopes)))


def auth_header(raw: dict[str, Any]) -> str:
    """The header callers authenticate with: ``auth.header``, else the type's default."""
    header = raw.get("header")
    if isinstance(header, str):
        return header
    return "X-API-Key" if raw.get("type") == "apiKey" else "Authorization"


def deploy_settings(raw: dict[str, Any] | None, distribution: str, version: str) -> Deploy | None:
    """The model of ``deploy:`` (None: none)."""
    if raw is None:
        return None
    replicas = int(raw.get("replicas", 3))
    name = re.sub(r"[^a-z0-9-]+", "-", distribution.lower()).strip("-")
    return read(
        Deploy,
        raw,
        max_replicas=max(replicas, int(raw.get("maxReplicas", 3 * replicas))),
        image=str(raw.get("image") or f"{distribution}:{version}"),
        redis="external" if raw.get("redis") == "external" else "bundled",
        name=(name or "mcp-server")[:50].rstrip("-"),
    )
