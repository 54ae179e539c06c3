"""``mcpgen diff`` A/B: a big spec against itself with one change, per mcpgen tree, interleaved.

Every run, for each variant in an order rotated from run to run (a noisy shared machine
slows every variant alike), times a fresh ``python -m mcpgen diff`` process:

* ``spec``: the spec against a copy with one property of one request body removed (both
  sides go through the whole pipeline: load, check, model);
* ``lock``: the two surface locks of the same pair (what a generated project's CI diffs),
  made once with the first variant.

The summary gives, per variant and case, the median, the spread (min-max) and the ratio of
the median to the first variant's (the baseline) in the same runs.

    python bench/diff.py --variant before=/tmp/core --variant after=. --runs 5
    python bench/diff.py --variant cur=. [--spec bench/out/github/api.github.com.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from plumbing import GITHUB, parse_variant  # noqa: E402

CASES = ("spec", "lock")


def one_change(spec: dict[str, Any]) -> str:
    """Remove the first property of the first JSON request body that has some (sorted paths);
    returns where, for the report."""
    for path in sorted(spec.get("paths", {})):
        for method, operation in sorted(spec["paths"][path].items()):
            content = (
                (operation.get("requestBody") or {}).get("content", {})
                if isinstance(operation, dict)
                else {}
            )
            properties = (content.get("application/json", {}).get("schema") or {}).get("properties")
            if isinstance(properties, dict) and properties:
                name = sorted(properties)[0]
                del properties[name]
                return f"{method.upper()} {path}: body property {name}"
    raise SystemExit("no request body with properties to change")


def run_diff(tree: Path, env: dict[str, str], old: Path, new: Path) -> float:
    command = [sys.executable, "-m", "mcpgen", "diff", str(old), str(new), "--fail-on", "none"]
    full_env = {**os.environ, "PYTHONPATH": str(tree), **env}
    started = time.perf_counter()
    done = subprocess.run(command, cwd=tree, env=full_env, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{tree}: mcpgen diff failed ({done.returncode}): {done.stderr[-2000:]!r}")
    return elapsed


def make_lock(tree: Path, env: dict[str, str], source: Path, lock: Path) -> None:
    code = (
        "import sys; from mcpgen.surface import sources; from mcpgen.render.lock import dumps; "
        "open(sys.argv[2], 'w').write(dumps(sources.load(sys.argv[1])))"
    )
    subprocess.run(
        [sys.executable, "-c", code, str(source), str(lock)],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree), **env},
        check=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", action="append", type=parse_variant, required=True)
    parser.add_argument("--spec", type=Path, default=GITHUB)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    variants = args.variant
    work = Path(tempfile.mkdtemp(prefix="mcpgen-bench-diff-"))
    old = work / "old.json"
    new = work / "new.json"
    data = json.loads(args.spec.read_text(encoding="utf-8"))
    old.write_text(json.dumps(data), encoding="utf-8")
    changed = one_change(data)
    new.write_text(json.dumps(data), encoding="utf-8")
    _, base_tree, base_env = variants[0]
    make_lock(base_tree, base_env, old, work / "old.surface.json")
    make_lock(base_tree, base_env, new, work / "new.surface.json")
    pairs = {"spec": (old, new), "lock": (work / "old.surface.json", work / "new.surface.json")}
    load = os.getloadavg()[0]
    print(f"diff: {args.spec.name}, one change ({changed}); {args.runs} runs; load {load:.1f}")
    times: dict[tuple[str, str], list[float]] = {}
    for run in range(args.runs):
        order = variants[run % len(variants) :] + variants[: run % len(variants)]
        for name, tree, env in order:
            for case in CASES:
                elapsed = run_diff(tree, env, *pairs[case])
                times.setdefault((name, case), []).append(elapsed)
                print(f"  run {run + 1} {name:<10} {case:<5} {elapsed:6.2f} s", flush=True)
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}\n")
    print("| variant | case | median (s) | spread (s) | x baseline |")
    print("| --- | --- | ---: | --- | ---: |")
    base = variants[0][0]
    for name, _, _ in variants:
        for case in CASES:
            values = times[name, case]
            median = statistics.median(values)
            ratio = median / statistics.median(times[base, case])
            print(
                f"| {name} | {case} | {median:.2f} | {min(values):.2f}-{max(values):.2f} "
                f"| {ratio:.2f}x |"
            )


if __name__ == "__main__":
    main()
