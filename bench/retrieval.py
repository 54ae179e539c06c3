"""Retrieval: do search_docs' answers hold the operation a request needs? recall@1 and @5.

The tasks (``bench/retrieval_tasks.json``) are requests phrased as a user would make them,
each with the operation(s) that do it; any of them in the top k counts as found. For each
spec the script builds the ``_spec.json`` data ``mcpgen build`` writes (``mcpgen.pipeline.
load_manifest`` then ``mcpgen.render.spec.spec_data``: the same tool names, routes, tags and
full texts), builds the runtime's search index from that
(``mcpgen.runtime.search.docs_from_spec``) and asks code mode's
``search_docs`` with ``limit=5``; the names are read back from the answer's text, i.e. what
a model would see. In the same run:

* ``substring``: today's meta-tool search (``meta_bindings`` in
  templates/package/_upstream.py.jinja: the lower-cased query's words counted in the
  lower-cased name + title + description + path, ties by name), on the same tasks;
* ablations of the ranking: without stemming, synonyms, prefixes, name precision, and
  all four off (plain BM25F);
* the bytes of a ``search_docs`` answer with the default limit (8), median and max;
* the index's build time (CPU, median of 5), its load time from build-time data, its
  data size and the memory it holds;
* with ``--compare-bm25s DIR`` (a folder where ``pip install --target DIR bm25s`` put the
  package): the ``bm25s`` package on the same tokens (fields weighted by repeating
  tokens), its recall, import time and resident memory, measured in fresh processes.

The github-heldout tasks were written after the ranking was tuned on the others and
never tuned on.

    python bench/github_spec.sh            # GitHub's spec (npm), once
    python bench/retrieval.py               # every spec in the tasks file
    python bench/retrieval.py --quick       # the small specs only
    python bench/retrieval.py --compare-bm25s /tmp/bm25pkgs
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcpgen.pipeline import load_manifest  # noqa: E402
from mcpgen.render.spec import spec_data as render_spec  # noqa: E402
from mcpgen.runtime.codemode import CodeMode  # noqa: E402
from mcpgen.runtime.search import WEIGHTS, SearchIndex, docs_from_spec  # noqa: E402

TASKS = ROOT / "bench" / "retrieval_tasks.json"
OUT = ROOT / "bench" / "out"

ABLATIONS: dict[str, dict[str, Any]] = {
    "search_docs": {},
    "no stemming": {"stemming": False},
    "no synonyms": {"synonyms": False},
    "no prefixes": {"prefixes": False},
    "no name precision": {"precision": 0.0},
    "plain BM25F": {"stemming": False, "synonyms": False, "prefixes": False, "precision": 0.0},
    "without tags": {"weights": {**WEIGHTS, "tags": 0.0}},
}


def spec_data(path: Path) -> dict[str, Any]:
    """The ``_spec.json`` data of a spec, as ``mcpgen build`` writes it (format 2)."""
    loaded = load_manifest(path)
    if loaded.manifest is None:
        raise SystemExit(f"{path}: {[str(p) for p in loaded.problems.errors][:3]}")
    return render_spec(loaded.manifest)


_SIGNATURE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\(")


def names_in(answer: str) -> list[str]:
    """The operations a search_docs answer lists, in order (each signature starts a line)."""
    return [m.group(1) for m in map(_SIGNATURE.match, answer.splitlines()) if m]


def substring_ranking(spec: dict[str, Any]) -> Any:
    """Today's meta-tool search, as meta_bindings computes it."""
    index = []
    for entry in spec["tools"]:
        if entry.get("http") is None:
            continue
        d = {**entry["definition"], **entry.get("full", {})}
        parts = (d["name"], d.get("title"), d.get("description"), entry["http"].get("path"))
        index.append((d["name"], " ".join(str(part).lower() for part in parts if part)))

    def rank(query: str, limit: int) -> list[str]:
        words = [w for w in query.lower().split() if w]
        scored = sorted(
            ((sum(text.count(w) for w in words), name) for name, text in index),
            key=lambda item: (-item[0], item[1]),
        )
        return [name for score, name in scored[:limit] if score > 0 or not words]

    return rank


def recall(tasks: list[dict[str, Any]], rank: Any) -> tuple[float, float, list[str]]:
    at1 = at5 = 0
    misses = []
    for task in tasks:
        found = rank(task["query"], 5)
        expected = set(task["expected"])
        at1 += bool(found[:1] and found[0] in expected)
        hit5 = bool(expected & set(found[:5]))
        at5 += hit5
        if not hit5:
            misses.append(f"{task['query']!r}: got {found[:3]}, want {task['expected']}")
    n = len(tasks)
    return at1 / n, at5 / n, misses


def search_docs_ranking(index: SearchIndex) -> Any:
    mode = CodeMode(index, _no_call)

    def rank(query: str, limit: int) -> list[str]:
        answer = asyncio.run(mode.search_docs(query, limit))
        return names_in(answer.content[0].text)  # type: ignore[union-attr]

    return rank


async def _no_call(name: str, arguments: dict[str, Any], ctx: Any) -> Any:
    raise AssertionError("search does not call operations")


def answer_bytes(index: SearchIndex, tasks: list[dict[str, Any]]) -> list[int]:
    mode = CodeMode(index, _no_call)
    sizes = []
    for task in tasks:
        answer = asyncio.run(mode.search_docs(task["query"]))
        sizes.append(len(answer.content[0].text.encode()))  # type: ignore[union-attr]
    return sizes


def index_costs(docs: list[Any]) -> dict[str, Any]:
    builds = []
    for _ in range(5):
        start = time.process_time()
        index = SearchIndex(docs)
        builds.append(time.process_time() - start)
    data = json.dumps(index.to_data())
    loads = []
    for _ in range(5):
        start = time.process_time()
        loaded = SearchIndex(docs, data=json.loads(data))
        loads.append(time.process_time() - start)
    assert loaded.loaded
    tracemalloc.start()
    kept = SearchIndex(docs)
    held, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del kept
    return {
        "build_cpu_ms": round(statistics.median(builds) * 1000),
        "load_cpu_ms": round(statistics.median(loads) * 1000),
        "data_bytes": len(data),
        "held_mb": round(held / 1e6, 2),
        "peak_mb": round(peak / 1e6, 2),
    }


# -- bm25s ---------------------------------------------------------------------------------

_BM25S_RANK = r"""
import json, sys, time
sys.path[:0] = [sys.argv[1], sys.argv[2]]
def rss():
    for line in open('/proc/self/status'):
        if line.startswith('VmRSS'):
            return int(line.split()[1]) / 1024
start_rss = rss(); start = time.perf_counter()
import bm25s
import_s = time.perf_counter() - start; import_mb = rss() - start_rss
from mcpgen.runtime.search import Analyzer, docs_from_spec, field_texts
spec = json.load(open(sys.argv[3])); tasks = json.load(open(sys.argv[4]))
docs = docs_from_spec(spec); analyzer = Analyzer()
repeat = {"name": 3, "path": 1, "summary": 3, "tags": 2, "action": 1, "params": 1, "description": 1}
start = time.perf_counter()
corpus = []
for doc in docs:
    tokens = []
    for field, text in field_texts(doc).items():
        tokens += analyzer.terms(text) * repeat[field]
    corpus.append(tokens)
retriever = bm25s.BM25()
retriever.index(corpus, show_progress=False)
build_s = time.perf_counter() - start
out = {"import_s": import_s, "import_mb": import_mb, "build_s": build_s, "ranks": []}
vocab = set(t for c in corpus for t in c)
for task in tasks:
    query = [t for t in analyzer.terms(task["query"]) if t in vocab] or ["zzzz"]
    if query == ["zzzz"]:
        out["ranks"].append([]); continue
    found, scores = retriever.retrieve([query], k=5, show_progress=False)
    out["ranks"].append([docs[i].name for i, s in zip(found[0], scores[0]) if s > 0])
print(json.dumps(out))
"""

_OURS_COST = r"""
import json, shutil, sys, tempfile, time
from pathlib import Path
home = Path(tempfile.mkdtemp())  # the runtime as a generated server has it: _runtime/
shutil.copytree(Path(sys.argv[1]) / "mcpgen" / "runtime", home / "_runtime")
sys.path[:0] = [str(home)]
def rss():
    for line in open('/proc/self/status'):
        if line.startswith('VmRSS'):
            return int(line.split()[1]) / 1024
spec = json.load(open(sys.argv[2]))
start_rss = rss(); start = time.perf_counter()
from _runtime import search
import_s = time.perf_counter() - start; import_mb = rss() - start_rss
start = time.perf_counter()
index = search.SearchIndex(search.docs_from_spec(spec))
print(json.dumps({"import_s": import_s, "import_mb": import_mb,
                  "build_s": time.perf_counter() - start, "index_mb": rss() - start_rss}))
shutil.rmtree(home)
"""


def compare_bm25s(
    packages: str, spec: dict[str, Any], tasks: list[dict[str, Any]], key: str
) -> dict[str, Any]:
    OUT.mkdir(parents=True, exist_ok=True)
    spec_file = OUT / f"retrieval-{key}-spec.json"
    tasks_file = OUT / f"retrieval-{key}-tasks.json"
    spec_file.write_text(json.dumps(spec))
    tasks_file.write_text(json.dumps(tasks))
    runs = []
    for _ in range(3):
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                _BM25S_RANK,
                packages,
                str(ROOT),
                str(spec_file),
                str(tasks_file),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    ours = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", _OURS_COST, str(ROOT), str(spec_file)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        for _ in range(3)
    ]
    ranks = runs[0]["ranks"]
    by_query = {t["query"]: r for t, r in zip(tasks, ranks, strict=True)}
    r1, r5, _ = recall(tasks, lambda q, k: by_query[q])

    def med(rows: list[dict[str, Any]], field: str) -> float:
        return statistics.median(r[field] for r in rows)

    return {
        "bm25s_recall@1": r1,
        "bm25s_recall@5": r5,
        "bm25s_import_s": round(med(runs, "import_s"), 3),
        "bm25s_import_mb": round(med(runs, "import_mb"), 1),
        "bm25s_build_s": round(med(runs, "build_s"), 3),
        "ours_import_s": round(med(ours, "import_s"), 3),
        "ours_import_mb": round(med(ours, "import_mb"), 1),
        "ours_build_s": round(med(ours, "build_s"), 3),
        "ours_index_mb": round(med(ours, "index_mb"), 1),
    }


# -- in a generated server ------------------------------------------------------------------

_IN_SERVER = r"""
import importlib, json, shutil, sys, tempfile, time
from pathlib import Path
root, src, package, bm25s_dir = sys.argv[1:5]
def rss():
    for line in open('/proc/self/status'):
        if line.startswith('VmRSS'):
            return int(line.split()[1]) / 1024
sys.path[:0] = [src]
out = {}
start, base = time.perf_counter(), rss()
server = importlib.import_module(package + ".server")  # what the server imports at start
out["server_import_s"], out["server_mb"] = time.perf_counter() - start, rss()
home = Path(tempfile.mkdtemp())  # the runtime as the package will have it
shutil.copytree(Path(root) / "mcpgen" / "runtime", home / "_cm_runtime")
sys.path[:0] = [str(home)]
if bm25s_dir:
    sys.path[:0] = [bm25s_dir]
    before, start = rss(), time.perf_counter()
    import bm25s
    out["bm25s_import_s"], out["bm25s_import_mb"] = time.perf_counter() - start, rss() - before
else:
    before, start = rss(), time.perf_counter()
    from _cm_runtime import codemode, search
    out["import_s"] = time.perf_counter() - start
    docs = search.docs_from_spec(server.SPEC)
    start = time.perf_counter()
    index = search.SearchIndex(docs)
    out["build_s"], out["build_mb"] = time.perf_counter() - start, rss() - before
    data = json.dumps(index.to_data())
    del index
    start = time.perf_counter()
    loaded = search.SearchIndex(docs, data=json.loads(data))
    out["load_s"] = time.perf_counter() - start
    assert loaded.loaded
    mode = codemode.CodeMode(loaded, None)
    out["tools_bytes"] = len(json.dumps(mode.tools(), separators=(",", ":")).encode())
    out["total_mb"] = rss()
shutil.rmtree(home)
print(json.dumps(out))
"""


def in_generated_server(src: str, package: str, bm25s_dir: str | None) -> dict[str, Any]:
    """Start-up costs inside a generated server's process, median of 3 fresh processes."""

    def once(extra: str) -> dict[str, Any]:
        done = subprocess.run(
            [sys.executable, "-c", _IN_SERVER, str(ROOT), src, package, extra],
            capture_output=True,
            text=True,
            check=True,
        )
        result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        return result

    ours = [once("") for _ in range(3)]
    theirs = [once(bm25s_dir) for _ in range(3)] if bm25s_dir else []
    row = {k: round(statistics.median(r[k] for r in ours), 3) for k in ours[0]}
    if theirs:
        row.update(
            {
                k: round(statistics.median(r[k] for r in theirs), 3)
                for k in theirs[0]
                if "bm25s" in k
            }
        )
    return row


# -- main ----------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the small specs only")
    parser.add_argument("--compare-bm25s", metavar="DIR", help="bm25s installed with --target DIR")
    parser.add_argument("--misses", action="store_true", help="print the tasks search_docs misses")
    parser.add_argument(
        "--generated",
        nargs=2,
        metavar=("SRC", "PACKAGE"),
        help="also measure start-up costs inside a generated server (its src/ and package)",
    )
    args = parser.parse_args()
    if args.generated:
        row = in_generated_server(*args.generated, args.compare_bm25s)
        print("\n## in the generated server " + args.generated[1] + " (median of 3 processes)\n")
        print(
            f"server import {row['server_import_s'] * 1000:.0f} ms, {row['server_mb']:.0f} MB; "
            f"then search+codemode import {row['import_s'] * 1000:.0f} ms, index build "
            f"{row['build_s'] * 1000:.0f} ms (+{row['build_mb']:.1f} MB with the import), or load "
            f"from build-time data {row['load_s'] * 1000:.0f} ms; {row['total_mb']:.0f} MB in "
            f"all; code mode tools/list {row['tools_bytes']} bytes"
        )
        if "bm25s_import_s" in row:
            print(
                f"bm25s import in the same place: {row['bm25s_import_s'] * 1000:.0f} ms, "
                f"+{row['bm25s_import_mb']:.1f} MB"
            )
        results_generated = row
    else:
        results_generated = None
    specs = json.loads(TASKS.read_text())["specs"]
    results: dict[str, Any] = {}
    loaded: dict[str, dict[str, Any]] = {}
    for key, entry in specs.items():
        path = ROOT / entry["spec"]
        if args.quick and "github" in key:
            continue
        if not path.exists():
            print(f"{key}: {path} is missing; run {entry.get('fetch', '?')}")
            continue
        if entry["spec"] not in loaded:
            loaded[entry["spec"]] = spec_data(path)
        spec = loaded[entry["spec"]]
        tasks = entry["tasks"]
        docs = docs_from_spec(spec)
        names = {d.name for d in docs}
        unknown = sorted({e for t in tasks for e in t["expected"]} - names)
        if unknown:
            raise SystemExit(f"{key}: the tasks name operations the spec lacks: {unknown}")
        row: dict[str, Any] = {"operations": len(docs), "tasks": len(tasks)}
        for label, settings in ABLATIONS.items():
            r1, r5, misses = recall(tasks, search_docs_ranking(SearchIndex(docs, **settings)))
            row[label] = {"recall@1": round(r1, 3), "recall@5": round(r5, 3)}
            if label == "search_docs" and args.misses:
                for miss in misses:
                    print(f"  {key} miss: {miss}")
        r1, r5, _ = recall(tasks, substring_ranking(spec))
        row["substring (today)"] = {"recall@1": round(r1, 3), "recall@5": round(r5, 3)}
        sizes = answer_bytes(SearchIndex(docs), tasks)
        row["answer_bytes"] = {"median": statistics.median(sizes), "max": max(sizes)}
        if not entry.get("heldout"):
            row["index"] = index_costs(docs)
        if args.compare_bm25s and not entry.get("heldout"):
            row["bm25s"] = compare_bm25s(args.compare_bm25s, spec, tasks, key)
        results[key] = row
        print_row(key, row)
    if results_generated:
        results["generated_server"] = results_generated
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "retrieval.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwritten {OUT / 'retrieval.json'}")


def print_row(key: str, row: dict[str, Any]) -> None:
    print(f"\n## {key}: {row['tasks']} tasks over {row['operations']} operations\n")
    print("| ranking | recall@1 | recall@5 |\n| --- | --- | --- |")
    for label in [*ABLATIONS, "substring (today)"]:
        print(f"| {label} | {row[label]['recall@1']:.2f} | {row[label]['recall@5']:.2f} |")
    b = row.get("bm25s")
    if b:
        print(
            f"| bm25s package, same tokens | {b['bm25s_recall@1']:.2f} | {b['bm25s_recall@5']:.2f} |"
        )
    sizes = row["answer_bytes"]
    print(
        f"\nsearch_docs answer (limit 8): median {sizes['median']:.0f} bytes "
        f"(~{-(-sizes['median'] // 4):.0f} tokens), max {sizes['max']} bytes"
    )
    cost = row.get("index")
    if cost:
        print(
            f"index: build {cost['build_cpu_ms']} ms CPU, load from build-time data "
            f"{cost['load_cpu_ms']} ms CPU ({cost['data_bytes']} bytes of JSON), "
            f"holds {cost['held_mb']} MB (peak {cost['peak_mb']} MB while building)"
        )
    if b:
        print(
            f"in a fresh process: ours import {b['ours_import_s'] * 1000:.0f} ms "
            f"+{b['ours_import_mb']} MB, build {b['ours_build_s'] * 1000:.0f} ms, "
            f"index +{b['ours_index_mb']} MB in all; bm25s import "
            f"{b['bm25s_import_s'] * 1000:.0f} ms +{b['bm25s_import_mb']} MB, "
            f"build {b['bm25s_build_s'] * 1000:.0f} ms (after our tokenizing)"
        )


if __name__ == "__main__":
    main()
