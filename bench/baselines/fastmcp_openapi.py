"""Baseline for start-up: FastMCP's ``FastMCP.from_openapi`` serving a spec over stdio.

Runs in its own virtualenv (fastmcp pins its own mcp; never install it into the mcpgen
venv):

    python -m venv /work/bench-venv && /work/bench-venv/bin/pip install fastmcp
    /work/bench-venv/bin/python bench/baselines/fastmcp_openapi.py SPEC.json

The spec is parsed at start (as a generated server loads its ``_spec.json``); HTTP calls
would go to 127.0.0.1:9 (nothing listens: start-up and tools/list never call out).
"""

from __future__ import annotations

import json
import logging
import sys


def main() -> None:
    import httpx2
    from fastmcp import FastMCP

    logging.disable(logging.WARNING)
    with open(sys.argv[1], encoding="utf-8") as fh:
        spec = json.load(fh)
    client = httpx2.AsyncClient(base_url="http://127.0.0.1:9", timeout=5)
    server = FastMCP.from_openapi(spec, client=client, name="openapi-baseline")
    server.run(transport="stdio", show_banner=False)


if __name__ == "__main__":
    main()
