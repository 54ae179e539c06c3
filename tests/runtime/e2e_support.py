"""Building generated servers and running them for the end-to-end tests of code mode (and
``bench/modes.py``): ``python -m mcpgen build``, then ``python -m PKG --transport http``
(or stdio) with ``PYTHONPATH`` at the build's ``src``; clients from ``mcp.client``."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpgen.runtime.testing import free_port

WORKTREE = Path(__file__).resolve().parents[2]
GITHUB_SPEC = WORKTREE / "bench" / "out" / "github" / "api.github.com.json"
MODERN = "2026-07-28"
ERAS = ("legacy", MODERN)


@dataclass
class Built:
    root: Path
    package: str
    output: str

    @property
    def src(self) -> Path:
        return self.root / "src"

    @property
    def spec(self) -> dict[str, Any]:
        path = self.src / self.package / "_spec.json"
        data: dict[str, Any] = json.loads(path.read_text("utf-8"))
        return data


def build(source: Path, out: Path, package: str, *args: str, timeout: float = 300) -> Built:
    """``python -m mcpgen build SOURCE -o OUT``; fails the test when the build fails."""
    done = subprocess.run(
        [sys.executable, "-m", "mcpgen", "build", str(source), "-o", str(out), *args],
        env={**os.environ, "PYTHONPATH": str(WORKTREE)},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    return Built(out, package, output)


def server_env(built: Built, env: Mapping[str, str]) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(built.src), **env}


@contextlib.contextmanager
def http_server(built: Built, env: Mapping[str, str], log: Path) -> Iterator[str]:
    """The server over streamable HTTP on a free port: yields its MCP URL."""
    port = free_port()
    command = [sys.executable, "-m", built.package, "--transport", "http"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--rate-limit", "0"]
    with log.open("wb") as errors:
        process = subprocess.Popen(
            command,
            env=server_env(built, env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errors,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 90
            while True:
                if process.poll() is not None:
                    raise AssertionError(f"the server exited: {log.read_text()[-3000:]}")
                with socket.socket() as sock:
                    if sock.connect_ex(("127.0.0.1", port)) == 0:
                        break
                if time.monotonic() > deadline:
                    raise AssertionError("the server did not listen within 90 s")
                time.sleep(0.05)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait(timeout=10)


@contextlib.asynccontextmanager
async def connect(
    target: str | Built,
    era: str,
    env: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
) -> AsyncIterator[Any]:
    """An ``mcp.client.Client`` in protocol era ``era``: over HTTP to a URL, or over stdio to
    a built package (started by the client, with ``env``)."""
    from mcp.client import Client

    if isinstance(target, Built):
        from mcp.client.stdio import StdioServerParameters

        parameters = StdioServerParameters(
            command=sys.executable,
            args=["-m", target.package],
            env=server_env(target, env or {}),
        )
        async with Client(parameters, mode=era, read_timeout_seconds=120) as client:  # type: ignore[arg-type]
            yield client
        return
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    timeout = httpx2.Timeout(30.0, read=120.0)
    async with (
        httpx2.AsyncClient(headers=dict(headers or {}), timeout=timeout) as http,
        Client(
            streamable_http_client(target, http_client=http),
            mode=era,  # type: ignore[arg-type]
            read_timeout_seconds=120,
        ) as client,
    ):
        yield client
