"""Start replica_app.py processes on loopback ports (for tests and bench/replicas.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2

from mcpgen.runtime.testing import free_port

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
APP = HERE / "replica_app.py"


@dataclass
class Replica:
    name: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def health(self) -> dict[str, object]:
        answer: dict[str, object] = httpx2.get(
            f"http://127.0.0.1:{self.port}/healthz", timeout=2
        ).json()
        return answer

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


@contextmanager
def replicas(
    count: int,
    directory: Path,
    *,
    redis_url: str | None,
    secret: str | None = None,
    prefix: str = "replicas",
    timeout: float = 30.0,
) -> Iterator[list[Replica]]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    started: list[Replica] = []
    try:
        for name in "abcdefgh"[:count]:
            port = free_port()
            log = directory / f"replica-{name}.log"
            command = [sys.executable, str(APP), "--port", str(port), "--name", name]
            command += ["--prefix", prefix]
            if redis_url:
                command += ["--redis-url", redis_url]
            if secret:
                command += ["--secret", secret]
            with log.open("wb") as sink:
                process = subprocess.Popen(command, env=env, stdout=sink, stderr=sink)
            started.append(Replica(name, port, process, log))
        deadline = time.monotonic() + timeout
        for replica in started:
            while True:
                if replica.process.poll() is not None:
                    raise AssertionError(f"replica {replica.name} exited:\n{replica.log_text()}")
                try:
                    if replica.health().get("connected"):
                        break
                except httpx2.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise AssertionError(f"replica {replica.name} did not start in {timeout} s")
                time.sleep(0.1)
        yield started
    finally:
        for replica in started:
            replica.process.terminate()
        for replica in started:
            try:
                replica.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                replica.process.kill()
                replica.process.wait(timeout=10)
