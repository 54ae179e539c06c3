"""Per-call overhead of a generated server against a hand-written one and a bare floor.

Three servers answer the calculator's ``add`` tool:

* ``generated``   the mcpgen-generated package (default ``generated_examples/calculator``);
* ``handwritten`` the same tool on the SDK's ``MCPServer`` (bench/baselines/handwritten_calculator.py);
* ``floor``       a bare JSON-RPC echo with no MCP at all (bench/baselines/echo_stdio.py over
                  stdio, bench/baselines/echo_http.py = Starlette/uvicorn over HTTP).

Four ways of calling them, each N sequential ``tools/call add`` after a warm-up:

* ``stdio-raw``       raw JSON-RPC lines over the pipe (initialize, notifications/initialized,
                      then tools/call): server overhead without client overhead;
* ``stdio-client``    the SDK's ``mcp.client.Client`` over ``StdioServerParameters``
                      (handshake era): what an SDK user sees, client cost included;
* ``http-stateful``   raw httpx2 POSTs in an initialized session (``--transport http``);
* ``http-stateless``  raw httpx2 POSTs with the 2026-07-28 per-request ``_meta`` envelope
                      (``--transport http --stateless``), no session.

Every (mode, variant) runs R times, each in a fresh server process, variants interleaved;
p50 and p99 are taken per run and the median over the runs is printed, with the ratios
generated/handwritten and generated/floor, and the server process's CPU time per call
(from /proc, less sensitive to other load than wall time). A second table gives the best
run of each (on a shared machine other load only adds time). Client and server share
this machine's cores.

    python bench/calls.py                 # N=2000, warm-up 200, 5 runs
    python bench/calls.py --quick         # N=100, warm-up 20, 1 run
    python bench/calls.py --modes stdio-raw,http-stateless --json /tmp/calls.json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import free_port, percentile, stop, wait_for_port

ROOT = Path(__file__).resolve().parent.parent
BASELINES = ROOT / "bench" / "baselines"
MODES = ["stdio-raw", "stdio-client", "http-stateful", "http-stateless"]
VARIANTS = ["generated", "handwritten", "floor"]
HANDSHAKE_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"
ACCEPT = "application/json, text/event-stream"


# -- helpers (kept local so each bench script stands alone) ------------------------------
def cpu_seconds(pid: int | None) -> float:
    """User + system CPU time of a process so far (Linux /proc), 0 if unknown."""
    if pid is None:
        return 0.0
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def child_pid() -> int | None:
    """The newest child process of this one (the server the SDK client spawned)."""
    me, found = os.getpid(), []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    if int(fh.read().rsplit(")", 1)[1].split()[1]) == me:
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                continue
    return max(found) if found else None


class Timer:
    """Latencies and errors of the timed calls, and the server's CPU time across them."""

    def __init__(self, pid: int | None, warmup: int) -> None:
        self.pid, self.warmup = pid, warmup
        self.latencies: list[float] = []
        self.errors = 0
        self.cpu_start = 0.0

    def record(self, i: int, elapsed_ns: int, ok: bool) -> None:
        if i == self.warmup:
            self.cpu_start = cpu_seconds(self.pid)
        if i > self.warmup:
            self.latencies.append(elapsed_ns / 1000)
            self.errors += not ok

    def result(self) -> dict[str, Any]:
        cpu = cpu_seconds(self.pid) - self.cpu_start
        n = len(self.latencies)
        return {
            "latencies": self.latencies,
            "errors": self.errors,
            "cpu_us": cpu / n * 1e6 if self.pid and n else None,
        }


def call_args(i: int) -> tuple[list[float], float]:
    numbers = [float(i), 1.5, 2.25]
    return numbers, sum(numbers)


# -- server commands -----------------------------------------------------------------------
def make_env(pythonpath: str) -> dict[str, str]:
    env = dict(os.environ)
    parts = [str((ROOT / p).resolve()) for p in pythonpath.split(os.pathsep) if p]
    if env.get("PYTHONPATH"):
        parts.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(parts)
    return env


def stdio_command(variant: str, package: str) -> list[str]:
    py = sys.executable
    if variant == "generated":
        return [py, "-m", package, "--log-level", "WARNING"]
    if variant == "handwritten":
        return [py, str(BASELINES / "handwritten_calculator.py"), "--log-level", "WARNING"]
    return [py, str(BASELINES / "echo_stdio.py")]


def http_command(
    variant: str,
    package: str,
    port: int,
    stateless: bool,
    generated_args: list[str],
    handwritten_args: list[str],
) -> list[str]:
    py = sys.executable
    flags = ["--port", str(port), "--log-level", "warning"]
    if variant == "floor":
        return [py, str(BASELINES / "echo_http.py"), *flags]
    extra = ["--stateless"] if stateless else []
    if variant == "generated":
        return [py, "-m", package, "--transport", "http", *extra, *flags, *generated_args]
    return [
        py,
        str(BASELINES / "handwritten_calculator.py"),
        "--transport",
        "http",
        *extra,
        *flags,
        *handwritten_args,
    ]


# -- stdio, raw lines ------------------------------------------------------------------------
class LinePeer:
    """A server process spoken to with one JSON-RPC message per line."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=ROOT,
        )
        assert self.process.stdin and self.process.stdout
        self.stdin, self.stdout = self.process.stdin, self.process.stdout

    def send(self, message: bytes) -> None:
        self.stdin.write(message + b"\n")
        self.stdin.flush()

    def receive(self, request_id: int) -> dict[str, Any]:
        while True:
            line = self.stdout.readline()
            if not line:
                raise RuntimeError("server closed its stdout")
            message = json.loads(line)
            if message.get("id") == request_id:
                return message

    def handshake(self) -> None:
        self.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": HANDSHAKE_VERSION,
                        "capabilities": {},
                        "clientInfo": {"name": "bench", "version": "0"},
                    },
                }
            ).encode()
        )
        reply = self.receive(0)
        if "result" not in reply:
            raise RuntimeError(f"initialize failed: {reply}")
        self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            stop(self.process)


def check(result: dict[str, Any] | None, expected: float) -> bool:
    if not result or result.get("isError"):
        return False
    structured = result.get("structuredContent") or {}
    return abs(float(structured.get("sum", "nan")) - expected) < 1e-9


def run_stdio_raw(command: list[str], env: dict[str, str], n: int, warmup: int) -> dict[str, Any]:
    peer = LinePeer(command, env)
    try:
        peer.handshake()
        timer = Timer(peer.process.pid, warmup)
        for i in range(0, warmup + n + 1):
            numbers, expected = call_args(i)
            line = (
                b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"numbers":%s}}}'
                % (i, json.dumps(numbers).encode())
            )
            start = time.perf_counter_ns()
            peer.send(line)
            reply = peer.receive(i)
            elapsed = time.perf_counter_ns() - start
            timer.record(i, elapsed, check(reply.get("result"), expected))
        return timer.result()
    finally:
        peer.close()


# -- stdio, SDK client -------------------------------------------------------------------------
def run_stdio_client(
    command: list[str], env: dict[str, str], n: int, warmup: int
) -> dict[str, Any]:
    import anyio
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def go() -> dict[str, Any]:
        params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=ROOT)
        with open(os.devnull, "w") as devnull:
            async with Client(stdio_client(params, errlog=devnull), mode="legacy") as client:
                timer = Timer(child_pid(), warmup)
                for i in range(0, warmup + n + 1):
                    numbers, expected = call_args(i)
                    start = time.perf_counter_ns()
                    result = await client.call_tool("add", {"numbers": numbers})
                    elapsed = time.perf_counter_ns() - start
                    ok = not result.is_error and check(
                        {"structuredContent": result.structured_content}, expected
                    )
                    timer.record(i, elapsed, ok)
                return timer.result()

    return anyio.run(go)


# -- HTTP, raw POSTs ---------------------------------------------------------------------------
def parse_http_reply(response: Any, request_id: int) -> dict[str, Any] | None:
    if response.status_code != 200:
        return None
    try:
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            for line in response.text.splitlines():
                data = line[5:].strip() if line.startswith("data:") else ""
                if data:  # an SSE priming event carries an id and empty data
                    message = json.loads(data)
                    if isinstance(message, dict) and message.get("id") == request_id:
                        return message
            return None
        message = response.json()
    except ValueError:
        return None
    return message if isinstance(message, dict) and message.get("id") == request_id else None


def run_http(url: str, stateless: bool, n: int, warmup: int, pid: int) -> dict[str, Any]:
    import httpx2

    headers = {"content-type": "application/json", "accept": ACCEPT}
    with httpx2.Client(timeout=30) as client:
        if stateless:
            headers.update(
                {
                    "mcp-protocol-version": MODERN_VERSION,
                    "mcp-method": "tools/call",
                    "mcp-name": "add",
                }
            )
            meta = {
                "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
            }
        else:
            init = {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": HANDSHAKE_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "0"},
                },
            }
            response = client.post(url, content=json.dumps(init), headers=headers)
            if parse_http_reply(response, 0) is None:
                raise RuntimeError(
                    f"initialize failed: {response.status_code} {response.text[:200]}"
                )
            session = response.headers.get("mcp-session-id")
            if session:
                headers["mcp-session-id"] = session
            headers["mcp-protocol-version"] = HANDSHAKE_VERSION
            client.post(
                url,
                content=b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
                headers=headers,
            )
            meta = None
        timer = Timer(pid, warmup)
        for i in range(0, warmup + n + 1):
            numbers, expected = call_args(i)
            params: dict[str, Any] = {"name": "add", "arguments": {"numbers": numbers}}
            if meta is not None:
                params["_meta"] = meta
            body = json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params})
            start = time.perf_counter_ns()
            try:
                response = client.post(url, content=body, headers=headers)
                reply = parse_http_reply(response, i)
            except httpx2.HTTPError:
                reply = None
            elapsed = time.perf_counter_ns() - start
            timer.record(i, elapsed, check(reply.get("result") if reply else None, expected))
        return timer.result()


def measure(
    mode: str, variant: str, args: argparse.Namespace, env: dict[str, str]
) -> dict[str, Any]:
    if mode == "stdio-raw":
        return run_stdio_raw(stdio_command(variant, args.package), env, args.n, args.warmup)
    if mode == "stdio-client":
        return run_stdio_client(stdio_command(variant, args.package), env, args.n, args.warmup)
    stateless = mode == "http-stateless"
    port = free_port()
    process = subprocess.Popen(
        http_command(
            variant, args.package, port, stateless, args.generated_arg, args.handwritten_arg
        ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=ROOT,
    )
    try:
        wait_for_port(port, process)
        return run_http(f"http://127.0.0.1:{port}/mcp", stateless, args.n, args.warmup, process.pid)
    finally:
        stop(process)


# -- report ----------------------------------------------------------------------------------
def ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}x" if a and b else "n/a"


def summarize(
    results: dict[str, dict[str, list[dict[str, float]]]],
) -> dict[str, dict[str, dict[str, float]]]:
    summary: dict[str, dict[str, dict[str, float]]] = {}
    for mode, by_variant in results.items():
        for variant, runs in by_variant.items():
            if not runs:
                continue
            cpu = [r["cpu_us"] for r in runs if r["cpu_us"] is not None]
            summary.setdefault(mode, {})[variant] = {
                "p50_us": statistics.median(r["p50"] for r in runs),
                "p99_us": statistics.median(r["p99"] for r in runs),
                "best_p50_us": min(r["p50"] for r in runs),
                "server_cpu_us": statistics.median(cpu) if cpu else None,
                "best_server_cpu_us": min(cpu) if cpu else None,
                "errors": sum(r["errors"] for r in runs),
                "runs": len(runs),
            }
    return summary


def print_table(
    summary: dict[str, dict[str, dict[str, float]]], out: Callable[[str], None] = print
) -> None:
    out(
        "| mode | generated p50 / p99 (µs) | handwritten p50 / p99 | floor p50 / p99 | gen/hand p50, p99 "
        "| gen/floor p50, p99 | server CPU µs/call g / h / f | errors g/h/f |"
    )
    out("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for mode, by_variant in summary.items():
        cells = []
        for variant in VARIANTS:
            s = by_variant.get(variant)
            cells.append(f"{s['p50_us']:.0f} / {s['p99_us']:.0f}" if s else "n/a")
        g, h, f = (by_variant.get(v, {}) for v in VARIANTS)
        errors = "/".join(
            str(int(by_variant[v]["errors"])) if v in by_variant else "-" for v in VARIANTS
        )
        cpu = " / ".join(
            (
                f"{by_variant[v]['server_cpu_us']:.0f}"
                if by_variant.get(v, {}).get("server_cpu_us")
                else "-"
            )
            for v in VARIANTS
        )
        out(
            f"| {mode} | {cells[0]} | {cells[1]} | {cells[2]} "
            f"| {ratio(g.get('p50_us'), h.get('p50_us'))}, {ratio(g.get('p99_us'), h.get('p99_us'))} "
            f"| {ratio(g.get('p50_us'), f.get('p50_us'))}, {ratio(g.get('p99_us'), f.get('p99_us'))} | {cpu} | {errors} |"
        )


def print_best(
    summary: dict[str, dict[str, dict[str, float]]], out: Callable[[str], None] = print
) -> None:
    """The least disturbed run: on a shared machine, other load only ever adds time."""
    out(
        "| mode | best-run p50 g / h / f (µs) | gen/hand | gen/floor | best-run server CPU µs/call g / h / f | gen/hand |"
    )
    out("| --- | --- | --- | --- | --- | --- |")
    for mode, by_variant in summary.items():
        g, h, f = (by_variant.get(v, {}) for v in VARIANTS)
        p50 = " / ".join(f"{s['best_p50_us']:.0f}" if s else "-" for s in (g, h, f))
        cpu = " / ".join(
            f"{s['best_server_cpu_us']:.0f}" if s.get("best_server_cpu_us") else "-"
            for s in (g, h, f)
        )
        out(
            f"| {mode} | {p50} | {ratio(g.get('best_p50_us'), h.get('best_p50_us'))} "
            f"| {ratio(g.get('best_p50_us'), f.get('best_p50_us'))} | {cpu} "
            f"| {ratio(g.get('best_server_cpu_us'), h.get('best_server_cpu_us'))} |"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )
    parser.add_argument("-n", type=int, help="timed calls per run (default 2000; --quick 100)")
    parser.add_argument("--warmup", type=int, help="untimed calls first (default 200; --quick 20)")
    parser.add_argument(
        "--runs",
        type=int,
        help="runs per (mode, variant), fresh process each (default 5; --quick 1)",
    )
    parser.add_argument(
        "--modes", default=",".join(MODES), help=f"comma list of {', '.join(MODES)}"
    )
    parser.add_argument(
        "--variants", default=",".join(VARIANTS), help=f"comma list of {', '.join(VARIANTS)}"
    )
    parser.add_argument(
        "--package", default="calculator_mcp", help="generated package to run (python -m PACKAGE)"
    )
    parser.add_argument(
        "--generated-arg",
        action="append",
        default=[],
        help="extra argument for the generated HTTP server (repeatable), e.g. "
        "--generated-arg=--event-store-size --generated-arg=0",
    )
    parser.add_argument(
        "--handwritten-arg",
        action="append",
        default=[],
        help="extra argument for the hand-written HTTP server (repeatable), e.g. "
        "--handwritten-arg=--event-store --handwritten-arg=1000 (resumable streams, as the "
        "generated server keeps by default)",
    )
    parser.add_argument(
        "--pythonpath",
        default="generated_examples/calculator/src",
        help="where the package is (relative to the repo)",
    )
    parser.add_argument("--quick", action="store_true", help="N=100, warm-up 20, 1 run")
    parser.add_argument("--json", metavar="FILE", help="also write the summary as JSON")
    args = parser.parse_args(argv)
    signal.signal(
        signal.SIGTERM, lambda *_: sys.exit(143)
    )  # run the finally blocks: stop our servers
    for name, full, quick in (("n", 2000, 100), ("warmup", 200, 20), ("runs", 5, 1)):
        if getattr(args, name) is None:
            setattr(args, name, quick if args.quick else full)
    modes = [m for m in args.modes.split(",") if m]
    variants = [v for v in args.variants.split(",") if v]
    for name in modes:
        if name not in MODES:
            parser.error(f"unknown mode {name!r}")
    for name in variants:
        if name not in VARIANTS:
            parser.error(f"unknown variant {name!r}")
    env = make_env(args.pythonpath)
    print(
        f"calls: {args.n} timed calls after {args.warmup} warm-up, {args.runs} runs per point, "
        f"{os.cpu_count()} CPUs, python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    results: dict[str, dict[str, list[dict[str, float]]]] = {
        m: {v: [] for v in variants} for m in modes
    }
    started = time.monotonic()
    for run in range(args.runs):
        for mode in modes:
            order = variants[run % len(variants) :] + variants[: run % len(variants)]
            for variant in order:
                try:
                    measured = measure(mode, variant, args, env)
                except Exception as exc:
                    print(f"  run {run + 1} {mode:15} {variant:12} FAILED: {exc!r}", flush=True)
                    continue
                latencies = measured["latencies"]
                point = {
                    "p50": percentile(latencies, 50),
                    "p99": percentile(latencies, 99),
                    "errors": measured["errors"],
                    "cpu_us": measured["cpu_us"],
                }
                results[mode][variant].append(point)
                cpu = f"{point['cpu_us']:6.0f} µs" if point["cpu_us"] is not None else "     n/a"
                print(
                    f"  run {run + 1} {mode:15} {variant:12} p50 {point['p50']:8.0f} µs  p99 {point['p99']:8.0f} µs"
                    f"  server CPU/call {cpu}  errors {point['errors']}",
                    flush=True,
                )
    summary = summarize(results)
    print(
        f"\nmedian over runs ({time.monotonic() - started:.0f} s, load average now {os.getloadavg()[0]:.2f}):\n"
    )
    print_table(summary)
    print("\nbest run (lowest p50 / lowest server CPU of the runs):\n")
    print_best(summary)
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "n": args.n,
                    "warmup": args.warmup,
                    "runs": args.runs,
                    "summary": summary,
                    "points": results,
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
