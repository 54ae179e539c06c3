"""Baseline for tools/list size: FastMCP's ``FastMCP.from_openapi`` on a spec, tools listed in
memory with FastMCP's own client. Runs in its own virtualenv (fastmcp pins its own mcp):

    python -m venv /work/fastmcp-venv && /work/fastmcp-venv/bin/pip install 'fastmcp==4.1.7'
    /work/fastmcp-venv/bin/python bench/baselines/fastmcp_list.py SPEC [SPEC ...]
    /work/fastmcp-venv/bin/python bench/baselines/fastmcp_list.py --serve   # paths on stdin

Prints one JSON line per spec: ``{"spec", "ok": true, "count", "per_tool": [bytes...],
"names": [...], "fields": {key: bytes}, "seconds"}`` or ``{"spec", "ok": false, "error"}``. Bytes are each tool as
compact JSON (``tool.model_dump(mode="json", by_alias=True, exclude_none=True)``,
``separators=(",", ":")``, UTF-8), the same measure ``bench/corpus.py`` uses for mcpgen.
``--serve`` reads one path per line and answers each, so fastmcp is imported once.
``--save DIR`` also writes each listing to DIR.

The HTTP client points at 127.0.0.1:9 (nothing listens; listing never calls out).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
import warnings
from pathlib import Path
from typing import Any


def load(path: str) -> Any:
    text = Path(path).read_text(encoding="utf-8")
    if path.endswith((".yaml", ".yml")):
        import yaml

        return yaml.safe_load(text)
    return json.loads(text)


async def tools_of(spec: Any) -> list[dict[str, Any]]:
    from fastmcp import Client, FastMCP

    try:
        import httpx2 as http
    except ImportError:  # older fastmcp takes httpx
        import httpx as http  # type: ignore[no-redef]
    client = http.AsyncClient(base_url="http://127.0.0.1:9", timeout=5)
    server = FastMCP.from_openapi(openapi_spec=spec, client=client, name="openapi-baseline")
    async with Client(server) as mcp_client:
        tools = await mcp_client.list_tools()
    await client.aclose()
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]


def size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def measure(path: str, save: Path | None) -> dict[str, Any]:
    start = time.monotonic()
    try:
        tools = asyncio.run(tools_of(load(path)))
    except Exception as exc:
        return {"spec": path, "ok": False, "error": f"{type(exc).__name__}: {exc}"[:400]}
    sizes = [size(t) for t in tools]
    fields: dict[str, int] = {}
    for tool in tools:
        for key, value in tool.items():
            fields[key] = fields.get(key, 0) + size(value)
    if save is not None:
        save.mkdir(parents=True, exist_ok=True)
        name = "".join(c if c.isalnum() or c in "._-" else "_" for c in path[-120:]) + ".json"
        (save / name).write_text(json.dumps(tools, ensure_ascii=False, separators=(",", ":")))
    return {
        "spec": path,
        "ok": True,
        "count": len(tools),
        "per_tool": sizes,
        "names": [t.get("name") for t in tools],
        "fields": fields,
        "seconds": round(time.monotonic() - start, 2),
    }


def main() -> None:
    logging.disable(logging.WARNING)
    warnings.simplefilter("ignore")
    args = sys.argv[1:]
    save = None
    if "--save" in args:
        at = args.index("--save")
        save = Path(args[at + 1])
        del args[at : at + 2]
    if args == ["--serve"]:
        import fastmcp

        print(json.dumps({"ready": True, "fastmcp": fastmcp.__version__}), flush=True)
        for line in sys.stdin:
            if line.strip():
                print(json.dumps(measure(line.strip(), save)), flush=True)
        return
    for path in args:
        print(json.dumps(measure(path, save)), flush=True)


if __name__ == "__main__":
    main()
