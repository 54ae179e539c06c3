"""Bytes per tool of mcpgen's compact definitions against FastMCP ``from_openapi``, on the
corpus of real specs (``bench/corpus.py``'s sample), measured in the same run.

    python bench/bytes_compact.py --limit 80        # the first 80 specs of the sample
    python bench/bytes_compact.py --fastmcp-from bench/out/corpus/results.jsonl
        # every spec, FastMCP's listing taken from a corpus run (same FastMCP, same specs)

For each spec: mcpgen's model is built in a child process (``mcpgen.pipeline.load_manifest``,
what ``mcpgen build`` builds from; time limit 180 s) and every imported tool's definition is
measured as tools/list sends it (``types.Tool`` of the definition, dumped as the SDK client
parses it: ``model_dump(mode="json", by_alias=True, exclude_none=True)``, compact JSON,
UTF-8), one tool per operation (tools mode, whatever ``mode: auto`` would pick), both the
compact definition (what is advertised now) and the full one (``openapi.compact: false``,
what was advertised before). FastMCP's tools come from ``bench/baselines/fastmcp_list.py``
in FastMCP's own venv, kept running (``corpus.FastMCPLister``), right after. The tables are
``bench/bytes_per_tool.py``'s (median and quartiles per tool and per spec, where the bytes
go); written to ``bench/bytes_per_tool.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import bytes_per_tool  # noqa: E402
import corpus  # noqa: E402

CORPUS = Path(os.environ.get("MCPGEN_CORPUS", "/work/wt/corpus/bench/out/corpus"))
KEYS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")


def listing(definitions: list[dict[str, Any]]) -> dict[str, Any]:
    import mcp_types as types

    sizes: list[int] = []
    fields: dict[str, int] = {}
    for definition in definitions:
        tool = types.Tool.model_validate(definition)
        sent = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
        sizes.append(corpus.tool_bytes(sent))
        for key, value in sent.items():
            fields[key] = fields.get(key, 0) + corpus.tool_bytes(value)
    return {"count": len(sizes), "bytes": sum(sizes), "per_tool": sizes, "fields": fields}


def one(spec: str) -> None:
    """Child process: the listings of one spec as a JSON line."""
    sys.path.insert(0, str(ROOT))
    from mcpgen.pipeline import load_manifest

    start = time.monotonic()
    loaded = load_manifest(Path(spec))
    if loaded.manifest is None:
        print(
            json.dumps({"ok": False, "error": str(next(iter(loaded.problems.errors), "?"))[:300]})
        )
        return
    tools = [t for t in loaded.manifest.tools if t.http is not None and t.enabled]
    print(
        json.dumps(
            {
                "ok": bool(tools),
                "compact": listing([t.definition for t in tools]),
                "full": listing([t.full_definition for t in tools]),
                "seconds": round(time.monotonic() - start, 2),
            }
        )
    )


def ours(spec: Path, timeout: float) -> dict[str, Any]:
    try:
        done = subprocess.run(
            [sys.executable, __file__, "--one", str(spec)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"no model within {timeout:.0f} s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"ok": False, "error": (done.stderr.strip().splitlines() or ["?"])[-1][:300]}
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def skew(records: list[dict[str, Any]]) -> str:
    """The pooled per-tool medians without the spec with the most tools (one API can hold a
    quarter of the pooled tools)."""
    import statistics

    both = bytes_per_tool.pairs(records)
    if len(both) < 2:
        return ""
    biggest = max(both, key=lambda r: r["tools"]["count"])
    rest = [r for r in both if r is not biggest]
    ours = statistics.median(b for r in rest for b in r["tools"]["per_tool"])
    theirs = statistics.median(b for r in rest for b in r["fastmcp"]["per_tool"])
    share = biggest["tools"]["count"] / sum(r["tools"]["count"] for r in both)
    return (
        f"\nThe spec with the most tools, `{biggest['id']}`, holds {biggest['tools']['count']:,} "
        f"of the pooled tools ({share:.0%}). Without it the pooled median per tool is "
        f"{ours:,.0f} bytes for mcpgen and {theirs:,.0f} for FastMCP: {ours / theirs:.2f}x.\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", type=Path, default=CORPUS, help="the corpus folder")
    parser.add_argument("--limit", type=int, default=0, help="the first N specs of the sample")
    parser.add_argument("--fastmcp-python", default="/work/fastmcp-venv/bin/python")
    parser.add_argument("--fastmcp-from", type=Path, help="FastMCP's listings of a corpus run")
    parser.add_argument("--timeout", type=float, default=180)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        one(args.one)
        return
    with_fastmcp: dict[str, Any] = {}
    if args.fastmcp_from:
        for record in corpus.read_results(args.fastmcp_from):
            if record.get("fastmcp"):
                with_fastmcp[record["id"]] = record["fastmcp"]
    sample = corpus.read_sample(args.root)
    if args.limit:
        sample = sample[: args.limit]
    lister = None if args.fastmcp_from else corpus.FastMCPLister(args.fastmcp_python, 120, 4096)
    revision = corpus.git_revision(ROOT)
    records: dict[str, list[dict[str, Any]]] = {"compact": [], "full": []}
    started = time.monotonic()
    try:
        for index, entry in enumerate(sample, 1):
            spec = args.root / "sources" / entry["id"]
            theirs = with_fastmcp.get(entry["id"]) if args.fastmcp_from else lister.measure(spec)  # type: ignore[union-attr]
            if theirs is None:
                continue
            mine = ours(spec, args.timeout)
            for kind in records:
                records[kind].append(
                    {
                        "id": entry["id"],
                        "mcpgen": revision,
                        "category": "ok" if mine.get("ok") else "failed",
                        "tools": mine.get(kind),
                        "fastmcp": theirs,
                    }
                )
            print(
                f"[{index}/{len(sample)}] {time.monotonic() - started:6.0f}s "
                f"{(mine.get('compact') or {}).get('count', '-'):>5} tools {entry['id']}",
                file=sys.stderr,
                flush=True,
            )
    finally:
        if lister is not None:
            lister.close()
    source = (
        f"FastMCP's listings from {args.fastmcp_from} (a corpus run)"
        if args.fastmcp_from
        else "FastMCP listed in the same run"
    )
    command = "python bench/bytes_compact.py " + " ".join(
        a for a in sys.argv[1:] if not a.startswith("/")
    )
    text = (
        "# tools/list bytes per tool: mcpgen (compact definitions) against FastMCP\n\n"
        f"`{command}` over {len(sample)} specs of the corpus sample; {source}. mcpgen's "
        "tools are one per operation (tools mode), measured as tools/list sends them.\n\n"
        "## mcpgen's compact definitions (what tools/list advertises now)\n\n"
        + bytes_per_tool.table(records["compact"], bytes_per_tool.pairs(records["compact"]))
        + "\n## mcpgen's full definitions (`openapi.compact: false`, what it advertised before)\n\n"
        + bytes_per_tool.table(records["full"], bytes_per_tool.pairs(records["full"]))
    )
    text += skew(records["compact"])
    print(text)
    saved = HERE / "out" / "bytes_compact.jsonl"
    saved.parent.mkdir(parents=True, exist_ok=True)
    saved.write_text("".join(json.dumps(r) + "\n" for r in records["compact"]), "utf-8")
    out = HERE / ("bytes_per_tool.md" if not args.fastmcp_from else "bytes_per_tool_all.md")
    out.write_text(text, "utf-8")
    print(f"(written to {out.relative_to(ROOT)})", file=sys.stderr)


if __name__ == "__main__":
    main()
