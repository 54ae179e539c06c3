"""Replicas sharing state through Redis: throughput, event fan-out latency, a Redis outage.

Replica processes are tests/runtime/replica_app.py (an SDK lowlevel Server on stateless
streamable HTTP whose bus, limiter and requestState keys come from mcpgen.runtime.shared);
Redis is a redis-server started here (temp dir, nothing saved). Load is 2026-07-28
stateless ``tools/call`` requests from asyncio + httpx2 in this process; the clients
alternate URLs (request i goes to replica i mod N, a round robin without a balancer hop).

1. Throughput at 50 concurrent clients, calls/s and p99, tool ``limited`` (one token-bucket
   Lua call in Redis per request, limit never reached): 1 replica in process (no Redis),
   then 1, 2 and 3 replicas on Redis; ratios to 1 replica on Redis; the configurations
   interleaved over several rounds, medians.
2. Fan-out latency: a listen stream on replica B, ``touch`` called on replica A; time from
   sending the call to the event on B's stream (p50/p99), next to the call's own round
   trip; and the bare Redis hop, bus to bus in one process.
3. Outage: 50 clients on 2 replicas; Redis killed after 2 s, started again 2 s later; calls/s,
   errors and p99 before, during and after.

On 2 shared cores every process (replicas, Redis, this load generator) competes for the
same CPUs, so read throughput as ratios, not as capacity.

    python bench/replicas.py            # 3 rounds of 5 s per point, 200 fan-out samples
    python bench/replicas.py --quick    # 1 round of 3 s per point, 60 samples
    python bench/replicas.py --generated --quick   # the same against a generated server

``--generated`` replaces replica_app.py by replicas of a server mcpgen generates
(tests/runtime/generated_support.py: ``python -m relay_mcp --transport http --stateless``,
bearer auth, a rate limit that is never reached, so every request takes one token-bucket
Lua call in Redis through the runtime's HTTP guard); the load calls its tool ``whoami``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "runtime"), str(ROOT / "bench")]

import httpx2  # noqa: E402
from _common import percentile  # noqa: E402
from redis_support import RedisServer  # noqa: E402
from replica_support import Replica, replicas  # noqa: E402

GENERATED: dict[str, Any] = {}  # with --generated: {"out": the built project}
TOKEN = "bench-token"

VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
}


def request(i: int, tool: str, arguments: dict[str, Any]) -> tuple[str | bytes, dict[str, str]]:
    if GENERATED:
        from generated_support import call_request

        made: tuple[bytes, dict[str, str]] = call_request(i, tool, arguments, TOKEN)
        return made
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": i,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments, "_meta": META},
        }
    )
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "mcp-method": "tools/call",
        "mcp-name": tool,
    }
    return body, headers


def result_of(response: httpx2.Response) -> dict[str, Any]:
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in text.splitlines():
            if line.startswith("data:") and '"result"' in line:
                text = line[5:]
                break
    answer: dict[str, Any] = json.loads(text).get("result") or {}
    return answer


LIMITED = {"bucket": "bench", "rate": 1e9, "burst": 1e9}


def group(count: int, directory: Path, *, redis_url: str | None, prefix: str) -> Any:
    """``count`` replicas: replica_app.py, or the generated server (``--generated``)."""
    if not GENERATED:
        return replicas(count, directory, redis_url=redis_url, prefix=prefix)
    from generated_support import Plan, start

    plans = [Plan(f"{prefix}-{name}") for name in "abcdefgh"[:count]]
    return start(GENERATED["out"], plans, directory, redis_url=redis_url, tokens=[TOKEN])


def load_tool() -> str:
    return "whoami" if GENERATED else "limited"


def listen_client(url: str) -> Any:
    from mcp.client import Client

    if not GENERATED:
        return Client(url, mode=VERSION)
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
    return Client(streamable_http_client(url, http_client=http), mode=VERSION)


async def load(
    urls: list[str], seconds: float, concurrency: int = 50, tool: str | None = None
) -> list[tuple[float, float, bool]]:
    """(start offset, latency, ok) of every call made by ``concurrency`` clients."""
    limits = httpx2.Limits(max_connections=concurrency * len(urls))
    counter = itertools.count()
    samples: list[tuple[float, float, bool]] = []
    tool = tool or load_tool()
    async with httpx2.AsyncClient(limits=limits, timeout=30) as client:
        began = time.perf_counter()

        async def one_client() -> None:
            while time.perf_counter() - began < seconds:
                i = next(counter)
                body, headers = request(i, tool, LIMITED if tool == "limited" else {})
                start = time.perf_counter()
                ok = False
                try:
                    response = await client.post(urls[i % len(urls)], content=body, headers=headers)
                    ok = response.status_code == 200 and not result_of(response).get("isError")
                except httpx2.HTTPError:
                    pass
                samples.append((start - began, time.perf_counter() - start, ok))

        await asyncio.gather(*(one_client() for _ in range(concurrency)))
    return samples


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU of these processes so far (Linux /proc)."""
    import os

    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def measure(urls: list[str], seconds: float, pids: list[int], redis_pid: int) -> dict[str, float]:
    """One load point, with the CPU that replicas, Redis and this generator spent per call."""
    servers, store, own = cpu_seconds(pids), cpu_seconds([redis_pid]), time.process_time()
    samples = asyncio.run(load(urls, seconds))
    point = summary(samples, seconds)
    calls = max(1, sum(1 for *_, ok in samples if ok))
    point["replica_cpu_ms_per_call"] = round((cpu_seconds(pids) - servers) * 1000 / calls, 2)
    point["redis_cpu_ms_per_call"] = round((cpu_seconds([redis_pid]) - store) * 1000 / calls, 3)
    point["client_cpu_ms_per_call"] = round((time.process_time() - own) * 1000 / calls, 2)
    return point


def summary(samples: list[tuple[float, float, bool]], seconds: float) -> dict[str, float]:
    ok = [lat for _, lat, good in samples if good]
    return {
        "calls_per_s": round(len(ok) / seconds, 1),
        "p50_ms": round(percentile(ok, 50) * 1000, 2),
        "p99_ms": round(percentile(ok, 99) * 1000, 2),
        "errors": sum(1 for *_, good in samples if not good),
    }


async def warm(urls: list[str]) -> None:
    await load(urls, 1.0, concurrency=10)


def throughput(directory: Path, redis: RedisServer, seconds: float, rounds: int) -> dict[str, Any]:
    """Every configuration ``rounds`` times, interleaved (the machine's load drifts), median.
    The same three Redis replicas serve 1, 2 and 3 (an idle replica costs no CPU)."""
    runs: dict[str, list[dict[str, float]]] = {}
    with (
        group(1, directory, redis_url=None, prefix="bench0") as alone,
        group(3, directory, redis_url=redis.url, prefix="bench") as three,
    ):
        configurations = {"1 in process": alone}
        for n in (1, 2, 3):
            configurations[f"{n} on Redis"] = three[:n]
        for chosen in configurations.values():
            asyncio.run(warm([r.url for r in chosen]))
        assert redis.process is not None
        for round_ in range(rounds):
            for name, chosen in configurations.items():
                urls, pids = [r.url for r in chosen], [r.process.pid for r in chosen]
                point = measure(urls, seconds, pids, redis.process.pid)
                runs.setdefault(name, []).append(point)
                print(f"round {round_ + 1} {name}: {point}", flush=True)
    points: dict[str, Any] = {}
    for name, measured in runs.items():
        points[name] = {key: statistics.median(m[key] for m in measured) for key in measured[0]}
        points[name]["runs"] = len(measured)
    base = points["1 on Redis"]
    for name in ("1 in process", "1 on Redis", "2 on Redis", "3 on Redis"):
        point = points[name]
        point["calls_ratio"] = round(point["calls_per_s"] / base["calls_per_s"], 2)
        point["p99_ratio"] = round(point["p99_ms"] / base["p99_ms"], 2)
    return points


async def fan_out(a: Replica, b: Replica, samples: int) -> dict[str, float]:
    delays: list[float] = []
    calls: list[float] = []
    async with (
        listen_client(b.url) as on_b,
        httpx2.AsyncClient(timeout=10) as http,
        on_b.listen(tools_list_changed=True) as subscription,
    ):
        events = subscription.__aiter__()
        for i in range(samples):
            body, headers = request(i, "touch", {})
            start = time.perf_counter()
            pending = asyncio.ensure_future(events.__anext__())
            response = await http.post(a.url, content=body, headers=headers)
            calls.append(time.perf_counter() - start)
            assert response.status_code == 200, response.text
            await asyncio.wait_for(pending, 5)
            delays.append(time.perf_counter() - start)
    return {
        "call_to_event_p50_ms": round(percentile(delays, 50) * 1000, 2),
        "call_to_event_p99_ms": round(percentile(delays, 99) * 1000, 2),
        "call_round_trip_p50_ms": round(percentile(calls, 50) * 1000, 2),
        "call_round_trip_p99_ms": round(percentile(calls, 99) * 1000, 2),
    }


async def bus_hop(url: str, samples: int) -> dict[str, float]:
    from mcp.server.subscriptions import ResourceUpdated

    from mcpgen.runtime.shared import shared_state

    a, b = shared_state(url, prefix="hop"), shared_state(url, prefix="hop")
    arrived = asyncio.Event()
    b.bus.subscribe(lambda event: arrived.set())
    delays: list[float] = []
    async with a, b:
        for i in range(samples):
            arrived.clear()
            start = time.perf_counter()
            await a.bus.publish(ResourceUpdated(uri=f"file:///{i}"))
            await asyncio.wait_for(arrived.wait(), 5)
            delays.append(time.perf_counter() - start)
    return {
        "bus_hop_p50_ms": round(percentile(delays, 50) * 1000, 3),
        "bus_hop_p99_ms": round(percentile(delays, 99) * 1000, 3),
    }


async def operations(url: str, count: int = 2000) -> dict[str, float]:
    """Microseconds per operation, one after another, in process vs Redis (wall time on
    loopback, so it includes the round trip)."""
    from mcp.server.subscriptions import ResourceUpdated

    from mcpgen.runtime.shared import shared_state

    secret = "bench-secret-" + "0" * 32
    figures: dict[str, float] = {}
    for backend, target in (("memory", None), ("redis", url)):
        async with shared_state(target, prefix="ops", secret=secret) as shared:
            cache = shared.cache("introspection")
            await cache.set("token", {"active": True, "scope": "a b"}, ttl=60)
            await shared.state.set("user", "draft", {"text": "x" * 200})
            steps: dict[str, Callable[[], Awaitable[Any]]] = {
                "allow": partial(shared.limiter.allow, "k", 1e9, 1e9),
                "cache_get": partial(cache.get, "token"),
                "state_get": partial(shared.state.get, "user", "draft"),
                "publish": partial(shared.bus.publish, ResourceUpdated(uri="file:///x")),
            }
            for name, step in steps.items():
                start = time.perf_counter()
                for _ in range(count):
                    await step()
                figures[f"{name}_{backend}_us"] = round(
                    (time.perf_counter() - start) / count * 1e6, 1
                )
    return figures


def outage(directory: Path, redis: RedisServer) -> dict[str, Any]:
    with group(2, directory, redis_url=redis.url, prefix="outage") as pair:
        urls = [r.url for r in pair]
        asyncio.run(warm(urls))

        async def run() -> list[tuple[float, float, bool]]:
            async def chaos() -> None:
                await asyncio.sleep(2.0)
                redis.kill()
                await asyncio.sleep(2.0)
                await asyncio.to_thread(redis.start)

            task = asyncio.ensure_future(chaos())
            samples = await load(urls, 6.0)
            await task
            return samples

        samples = asyncio.run(run())
        logs = [r.log_text() for r in pair]
        health = [r.health() for r in pair]
        if GENERATED:
            health = [h["sharedState"] for h in health]
    phases = {"before (0-2 s)": (0, 2), "Redis down (2-4 s)": (2, 4), "after (4-6 s)": (4, 6)}
    result: dict[str, Any] = {
        name: summary([s for s in samples if lo <= s[0] < hi], hi - lo)
        for name, (lo, hi) in phases.items()
    }
    result["log lines per replica"] = [
        {"unreachable": log.count("is unreachable"), "back": log.count("reachable again")}
        for log in logs
    ]
    result["health after"] = [{k: h[k] for k in ("connected", "outages")} for h in health]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seconds", type=float)
    parser.add_argument("--samples", type=int)
    parser.add_argument("--rounds", type=int)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--generated", action="store_true", help="replicas of a generated server")
    options = parser.parse_args()
    seconds = options.seconds or (3.0 if options.quick else 5.0)
    samples = options.samples or (60 if options.quick else 200)
    rounds = options.rounds or (1 if options.quick else 3)
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as temp:
        directory = Path(temp)
        if options.generated:
            from generated_support import build_relay

            GENERATED["out"] = build_relay(directory, rate=1e6, burst=1_000_000)
        redis = RedisServer(directory)
        redis.start()
        try:
            figures["throughput, 50 clients, tool limited"] = throughput(
                directory, redis, seconds, rounds
            )
            with group(2, directory, redis_url=redis.url, prefix="fan") as (a, b):
                figures["fan-out A to B"] = asyncio.run(fan_out(a, b, samples))
            figures["fan-out A to B"].update(asyncio.run(bus_hop(redis.url, samples)))
            print("fan-out", figures["fan-out A to B"], flush=True)
            figures["operations, sequential"] = asyncio.run(operations(redis.url))
            print("operations", figures["operations, sequential"], flush=True)
            figures["outage, 2 replicas, 50 clients"] = outage(directory, redis)
        finally:
            redis.stop()
    text = json.dumps(figures, indent=2)
    print(text)
    if options.json:
        options.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
