"""How uvicorn's workers share connections (docs/replicas.md, "Limits with --workers and
replicas"): serve an app that answers its process id with ``--workers 4``, open C
connections at once (one request each), and print how many each worker accepted.

    python bench/worker_spread.py 16 16 16 64 200
"""

from __future__ import annotations

import asyncio
import collections
import os
import subprocess
import sys
import time
from typing import Any

import httpx2

PORT = 8765


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": str(os.getpid()).encode()})


async def spread(count: int) -> list[int]:
    async def one() -> str:
        async with httpx2.AsyncClient() as client:  # a connection of its own
            return (await client.get(f"http://127.0.0.1:{PORT}/")).text

    pids = await asyncio.gather(*(one() for _ in range(count)))
    return sorted(collections.Counter(pids).values(), reverse=True)


def main() -> None:
    command = [sys.executable, "-m", "uvicorn", "worker_spread:app", "--workers", "4"]
    command += ["--port", str(PORT), "--log-level", "warning"]
    server = subprocess.Popen(command, cwd=os.path.dirname(os.path.abspath(__file__)))
    try:
        time.sleep(4)
        for count in map(int, sys.argv[1:] or ["16", "64", "200"]):
            print(count, "connections, accepted per worker:", asyncio.run(spread(count)))
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
