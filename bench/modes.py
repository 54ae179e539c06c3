"""tools/list size per mode, and the bytes a scripted client exchanges to finish multi-call
tasks in each mode, against a local stand-in of GitHub's API.

    python bench/modes.py            # GitHub's spec and the small one; writes bench/modes.md
    python bench/modes.py --small    # only the small spec (a few seconds)

For each spec and each mode (``tools`` with the full schemas as before, i.e. ``openapi.compact:
false``; ``tools``; ``search``; ``code``) the spec is built with ``python -m mcpgen build``
from a manifest ``openapi: {source, mode}``, served over streamable HTTP with
``GITHUB_API_BASE_URL`` at the stand-in (``tests/runtime/github_standin.py``), and the
scripted client of ``tests/runtime/codemode_tasks.py`` finishes each task (it finds the
operations with the server's own search in search and code mode). Bytes are the compact
JSON of every tools/list and tools/call request's params and result, both ways (what a
model's context holds; the handshake and HTTP framing left out); tokens = ceil(bytes / 4),
an estimate.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "runtime"))
sys.path.insert(0, str(ROOT))

import codemode_tasks as tasks  # noqa: E402
from e2e_support import GITHUB_SPEC, build, connect, http_server  # noqa: E402
from github_standin import SMALL_SPEC, standin  # noqa: E402

MODES: dict[str, dict[str, Any]] = {  # label -> openapi options
    "tools, full schemas": {"mode": "tools", "compact": False},
    "tools": {"mode": "tools"},
    "search": {"mode": "search"},
    "code": {"mode": "code"},
}


def tokens(size: int) -> int:
    return math.ceil(size / 4)


def measure(source: Path, folder: Path, options: dict[str, Any], api: Any) -> dict[str, Any]:
    folder.mkdir(parents=True)
    shutil.copy(source, folder / "api.json")
    manifest = {
        "mcpgen": 1,
        "server": {"name": "github", "package": "bench_mcp", "version": "0.1.0"},
        "openapi": {"source": "api.json", **options},
    }
    (folder / "mcpgen.yaml").write_text(json.dumps(manifest), "utf-8")
    built = build(folder / "mcpgen.yaml", folder / "out", "bench_mcp", timeout=600)
    mode = options["mode"]
    row: dict[str, Any] = {}
    with http_server(built, {"GITHUB_API_BASE_URL": api.url}, folder / "server.log") as url:

        async def go() -> None:
            async with connect(url, "legacy") as client:
                meter = tasks.Meter(client)
                listed = await meter.list_tools()
                row["tools"] = len(listed)
                row["list"] = meter.received
            for name, task in tasks.TASKS.items():
                api.reset()
                try:
                    async with connect(url, "legacy") as client:
                        meter = tasks.Meter(client)
                        tasks.check(name, await task(meter, mode))
                        row[name] = (meter.total, len(meter.calls))
                except Exception as exc:
                    if options.get("compact") is not False:
                        raise
                    # The SDK client checks results against the advertised output schema:
                    # the full one refuses the stand-in's (shorter than GitHub's) objects.
                    row[name] = (None, f"refused by the client: {str(exc)[:80]}")

        anyio.run(go)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--small", action="store_true", help="only the small spec")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="modes-"))
    small = work / "octo.json"
    small.write_text(json.dumps(SMALL_SPEC), "utf-8")
    specs = {"small (7 operations)": small}
    if not args.small:
        specs["GitHub (1,223 operations)"] = GITHUB_SPEC
    results: dict[str, dict[str, dict[str, Any]]] = {}
    try:
        with standin() as api:
            for spec_name, source in specs.items():
                results[spec_name] = {}
                for label, options in MODES.items():
                    folder = work / f"{len(results)}-{label.replace(' ', '_').replace(',', '')}"
                    results[spec_name][label] = measure(source, folder, options, api)
                    print(spec_name, label, results[spec_name][label], file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    names = list(tasks.TASKS)
    lines = [
        "# tools/list and the bytes of multi-call tasks, per mode",
        "",
        "`python bench/modes.py` (one run; stand-in upstream on 127.0.0.1; streamable HTTP, "
        "legacy era). Bytes: compact JSON of the tools/list and tools/call requests' params "
        "and results, both ways; tokens = ceil(bytes / 4), an estimate. A task's bytes include "
        "its own tools/list (a client lists the tools before it calls one).",
        "",
        "| spec | mode | tools listed | tools/list bytes | tokens | "
        + " | ".join(f"{n}: bytes (calls)" for n in names)
        + " |",
        "| --- | --- | ---: | ---: | ---: | " + " | ".join("---:" for _ in names) + " |",
    ]
    for spec_name, rows in results.items():
        for label, row in rows.items():
            cells = [
                f"{row[n][0]:,} ({row[n][1]})" if row[n][0] is not None else "n/a (1)"
                for n in names
            ]
            lines.append(
                f"| {spec_name} | {label} | {row['tools']:,} | {row['list']:,} | "
                f"{tokens(row['list']):,} | " + " | ".join(cells) + " |"
            )
    if any(row[n][0] is None for rows in results.values() for row in rows.values() for n in names):
        lines += [
            "",
            "(1) The SDK client validates each result against the advertised output schema; "
            "GitHub's full schemas require every field of a real GitHub object, which the "
            "stand-in's short objects lack, so the client refuses them. The compact output "
            "schemas are relaxations of the full ones (the server still checks results "
            "against the full schemas and logs what departs from them).",
        ]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.small:
        (ROOT / "bench" / "modes.md").write_text(text, "utf-8")


if __name__ == "__main__":
    main()
