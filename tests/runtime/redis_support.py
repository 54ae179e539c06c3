"""A real redis-server for tests: its own process, free port, temp dir, nothing saved."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from mcpgen.runtime.testing import free_port

REDIS_SERVER = shutil.which("redis-server")
SKIP_REASON = "redis-server is not installed (apt-get install -y redis-server; .ci/run installs it)"
needs_redis = pytest.mark.skipif(REDIS_SERVER is None, reason=SKIP_REASON)


def _ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One redis-server on 127.0.0.1:port; ``kill`` and ``start`` again keep the port."""

    def __init__(self, directory: Path, port: int | None = None) -> None:
        self.port = port or free_port()
        self.directory = directory
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> None:
        assert REDIS_SERVER is not None, SKIP_REASON
        assert self.process is None, "already running"
        self.process = subprocess.Popen(
            [
                REDIS_SERVER,
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--save", "",
                "--appendonly", "no",
                "--dir", str(self.directory),
                "--daemonize", "no",
                "--logfile", str(self.directory / "redis.log"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        while not _ping(self.port):
            if self.process.poll() is not None:
                log = (self.directory / "redis.log").read_text(errors="replace")[-2000:]
                self.process = None
                raise AssertionError(f"redis-server exited at start:\n{log}")
            if time.monotonic() > deadline:
                self.kill()
                raise AssertionError(f"redis-server did not answer on {self.port}")
            time.sleep(0.02)

    def kill(self) -> None:
        """SIGKILL: the server vanishes mid-connection, as in a crash."""
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
            self.process = None

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
            self.process = None

    def command(self, *args: str) -> bytes:
        """One command over a raw socket (inline protocol), for checks from outside."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
            sock.sendall(" ".join(args).encode() + b"\r\n")
            time.sleep(0.05)
            return sock.recv(1 << 20)


@contextlib.asynccontextmanager
async def slow_redis(port: int, delay: float) -> AsyncIterator[str]:
    """The URL of a proxy to the Redis on ``port`` whose every answer comes ``delay`` late."""

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, late: float) -> None:
        with contextlib.suppress(OSError):
            while data := await reader.read(1 << 16):
                await asyncio.sleep(late)
                writer.write(data)
                await writer.drain()
        writer.close()

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        to_reader, to_writer = await asyncio.open_connection("127.0.0.1", port)
        await asyncio.gather(pipe(reader, to_writer, 0), pipe(to_reader, writer, delay))

    proxy = await asyncio.start_server(accept, "127.0.0.1", 0)
    async with proxy:
        yield f"redis://127.0.0.1:{proxy.sockets[0].getsockname()[1]}/0"


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    if REDIS_SERVER is None:
        pytest.skip(SKIP_REASON)
    server = RedisServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()
