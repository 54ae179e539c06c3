"""Start-up of a generated server with the search index computed at build time
(``_search.json``) and without it (the index built at start), in the same run.

    python bench/startup.py [--built /tmp/gh] [--runs 3]

Builds GitHub's spec (``bench/out/github/api.github.com.json``, code mode by itself) unless
``--built`` names a build, copies it twice (one copy without ``_search.json``), then starts
each copy ``--runs`` times, alternating: ``python -m github_mcp`` over stdio, spoken to by a
minimal JSON-RPC client here (initialize, notifications/initialized, tools/list, then one
``search_docs``). Reports, per variant, the median of: seconds from spawning the process to
the tools/list answer, seconds of the first ``search_docs``, and the server's resident
memory (``VmRSS`` and ``VmHWM`` from ``/proc``) after it. Writes ``bench/startup.md``.
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
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "bench" / "out" / "github" / "api.github.com.json"
PACKAGE = "github_mcp"


def rpc(process: subprocess.Popen[bytes], message: dict[str, Any]) -> dict[str, Any] | None:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write((json.dumps(message) + "\n").encode())
    process.stdin.flush()
    if "id" not in message:
        return None
    while True:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError("the server closed its output")
        answer: dict[str, Any] = json.loads(line)
        if answer.get("id") == message["id"]:
            return answer


def memory(pid: int) -> dict[str, float]:
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0]) / 1024
    return found


BUILD_CPU = (
    "import time; from github_mcp.server import create_server; "
    "t = time.process_time(); create_server(); print(time.process_time() - t)"
)


def server_cpu(src: Path) -> float:
    """CPU seconds of ``create_server()`` (the tables and the search index), in a fresh
    process: steadier than wall times on a busy machine."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, "-c", BUILD_CPU], env=env, capture_output=True, text=True, check=True
    )
    return float(done.stdout.strip().splitlines()[-1])


def once(src: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(src), "GITHUB_API_BASE_URL": "http://127.0.0.1:9"}
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", PACKAGE, "--transport", "stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        rpc(
            process,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "0"},
                },
            },
        )
        rpc(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        listed = rpc(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        first_list = time.perf_counter() - start
        assert listed and [t["name"] for t in listed["result"]["tools"]] == [
            "search_docs",
            "execute",
        ]
        at = time.perf_counter()
        found = rpc(
            process,
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "search_docs", "arguments": {"query": "create an issue"}},
            },
        )
        first_search = time.perf_counter() - at
        assert found and "issues_create(" in found["result"]["content"][0]["text"]
        used = memory(process.pid)
    finally:
        process.kill()
        process.wait()
    return {
        "tools/list s": first_list,
        "search_docs s": first_search,
        **used,
        "create_server cpu s": server_cpu(src),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--built", type=Path, help="a GitHub build to use (else built here)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="startup-"))
    try:
        built = args.built
        if built is None:
            built = work / "built"
            subprocess.run(
                [sys.executable, "-m", "mcpgen", "build", str(SPEC), "-o", str(built)],
                check=True,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                capture_output=True,
            )
        variants = {}
        for name in ("with _search.json", "index built at start"):
            copy = work / name.split()[0]
            shutil.copytree(built / "src", copy)
            if name != "with _search.json":
                (copy / PACKAGE / "_search.json").unlink()
            variants[name] = copy
        index_bytes = (built / "src" / PACKAGE / "_search.json").stat().st_size
        results: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
        for src in variants.values():  # warm the page cache and the bytecode
            once(src)
        for _ in range(args.runs):
            for name, src in variants.items():
                results[name].append(once(src))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    keys = ["tools/list s", "search_docs s", "VmRSS", "VmHWM", "create_server cpu s"]
    lines = [
        "# Start-up of the generated GitHub server (code mode): build-time search index or not",
        "",
        f"`python bench/startup.py --runs {args.runs}` (same run, variants alternating; median of "
        f"{args.runs} starts each after one warm-up; stdio; `_search.json` is "
        f"{index_bytes:,} bytes). Time from spawning "
        "`python -m github_mcp` to the tools/list answer, the first `search_docs` call, and "
        "the server's resident memory after it (MB; VmHWM = peak), and the CPU time of "
        "`create_server()` in a fresh process (the part the index changes; CPU time is steadier "
        "than wall time here). 2 shared, busy cores: wall times vary by a second between runs.",
        "",
        "| variant | first tools/list (s) | first search_docs (s) | RSS (MB) | peak RSS (MB) "
        "| create_server CPU (s) |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, runs in results.items():
        medians = [statistics.median(r[k] for r in runs) for k in keys]
        lines.append(
            f"| {name} | {medians[0]:.2f} | {medians[1]:.3f} | {medians[2]:.1f} | {medians[3]:.1f} "
            f"| {medians[4]:.3f} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    (ROOT / "bench" / "startup.md").write_text(text, "utf-8")


if __name__ == "__main__":
    main()
