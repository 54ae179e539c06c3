"""Fixtures of the attacker's suite: the servers under attack (each manifest built once per
session, the shared ones started side by side), the local upstreams they wrap, the signing
key their tokens come from. The manifests are in ``sec_servers``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from sec_harness import Built, Server, ServerPool, Tokens, Upstream, build
from sec_servers import (
    GATE,
    GATE_API,
    GATE_HANDLERS,
    TARGET,
    TARGET_API,
    TARGET_HANDLERS,
    Variants,
    gate_env,
    target_env,
)


@pytest.fixture(scope="session")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("security")


@pytest.fixture(scope="session")
def upstream() -> Iterator[Upstream]:
    server = Upstream()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def api(upstream: Upstream) -> Upstream:
    """The upstream, emptied of earlier requests and routes."""
    upstream.reset()
    return upstream


@pytest.fixture(scope="session")
def tokens(workdir: Path) -> Tokens:
    return Tokens(workdir)


@pytest.fixture(scope="session")
def builds(workdir: Path) -> dict[str, Built]:
    """Both servers built once per session, side by side (each build is a subprocess)."""
    jobs = {
        "target": (
            workdir / "target",
            TARGET,
            "target_mcp",
            {"target-api.yaml": TARGET_API},
            TARGET_HANDLERS,
        ),
        "gate": (workdir / "gate", GATE, "gate_mcp", {"gate-api.yaml": GATE_API}, GATE_HANDLERS),
    }
    with ThreadPoolExecutor(len(jobs)) as pool:
        futures = {name: pool.submit(build, *job) for name, job in jobs.items()}
        return {name: future.result() for name, future in futures.items()}


@pytest.fixture(scope="session")
def target_built(builds: dict[str, Built]) -> Built:
    return builds["target"]


@pytest.fixture(scope="session")
def gate_built(builds: dict[str, Built]) -> Built:
    return builds["gate"]


@pytest.fixture(scope="module")
def pool() -> Iterator[ServerPool]:
    servers = ServerPool()
    try:
        yield servers
    finally:
        servers.close()


@pytest.fixture(scope="session")
def elsewhere() -> Iterator[Upstream]:
    """A second local upstream: another origin (another port) for redirects and SSRF."""
    server = Upstream()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def other(elsewhere: Upstream) -> Upstream:
    elsewhere.reset()
    return elsewhere


@pytest.fixture(scope="session")
def fleet(
    builds: dict[str, Built], upstream: Upstream, tokens: Tokens
) -> Iterator[dict[str, Server]]:
    """The servers most attacks share, started side by side once per session."""
    target, gate = builds["target"], builds["gate"]
    env = gate_env(upstream, tokens)
    servers = {
        # stateful streamable HTTP, the defaults
        "target": Server(target, env=target_env(upstream), wait=False),
        # stateless, CORS for one web app, debug logs
        "gate": Server(
            gate,
            "--stateless",
            "--cors-origins",
            "https://app.example.com",
            "--log-level",
            "DEBUG",
            env=env,
            wait=False,
        ),
        "gate_stateful": Server(gate, env=env, wait=False),
        # WebSocket, messages up to 64 KiB
        "gate_ws": Server(
            gate, "--max-body-size", "65536", transport="websocket", env=env, wait=False
        ),
        # legacy HTTP+SSE
        "gate_sse": Server(gate, transport="sse", env=env, wait=False),
    }
    try:
        for server in servers.values():
            server.wait_for_port()
        yield servers
    finally:
        for server in servers.values():
            server.stop()


@pytest.fixture
def target(fleet: dict[str, Server]) -> Server:
    return fleet["target"]


@pytest.fixture
def gate(fleet: dict[str, Server]) -> Server:
    return fleet["gate"]


@pytest.fixture
def gate_stateful(fleet: dict[str, Server]) -> Server:
    return fleet["gate_stateful"]


@pytest.fixture
def gate_ws(fleet: dict[str, Server]) -> Server:
    return fleet["gate_ws"]


@pytest.fixture
def gate_sse(fleet: dict[str, Server]) -> Server:
    return fleet["gate_sse"]


@pytest.fixture
def spawn() -> Iterator[Callable[..., Server]]:
    """Start a server for one test only (own flags, own rate-limit buckets...)."""
    started: list[Server] = []

    def start(built: Built, *args: str, **options: Any) -> Server:
        server = Server(built, *args, **options)
        started.append(server)
        return server

    try:
        yield start
    finally:
        for server in started:
            server.kill()


@pytest.fixture(scope="module")
def target_variants(target_built: Built, upstream: Upstream) -> Iterator[Variants]:
    variants = Variants(target_built, target_env(upstream))
    try:
        yield variants
    finally:
        variants.close()
