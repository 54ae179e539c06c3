"""Request fidelity: the calls mcpgen's runtime makes against those of FastMCP's
``from_openapi``, on the same documents, in the same run, checked the same way.

For each OpenAPI 3 document, both get one argument object per tool made from that tool's
own input schema by the same generator (``tests/fidelity.py``: every property filled, two
items per array, files as base64 of known bytes); each call goes to a recorder on
127.0.0.1, and ``openapi-core`` checks the request that arrived against the document.
mcpgen's calls are also checked for what the caller meant (files as their bytes, one form
field per array item), which FastMCP's are not (its arguments are not mapped to the body).
Security requirements are not judged (FastMCP gets no credentials).

    python -m venv /tmp/fm && /tmp/fm/bin/pip install fastmcp==4.1.6 openapi-core
    # plus mcpgen's own dependencies on that venv's path, then:
    PYTHONPATH=. /tmp/fm/bin/python bench/fidelity.py [DOCUMENT.json ...]

Without documents it runs the fidelity suite's set (tests/test_fidelity.py).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import anyio  # noqa: E402
import httpx2  # noqa: E402
from fidelity import arguments, calls, check, validator  # noqa: E402
from test_fidelity import DOCUMENTS  # noqa: E402
from wirekit import recorder  # noqa: E402

METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


def fastmcp_calls(path: Path) -> tuple[int, int, list[str]]:
    """(accepted, calls, what was refused) for FastMCP's server of the document."""
    from fastmcp import Client, FastMCP

    raw = json.loads(path.read_text(encoding="utf-8"))
    api, origin, prefix = validator(path)
    refused: list[str] = []
    total = 0

    async def run() -> None:
        nonlocal total
        with recorder() as rec:
            client = httpx2.AsyncClient(base_url=rec.url + prefix)
            try:
                server = FastMCP.from_openapi(raw, client=client)
            except Exception as exc:  # it refuses the whole document: every call fails
                total = sum(1 for item in raw["paths"].values() for m in item if m in METHODS)
                refused.extend([f"from_openapi failed: {str(exc)[:160]}"] * total)
                return
            async with Client(server) as mcp:
                for tool in await mcp.list_tools():
                    total += 1
                    given: Any = arguments(tool.inputSchema)
                    before = len(rec.seen)
                    try:
                        result = await mcp.call_tool(tool.name, given or {}, raise_on_error=False)
                        failed = result.is_error
                    except Exception:
                        failed = True
                    if len(rec.seen) != before + 1:
                        refused.append(f"{tool.name}: not sent" + (" (error)" if failed else ""))
                        continue
                    errors = [
                        e
                        for e in check(api, origin, rec.seen[-1])
                        if not e.startswith(("SecurityNotFound", "SecurityValidationError"))
                    ]
                    if errors:
                        refused.append(f"{tool.name}: {errors[0][:160]}")

    anyio.run(run)
    return total - len(refused), total, refused


def main() -> None:
    documents = [Path(a) for a in sys.argv[1:]] or DOCUMENTS
    rows = []
    sums = [0, 0, 0, 0, 0]
    for path in documents:
        outcomes = calls(path)
        valid = sum(
            1 for o in outcomes if not any(not e.startswith("body property") for e in o.errors)
        )
        meant = sum(1 for o in outcomes if not o.errors)
        fast_ok, fast_total, refused = fastmcp_calls(path)
        rows.append((path.name, len(outcomes), valid, meant, fast_total, fast_ok))
        for i, v in enumerate((len(outcomes), valid, meant, fast_total, fast_ok)):
            sums[i] += v
        for line in refused:
            print(f"  fastmcp {path.name}: {line}", file=sys.stderr)
        for o in outcomes:
            if o.errors:
                print(f"  mcpgen {path.name}: {o.tool}: {o.errors[0][:160]}", file=sys.stderr)
    print("| document | mcpgen calls | valid | valid and meant | FastMCP calls | valid |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(str(v) for v in row) + " |")
    n, valid, meant, fast_total, fast_ok = sums
    print(
        f"| all | {n} | {valid} ({valid / n:.3f}) | {meant} ({meant / n:.3f}) "
        f"| {fast_total} | {fast_ok} ({fast_ok / max(fast_total, 1):.3f}) |"
    )


if __name__ == "__main__":
    main()
