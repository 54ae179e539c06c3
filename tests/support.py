"""Helpers shared by tests that run real servers on 127.0.0.1."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 30) -> None:
    """Wait until ``process`` listens on ``port``; fail early if it exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited with status {process.returncode}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing listened on port {port} within {timeout} s")


@contextmanager
def running(
    command: Sequence[str], port: int, env: Mapping[str, str] | None = None, timeout: float = 30
) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``command`` (a server that listens on ``port``) for the duration of the block."""
    process = subprocess.Popen(
        list(command),
        env=dict(env) if env is not None else None,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process, timeout)
        yield process
    finally:
        process.terminate()
        process.wait(timeout=15)


TS_CLIENT = Path(__file__).resolve().parent / "ts_client"


def npm_install(folder: Path, *packages: str) -> None:
    """``npm install`` into ``folder`` (``packages``, or its package.json's), once. A marker
    is written after a whole install: one cut short (a timeout on a loaded CI machine) left
    a ``node_modules`` that looked installed and failed every later run; it is redone."""
    import shutil

    marker = folder / "node_modules" / ".mcpgen-installed"
    if marker.is_file():
        return
    shutil.rmtree(folder / "node_modules", ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    npm = shutil.which("npm") or "npm"
    done = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--prefix", str(folder), *packages],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    marker.write_text("")


def ts_node() -> str:
    """``node``, with the TypeScript SDK installed in ``tests/ts_client`` (npm, once);
    the test skips where Node is missing."""
    import shutil

    import pytest

    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are needed for the TypeScript SDK client")
    npm_install(TS_CLIENT)
    return node
