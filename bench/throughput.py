"""Throughput: tools/call add per second over stateless streamable HTTP, 1 and 2 workers.

For each server variant and uvicorn worker count, one server is started, warmed up, and
loaded at 1, 10 and 50 concurrent clients (asyncio + httpx2 in this process, one
keep-alive connection per client), each point bounded by a call count and a time limit.
Calls are 2026-07-28 stateless requests (``_meta`` envelope, JSON response); a call is an
error if the status is not 200, the transport fails, or the sum is wrong.

Variants:

* ``generated``   the generated package (default calculator_mcp). If its ``--help`` lists
                  ``--workers`` the package's own launcher is used
                  (``python -m PKG --transport http --stateless --workers N``); otherwise, or
                  with ``--generated-launcher factory``, ``uvicorn --factory --workers N`` on
                  bench/baselines/generated_app.py (the package's ``asgi.create_app`` if it
                  has one, else ``create_server().streamable_http_app(stateless_http=True)``);
                  uvicorn runs through bench/baselines/uvicorn_launch.py, which fixes the
                  missing TCP_NODELAY of ``--workers > 1`` (uvicorn #3149; ``--stock-uvicorn``
                  to measure without: every sequential keep-alive call then waits ~40 ms);
* ``handwritten`` the SDK ``MCPServer`` baseline (``uvicorn --factory`` on its ``create_app``);
* ``floor``       a bare Starlette JSON echo (``uvicorn --factory`` on echo_http.create_app).
                  The floor is also this load generator's ceiling: a single Python client
                  process shares the machine's cores with the server workers.

    python bench/throughput.py                # 2000 calls or 30 s per point, 3 runs
    python bench/throughput.py --quick        # 200 calls or 5 s per point, 1 run
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import free_port, percentile, stop, wait_for_port

ROOT = Path(__file__).resolve().parent.parent
BASELINES = ROOT / "bench" / "baselines"
VARIANTS = ["generated", "handwritten", "floor"]
MODERN_VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
}
HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": MODERN_VERSION,
    "mcp-method": "tools/call",
    "mcp-name": "add",
}


def make_env(pythonpath: str, package: str) -> dict[str, str]:
    env = dict(os.environ)
    parts = [str((ROOT / p).resolve()) for p in pythonpath.split(os.pathsep) if p]
    if env.get("PYTHONPATH"):
        parts.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(parts)
    env["BENCH_PACKAGE"] = package
    return env


def has_workers_flag(package: str, env: dict[str, str]) -> bool:
    result = subprocess.run(
        [sys.executable, "-m", package, "--help"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
    )
    return "--workers" in result.stdout


def server_command(
    variant: str, package: str, workers: int, port: int, own_launcher: bool, stock_uvicorn: bool
) -> list[str]:
    py = sys.executable
    common = ["--port", str(port), "--log-level", "warning"]
    if variant == "generated" and own_launcher:
        return [
            py,
            "-m",
            package,
            "--transport",
            "http",
            "--stateless",
            "--workers",
            str(workers),
            *common,
        ]
    app = {
        "generated": "generated_app:create_app",
        "handwritten": "handwritten_calculator:create_app",
        "floor": "echo_http:create_app",
    }[variant]
    fix = [] if stock_uvicorn else ["--tcp-nodelay-fix"]
    return [
        py, str(BASELINES / "uvicorn_launch.py"), *fix, "--factory", app, "--app-dir", str(BASELINES),
        "--host", "127.0.0.1", "--workers", str(workers), "--no-access-log", *common,
    ]  # fmt: skip


async def load(url: str, total: int, concurrency: int, max_seconds: float) -> dict[str, float]:
    import httpx2

    limits = httpx2.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    counter = itertools.count(1)
    latencies: list[float] = []
    errors = 0
    async with httpx2.AsyncClient(limits=limits, timeout=30) as client:
        deadline = time.monotonic() + max_seconds

        async def one_client() -> None:
            nonlocal errors
            while True:
                i = next(counter)
                if i > total or time.monotonic() > deadline:
                    return
                numbers = [float(i), 1.5, 2.25]
                body = json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": i,
                        "method": "tools/call",
                        "params": {"name": "add", "arguments": {"numbers": numbers}, "_meta": META},
                    }
                )
                start = time.perf_counter()
                ok = False
                try:
                    response = await client.post(url, content=body, headers=HEADERS)
                    if response.status_code == 200:
                        result = response.json().get("result") or {}
                        got = (result.get("structuredContent") or {}).get("sum")
                        ok = (
                            not result.get("isError")
                            and got is not None
                            and abs(got - sum(numbers)) < 1e-9
                        )
                except (httpx2.HTTPError, ValueError):
                    ok = False
                latencies.append(time.perf_counter() - start)
                errors += not ok

        start = time.perf_counter()
        await asyncio.gather(*(one_client() for _ in range(concurrency)))
        elapsed = time.perf_counter() - start
    done = len(latencies)
    return {
        "calls": done,
        "errors": errors,
        "seconds": elapsed,
        "calls_per_s": (done - errors) / elapsed if elapsed else 0.0,
        "p50_ms": percentile(latencies, 50) * 1000,
        "p99_ms": percentile(latencies, 99) * 1000,
    }


def run_server(
    variant: str, workers: int, args: argparse.Namespace, env: dict[str, str], own_launcher: bool
) -> dict[int, dict[str, float]]:
    port = free_port()
    command = server_command(variant, args.package, workers, port, own_launcher, args.stock_uvicorn)
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ROOT
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_for_port(port, process)
        warm = asyncio.run(load(url, args.warmup, min(10, args.warmup), args.max_seconds))
        if warm["errors"] == warm["calls"]:
            raise RuntimeError(f"every warm-up call failed ({command})")
        probe = asyncio.run(load(url, 20, 1, args.max_seconds))
        if probe["p50_ms"] > 30:
            print(
                f"  WARNING {variant} workers {workers}: sequential keep-alive calls take {probe['p50_ms']:.0f} ms "
                "(Nagle + delayed ACK: TCP_NODELAY missing, see bench/baselines/uvicorn_launch.py)",
                flush=True,
            )
        return {
            c: asyncio.run(load(url, args.calls, c, args.max_seconds)) for c in args.concurrency
        }
    finally:
        stop(process)


def ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}x" if a and b else "n/a"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )
    parser.add_argument("--calls", type=int, help="calls per point (default 2000; --quick 200)")
    parser.add_argument(
        "--max-seconds", type=float, help="time limit per point (default 30; --quick 5)"
    )
    parser.add_argument(
        "--warmup", type=int, help="warm-up calls per server (default 100; --quick 20)"
    )
    parser.add_argument("--runs", type=int, help="runs, fresh servers each (default 3; --quick 1)")
    parser.add_argument("--concurrency", default="1,10,50", help="comma list (default 1,10,50)")
    parser.add_argument(
        "--workers", default="1,2", help="comma list of uvicorn worker counts (default 1,2)"
    )
    parser.add_argument(
        "--variants", default=",".join(VARIANTS), help=f"comma list of {', '.join(VARIANTS)}"
    )
    parser.add_argument("--package", default="calculator_mcp")
    parser.add_argument("--pythonpath", default="generated_examples/calculator/src")
    parser.add_argument(
        "--generated-launcher",
        choices=["auto", "own", "factory"],
        default="auto",
        help="own: python -m PKG --workers N; factory: uvicorn --factory on bench/baselines/generated_app.py "
        "(same launcher as the baselines); auto (default): own if the package has --workers",
    )
    parser.add_argument(
        "--stock-uvicorn",
        action="store_true",
        help="do not apply the TCP_NODELAY fix for --workers > 1 (uvicorn #3149): shows the ~40 ms stall",
    )
    parser.add_argument("--quick", action="store_true", help="200 calls or 5 s per point, 1 run")
    parser.add_argument("--json", metavar="FILE", help="also write the summary as JSON")
    args = parser.parse_args(argv)
    signal.signal(
        signal.SIGTERM, lambda *_: sys.exit(143)
    )  # run the finally blocks: stop our servers
    for name, full, quick in (
        ("calls", 2000, 200),
        ("max_seconds", 30.0, 5.0),
        ("warmup", 100, 20),
        ("runs", 3, 1),
    ):
        if getattr(args, name) is None:
            setattr(args, name, quick if args.quick else full)
    args.concurrency = [int(c) for c in args.concurrency.split(",") if c]
    worker_counts = [int(w) for w in args.workers.split(",") if w]
    variants = [v for v in args.variants.split(",") if v]
    env = make_env(args.pythonpath, args.package)
    has_flag = "generated" in variants and has_workers_flag(args.package, env)
    own = args.generated_launcher == "own" or (args.generated_launcher == "auto" and has_flag)
    if own and not has_flag:
        parser.error(f"{args.package} has no --workers flag")
    launcher = (
        f"python -m {args.package} --workers N (the package's own flag)"
        if own
        else "uvicorn --factory --workers N on bench/baselines/generated_app.py"
        + ("" if has_flag else " (no --workers flag in the package)")
    )
    print(
        f"throughput: {args.calls} calls or {args.max_seconds:.0f} s per point, {args.runs} run(s), "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; generated server launched with {launcher}; "
        + (
            "stock uvicorn"
            if args.stock_uvicorn
            else "uvicorn with the TCP_NODELAY fix for --workers > 1"
        ),
        flush=True,
    )
    runs: dict[tuple[str, int, int], list[dict[str, float]]] = {}
    started = time.monotonic()
    for run in range(args.runs):
        for workers in worker_counts:
            order = variants[run % len(variants) :] + variants[: run % len(variants)]
            for variant in order:
                try:
                    points = run_server(variant, workers, args, env, own)
                except Exception as exc:
                    print(
                        f"  run {run + 1} {variant:12} workers {workers} FAILED: {exc!r}",
                        flush=True,
                    )
                    continue
                for c, point in points.items():
                    runs.setdefault((variant, workers, c), []).append(point)
                    print(
                        f"  run {run + 1} {variant:12} workers {workers} clients {c:3}: "
                        f"{point['calls_per_s']:7.0f} calls/s  p50 {point['p50_ms']:6.1f} ms  "
                        f"p99 {point['p99_ms']:6.1f} ms  errors {int(point['errors'])}/{int(point['calls'])}",
                        flush=True,
                    )
    summary: dict[str, dict[str, float]] = {}
    for (variant, workers, c), points in runs.items():
        summary[f"{variant}/w{workers}/c{c}"] = {
            "calls_per_s": statistics.median(p["calls_per_s"] for p in points),
            "p50_ms": statistics.median(p["p50_ms"] for p in points),
            "p99_ms": statistics.median(p["p99_ms"] for p in points),
            "errors": sum(p["errors"] for p in points),
            "calls": sum(p["calls"] for p in points),
        }
    print(
        f"\nmedian over runs ({time.monotonic() - started:.0f} s, load average now {os.getloadavg()[0]:.2f}), "
        "calls/s (errors/calls):\n"
    )
    print("| workers | clients | generated | handwritten | floor | gen/hand | gen/floor |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for workers in worker_counts:
        for c in args.concurrency:
            cells, rates = [], {}
            for variant in VARIANTS:
                s = summary.get(f"{variant}/w{workers}/c{c}")
                rates[variant] = s["calls_per_s"] if s else None
                cells.append(
                    f"{s['calls_per_s']:.0f} ({int(s['errors'])}/{int(s['calls'])})" if s else "n/a"
                )
            print(
                f"| {workers} | {c} | {' | '.join(cells)} | {ratio(rates['generated'], rates['handwritten'])} "
                f"| {ratio(rates['generated'], rates['floor'])} |"
            )
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {"calls": args.calls, "runs": args.runs, "launcher": launcher, "summary": summary},
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
