"""What OpenTelemetry costs a generated server's call, as same-run ratios.

The calculator's ``add`` (as ``bench/calls.py`` calls it) under three environments, each
run in a fresh server process, the three interleaved in every round:

* ``disabled`` ``OTEL_SDK_DISABLED=true``: no telemetry code on the path at all (the
  server as it was before telemetry existed);
* ``default``  no ``OTEL_*`` variable, the ``otel`` extra installed: nothing exported, no
  connection; on HTTP the operation histogram is still kept for ``GET /metrics``;
* ``export``   ``OTEL_EXPORTER_OTLP_ENDPOINT`` at a local OTLP/HTTP sink: a span and a
  histogram record per call, exported in batches.

The ratio ``default/disabled`` is the off-by-default cost (the bar: at most 1.05x).

    python bench/otel.py                    # N=2000, warm-up 200, 5 rounds, stdio-raw and http-stateless
    python bench/otel.py --quick
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import percentile
from calls import make_env, measure

ARMS = ("disabled", "default", "export")


class _Sink(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


IN_PROCESS = """
import os, sys, time, anyio
from types import SimpleNamespace
from mcp.server._otel import OpenTelemetryMiddleware
from mcpgen.runtime import telemetry
made = telemetry.setup({"server": {"name": "x"}, "tools": [{"definition": {"name": "add"}}]}, sys.argv[1])
sdk, mine = OpenTelemetryMiddleware(), made.middleware() if made else None
ctx = SimpleNamespace(method="tools/call", params={"name": "add"}, protocol_version="2025-11-25",
                      request_id=1, meta=None, session=SimpleNamespace(),
                      request=None)
async def leaf(c): return {"content": []}
async def inner(c): return await (mine(c, leaf) if mine else leaf(c))
async def main():
    for _ in range(300): await sdk(ctx, inner)
    start = time.process_time()
    for _ in range(int(sys.argv[2])): await sdk(ctx, inner)
    return (time.process_time() - start) / int(sys.argv[2]) * 1e6
print(f"{anyio.run(main):.1f}")
if made: made.flush()
"""


def in_process(sink_url: str, base: dict[str, str], n: int) -> None:
    """CPU per message of the SDK's span middleware and mcpgen's, in one process (all its
    threads: batching and encoding included), without transport noise."""
    import subprocess

    cases = (
        ("stdio, no OTEL_*", "stdio", base),
        ("HTTP, no OTEL_* (GET /metrics)", "http", base),
        ("exporting", "http", {**base, "OTEL_EXPORTER_OTLP_ENDPOINT": sink_url}),
    )
    print("\n| in process | CPU µs per message (median of 3) |\n| --- | --- |")
    for label, transport, env in cases:
        runs = [
            float(
                subprocess.run(
                    [sys.executable, "-c", IN_PROCESS, transport, str(n)],
                    env={**env, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout.split()[0]
            )
            for _ in range(3)
        ]
        print(f"| {label} | {statistics.median(runs):.1f} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--modes", default="stdio-raw,http-stateless")
    parser.add_argument("--quick", action="store_true", help="N=200, warm-up 20, 1 round")
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.warmup, args.runs = 200, 20, 1
    args.package, args.generated_arg, args.handwritten_arg = "calculator_mcp", [], []
    sink = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    base = {k: v for k, v in make_env("generated_examples/calculator/src").items()}
    base = {k: v for k, v in base.items() if not k.startswith("OTEL_")}
    envs = {
        "disabled": {**base, "OTEL_SDK_DISABLED": "true"},
        "default": base,
        "export": {
            **base,
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{sink.server_address[1]}",
        },
    }
    modes = [m for m in args.modes.split(",") if m]
    found: dict[str, dict[str, list[dict[str, float]]]] = {m: {a: [] for a in ARMS} for m in modes}
    for run in range(args.runs):
        for mode in modes:
            order = ARMS[run % 3 :] + ARMS[: run % 3]
            for arm in order:
                measured = measure(mode, "generated", args, envs[arm])
                point = {
                    "p50": percentile(measured["latencies"], 50),
                    "cpu": measured["cpu_us"] or 0.0,
                    "errors": measured["errors"],
                }
                found[mode][arm].append(point)
                print(
                    f"  round {run + 1} {mode:15} {arm:9} p50 {point['p50']:7.0f} µs"
                    f"  server CPU/call {point['cpu']:5.0f} µs  errors {point['errors']}",
                    flush=True,
                )
    in_process(f"http://127.0.0.1:{sink.server_address[1]}", base, args.n * 2)
    sink.shutdown()
    print(
        "\n| mode | p50 µs disabled / default / export | default/disabled | export/disabled "
        "| server CPU µs/call d / def / e | CPU default/disabled |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for mode in modes:
        p50 = {a: statistics.median(p["p50"] for p in found[mode][a]) for a in ARMS}
        cpu = {a: statistics.median(p["cpu"] for p in found[mode][a]) for a in ARMS}
        print(
            f"| {mode} | {p50['disabled']:.0f} / {p50['default']:.0f} / {p50['export']:.0f} "
            f"| {p50['default'] / p50['disabled']:.3f}x | {p50['export'] / p50['disabled']:.3f}x "
            f"| {cpu['disabled']:.0f} / {cpu['default']:.0f} / {cpu['export']:.0f} "
            f"| {cpu['default'] / cpu['disabled']:.3f}x |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
