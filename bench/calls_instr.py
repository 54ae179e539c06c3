"""Instructions per ``tools/call`` of a server process, counted by valgrind's callgrind:
the same calls as ``calls.py``'s HTTP modes, a figure other load on the machine does not move
(CPU time on a shared machine moves by 10-30% between runs; this by about 1%).

Each (mode, variant) server runs under ``valgrind --tool=callgrind --instr-atstart=no``;
after a warm-up, counting is switched on (``callgrind_control -i on``) for N calls and the
total is divided by N. Python's own frames are not named (3.11), so this says how much,
not where: pair it with an ablation (a copy of the package with one piece taken out).
System calls are not counted (a send(2) costs instructions in the kernel, not here).

    python bench/calls_instr.py                                   # both HTTP modes, N=100
    python bench/calls_instr.py --modes http-stateful --handwritten-arg=--event-store=1000
    python bench/calls_instr.py --pythonpath /tmp/before/src      # another generated package
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import free_port, wait_for_port
from calls import ROOT, http_command, make_env, run_http


def count(mode: str, variant: str, args: argparse.Namespace) -> float:
    port = free_port()
    command = http_command(
        variant,
        args.package,
        port,
        mode == "http-stateless",
        args.generated_arg,
        args.handwritten_arg,
    )
    env = {**make_env(args.pythonpath), "PYTHONHASHSEED": "0"}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        valgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no"]
        process = subprocess.Popen(
            [*valgrind, f"--callgrind-out-file={out}", *command],
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_for_port(port, process, timeout=600)
            url = f"http://127.0.0.1:{port}/mcp"
            stateless = mode == "http-stateless"
            run_http(url, stateless, args.warmup, 0, process.pid)
            control = ["callgrind_control", "-i"]
            subprocess.run([*control, "on", str(process.pid)], capture_output=True, check=True)
            run_http(url, stateless, args.n, 0, process.pid)
            subprocess.run([*control, "off", str(process.pid)], capture_output=True, check=True)
        finally:
            process.terminate()
            process.wait(timeout=300)
        total = 0
        for line in out.read_text().splitlines():
            if line.startswith(("summary:", "totals:")):
                total = max(total, int(line.split()[1]))
    return total / (args.n + 1)  # run_http makes n + 1 calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=100, help="counted calls (default 100)")
    parser.add_argument("--warmup", type=int, default=30, help="uncounted calls first")
    parser.add_argument("--modes", default="http-stateful,http-stateless")
    parser.add_argument("--variants", default="generated,handwritten")
    parser.add_argument("--package", default="calculator_mcp")
    parser.add_argument("--pythonpath", default="generated_examples/calculator/src")
    parser.add_argument("--generated-arg", action="append", default=[])
    parser.add_argument("--handwritten-arg", action="append", default=[])
    args = parser.parse_args()
    if subprocess.run(["which", "valgrind"], capture_output=True).returncode:
        sys.exit("valgrind is not installed (apt-get install valgrind)")
    print("| mode | variant | instructions per call (M) |\n| --- | --- | --- |")
    for mode in args.modes.split(","):
        found = {v: count(mode, v, args) for v in args.variants.split(",")}
        for variant, instructions in found.items():
            print(f"| {mode} | {variant} | {instructions / 1e6:.3f} |")
        if "generated" in found and "handwritten" in found:
            ratio = found["generated"] / found["handwritten"]
            print(f"| {mode} | generated/handwritten | {ratio:.3f}x |")


if __name__ == "__main__":
    main()
