"""Build plumbing A/B: ``mcpgen build`` variants, interleaved, against datamodel-codegen alone.

A variant is a source tree of mcpgen (put first on ``PYTHONPATH``) and environment
variables for its builds. Every run, for each source:

1. datamodel-codegen alone on the source's schemas (the baseline, as in ``build.py``);
2. for each variant, in an order rotated from run to run (interleaved: a noisy shared
   machine slows every variant alike), in its own scratch folder with an empty build
   cache: ``cold`` (empty output folder), ``touched`` (one operation's or tool's
   description changed, rebuilt into the same folder), ``schema`` (then one optional
   parameter added to it: its input model changes).

Each build is a fresh ``python -m mcpgen build`` process, timed wall-clock (CPU includes
its pool). The summary gives, per variant and case, the median, the spread (min-max) and
the median's ratio to the median of datamodel-codegen in the same runs.

    python bench/plumbing.py --variant before=/tmp/core --variant after=.
    python bench/plumbing.py --variant cur=. --variant nocache=.,MCPGEN_CACHE_DIR= \\
        --sources bench/ten_tools.yaml --runs 5
    python bench/plumbing.py --variant serial=.,MCPGEN_AB_OFF=pool ...  # see --help

``--variant NAME=TREE[,KEY=VALUE...]``: TREE is a folder holding the ``mcpgen`` package
(``.`` is this checkout); KEY=VALUE pairs are set for its builds (``KEY=`` sets it empty:
``MCPGEN_CACHE_DIR=`` turns the build cache off). ``--runs`` applies to every source;
``--sources`` defaults to bench/ten_tools.yaml and GitHub's spec when it is in bench/out.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import build as bench  # noqa: E402

ROOT = HERE.parent
GITHUB = HERE / "out" / "github" / "api.github.com.json"
CASES = ("cold", "touched", "schema")


def parse_variant(text: str) -> tuple[str, Path, dict[str, str]]:
    name, _, rest = text.partition("=")
    tree, *pairs = rest.split(",")
    if not name or not tree:
        raise argparse.ArgumentTypeError(f"expected NAME=TREE[,KEY=VALUE...], got {text!r}")
    env = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {pair!r}")
        env[key] = value
    path = (ROOT if tree == "." else Path(tree)).resolve()
    if not (path / "mcpgen" / "__init__.py").is_file():
        raise argparse.ArgumentTypeError(f"{path}: no mcpgen package there")
    return name, path, env


def baseline(source: Path, scratch: Path) -> dict[str, Any]:
    data = bench.load(source)
    dmcg = str(Path(sys.executable).with_name("datamodel-codegen"))
    if bench.is_openapi(data):
        command = [dmcg, "--input", str(source), "--input-file-type", "openapi"]
    else:
        document = scratch / "schemas.json"
        document.write_text(json.dumps(bench.schema_document(data)), encoding="utf-8")
        command = [dmcg, "--input", str(document), "--input-file-type", "jsonschema"]
    return bench.timed(
        [*command, "--output", str(scratch / "models.py"), *bench.DMCG_FLAGS], scratch
    )


def variant_run(
    source: Path,
    scratch: Path,
    tree: Path,
    extra: dict[str, str],
    cases: tuple[str, ...],
    cold_from: Path | None = None,
) -> dict[str, dict[str, Any]]:
    """The variant's builds in ``scratch``; with ``cold_from``, the rebuilds start from a
    copy of that folder (a cold build already made there) instead of a cold build."""
    copy = scratch / source.name
    out = scratch / "out"
    command = [sys.executable, "-m", "mcpgen", "build", str(copy), "-o", str(out)]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tree), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["MCPGEN_CACHE_DIR"] = str(scratch / "cache")
    env.update(extra)
    result: dict[str, dict[str, Any]] = {}
    if cold_from is None:
        shutil.copyfile(source, copy)
        result["cold"] = bench.timed(command, scratch, env)
        if not result["cold"]["ok"] or cases == ("cold",):
            return result
    else:
        shutil.copytree(cold_from, scratch, dirs_exist_ok=True)
    data = bench.load(copy)
    bench.touch_one(data, " (touched by bench/plumbing.py)")
    bench.dump(data, copy)
    result["touched"] = bench.timed(command, scratch, env)
    bench.touch_schema(data)
    bench.dump(data, copy)
    result["schema"] = bench.timed(command, scratch, env)
    return result


def report(source: Path, run: int, name: str, steps: dict[str, dict[str, Any]], table: Any) -> None:
    for case, r in steps.items():
        status = "" if r["ok"] else "  FAILED: " + r["output"].strip()[-300:]
        print(
            f"{source.name} run {run + 1} {name:16} {case:8} wall {r['wall_s']:6.2f} s"
            f"  cpu {r['cpu_s']:6.2f} s{status}",
            flush=True,
        )
        if r["ok"]:
            table.setdefault(name, {}).setdefault(case, []).append((r["wall_s"], r["cpu_s"]))


def spread(values: list[float]) -> str:
    return f"{min(values):.2f}-{max(values):.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )
    parser.add_argument("--variant", action="append", type=parse_variant, default=[])
    parser.add_argument("--sources", nargs="+", type=Path, help="manifests or OpenAPI specs")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cold-only", action="store_true", help="only the cold build")
    parser.add_argument(
        "--shared-cold",
        action="store_true",
        help="rebuilds only: each run makes one cold build (the first variant's) and every "
        "variant rebuilds a copy of it (for variants whose cache entries are the same)",
    )
    parser.add_argument("--json", metavar="FILE", help="also write every measurement as JSON")
    args = parser.parse_args(argv)
    variants = args.variant or [parse_variant("current=.")]
    if len({name for name, _, _ in variants}) != len(variants):
        parser.error("variant names must differ")
    sources = args.sources or [bench.DEFAULT_SOURCE, *([GITHUB] if GITHUB.is_file() else [])]
    cases = ("cold",) if args.cold_only else CASES
    for _, tree, _ in variants:  # bytecode for every tree (the environment may say not to write it)
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "mcpgen")], check=True)
    print(
        f"plumbing: {args.runs} runs, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; "
        + "; ".join(f"{n} = {t} {e or ''}" for n, t, e in variants),
        flush=True,
    )
    # results[source][variant or "dcg"][case] -> list of (wall, cpu)
    results: dict[str, dict[str, dict[str, list[tuple[float, float]]]]] = {}
    for source in (s.resolve() for s in sources):
        table = results.setdefault(source.name, {})
        for run in range(args.runs):
            order = variants[run % len(variants) :] + variants[: run % len(variants)]
            with tempfile.TemporaryDirectory(prefix="mcpgen-plumbing-") as folder:
                r = baseline(source, Path(folder))
                table.setdefault("dcg", {}).setdefault("alone", []).append(
                    (r["wall_s"], r["cpu_s"])
                )
                print(f"{source.name} run {run + 1} dcg {r['wall_s']:.2f} s", flush=True)
            with tempfile.TemporaryDirectory(prefix="mcpgen-plumbing-") as base:
                if args.shared_cold:  # one cold build (the first variant's) for every rebuild
                    name, tree, extra = variants[0]
                    steps = variant_run(source, Path(base), tree, extra, ("cold",))
                    report(source, run, name, steps, table)
                    if not steps["cold"]["ok"]:
                        continue
                for name, tree, extra in order:
                    with tempfile.TemporaryDirectory(prefix="mcpgen-plumbing-") as folder:
                        start = Path(base) if args.shared_cold else None
                        steps = variant_run(source, Path(folder), tree, extra, cases, start)
                    report(source, run, name, steps, table)
    print(f"\nload now {os.getloadavg()[0]:.2f}; median s (spread) [ratio of medians to DCG]")
    for source, table in results.items():
        for index, metric in enumerate(("wall", "CPU")):
            base = [m[index] for m in table["dcg"]["alone"]]
            dcg = statistics.median(base)
            print(f"\n{source}, {metric}: datamodel-codegen alone {dcg:.2f} s ({spread(base)})")
            print("| variant | " + " | ".join(cases) + " |")
            print("| --- |" + " --- |" * len(cases))
            for name, _, _ in variants:
                cells = []
                for case in cases:
                    values = [m[index] for m in table.get(name, {}).get(case, [])]
                    if not values and case == "cold" and args.shared_cold:
                        cells.append("-")
                        continue
                    median = statistics.median(values) if values else None
                    cells.append(
                        f"{median:.2f} ({spread(values)}) [{median / dcg:.2f}x]"
                        if median is not None
                        else "failed"
                    )
                print(f"| {name} | " + " | ".join(cells) + " |")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
