"""Build time: ``mcpgen build`` cold and warm, with the build process's peak memory.

For each source (default: the 10-tool manifest bench/ten_tools.yaml; any manifest or,
once the OpenAPI input lands, any OpenAPI spec can be passed), every run:

1. copies the source into a scratch directory (so it can be edited),
2. ``cold``:      ``python -m mcpgen build COPY -o OUT`` into an empty OUT, with an empty
                  build cache (``MCPGEN_CACHE_DIR`` in the scratch directory),
3. ``unchanged``: the same build again (nothing to write; the cache is warm),
4. ``touched``:   the description of one tool / operation changed, built again into OUT,
5. ``schema touched``: then one optional parameter added to it (its input model changes),

each in a fresh child process, timed wall-clock, with the CPU time of the build and its
process pool, the peak RSS of its biggest process (``ru_maxrss`` from ``wait4``, so it
covers that one build) and the peak memory of the whole process tree (summed PSS from
/proc, sampled every 50 ms: pages the forked pool shares with the build count once;
Linux only). The baseline is
datamodel-code-generator alone (its CLI) on the same schemas: for a manifest, one JSON
Schema document with the shared ``$defs`` and every tool's input/output; for an OpenAPI
spec, the spec itself (``--input-file-type openapi``). Median of R runs.

    python bench/build.py                                   # bench/ten_tools.yaml, 5 runs
    python bench/build.py --quick
    python bench/build.py manifests/calculator.yaml bench/out/github-like.json --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SOURCE = ROOT / "bench" / "ten_tools.yaml"
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
DMCG_FLAGS = [
    "--output-model-type", "pydantic_v2.BaseModel",
    "--target-python-version", "3.11",
    "--use-annotated", "--field-constraints", "--use-standard-collections", "--use-union-operator",
    "--enum-field-as-literal", "all", "--disable-timestamp", "--use-double-quotes",
    "--formatters", "builtin",
]  # fmt: skip


def load(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        return json.loads(text)
    import yaml

    return yaml.safe_load(text)


def dump(data: Any, path: Path) -> None:
    if path.suffix == ".json":
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    else:
        import yaml

        path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


def is_openapi(data: Any) -> bool:
    return isinstance(data, dict) and ("openapi" in data or "swagger" in data) and "paths" in data


def touch_one(data: Any, mark: str) -> str:
    """Change the description of the first tool or operation; return what was changed."""
    if is_openapi(data):
        for path, item in data["paths"].items():
            for method in HTTP_METHODS:
                if method in item:
                    op = item[method]
                    op["description"] = (op.get("description") or "") + mark
                    return f"{method.upper()} {path}"
    tools = data.get("tools") or []
    if not tools:
        raise ValueError("nothing to touch: no tools and no paths")
    tools[0]["description"] = (tools[0].get("description") or "") + mark
    return f"tool {tools[0].get('name')}"


def touch_schema(data: Any) -> str:
    """Add an optional string parameter to the first operation / tool: its input model changes."""
    extra = {"type": "string", "description": "added by bench/build.py"}
    if is_openapi(data):
        for path, item in data["paths"].items():
            for method in HTTP_METHODS:
                if method in item:
                    parameters = item[method].setdefault("parameters", [])
                    parameters.append({"name": "bench_added", "in": "query", "schema": extra})
                    return f"{method.upper()} {path}"
    tool = (data.get("tools") or [{}])[0]
    schema = tool.setdefault("input", {"type": "object", "properties": {}})
    schema.setdefault("properties", {})["bench_added"] = extra
    return f"tool {tool.get('name')}"


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (Linux /proc; just ``pid`` elsewhere)."""
    found = [pid]
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return found
    for child in children:
        found += _tree(int(child))
    return found


def _pss_kb(pid: int) -> int:
    """Proportional set size: pages shared after fork count once across the tree."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _watch_tree(pid: int, peak: list[int], done: threading.Event) -> None:
    """Sample the summed PSS of ``pid``'s process tree (the build and its pool) every 50 ms."""
    while not done.wait(0.05):
        peak[0] = max(peak[0], sum(_pss_kb(p) for p in _tree(pid)))


def timed(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run a child process; wall time, CPU time (with its children's), the peak RSS of its
    biggest process (``wait4``) and the peak summed PSS of its whole process tree (sampled)."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=cwd, env=env)
        peak, done = [0], threading.Event()
        watcher = threading.Thread(target=_watch_tree, args=(process.pid, peak, done), daemon=True)
        watcher.start()
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        done.set()
        watcher.join()
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        output = out.read().decode(errors="replace")
    return {
        "ok": process.returncode == 0,
        "status": process.returncode,
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "maxrss_mb": usage.ru_maxrss / 1024,
        "tree_pss_mb": peak[0] / 1024,
        "output": output,
    }


def schema_document(data: Any) -> dict[str, Any]:
    """The manifest's schemas as one JSON Schema document, for datamodel-codegen alone."""
    defs: dict[str, Any] = dict(data.get("$defs") or {})
    for tool in data.get("tools") or []:
        base = "".join(part.capitalize() for part in str(tool["name"]).replace("-", "_").split("_"))
        for key, suffix in (("input", "Input"), ("output", "Output")):
            schema = tool.get(key)
            if isinstance(schema, dict):
                schema = dict(schema)
                defs.update(schema.pop("$defs", {}))
                defs[base + suffix] = schema
            elif key == "input":
                defs[base + suffix] = {"type": "object", "properties": {}}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs}


def one_run(source: Path, scratch: Path, args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    copy = scratch / source.name
    shutil.copyfile(source, copy)
    out = scratch / "out"
    build = [sys.executable, "-m", "mcpgen", "build", str(copy), "-o", str(out), *args.build_arg]
    env = dict(os.environ)
    if not args.shared_cache:  # cold = empty build cache; the rebuilds use what cold left
        env["MCPGEN_CACHE_DIR"] = str(scratch / "cache")
    result: dict[str, dict[str, Any]] = {}
    result["cold"] = timed(build, scratch, env)
    if not result["cold"]["ok"]:
        return result
    result["unchanged"] = timed(build, scratch, env)
    data = load(copy)
    touch_one(data, " (touched by bench/build.py)")
    dump(data, copy)
    result["touched"] = timed(build, scratch, env)
    touch_schema(data)
    dump(data, copy)
    result["schema touched"] = timed(build, scratch, env)
    if not args.no_baseline:
        data = load(source)
        dmcg = str(Path(sys.executable).with_name("datamodel-codegen"))
        if is_openapi(data):
            command = [dmcg, "--input", str(source), "--input-file-type", "openapi"]
        else:
            document = scratch / "schemas.json"
            document.write_text(json.dumps(schema_document(data)), encoding="utf-8")
            command = [dmcg, "--input", str(document), "--input-file-type", "jsonschema"]
        result["datamodel-codegen"] = timed(
            [*command, "--output", str(scratch / "models.py"), *DMCG_FLAGS], scratch
        )
    return result


def ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}x" if a and b else "n/a"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )
    parser.add_argument(
        "sources", nargs="*", type=Path, help=f"manifests or specs (default {DEFAULT_SOURCE.name})"
    )
    parser.add_argument("--runs", type=int, help="runs per source (default 5; --quick 1)")
    parser.add_argument(
        "--build-arg", action="append", default=[], help="extra argument for mcpgen build"
    )
    parser.add_argument("--no-baseline", action="store_true", help="skip datamodel-codegen alone")
    parser.add_argument(
        "--shared-cache",
        action="store_true",
        help="use the user's mcpgen build cache instead of an empty one per run (cold is then not cold)",
    )
    parser.add_argument("--quick", action="store_true", help="1 run")
    parser.add_argument("--json", metavar="FILE", help="also write the summary as JSON")
    args = parser.parse_args(argv)
    signal.signal(
        signal.SIGTERM, lambda *_: sys.exit(143)
    )  # run the finally blocks: stop our servers
    if args.runs is None:
        args.runs = 1 if args.quick else 5
    sources = [s.resolve() for s in args.sources] or [DEFAULT_SOURCE]
    print(
        f"build: {args.runs} runs per source, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    summary: dict[str, dict[str, dict[str, float]]] = {}
    for source in sources:
        size = source.stat().st_size
        print(f"\n{source} ({size / 1e6:.2f} MB)", flush=True)
        runs: dict[str, list[dict[str, Any]]] = {}
        for run in range(1, args.runs + 1):
            with tempfile.TemporaryDirectory(prefix="mcpgen-bench-build-") as scratch:
                result = one_run(source, Path(scratch), args)
            for step, r in result.items():
                line = (
                    f"  run {run} {step:18} wall {r['wall_s']:7.2f} s  cpu {r['cpu_s']:7.2f} s  "
                    f"peak RSS {r['maxrss_mb']:7.1f} MB  tree PSS {r['tree_pss_mb']:7.1f} MB"
                )
                if not r["ok"]:
                    tail = r["output"].strip().splitlines()[-3:]
                    print(f"{line}  FAILED (status {r['status']}): " + " | ".join(tail), flush=True)
                    continue
                print(line, flush=True)
                runs.setdefault(step, []).append(r)
            if not result["cold"]["ok"]:
                break
        summary[str(source)] = {
            step: {
                key: statistics.median(r[key] for r in points)
                for key in ("wall_s", "cpu_s", "maxrss_mb", "tree_pss_mb")
            }
            for step, points in runs.items()
        }
    print(f"\nmedian over runs (load average now {os.getloadavg()[0]:.2f}):\n")
    print(
        "| source | step | wall (s) | CPU (s) | peak RSS (MB) | tree PSS (MB) "
        "| mcpgen / datamodel-codegen (wall, CPU, memory) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for source, steps in summary.items():
        base = steps.get("datamodel-codegen", {})
        for step, s in steps.items():
            rel = (
                f"{ratio(s['wall_s'], base.get('wall_s'))}, {ratio(s['cpu_s'], base.get('cpu_s'))}, "
                f"{ratio(s['maxrss_mb'], base.get('maxrss_mb'))}"
                if step != "datamodel-codegen"
                else "-"
            )
            print(
                f"| {Path(source).name} | {step} | {s['wall_s']:.2f} | {s['cpu_s']:.2f} "
                f"| {s['maxrss_mb']:.0f} | {s['tree_pss_mb']:.0f} | {rel} |"
            )
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": args.runs, "summary": summary}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
