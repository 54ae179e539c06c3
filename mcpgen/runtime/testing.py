"""What a generated project's own tests need (the server never imports it): test credentials,
servers on free ports, typed clients over every transport in both protocol eras.
``MCP_TEST_TRANSPORTS=memory,stdio`` selects transports (default: all);
``MCP_TEST_STUBS=fail`` (``pytest --stubs=fail``) fails unwritten handlers' tests."""

from __future__ import annotations

import contextlib
import importlib
import os
import random
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, Literal

import mcp_types as types
import pytest

from .client import error_text
from .settings import SSE_PATH, WEBSOCKET_PATH, Settings, offered

Mode = Literal["legacy", "2026-07-28"]
MODES: list[Mode] = ["legacy", "2026-07-28"]
ALL_TRANSPORTS = ["memory", "stdio", "http", "http-stateless", "sse", "websocket"]
SERVER_FLAGS = {  # no rate limit: the tests send bursts
    "http": ["--transport", "http", "--no-stateless", "--rate-limit", "0"],
    "http-stateless": ["--transport", "http", "--stateless", "--rate-limit", "0"],
    "sse": ["--transport", "sse", "--rate-limit", "0"],
    "websocket": ["--transport", "websocket", "--rate-limit", "0"],
}
STUB_MARK = "is not implemented yet"
_STUBS: list[str] = []  # what ``stub`` skipped, for the summary


def transports(spec: Mapping[str, Any] | None = None) -> list[str]:
    """The selected transports among those the server offers (``memory`` always)."""
    chosen = os.environ.get("MCP_TEST_TRANSPORTS", ",".join(ALL_TRANSPORTS))
    served = ("memory", *offered(spec or {}))
    return [t for t in chosen.split(",") if t and t.removesuffix("-stateless") in served]


def connections(spec: Mapping[str, Any] | None = None) -> list[tuple[str, Mode]]:
    return [(t, m) for t in transports(spec) for m in MODES]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--stubs",
        choices=["skip", "fail"],
        default=os.environ.get("MCP_TEST_STUBS", "skip"),
        help="what an unwritten handler does to its tests (default skip; fail for CI)",
    )


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _STUBS:
        unique = sorted(set(_STUBS))
        terminalreporter.write_line(
            f"{len(unique)} handler(s) not written yet (their tests were skipped): "
            + ", ".join(unique)
        )


def stub(config: pytest.Config, what: str) -> None:
    """An unwritten handler answered: skip (counted in the summary), or fail with --stubs=fail."""
    if config.getoption("--stubs") == "fail":
        pytest.fail(f"{what}: its handler is not written yet (--stubs=fail)")
    _STUBS.append(what)
    pytest.skip(f"{what}: handler not written yet")


def is_stub(result: types.CallToolResult) -> bool:
    return bool(result.is_error) and STUB_MARK in text_of(result)


text_of = error_text  # the text blocks of a result, joined


class Credentials:
    """What the test servers accept and the test clients send without authentication:
    nothing (``testing_auth.AuthCredentials``: the other kinds)."""

    def __init__(self, spec: Mapping[str, Any]) -> None:
        self.settings = Settings.defaults(spec)

    def server_env(self, folder: Path) -> dict[str, str]:
        return {}

    def headers(self, credential: str | None = None) -> dict[str, str]:
        return {}


_GIVEN: set[int] = set()


def free_port() -> int:
    """A port on 127.0.0.1 nothing listens on, below the kernel's ephemeral range. A port
    bind(0) hands out can become a connection's source port before the server binds it
    ("address already in use"); only listeners take ports below that range."""
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    ports = range(max(1024, low - 16384), low)
    for port in random.sample(ports, min(200, len(ports))):
        with socket.socket() as sock, contextlib.suppress(OSError):
            if port not in _GIVEN:
                sock.bind(("127.0.0.1", port))
                _GIVEN.add(port)
                return port
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(
    package: str, flags: Sequence[str], env: Mapping[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """``python -m <package>`` on a free port, listening: (process, base URL)."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", package, *flags, "--port", str(port)],
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with status {process.returncode}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return process, f"http://127.0.0.1:{port}"
        time.sleep(0.05)
    stop_server(process)
    raise RuntimeError("the server did not listen within 30 s")


def stop_server(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


def run_servers(
    package: str, env: Mapping[str, str], spec: Mapping[str, Any] | None = None
) -> Iterator[dict[str, str]]:
    """One running server per selected network transport: transport -> base URL."""
    started: dict[str, tuple[subprocess.Popen[bytes], str]] = {}
    try:
        for transport, flags in SERVER_FLAGS.items():
            if transport in transports(spec):
                started[transport] = start_server(package, flags, env)
        yield {transport: url for transport, (_, url) in started.items()}
    finally:
        for process, _ in started.values():
            stop_server(process)


async def decline(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    """The test client's answer to elicitation: the user declines."""
    return types.ElicitResult(action="decline")


async def sample(
    context: Any, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    """The test client's answer to sampling: a fixed reply."""
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(text="test reply"), model="test"
    )


async def no_roots(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[])


CALLBACKS: dict[str, Any] = {"on_elicit": decline, "on_sample": sample, "on_roots": no_roots}


def connect(
    client_class: type[Any],
    credentials: Credentials,
    transport: str,
    mode: Mode,
    servers: Mapping[str, str],
    headers: Mapping[str, str] | None = None,
    **options: Any,
) -> AbstractAsyncContextManager[Any]:
    """A typed client over ``transport`` in protocol era ``mode``; over the network it
    sends ``headers`` (default: what ``credentials`` makes the test servers accept)."""
    if transport == "memory":  # the server object, in this process
        server = importlib.import_module(f"{client_class.package}.server").create_server()
        return client_class.connect(server, mode=mode, **options)  # type: ignore[no-any-return]
    if transport == "stdio":
        return client_class.stdio(env=dict(os.environ), mode=mode, **options)  # type: ignore[no-any-return]
    sent = dict(credentials.headers() if headers is None else headers)
    if transport == "sse":
        return client_class.sse(servers["sse"] + SSE_PATH, headers=sent, mode=mode, **options)  # type: ignore[no-any-return]
    if transport == "websocket":
        url = "ws" + servers["websocket"].removeprefix("http") + WEBSOCKET_PATH
        return client_class.websocket(url, headers=sent, mode=mode, **options)  # type: ignore[no-any-return]
    return client_class.http(servers[transport] + credentials.settings.path, headers=sent, mode=mode, **options)  # type: ignore[no-any-return]


async def all_pages(list_page: Any, field: str) -> list[Any]:
    """Every item of a paginated list method (``client.list_tools``, ``"tools"``)."""
    items: list[Any] = []
    cursor: str | None = None
    while True:
        page = await list_page(cursor=cursor)
        items.extend(getattr(page, field))
        cursor = page.next_cursor
        if cursor is None:
            return items
