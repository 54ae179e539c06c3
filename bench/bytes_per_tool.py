"""tools/list bytes per tool: mcpgen against FastMCP's ``from_openapi``, on the same specs,
measured in the same run.

For every spec, ``bench/corpus.py run --fastmcp-python PY`` builds the mcpgen package,
installs it alone, lists its tools over stdio with the SDK client, and then (same process,
same spec, minutes apart at most) lists the tools ``FastMCP.from_openapi`` makes of it, in
memory with FastMCP's own client (``bench/baselines/fastmcp_list.py``, FastMCP's own venv).
Both listings are measured the same way: each tool as compact JSON
(``separators=(",", ":")``, ``ensure_ascii=False``, UTF-8), fields as the client parsed them
(``model_dump(mode="json", by_alias=True, exclude_none=True)``).

    # a run of its own on the first N sampled specs (bench/out/bytes/results.jsonl):
    python bench/bytes_per_tool.py --run --limit 80 --fastmcp-python /work/fastmcp-venv/bin/python
    # or the figures of a corpus run that already listed FastMCP's tools:
    python bench/bytes_per_tool.py --results bench/out/corpus/results.jsonl

Only specs where both list at least one tool and mcpgen's are valid (corpus category ``ok``)
count. Prints median and quartiles per tool (all tools pooled) and per spec (each spec's
mean bytes per tool), the ratio mcpgen / FastMCP, where the bytes go (per field), and
writes the table into docs/corpus.md (between the ``bytes`` markers).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpus  # noqa: E402

TARGET = 1 / 3  # issue 19: median bytes per tool <= 1/3 of FastMCP's, same specs


def quartiles(values: list[float]) -> tuple[float, float, float]:
    if len(values) == 1:
        return values[0], values[0], values[0]
    q1, q2, q3 = statistics.quantiles(sorted(values), n=4, method="inclusive")
    return q1, q2, q3


def pairs(records: list[dict[str, Any]], with_probes: bool = False) -> list[dict[str, Any]]:
    """Specs where mcpgen's listing is valid (category ``ok``; with ``with_probes`` also specs
    pip refused only for their version whose version probe is ``ok``) and FastMCP listed
    at least one tool."""
    chosen = []
    for record in records:
        ours, theirs, category = record.get("tools"), record.get("fastmcp"), record.get("category")
        if (
            with_probes
            and category == "pip-refused"
            and record.get("probe", {}).get("category") == "ok"
        ):
            ours, category = record["probe"].get("tools"), "ok"
            record = {**record, "tools": ours, "probed": True}
        if (
            category == "ok"
            and ours
            and ours.get("count")
            and theirs
            and theirs.get("ok")
            and theirs.get("count")
        ):
            chosen.append(record)
    return chosen


def fmt(values: tuple[float, float, float], digits: int = 0) -> str:
    return " / ".join(f"{v:,.{digits}f}" for v in values)


def fastmcp_cause(error: str) -> str:
    """FastMCP's parser error in short: its first pydantic message and where it points."""
    msg = re.search(r"'msg': (?:\"([^\"]+)\"|'([^']+)')", error)
    loc = re.search(r"'loc': \(([^)]*)\)", error)
    if msg:
        where = ""
        if loc:
            parts = [p.strip().strip("'") for p in loc.group(1).split(",") if p.strip()]
            kept = [p for p in parts if not p.isdigit() and not p.startswith(("/", "~"))]
            where = " at " + ".".join(kept[-3:])
        text = msg.group(1) or msg.group(2)
        return corpus.signature(f"invalid OpenAPI: {text}{where}")[:110]
    return corpus.signature(error)[:110]


def summary(records: list[dict[str, Any]]) -> str:
    text = table(records, pairs(records))
    probed = pairs(records, with_probes=True)
    extra = sum(1 for r in probed if r.get("probed"))
    if extra:
        text += (
            f"\n### The same with the {extra} specs pip refused only for their `info.version`\n\n"
            "Their listing comes from the version probe (the same spec with `info.version: 0.0.0`, "
            "built, installed and listed the same way; see the corpus results above). These are mostly "
            "AWS and Azure APIs, whose schemas are large:\n\n" + table(records, probed)
        )
    return text


def table(records: list[dict[str, Any]], both: list[dict[str, Any]]) -> str:
    listed_fastmcp = sum(1 for r in records if r.get("fastmcp", {}).get("ok"))
    failed_fastmcp = [r for r in records if "fastmcp" in r and not r["fastmcp"].get("ok")]
    lines = []
    if not both:
        return "No spec where both mcpgen and FastMCP listed tools yet."
    version = both[0]["fastmcp"].get("version", "?")
    revisions = sorted({r.get("mcpgen", "?") for r in both})
    ours_tools = [b for r in both for b in r["tools"]["per_tool"]]
    theirs_tools = [b for r in both for b in r["fastmcp"]["per_tool"]]
    ours_spec = [r["tools"]["bytes"] / r["tools"]["count"] for r in both]
    theirs_spec = [sum(r["fastmcp"]["per_tool"]) / r["fastmcp"]["count"] for r in both]
    ratios = [o / t for o, t in zip(ours_spec, theirs_spec, strict=True)]
    o_tool, t_tool = quartiles(ours_tools), quartiles(theirs_tools)
    o_spec, t_spec = quartiles(ours_spec), quartiles(theirs_spec)
    r_spec = quartiles(ratios)
    same_count = sum(1 for r in both if r["tools"]["count"] == r["fastmcp"]["count"])
    lines.append(
        f"{len(both)} specs where both list tools (mcpgen {', '.join(revisions)} category `ok`, FastMCP {version} "
        f"`from_openapi` listed >= 1 tool); {len(ours_tools):,} mcpgen tools, {len(theirs_tools):,} FastMCP tools; "
        f"same tool count in {same_count} specs. FastMCP listed tools for {listed_fastmcp} of {len(records)} specs run "
        f"and failed on {len(failed_fastmcp)}.\n"
    )
    lines.append(
        "| bytes per tool | mcpgen Q1 / median / Q3 | FastMCP Q1 / median / Q3 | mcpgen / FastMCP (medians) |"
    )
    lines.append("| --- | --- | --- | ---: |")
    lines.append(
        f"| per tool (all tools pooled) | {fmt(o_tool)} | {fmt(t_tool)} | {o_tool[1] / t_tool[1]:.2f}x |"
    )
    lines.append(
        f"| per spec (each spec's mean) | {fmt(o_spec)} | {fmt(t_spec)} | {o_spec[1] / t_spec[1]:.2f}x |"
    )
    alike = [r for r in both if r["tools"]["count"] == r["fastmcp"]["count"]]
    if alike:  # tool for tool (a code- or search-mode server lists 2 or 3 tools)
        o_alike = quartiles([b for r in alike for b in r["tools"]["per_tool"]])
        t_alike = quartiles([b for r in alike for b in r["fastmcp"]["per_tool"]])
        lines.append(
            f"| per tool, the {len(alike)} specs with the same tool count | {fmt(o_alike)} "
            f"| {fmt(t_alike)} | {o_alike[1] / t_alike[1]:.2f}x |"
        )
    lines.append(f"| per-spec ratio mcpgen / FastMCP | {fmt(r_spec, 2)} | | |")
    total_o = sum(r["tools"]["bytes"] for r in both)
    total_t = sum(sum(r["fastmcp"]["per_tool"]) for r in both)
    lines.append(
        f"| whole tools/list, all pairs | {total_o:,} B | {total_t:,} B | {total_o / total_t:.2f}x |"
    )
    smaller = sum(1 for x in ratios if x < 1)
    pooled = o_tool[1] / t_tool[1]
    like = o_alike[1] / t_alike[1] if alike else pooled  # the fair comparison
    verdict = (
        "met"
        if like <= TARGET
        else f"missed: mcpgen's median tool has to shrink {like / TARGET:.2f}x"
    )
    lines.append(
        f"\nmcpgen's list is smaller per tool in {smaller} of {len(both)} specs. Target (issue 19): mcpgen's median per tool "
        f"<= {TARGET:.2f}x FastMCP's; today {pooled:.2f}x (per tool), {like:.2f}x where both list the same "
        f"number of tools, {r_spec[1]:.2f}x (median per-spec ratio); tool for tool: {verdict}.\n"
    )
    # where the bytes go
    keys = [
        "name",
        "title",
        "description",
        "inputSchema",
        "outputSchema",
        "annotations",
        "execution",
        "_meta",
        "icons",
    ]
    ours_fields: dict[str, int] = {}
    theirs_fields: dict[str, int] = {}
    for r in both:
        for key, value in (r["tools"].get("fields") or {}).items():
            ours_fields[key] = ours_fields.get(key, 0) + value
        for key, value in (r["fastmcp"].get("fields") or {}).items():
            theirs_fields[key] = theirs_fields.get(key, 0) + value
    if ours_fields and theirs_fields:
        lines.append(
            "Where the bytes go (sum over the pairs of each field's compact JSON; keys and braces not counted):\n"
        )
        lines.append(
            "| field | mcpgen | share | FastMCP | share |\n| --- | ---: | ---: | ---: | ---: |"
        )
        so, st = sum(ours_fields.values()), sum(theirs_fields.values())
        for key in keys + sorted((set(ours_fields) | set(theirs_fields)) - set(keys)):
            a, b = ours_fields.get(key, 0), theirs_fields.get(key, 0)
            if a or b:
                lines.append(
                    f"| `{key}` | {a:,} | {100 * a / so:.0f}% | {b:,} | {100 * b / st:.0f}% |"
                )
        lines.append("")
    # biggest gaps
    worst = sorted(zip(ratios, both, strict=True), key=lambda pair: -pair[0])[:5]
    lines.append("Largest per-spec ratios (mcpgen mean bytes per tool / FastMCP's):\n")
    lines.append(
        "| spec | tools (mcpgen / FastMCP) | mean bytes per tool (mcpgen / FastMCP) | ratio |\n| --- | --- | --- | ---: |"
    )
    for ratio, r in worst:
        lines.append(
            f"| `{r['id']}` | {r['tools']['count']} / {r['fastmcp']['count']} | "
            f"{r['tools']['bytes'] / r['tools']['count']:,.0f} / {sum(r['fastmcp']['per_tool']) / r['fastmcp']['count']:,.0f} | {ratio:.2f}x |"
        )
    if failed_fastmcp:
        causes: dict[str, int] = {}
        for r in failed_fastmcp:
            key = fastmcp_cause(r["fastmcp"].get("error", "?"))
            causes[key] = causes.get(key, 0) + 1
        lines.append(
            "\nFastMCP's own failures (its spec parser; these specs are not in the pairs):\n"
        )
        lines.append("| specs | FastMCP error |\n| ---: | --- |")
        for cause, count in sorted(causes.items(), key=lambda kv: -kv[1])[:6]:
            lines.append(f"| {count} | {corpus._escape(cause)} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--results",
        help="a results.jsonl made with --fastmcp-python (default: this script's own run)",
    )
    parser.add_argument(
        "--run", action="store_true", help="run the corpus pipeline with FastMCP first (resumable)"
    )
    parser.add_argument(
        "--root", default=str(corpus.DEFAULT_ROOT), help="the corpus folder (sources, sample.txt)"
    )
    parser.add_argument(
        "--limit", type=int, default=80, help="with --run: the first N specs of the sample"
    )
    parser.add_argument("--fastmcp-python", default="/work/fastmcp-venv/bin/python")
    parser.add_argument("--installer", choices=["pip", "uv"], default="pip")
    parser.add_argument("--uv", default="uv")
    parser.add_argument("--no-doc", action="store_true")
    args = parser.parse_args()
    results = Path(args.results) if args.results else HERE / "out" / "bytes" / "results.jsonl"
    if args.run:
        results.parent.mkdir(parents=True, exist_ok=True)
        done = {r["id"] for r in corpus.read_results(results)}
        sample = [
            e["id"]
            for e in corpus.read_sample(Path(args.root))[: args.limit]
            if e["id"] not in done
        ]
        if sample:
            command = [
                sys.executable,
                str(HERE / "corpus.py"),
                "run",
                "--root",
                args.root,
                "--results",
                str(results),
                "--fastmcp-python",
                args.fastmcp_python,
                "--installer",
                args.installer,
                "--uv",
                args.uv,
                "--no-report",
                "--only",
                *sample,
            ]
            subprocess.run(command, check=True)
    records = list({r["id"]: r for r in corpus.read_results(results)}.values())
    text = summary(records)
    print(text)
    if not args.no_doc:
        corpus.write_section(corpus.DOC, "bytes", text)
        print(f"(written to {corpus.DOC.relative_to(corpus.ROOT)})", file=sys.stderr)


if __name__ == "__main__":
    main()
