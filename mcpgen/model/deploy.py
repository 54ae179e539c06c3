"""``deploy:`` in the manifest: which deployment files to render, and their numbers."""

from __future__ import annotations

import re
from typing import Any

from mcpgen.model.settings import Deploy
from mcpgen.model.types import Manifest

DEFAULT_REPLICAS = 3
DEFAULT_TARGET_CPU = 70
DEFAULT_BALANCER_PORT = 8080


def k8s_name(distribution: str) -> str:
    """A Kubernetes object name (RFC 1123 label) from the distribution name."""
    name = re.sub(r"[^a-z0-9-]+", "-", distribution.lower()).strip("-")
    return (name or "mcp-server")[:50].rstrip("-")


def deploy_settings(raw: dict[str, Any], manifest: Manifest) -> Deploy:
    """The model of ``deploy:`` (the schema checked its shape): both kinds of files unless
    one is turned off, 3 replicas, an autoscaler up to three times that."""
    server = manifest.server
    replicas = int(raw.get("replicas", DEFAULT_REPLICAS))
    return Deploy(
        compose=bool(raw.get("compose", True)),
        kubernetes=bool(raw.get("kubernetes", True)),
        replicas=replicas,
        max_replicas=max(replicas, int(raw.get("maxReplicas", 3 * replicas))),
        target_cpu=int(raw.get("targetCpu", DEFAULT_TARGET_CPU)),
        image=str(raw.get("image") or f"{server.distribution}:{server.version}"),
        redis="external" if raw.get("redis") == "external" else "bundled",
        hosts=tuple(raw.get("hosts", [])),
        port=int(raw.get("port", DEFAULT_BALANCER_PORT)),
        name=k8s_name(server.distribution),
    )
