"""Server-wide settings in the model: the HTTP transports, authentication, deployment
files and CI files."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class HttpSettings:
    """Defaults for the HTTP transports; each one can be changed at run time by a flag or by
    the environment variable ``{env_prefix}{NAME}`` (see the generated ``_http.py``)."""

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
