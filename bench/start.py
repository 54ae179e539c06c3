"""Start-up: spawn a server over stdio until its first answered tools/list, and peak RSS.

Each run spawns the server, writes raw JSON-RPC lines (initialize, then
notifications/initialized and tools/list) and stops the clock at the tools/list answer;
it then follows ``nextCursor`` to the end of the listing (second figure), reads the
process's peak resident set (``VmHWM``) and current one (``VmRSS``) from
``/proc/<pid>/status``, and closes stdin. Median of R runs, after one untimed run that
fills the bytecode cache (``PYTHONDONTWRITEBYTECODE`` is dropped from the child's
environment unless ``--no-bytecode-cache``: an installed package has its .pyc files).

Variants:

* ``generated``   ``python -m PACKAGE`` with ``--pythonpath`` (default: the calculator);
                  point it at any generated server, e.g. the big OpenAPI one;
* ``handwritten`` the SDK ``MCPServer`` calculator (bench/baselines/handwritten_calculator.py),
                  a like-for-like baseline for the calculator only;
* ``floor``       a bare Python JSON-RPC echo (bench/baselines/echo_stdio.py): interpreter start-up;
* ``fastmcp``     with ``--fastmcp-spec SPEC.json``: ``FastMCP.from_openapi(SPEC)`` run from the
                  separate venv ``--fastmcp-python`` (default /work/bench-venv/bin/python),
                  the baseline for a server generated from the same spec.

    python bench/start.py                                   # the calculator, 5 runs
    python bench/start.py --quick
    python bench/start.py --package github_mcp --pythonpath /tmp/github/src \\
        --fastmcp-spec /tmp/github.json --variants generated,floor,fastmcp
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BASELINES = ROOT / "bench" / "baselines"
DEFAULT_FASTMCP_PYTHON = "/work/bench-venv/bin/python"
VARIANTS = ["generated", "handwritten", "floor", "fastmcp"]


def make_env(pythonpath: str, bytecode_cache: bool) -> dict[str, str]:
    env = dict(os.environ)
    parts = [str((ROOT / p).resolve()) for p in pythonpath.split(os.pathsep) if p]
    if env.get("PYTHONPATH"):
        parts.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(parts)
    if bytecode_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def command(variant: str, args: argparse.Namespace) -> list[str]:
    py = sys.executable
    if variant == "generated":
        return [py, "-m", args.package, *args.server_arg]
    if variant == "handwritten":
        return [py, str(BASELINES / "handwritten_calculator.py"), "--log-level", "WARNING"]
    if variant == "floor":
        return [py, str(BASELINES / "echo_stdio.py")]
    return [
        args.fastmcp_python,
        str(BASELINES / "fastmcp_openapi.py"),
        str(Path(args.fastmcp_spec).resolve()),
    ]


def memory_kb(pid: int) -> dict[str, int]:
    values: dict[str, int] = {}
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            key, _, rest = line.partition(":")
            if key in ("VmHWM", "VmRSS"):
                values[key] = int(rest.split()[0])
    return values


def one_start(cmd: list[str], env: dict[str, str], timeout: float) -> dict[str, Any]:
    start = time.perf_counter()
    process = subprocess.Popen(
        cmd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=ROOT,
    )
    assert process.stdin and process.stdout
    stdin, stdout = process.stdin, process.stdout
    deadline = start + timeout

    def send(message: dict[str, Any]) -> None:
        stdin.write(json.dumps(message).encode() + b"\n")
        stdin.flush()

    def receive(request_id: int) -> dict[str, Any]:
        while True:
            if time.perf_counter() > deadline:
                raise TimeoutError(f"no answer within {timeout} s")
            line = stdout.readline()
            if not line:
                raise RuntimeError(f"server exited (status {process.poll()})")
            message = json.loads(line)
            if message.get("id") == request_id:
                if "result" not in message:
                    raise RuntimeError(f"request {request_id} failed: {message.get('error')}")
                return message["result"]

    try:
        send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "0"},
                },
            }
        )
        receive(0)
        initialized = time.perf_counter()
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        page = receive(1)
        first = time.perf_counter()
        tools = len(page.get("tools", []))
        first_page = tools
        request_id = 1
        while page.get("nextCursor"):
            request_id += 1
            send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "method": "tools/list",
                    "params": {"cursor": page["nextCursor"]},
                }
            )
            page = receive(request_id)
            tools += len(page.get("tools", []))
        full = time.perf_counter()
        memory = memory_kb(process.pid)
    finally:
        stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return {
        "initialize_ms": (initialized - start) * 1000,
        "first_list_ms": (first - start) * 1000,
        "full_list_ms": (full - start) * 1000,
        "tools": tools,
        "first_page": first_page,
        "pages": request_id,
        "hwm_mb": memory.get("VmHWM", 0) / 1024,
        "rss_mb": memory.get("VmRSS", 0) / 1024,
    }


def ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}x" if a and b else "n/a"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )
    parser.add_argument(
        "--package", default="calculator_mcp", help="generated package (python -m PACKAGE)"
    )
    parser.add_argument(
        "--pythonpath",
        default="generated_examples/calculator/src",
        help="where the package is (relative to the repo)",
    )
    parser.add_argument(
        "--server-arg",
        action="append",
        default=[],
        help="extra argument for the generated server (repeatable)",
    )
    parser.add_argument(
        "--variants", help="comma list (default generated,handwritten,floor[,fastmcp])"
    )
    parser.add_argument(
        "--fastmcp-spec", metavar="SPEC", help="add the FastMCP.from_openapi baseline on SPEC"
    )
    parser.add_argument(
        "--fastmcp-python", default=DEFAULT_FASTMCP_PYTHON, help="python of the venv with fastmcp"
    )
    parser.add_argument("--runs", type=int, help="timed runs (default 5; --quick 2)")
    parser.add_argument(
        "--timeout", type=float, default=300, help="seconds allowed per start (default 300)"
    )
    parser.add_argument(
        "--no-bytecode-cache", action="store_true", help="keep PYTHONDONTWRITEBYTECODE if set"
    )
    parser.add_argument("--quick", action="store_true", help="2 runs")
    parser.add_argument("--json", metavar="FILE", help="also write the summary as JSON")
    args = parser.parse_args(argv)
    signal.signal(
        signal.SIGTERM, lambda *_: sys.exit(143)
    )  # run the finally blocks: stop our servers
    if args.runs is None:
        args.runs = 2 if args.quick else 5
    variants = (
        args.variants or "generated,handwritten,floor" + (",fastmcp" if args.fastmcp_spec else "")
    ).split(",")
    for name in variants:
        if name not in VARIANTS:
            parser.error(f"unknown variant {name!r}")
    if "fastmcp" in variants:
        if not args.fastmcp_spec:
            parser.error("the fastmcp variant needs --fastmcp-spec SPEC.json")
        if not Path(args.fastmcp_python).exists():
            print(
                f"fastmcp baseline skipped: {args.fastmcp_python} not found (see bench/README.md)"
            )
            variants.remove("fastmcp")
    env = make_env(args.pythonpath, not args.no_bytecode_cache)
    print(
        f"start: {args.runs} runs per variant after 1 untimed, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    results: dict[str, list[dict[str, Any]]] = {v: [] for v in variants}
    failed: set[str] = set()
    for run in range(args.runs + 1):
        for variant in variants:
            if variant in failed:
                continue
            try:
                point = one_start(command(variant, args), env, args.timeout)
            except Exception as exc:
                print(f"  {variant:12} FAILED: {exc!r}", flush=True)
                failed.add(variant)
                continue
            label = "warm-up" if run == 0 else f"run {run}"
            print(
                f"  {label:8} {variant:12} initialize {point['initialize_ms']:7.0f} ms  "
                f"first tools/list {point['first_list_ms']:7.0f} ms  full list {point['full_list_ms']:7.0f} ms "
                f"({point['tools']} tools, {point['pages']} pages)  VmHWM {point['hwm_mb']:6.1f} MB",
                flush=True,
            )
            if run:
                results[variant].append(point)
    summary: dict[str, dict[str, float]] = {}
    for variant, points in results.items():
        if points:
            summary[variant] = {
                key: statistics.median(p[key] for p in points)
                for key in (
                    "initialize_ms",
                    "first_list_ms",
                    "full_list_ms",
                    "hwm_mb",
                    "rss_mb",
                    "tools",
                    "pages",
                )
            }
    print(f"\nmedian of {args.runs} (load average now {os.getloadavg()[0]:.2f}):\n")
    print(
        "| variant | tools | to first tools/list (ms) | to full listing (ms) | peak RSS VmHWM (MB) | generated / this (time, memory) |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    g = summary.get("generated", {})
    for variant, s in summary.items():
        rel = (
            "-"
            if variant == "generated"
            else f"{ratio(g.get('first_list_ms'), s['first_list_ms'])}, {ratio(g.get('hwm_mb'), s['hwm_mb'])}"
        )
        print(
            f"| {variant} | {s['tools']:.0f} ({s['pages']:.0f} pages) | {s['first_list_ms']:.0f} | "
            f"{s['full_list_ms']:.0f} | {s['hwm_mb']:.1f} | {rel} |"
        )
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": args.runs, "summary": summary}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
