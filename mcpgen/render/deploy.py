"""Deployment files for replicas (``deploy:``): what ``templates/deploy/`` prints, as data.
Strings are printed as JSON (a JSON string is a YAML string), so no manifest text can
change the structure of a YAML file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcpgen.model.types import Manifest
from mcpgen.render.spec import environment

NETWORK = "http"
KUBERNETES = ("deployment.yaml", "service.yaml", "hpa.yaml", "secret.yaml")


@dataclass(frozen=True)
class SecretVar:
    name: str
    required: bool  # the server does not start without it (Compose refuses an empty one)
    description: str


def deploy_data(manifest: Manifest) -> dict[str, Any]:
    """What the deployment templates print besides the model (as ``d``)."""
    deploy = manifest.deploy
    assert deploy is not None
    prefix = manifest.http.env_prefix
    secrets: list[SecretVar] = []
    for item in environment(manifest):
        name = item["name"]
        transports = item.get("transports") or [NETWORK]
        if NETWORK not in transports or name == prefix + "REDIS_URL":
            continue
        if item["secret"] or item["default"] is None:  # secrets, and client ids
            # replicas need the shared secret: a round trip must open on any of them
            required = bool(item["required"]) or name == prefix + "STATE_SECRET"
            secrets.append(SecretVar(name, required, item["description"]))
    redis_service = f"{deploy.name}-redis"
    if deploy.redis == "external":
        secrets.append(SecretVar(prefix + "REDIS_URL", True, "the managed Redis (rediss:// ...)"))
    secrets.sort(key=lambda s: s.name)
    common = [("TRANSPORT", "http"), ("HOST", "0.0.0.0"), ("PORT", str(manifest.http.port))]
    common += [("STATELESS", "true"), ("LOG_FORMAT", "json")]
    compose = [*common, ("REDIS_URL", "redis://redis:6379/0")]
    compose.append(("ALLOWED_HOSTS", ",".join([*deploy.hosts, "localhost:*", "127.0.0.1:*"])))
    kubernetes = list(common)
    if deploy.redis == "bundled":
        kubernetes.append(("REDIS_URL", f"redis://{redis_service}:6379/0"))
    kubernetes.append(("ALLOWED_HOSTS", ",".join([*deploy.hosts, deploy.name, f"{deploy.name}:*"])))
    return {
        "secrets": tuple(secrets),  # from the environment (Compose) or the Secret (Kubernetes)
        # fixed settings of every Compose replica, of every pod
        "compose_env": tuple((prefix + name, value) for name, value in compose),
        "kubernetes_env": tuple((prefix + name, value) for name, value in kubernetes),
        "redis_service": redis_service,  # the bundled Redis's Kubernetes Service name
        "secret_name": f"{deploy.name}-secrets",
        "probe_path": "/healthz",
    }


def deploy_templates(manifest: Manifest) -> dict[str, str]:
    """Output path -> template, for the files ``deploy:`` asks for (none without it)."""
    deploy = manifest.deploy
    if deploy is None:
        return {}
    # the files of each kind, each printed by the template of its path + ``.jinja``
    files = ["deploy/compose.yaml", "deploy/nginx.conf"] if deploy.compose else []
    if deploy.kubernetes:
        files += [f"deploy/kubernetes/{name}" for name in KUBERNETES]
    if deploy.kubernetes and deploy.redis == "bundled":
        files.append("deploy/kubernetes/redis.yaml")
    return {path: path + ".jinja" for path in files}
