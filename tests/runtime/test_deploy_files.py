"""Deployment files rendered on request (manifest ``deploy:``): deploy/compose.yaml with
nginx, deploy/kubernetes/*.yaml. Docker and a cluster cannot run here, so every file is
parsed and its required fields and cross references are checked here; the Kubernetes
objects are also validated against the API schemas when ``kubernetes-validate`` is
installed (it carries them; no cluster needed)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from mcpgen.pipeline import load_source_text
from mcpgen.render import GENERATED_TEMPLATES, Output, context, runtime_files
from mcpgen.render.deploy import deploy_templates
from mcpgen.render.spec import spec_data
from mcpgen.render.templates import render
from mcpgen.vendoring import requirements
from mcpgen.write import GENERATED_MARK, _obsolete

pytestmark = pytest.mark.timeout(60)

BASE = """\
mcpgen: 1
server: {name: relay, version: 1.2.0}
transports:
  http: {port: 8123, maxBodySize: 65536<http>}
auth: {type: bearer, env: RELAY_KEYS}
tools:
  - {name: ping, description: Answers pong., input: {type: object}}
"""


def source(extra: str = "", http: str = "") -> str:
    return BASE.replace("<http>", http) + extra


def load(extra: str = "", http: str = "") -> Any:
    loaded = load_source_text(source(extra, http), "relay.yaml", Path("."))
    problems = [str(p) for p in loaded.problems.items]
    assert loaded.manifest is not None, problems
    return loaded.manifest


def rendered(manifest: Any) -> dict[str, str]:
    ctx = context(manifest)
    files = {path: render(t, **ctx) for path, t in deploy_templates(manifest).items()}
    files["README.md"] = render(GENERATED_TEMPLATES["README.md"], **ctx)
    files["Dockerfile"] = render(GENERATED_TEMPLATES["Dockerfile"], **ctx)
    return files


def k8s(files: dict[str, str]) -> dict[tuple[str, str], dict[str, Any]]:
    """(kind, name) -> object, from every Kubernetes file."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for path, text in files.items():
        if path.startswith("deploy/kubernetes/"):
            for doc in yaml.safe_load_all(text):
                key = (doc["kind"], doc["metadata"]["name"])
                assert key not in found, key
                found[key] = doc
    return found


def test_defaults_render_compose_and_kubernetes_with_bundled_redis() -> None:
    files = rendered(load("deploy: {hosts: [mcp.example.com]}\n"))
    assert sorted(p for p in files if p.startswith("deploy/")) == [
        "deploy/compose.yaml",
        "deploy/kubernetes/deployment.yaml",
        "deploy/kubernetes/hpa.yaml",
        "deploy/kubernetes/redis.yaml",
        "deploy/kubernetes/secret.yaml",
        "deploy/kubernetes/service.yaml",
        "deploy/nginx.conf",
    ]
    for path, text in files.items():
        if path.startswith("deploy/"):
            assert GENERATED_MARK in text[:300], path  # a rebuild may replace or remove it


def test_compose_runs_replicas_redis_and_a_balancer() -> None:
    files = rendered(load("deploy: {replicas: 4, port: 9090}\n"))
    compose = yaml.safe_load(files["deploy/compose.yaml"])
    services = compose["services"]
    assert set(services) == {"server", "redis", "balancer"}
    server = services["server"]
    # built from the generated Dockerfile: the context is the project root, next to deploy/
    assert server["build"] == {"context": "..", "dockerfile": "Dockerfile"}
    assert "HEALTHCHECK" in files["Dockerfile"]  # what depends_on: service_healthy waits for
    assert server["deploy"]["replicas"] == 4
    env = server["environment"]
    assert env["RELAY_STATELESS"] == "true" and env["RELAY_TRANSPORT"] == "http"
    assert env["RELAY_REDIS_URL"] == "redis://redis:6379/0"
    assert env["RELAY_PORT"] == "8123" and server["expose"] == ["8123"]
    assert "localhost:*" in env["RELAY_ALLOWED_HOSTS"].split(",")
    # secrets only from the environment of `docker compose`, and required ones refused empty
    assert (
        env["RELAY_STATE_SECRET"]
        == "${RELAY_STATE_SECRET:?set RELAY_STATE_SECRET in the environment}"
    )
    assert env["RELAY_KEYS"].startswith("${RELAY_KEYS:?")
    # a collector by variable: empty (telemetry off) unless the shell sets it
    assert env["OTEL_EXPORTER_OTLP_ENDPOINT"] == "${OTEL_EXPORTER_OTLP_ENDPOINT:-}"
    assert "pip install '.[otel]'" in files["Dockerfile"]
    for name, service in services.items():
        for needed, condition in service.get("depends_on", {}).items():
            assert needed in services, (name, needed)
            assert condition == {"condition": "service_healthy"}
            assert needed == "server" or "healthcheck" in services[needed]
    assert services["redis"]["command"][:1] == ["redis-server"]
    balancer = services["balancer"]
    assert balancer["ports"] == ["9090:9090"]
    assert balancer["volumes"] == ["./nginx.conf:/etc/nginx/nginx.conf:ro"]
    conf = files["deploy/nginx.conf"]
    assert conf.count("{") == conf.count("}")
    assert re.search(r"^\s*listen 9090;$", conf, re.M)
    assert re.search(r"^\s*server server:8123 resolve\b", conf, re.M)  # every replica, by DNS
    assert "proxy_buffering off;" in conf  # SSE streams pass through
    assert "client_max_body_size 65536;" in conf


def test_kubernetes_objects_reference_each_other() -> None:
    manifest = load(
        "deploy: {replicas: 2, maxReplicas: 7, targetCpu: 60, hosts: [mcp.example.com]}\n"
    )
    objects = k8s(rendered(manifest))
    name = "relay-mcp"
    assert set(objects) == {
        ("Deployment", name),
        ("Service", name),
        ("HorizontalPodAutoscaler", name),
        ("Secret", f"{name}-secrets"),
        ("Deployment", f"{name}-redis"),
        ("Service", f"{name}-redis"),
    }
    deployment = objects[("Deployment", name)]
    spec = deployment["spec"]
    pod = spec["template"]
    assert spec["replicas"] == 2
    assert spec["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    (container,) = pod["spec"]["containers"]
    assert container["image"] == "relay-mcp:1.2.0"
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"http": 8123}
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert container["resources"]["requests"]["cpu"]  # the autoscaler's utilization needs it
    env = {e["name"]: e for e in container["env"]}
    assert env["RELAY_STATELESS"]["value"] == "true"
    assert env["RELAY_ALLOWED_HOSTS"]["value"].split(",")[0] == "mcp.example.com"
    secret = objects[("Secret", f"{name}-secrets")]
    collector = env.pop("OTEL_EXPORTER_OTLP_ENDPOINT")["valueFrom"]["configMapKeyRef"]
    assert collector == {"name": f"{name}-otel", "key": "endpoint", "optional": True}
    refs = {n: e["valueFrom"]["secretKeyRef"] for n, e in env.items() if "valueFrom" in e}
    assert set(refs) == {"RELAY_KEYS", "RELAY_STATE_SECRET"} == set(secret["stringData"])
    for variable, ref in refs.items():
        assert ref == {"name": secret["metadata"]["name"], "key": variable, "optional": False}
    assert set(secret["stringData"].values()) == {""}  # never a value in a generated file
    assert not any("value" in e and "SECRET" in n for n, e in env.items())
    service = objects[("Service", name)]
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    assert service["spec"]["ports"][0]["targetPort"] == "http"
    hpa = objects[("HorizontalPodAutoscaler", name)]["spec"]
    assert hpa["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": name}
    assert (hpa["minReplicas"], hpa["maxReplicas"]) == (2, 7)
    assert hpa["metrics"][0]["resource"]["target"]["averageUtilization"] == 60
    # the bundled Redis is where REDIS_URL points
    redis_service = objects[("Service", f"{name}-redis")]["spec"]
    redis_pod = objects[("Deployment", f"{name}-redis")]["spec"]["template"]["metadata"]["labels"]
    assert redis_service["selector"].items() <= redis_pod.items()
    assert not redis_service["selector"].items() <= pod["metadata"]["labels"].items()
    port = redis_service["ports"][0]["port"]
    assert env["RELAY_REDIS_URL"]["value"] == f"redis://{name}-redis:{port}/0"


def test_kubernetes_objects_validate_against_the_api_schemas() -> None:
    import kubernetes_validate as validate  # a test dependency: never skipped

    for extra in ("deploy: {}\n", "deploy: {redis: external, compose: false}\n"):
        for doc in k8s(rendered(load(extra))).values():
            validate.validate(doc, validate.latest_version(), strict=True)  # raises if not
    broken = k8s(rendered(load("deploy: {}\n")))[("Deployment", "relay-mcp")]
    del broken["spec"]["selector"]
    with pytest.raises(validate.ValidationError):
        validate.validate(broken, validate.latest_version(), strict=True)


def test_external_redis_comes_from_the_secret() -> None:
    files = rendered(load("deploy: {redis: external, compose: false}\n"))
    assert not any(p.startswith("deploy/compose") or p.endswith("nginx.conf") for p in files)
    objects = k8s(files)
    assert ("Service", "relay-mcp-redis") not in objects
    (container,) = objects[("Deployment", "relay-mcp")]["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e for e in container["env"]}
    assert env["RELAY_REDIS_URL"]["valueFrom"]["secretKeyRef"]["key"] == "RELAY_REDIS_URL"
    assert "RELAY_REDIS_URL" in objects[("Secret", "relay-mcp-secrets")]["stringData"]


def test_readme_says_when_affinity_is_needed() -> None:
    readme = " ".join(rendered(load("deploy: {}\n"))["README.md"].split())
    assert "Stateless HTTP (`--stateless`, what the deployment files run) needs none" in readme
    assert (
        "Stateful sessions (handshake-era clients over stateful streamable HTTP or SSE)" in readme
    )
    assert "`deploy/compose.yaml`: 3 replicas" in readme
    assert "`deploy/kubernetes/`" in readme


def test_redis_is_carried_and_a_dependency_with_deploy_only() -> None:
    plain, deployed = load(), load("deploy: {kubernetes: false}\n")
    assert not deploy_templates(plain)
    assert not any(d.startswith("redis") for d in requirements(plain))
    assert not any("shared_redis" in path for path in runtime_files(plain))
    assert "redis>=8.1,<9" in requirements(deployed)
    assert any(path.endswith("_runtime/shared_redis.py") for path in runtime_files(deployed))
    assert plain.extras == deployed.extras and "otel" in plain.extras
    assert sorted(deploy_templates(deployed)) == ["deploy/compose.yaml", "deploy/nginx.conf"]
    pyproject = render(GENERATED_TEMPLATES["pyproject.toml"], **context(plain))
    assert "redis" not in pyproject.split("[project.scripts]")[0]


def test_spec_lists_the_shared_state_variables_for_network_transports() -> None:
    data = spec_data(load(http=", redisUrl: 'redis://cache:6379/2'"))
    env = {e["name"]: e for e in data["environment"]}
    assert env["RELAY_REDIS_URL"]["default"] == "redis://cache:6379/2"
    assert env["RELAY_STATE_SECRET"]["secret"] is True
    for name in ("RELAY_REDIS_URL", "RELAY_STATE_SECRET"):
        assert env[name]["transports"] == ["http"]  # the network transports offered
    assert data["settings"]["redis_url"] == "redis://cache:6379/2"
    assert "state_secret" not in data["settings"]
    assert "STATE_SECRET" in json.dumps(data) and "redis_url" in data["settings"]


@pytest.mark.parametrize(
    "extra, http",
    [
        ("", ", redisUrl: 'redis://user:hunter2@cache:6379/0'"),  # a password in the manifest
        ("", ", redisUrl: 'http://cache'"),
        ("deploy: {hosts: ['a.example.com\\n  evil: 1']}\n", ""),
        ("deploy: {image: 'x\"; rm -rf /'}\n", ""),
        ("deploy: {replicas: 0}\n", ""),
        ("deploy: {redis: memcached}\n", ""),
        ("deploy: {replica: 3}\n", ""),
    ],
)
def test_bad_deploy_settings_are_refused(extra: str, http: str) -> None:
    loaded = load_source_text(source(extra, http), "relay.yaml", Path("."))
    fields = [p.field for p in loaded.problems.items]
    assert loaded.manifest is None
    assert fields and all(
        f.startswith(("deploy", "transports.http.redisUrl")) for f in fields
    ), fields


def test_a_plain_redis_url_default_is_accepted() -> None:
    manifest = load(http=", redisUrl: 'redis://cache:6379/0'")
    assert manifest.http.redis_url == "redis://cache:6379/0"
    assert "redis>=8.1,<9" in requirements(manifest)


def test_a_rebuild_without_deploy_removes_the_files(tmp_path: Path) -> None:
    manifest = load("deploy: {}\n")
    kept = tmp_path / "deploy" / "notes.txt"
    kept.parent.mkdir()
    kept.write_text("mine\n")
    for path, text in rendered(manifest).items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)

    obsolete = _obsolete(tmp_path, Output(generated=runtime_files(manifest)))
    assert sorted(p for p in obsolete if p.startswith("deploy/")) == sorted(
        deploy_templates(manifest)
    )
