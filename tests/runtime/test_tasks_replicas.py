"""MCP tasks across replicas of a generated server sharing Redis (``--redis-url``): a task
created on one replica is read, awaited and cancelled on another, a completed one outlives
its replica, and one whose replica died ends ``failed`` (docs/tasks.md)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
import tasks_kit as kit
from e2e_support import Built, server_env
from redis_support import REDIS_SERVER, SKIP_REASON, RedisServer
from test_tasks_generated import KEYS, build_jobs

from mcpgen.runtime.testing import free_port

pytestmark = [
    pytest.mark.timeout(240),
    pytest.mark.skipif(REDIS_SERVER is None, reason=SKIP_REASON),
]
SECRET = "jobs-state-secret-" + "0123456789abcdef" * 2


@contextmanager
def replica(built: Built, name: str, redis_url: str, directory: Path) -> Iterator[tuple[str, Any]]:
    port = free_port()
    env = {
        **KEYS,
        "JOBS_STATE_SECRET": SECRET,
        "JOBS_REPLICA": name,
        "JOBS_MARKER": str(directory / f"cancelled-{name}"),
    }
    command = [sys.executable, "-m", built.package, "--transport", "http", "--port", str(port)]
    command += ["--rate-limit", "0", "--redis-url", redis_url]
    with (directory / f"{name}.log").open("wb") as log:
        process = subprocess.Popen(
            command, env=server_env(built, env), stdout=log, stderr=log, start_new_session=True
        )
    try:
        deadline = time.monotonic() + 90
        while True:
            assert process.poll() is None, (directory / f"{name}.log").read_text()[-3000:]
            try:
                health = httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=1).json()
                if health.get("sharedState", {}).get("connected"):
                    break
            except (httpx2.HTTPError, ValueError):
                pass
            assert time.monotonic() < deadline, "the replica did not start"
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}", process
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)


async def scenario(a: str, b: str, c: str, kill_a: Any, kill_c: Any, directory: Path) -> None:
    async with (
        httpx2.AsyncClient(base_url=a) as on_a,
        httpx2.AsyncClient(base_url=b) as on_b,
        httpx2.AsyncClient(base_url=c) as on_c,
    ):
        at_a = kit.Rpc(on_a, kit.ALICE, kit.MODERN)
        at_b = kit.Rpc(on_b, kit.ALICE, kit.MODERN)
        at_c = kit.Rpc(on_c, kit.ALICE, kit.MODERN)
        # created on A, seen on B within a second, its result read on B (both eras)
        quick = await at_a.task("export", {"seconds": 0.5})
        with anyio.fail_after(1):
            assert "result" in await at_b.get(quick)
        done = await at_b.until(quick, "completed")
        assert done["result"]["content"][0]["text"] == "exported by a"
        legacy_b = kit.Rpc(on_b, kit.ALICE)
        await legacy_b.open()
        result = (await legacy_b.send("tasks/result", {"taskId": quick}))["result"]
        assert result["content"][0]["text"] == "exported by a"
        assert quick in [
            t["taskId"] for t in (await legacy_b.send("tasks/list", {}))["result"]["tasks"]
        ]
        assert (await kit.Rpc(on_b, kit.BOB, kit.MODERN).get(quick))["error"]["code"] == -32602
        # created on B, cancelled on C: B's handler stops
        long = await at_b.task("export", {"seconds": 60})
        await anyio.sleep(0.3)
        assert "error" not in await at_c.send("tasks/cancel", {"taskId": long})
        with anyio.fail_after(5):
            while not (directory / "cancelled-b").exists():
                await anyio.sleep(0.05)
        assert (await at_a.get(long))["result"]["status"] == "cancelled"
        # C dies while its task works: the task ends failed
        orphan = await at_c.task("export", {"seconds": 60})
        await anyio.sleep(0.3)
        kill_c()
        failed = await at_b.until(orphan, "failed", "completed", timeout=15)
        assert failed["status"] == "failed" and "stopped" in failed["statusMessage"]
        # A gone: its completed task is still there
        kill_a()
        assert (await at_b.get(quick))["result"]["status"] == "completed"


def test_tasks_across_replicas(tmp_path: Path) -> None:
    built = build_jobs(tmp_path)
    server = RedisServer(tmp_path)
    server.start()
    try:
        with (
            replica(built, "a", server.url, tmp_path) as (a, process_a),
            replica(built, "b", server.url, tmp_path) as (b, _),
            replica(built, "c", server.url, tmp_path) as (c, process_c),
        ):

            def kill(process: subprocess.Popen[bytes]) -> Any:
                return lambda: (os.killpg(process.pid, signal.SIGKILL), process.wait(10))

            anyio.run(scenario, a, b, c, kill(process_a), kill(process_c), tmp_path)
    finally:
        server.kill()
