"""How fast could a one-change rebuild be if the load (import, checks, model) were cached?

An upper bound for any per-operation cache of the OpenAPI import, the semantic checks and
the model (issue 29's one-change budget), measured without building one. Every run, in an
order rotated from run to run, each build one description away from the one before (two
copies of the source alternate), each a fresh process:

- ``real``: ``python -m mcpgen build``;
- ``hit``: the same build with ``pipeline.load_manifest`` replaced by reading the document
  (a key needs its bytes) and unpickling what an earlier build of the same text loaded:
  every operation a hit, no key made, the warnings already located;
- ``keyed``: ``hit``, plus what any sound cache must also do: a key per operation (its
  JSON, its path item's parameters, the document-wide fields and a digest of every
  component it reaches through ``$ref``, transitively), and the import's warnings located
  again (a line moves when text above it changes; checked against the kept locations);
- datamodel-codegen alone on the source (the denominator), ``--baseline-runs`` times.

Reading a cache's entries costs at least the unpickling (a pickle in a shared folder would
not do: JSON, then objects made from it, is slower). Also printed: the keys' CPU time alone.

    python bench/load_bound.py [SOURCE] [--runs 6] [--baseline-runs 2]
"""

from __future__ import annotations

import argparse
import functools
import gc
import hashlib
import json
import os
import pickle
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import build as bench  # noqa: E402
import plumbing  # noqa: E402

VARIANTS = ("real", "hit", "keyed")


def _same(location: Any) -> Any:
    return location


def child(mode: str, kept: str, args: list[str]) -> None:
    """Run the CLI with the load saved to ``kept`` (``save``) or taken from it (``hit``;
    ``keyed``: and the keys made and the import's warnings located again, as a cache must)."""
    import importlib

    from mcpgen import cli
    from mcpgen.check.schemas import pointer_target
    from mcpgen.load import MAX_DOCUMENT_BYTES, load_file
    from mcpgen.openapi import to_manifest

    to_manifest._fixed = functools.partial(functools.partial, _same)  # picklable
    build = importlib.import_module("mcpgen.cli.build")  # (``cli.build`` is the command)
    real = build.load_manifest

    def load(path: Path, strict: bool = False, name: str | None = None) -> Any:
        if mode == "save":
            loaded = real(path, strict, name)
            Path(kept).write_bytes(pickle.dumps(loaded, protocol=5))
            return loaded
        doc = load_file(Path(path), MAX_DOCUMENT_BYTES)
        loaded = pickle.loads(Path(kept).read_bytes())
        if mode == "keyed":
            keys(doc.data)
            for problem in loaded.problems.items:
                found = pointer_target(doc.data, problem.field)
                if found is not None:
                    assert doc.locate(found[0]) == problem.location, problem
        return loaded

    build.load_manifest = load
    sys.argv = ["mcpgen", *args]
    cli.run()


def _refs(node: Any, found: set[str]) -> set[str]:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            found.add(node["$ref"])
        for value in node.values():
            _refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _refs(value, found)
    return found


def keys(data: Any) -> list[bytes]:
    """A key per operation: its JSON, its path item's parameters, the document-wide fields
    and the digest of every component it reaches through ``$ref``, transitively."""
    encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

    def digest(value: Any) -> bytes:
        return hashlib.blake2b(encode(value).encode(), digest_size=16).digest()

    parts = {
        f"#/components/{kind}/{name}": (digest(node), _refs(node, set()))
        for kind, group in (data.get("components") or {}).items()
        for name, node in group.items()
    }

    def reach(ref: str) -> set[str]:
        seen, stack = set(), [ref]
        while stack:
            if (ref := stack.pop()) not in seen:
                seen.add(ref)
                stack.extend(parts.get(ref, (b"", set()))[1])
        return seen

    document = digest([data.get(k) for k in ("openapi", "info", "servers", "security")])
    found = []
    for url, item in data["paths"].items():
        for method in bench.HTTP_METHODS:
            if method in item:
                node = [url, method, item[method], item.get("parameters")]
                reached = sorted(set().union(*map(reach, _refs(node, set()))))
                blob = document + digest(node) + b"".join(parts.get(r, (b"?",))[0] for r in reached)
                found.append(hashlib.blake2b(blob, digest_size=16).digest())
    return found


def key_cost(source: Path) -> float:
    """CPU seconds to key every operation (the document already parsed)."""
    from mcpgen.load import MAX_DOCUMENT_BYTES, load_file

    data = load_file(source, MAX_DOCUMENT_BYTES).data
    gc.disable()
    start = time.process_time()
    keys(data)
    gc.enable()
    return time.process_time() - start


def line(name: str, runs: list[dict[str, Any]], base: float) -> str:
    cpu, wall = [r["cpu_s"] for r in runs], [r["wall_s"] for r in runs]
    median = statistics.median(cpu)
    return (
        f"{name:<18} CPU {median:6.2f} s {plumbing.spread(cpu)} [{median / base:.3f}x]"
        f"   wall {statistics.median(wall):6.2f} s {plumbing.spread(wall)}"
    )


def main() -> int:
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], sys.argv[3], sys.argv[4:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", nargs="?", type=Path, default=plumbing.GITHUB)
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--baseline-runs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="load-bound-") as folder:
        return measure(args, Path(folder))


def measure(args: argparse.Namespace, scratch: Path) -> int:
    env = {**os.environ, "MCPGEN_CACHE_DIR": str(scratch / "cache")}
    spec, out = scratch / "spec.json", str(scratch / "out")
    texts = []
    for mark in (" (A)", " (B)"):
        data = bench.load(args.source)
        bench.touch_one(data, mark)
        bench.dump(data, spec)
        texts.append(spec.read_text("utf-8"))
    build = ["build", str(spec), "-o", out]
    for index, text in enumerate(texts):  # cold, then each text's load kept
        spec.write_text(text, "utf-8")
        save = [sys.executable, __file__, "--child", "save", f"{scratch}/{index}.pickle"]
        saved = bench.timed([*save, *build], scratch, env)
        assert saved["ok"], saved["output"][-2000:]
    results: dict[str, list[dict[str, Any]]] = {"real": [], "hit": [], "keyed": [], "dcg": []}
    turn = 0
    for run in range(args.runs):
        for name in VARIANTS[run % 3 :] + VARIANTS[: run % 3]:  # the order rotated
            turn += 1
            spec.write_text(texts[turn % 2], "utf-8")  # one change from the build before
            command = [sys.executable, "-m", "mcpgen", *build]
            if name != "real":
                command = [
                    sys.executable,
                    __file__,
                    "--child",
                    name,
                    f"{scratch}/{turn % 2}.pickle",
                ]
                command += build
            result = bench.timed(command, scratch, env)
            assert result["ok"], result["output"][-2000:]
            results[name].append(result)
        if run < max(1, args.baseline_runs):
            results["dcg"].append(plumbing.baseline(args.source, scratch))
    base = statistics.median(r["cpu_s"] for r in results["dcg"])
    for name, runs in results.items():
        print(line(name, runs, base))
    print(
        f"sound keys, in one process: {statistics.median(key_cost(spec) for _ in range(3)):.3f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
