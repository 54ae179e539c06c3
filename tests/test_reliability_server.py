"""Reliability of a generated server under load (issue 9), from the outside: a real
``generated_examples/calculator`` process over stateless streamable HTTP, many concurrent
keep-alive clients, no errors and flat memory.

Load: MCPGEN_LOAD_CALLS calls in all (default 10,000, about 40 s on 2 quiet cores; set 2000
for a quick run) from MCPGEN_LOAD_CLIENTS concurrent clients (default 50), in two equal
rounds. All traffic goes to 127.0.0.1.

What the runtime answers to hostile JSON-RPC (stdio and HTTP), to handlers that raise, time
out or are cancelled, and to clients that vanish is tested on ``mcpgen.runtime`` directly in
tests/runtime (test_rt_stdio_wire.py, test_rt_stdio.py, test_rt_hostile_http.py,
test_rt_handlers.py); oversized HTTP bodies in tests/security
(test_oversized_body_is_refused_before_anything_runs).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from mcpgen.runtime.testing import free_port

ROOT = Path(__file__).resolve().parent.parent
CALCULATOR = ROOT / "generated_examples" / "calculator" / "src"
PROTOCOL = "2025-11-25"
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": PROTOCOL,
}
LOAD_CALLS = int(os.environ.get("MCPGEN_LOAD_CALLS", "10000"))
LOAD_CLIENTS = int(os.environ.get("MCPGEN_LOAD_CLIENTS", "50"))


def add(id_: Any, numbers: list[float]) -> dict[str, Any]:
    params = {"name": "add", "arguments": {"numbers": numbers}}
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


def env_for(src: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(src), "PYTHONUNBUFFERED": "1"}


class Http:
    def __init__(self, src: Path, package: str, *extra: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process = subprocess.Popen(
            [sys.executable, "-m", package, "--transport", "http", "--port", str(self.port),
             "--log-level", "warning", *extra],
            env=env_for(src),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        self._log: list[bytes] = []
        self._err = threading.Thread(target=self._read_err, daemon=True)
        self._err.start()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert self.process.poll() is None, "the server exited"
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise AssertionError("the server did not listen")

    @property
    def stderr(self) -> bytes:
        return b"".join(self._log)

    def _read_err(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._log.append(line)

    def rss_kb(self) -> int:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._err.join(5)


def messages(response: httpx2.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages in a response: a JSON body or SSE ``data:`` lines."""
    kind = response.headers.get("content-type", "")
    if not response.content:
        return []
    if kind.startswith("application/json"):
        body = response.json()
        return body if isinstance(body, list) else [body]
    if kind.startswith("text/event-stream"):
        return [
            json.loads(line[5:])
            for line in response.text.splitlines()
            if line.startswith("data:") and line[5:].strip()
        ]
    return []


@pytest.fixture(scope="module")
def calculator_http() -> Iterator[Http]:
    server = Http(CALCULATOR, "calculator_mcp", "--stateless")
    try:
        yield server
    finally:
        server.stop()


# -- load: concurrent clients, memory flat ---------------------------------------------------


async def load_round(url: str, total: int, clients: int, first_id: int) -> list[str]:
    """``total`` tools/call requests from ``clients`` keep-alive clients; the failures."""
    ids = itertools.count(first_id)
    last = first_id + total
    failures: list[str] = []
    limits = httpx2.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx2.AsyncClient(limits=limits, timeout=60) as client:

        async def one_client() -> None:
            while (i := next(ids)) < last:
                numbers = [float(i), 0.5]
                try:
                    response = await client.post(
                        url, content=json.dumps(add(i, numbers)), headers=HEADERS
                    )
                    found = messages(response)
                    answer = found[0] if found else {}
                    got = answer.get("result", {}).get("structuredContent", {}).get("sum")
                    if response.status_code != 200 or answer.get("id") != i or got != i + 0.5:
                        failures.append(f"{i}: {response.status_code} {response.text[:200]}")
                except httpx2.HTTPError as exc:
                    failures.append(f"{i}: {type(exc).__name__}: {exc}")

        await asyncio.gather(*(one_client() for _ in range(clients)))
    return failures


@pytest.mark.slow
def test_concurrent_load_without_errors_and_flat_memory(calculator_http: Http) -> None:
    half = LOAD_CALLS // 2
    started = time.monotonic()
    failures = asyncio.run(load_round(calculator_http.url, half, LOAD_CLIENTS, 10_000))
    first = calculator_http.rss_kb()
    failures += asyncio.run(load_round(calculator_http.url, half, LOAD_CLIENTS, 10_000 + half))
    second = calculator_http.rss_kb()
    elapsed = time.monotonic() - started
    print(
        f"\nload: {2 * half} calls from {LOAD_CLIENTS} clients in {elapsed:.1f} s "
        f"({2 * half / elapsed:.0f}/s), {len(failures)} errors; "
        f"RSS {first} kB after round 1, {second} kB after round 2"
    )
    assert not failures, failures[:5]
    assert abs(second - first) <= 0.10 * first, (first, second)
    assert calculator_http.process.poll() is None
