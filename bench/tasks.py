"""MCP tasks (docs/tasks.md): what creating a task and polling it cost next to a plain call.

Builds tests/fixtures/tasks/tasks.yaml with its handlers, then measures on the same
server, with stateless 2026-07-28 requests over loopback HTTP (one client, sequential):

1. ``tools/call`` of the plain tool ``quick``;
2. ``tools/call`` of ``report`` (0 steps) declaring the tasks extension: the task creation;
3. ``tasks/get`` of a completed task on the replica that ran it;
4. with two replicas sharing a redis-server: creation on A, and ``tasks/get`` on B.

Medians and p90 in ms over ``--n`` requests each, after a warm-up. Every process shares
the machine's cores: read the ratios.

    python bench/tasks.py           # 300 requests a point
    python bench/tasks.py --n 100
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "runtime")]

import anyio  # noqa: E402
import httpx2  # noqa: E402
import tasks_kit as kit  # noqa: E402
from redis_support import RedisServer  # noqa: E402
from test_tasks_generated import build_jobs  # noqa: E402
from test_tasks_replicas import replica  # noqa: E402


async def timed(n: int, step: Callable[[int], Awaitable[Any]]) -> list[float]:
    for i in range(min(20, n)):  # warm-up
        await step(i)
    took = []
    for i in range(n):
        started = time.perf_counter()
        await step(i)
        took.append((time.perf_counter() - started) * 1000)
    return took


def row(label: str, took: list[float], base: float | None = None) -> str:
    median = statistics.median(took)
    p90 = statistics.quantiles(took, n=10)[-1]
    ratio = f"  {median / base:5.2f}x" if base else ""
    return f"  {label:<44} median {median:6.2f} ms   p90 {p90:6.2f} ms{ratio}"


async def measure(a: str, b: str, n: int) -> None:
    async with httpx2.AsyncClient(base_url=a) as on_a, httpx2.AsyncClient(base_url=b) as on_b:
        at_a = kit.Rpc(on_a, kit.ALICE, kit.MODERN)
        at_b = kit.Rpc(on_b, kit.ALICE, kit.MODERN)
        plain = await timed(n, lambda i: at_a.call("quick", {"text": str(i)}))
        created: list[str] = []

        async def create(i: int) -> None:
            created.append(await at_a.task("report", {"steps": 0}))

        creation = await timed(n, create)
        done = created[-1]
        await at_a.until(done, "completed")
        same = await timed(n, lambda i: at_a.get(done))
        other = await timed(n, lambda i: at_b.get(done))
        base = statistics.median(plain)
        print(row("tools/call, plain tool (quick)", plain))
        print(row("tools/call creating a task (report)", creation, base))
        print(row("tasks/get on the replica that ran it", same, base))
        print(row("tasks/get on the other replica (Redis)", other, base))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=300)
    n = parser.parse_args().n
    with tempfile.TemporaryDirectory() as folder, ExitStack() as stack:
        directory = Path(folder)
        built = build_jobs(directory)
        redis = RedisServer(directory)
        redis.start()
        stack.callback(redis.kill)
        a, _ = stack.enter_context(replica(built, "a", redis.url, directory))
        b, _ = stack.enter_context(replica(built, "b", redis.url, directory))
        print(f"two replicas of a generated server on Redis, {n} sequential requests a point")
        anyio.run(measure, a, b, n)


if __name__ == "__main__":
    main()
